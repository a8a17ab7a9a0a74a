//! A [`Profile`] as Chrome trace-event JSON (the "JSON Object Format": `traceEvents` plus
//! `displayTimeUnit`), which ui.perfetto.dev and chrome://tracing open. Tiles are processes
//! (pid = tile); tid 0 is the supervisor's superstep track. Phases and kernel spans are complete
//! (`"ph":"X"`) events with `ts`/`dur` in microseconds at the machine clock and the raw cycles
//! in `args` (`start_cycle`, `end_cycle`).
//!
//! Kernel spans come in two levels of detail ([`KernelSpans`]). A full ipu21 run makes about a
//! million kernel calls, six workers at a time, and most of a trace's bytes went to them, so by
//! default they are *coarse*: per tile, one event per kernel name and superstep phase, from the
//! first call's start to the last call's end on any worker, with the totals in `args`
//! (`calls`, `workers`, `busy_cycles` = the sum of the calls' cycles; left out for a single
//! call, whose span is its cycles), on "kernels" lanes
//! (tid 1, 2, … — a second lane only where two such spans overlap, since events on one thread
//! must nest). *Full* detail puts every call on its worker's thread (tid 1..=6 for workers
//! 0..=5), as the page's detail view shows them.
//!
//! The writer streams events straight to a buffered writer and never builds the document in
//! memory.

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};
use std::ops::Range;

use super::{KernelSpan, PhaseKind, PhaseSpan, Profile};

/// The superstep track of each tile (the supervisor context).
pub const SUPERSTEP_THREAD: u32 = 0;

/// Thread id of worker `worker` in a full-detail trace (tid 0 is the superstep track).
pub fn worker_thread(worker: u8) -> u32 {
    u32::from(worker) + 1
}

/// Thread id of coarse kernel lane `lane` (0 is the first).
pub fn kernel_lane_thread(lane: usize) -> u32 {
    u32::try_from(lane).map_or(u32::MAX, |lane| lane.saturating_add(1))
}

/// The name a phase kind has in traces and on the page.
pub fn phase_name(kind: PhaseKind) -> &'static str {
    match kind {
        PhaseKind::Startup => "Startup",
        PhaseKind::Compute => "Compute",
        PhaseKind::Exchange => "Exchange",
        PhaseKind::Sync => "Sync",
    }
}

/// How kernel spans go into a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelSpans {
    /// Supersteps only (tid 0).
    None,
    /// Per tile, one span per kernel name and phase, with call counts and busy cycles.
    #[default]
    Coarse,
    /// Every call on its worker's thread.
    Full,
}

impl KernelSpans {
    /// The names [`KernelSpans::from_name`] accepts, as the command line spells them.
    pub const NAMES: [&'static str; 3] = ["coarse", "full", "supersteps"];

    pub fn from_name(name: &str) -> Option<KernelSpans> {
        match name {
            "coarse" => Some(KernelSpans::Coarse),
            "full" => Some(KernelSpans::Full),
            "supersteps" => Some(KernelSpans::None),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KernelSpans::Coarse => "coarse",
            KernelSpans::Full => "full",
            KernelSpans::None => "supersteps",
        }
    }
}

/// What to put in a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Only these tiles (`None`: every tile). A subset keeps traces of big runs small enough for
    /// a browser to load quickly.
    pub tiles: Option<Range<u32>>,
    /// Which kernel spans go in besides the supersteps.
    pub kernels: KernelSpans,
}

/// Writes `profile` as trace-event JSON to `out` (buffered here, so a bare `File` is fine).
pub fn write_trace<W: Write>(out: W, profile: &Profile, options: &TraceOptions) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let clock = TraceClock::new(profile.clock_hz);
    let tile_count = tile_count(profile);
    let tiles = match &options.tiles {
        Some(range) => range.start.min(tile_count)..range.end.min(tile_count),
        None => 0..tile_count,
    };

    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"machine\":")?;
    serde_json::to_writer(&mut out, &profile.machine)?;
    write!(
        out,
        ",\"clock_hz\":{},\"tiles\":{},\"total_cycles\":{},\"startup_cycles\":{},\
         \"cropped_cycles\":{},\"syncs\":{},\"kernel_spans\":\"{}\"}},\n\"traceEvents\":[\n",
        profile.clock_hz,
        profile.tiles,
        profile.total_cycles,
        profile.startup_cycles,
        profile.cropped_cycles,
        profile.syncs,
        options.kernels.name()
    )?;

    // Each tile's events are built in one reused buffer and written at once; integers are
    // formatted by hand, several times faster than `write!` at half a million events.
    let mut buffer: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut events = EventSeparator::default();
    let phase_names: Vec<Vec<u8>> = PHASE_KINDS
        .iter()
        .map(|&kind| format!("\"{}\"", phase_name(kind)).into_bytes())
        .collect();
    let mut kernel_names: HashMap<&str, Vec<u8>> = HashMap::new();
    for tile in tiles {
        let phases = profile
            .phases
            .get(tile as usize)
            .map_or(&[][..], Vec::as_slice);
        let kernels = match options.kernels {
            KernelSpans::None => &[][..],
            KernelSpans::Coarse | KernelSpans::Full => profile
                .kernels
                .get(tile as usize)
                .map_or(&[][..], Vec::as_slice),
        };

        buffer.clear();
        events.next(&mut buffer);
        write!(
            buffer,
            "{{\"ph\":\"M\",\"pid\":{tile},\"name\":\"process_name\",\"args\":{{\"name\":\"tile {tile}\"}}}}"
        )?;
        events.next(&mut buffer);
        write!(
            buffer,
            "{{\"ph\":\"M\",\"pid\":{tile},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{tile}}}}}"
        )?;
        write_thread_metadata(
            &mut buffer,
            &mut events,
            tile,
            SUPERSTEP_THREAD,
            "supersteps",
        )?;
        match options.kernels {
            KernelSpans::Full => {
                // Name only the workers that ran something here: empty worker tracks on 1472
                // tiles would bury the ones that matter.
                let mut workers_used = [false; 256];
                for kernel in kernels {
                    workers_used[usize::from(kernel.worker)] = true;
                }
                for worker in (0..=u8::MAX).filter(|&w| workers_used[usize::from(w)]) {
                    let name = format!("worker {worker}");
                    let thread = worker_thread(worker);
                    write_thread_metadata(&mut buffer, &mut events, tile, thread, &name)?;
                }
                push_phases(&mut buffer, &mut events, &clock, tile, phases, &phase_names);
                for kernel in kernels {
                    events.next(&mut buffer);
                    let span = (kernel.start, kernel.end);
                    let thread = worker_thread(kernel.worker);
                    let name = name_json(&mut kernel_names, &kernel.name);
                    push_complete_event(&mut buffer, &clock, tile, thread, span, name, &[]);
                }
            }
            KernelSpans::Coarse => {
                let groups = coarse_kernel_spans(phases, kernels);
                let (lanes, lane_count) = assign_lanes(&groups);
                for lane in 0..lane_count {
                    let name = if lane == 0 {
                        "kernels".to_string()
                    } else {
                        format!("kernels {}", lane + 1)
                    };
                    let thread = kernel_lane_thread(lane);
                    write_thread_metadata(&mut buffer, &mut events, tile, thread, &name)?;
                }
                push_phases(&mut buffer, &mut events, &clock, tile, phases, &phase_names);
                for (group, lane) in groups.iter().zip(lanes) {
                    events.next(&mut buffer);
                    // A single call needs no totals: its span is its cycles. This also keeps
                    // a coarse trace no bigger than a full one when little merges.
                    let totals = [
                        (&b"calls"[..], group.calls),
                        (b"workers", group.workers()),
                        (b"busy_cycles", group.busy),
                    ];
                    let totals = if group.calls > 1 { &totals[..] } else { &[] };
                    let name = name_json(&mut kernel_names, group.name);
                    let thread = kernel_lane_thread(lane);
                    let span = (group.start, group.end);
                    push_complete_event(&mut buffer, &clock, tile, thread, span, name, totals);
                }
            }
            KernelSpans::None => {
                push_phases(&mut buffer, &mut events, &clock, tile, phases, &phase_names);
            }
        }
        out.write_all(&buffer)?;
    }
    out.write_all(b"\n]}\n")?;
    out.flush()
}

/// `name` as a JSON string, encoded once per name.
fn name_json<'n, 'p>(names: &'n mut HashMap<&'p str, Vec<u8>>, name: &'p str) -> &'n [u8] {
    names
        .entry(name)
        .or_insert_with(|| serde_json::to_vec(name).unwrap_or_else(|_| b"\"?\"".to_vec()))
}

fn push_phases(
    buffer: &mut Vec<u8>,
    events: &mut EventSeparator,
    clock: &TraceClock,
    tile: u32,
    phases: &[PhaseSpan],
    phase_names: &[Vec<u8>],
) {
    for phase in phases {
        events.next(buffer);
        let name = &phase_names[phase_index(phase.kind)];
        let span = (phase.start, phase.end);
        push_complete_event(buffer, clock, tile, SUPERSTEP_THREAD, span, name, &[]);
    }
}

/// All calls of one kernel (by name) in one phase of one tile, on any worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoarseKernelSpan<'a> {
    pub name: &'a str,
    /// The index in the tile's phases of the phase the calls started in (the number of phases
    /// that start at or before them; 0 before the first).
    pub phase: usize,
    /// The first call's start and the last call's end.
    pub start: u64,
    pub end: u64,
    pub calls: u64,
    /// The sum of the calls' cycles (at most `workers × (end − start)`).
    pub busy: u64,
    /// Which workers made calls, one bit per worker number.
    pub worker_bits: [u64; 4],
}

impl CoarseKernelSpan<'_> {
    /// How many workers made calls.
    pub fn workers(&self) -> u64 {
        self.worker_bits
            .iter()
            .map(|b| u64::from(b.count_ones()))
            .sum()
    }
}

/// One tile's kernel spans grouped by phase and name, sorted by start (then end). Phases are
/// expected in time order; out-of-order input still groups (by `partition_point`), just less
/// meaningfully, and never panics.
pub fn coarse_kernel_spans<'a>(
    phases: &[PhaseSpan],
    kernels: &'a [KernelSpan],
) -> Vec<CoarseKernelSpan<'a>> {
    let mut index: HashMap<(usize, &str), usize> = HashMap::new();
    let mut groups: Vec<CoarseKernelSpan<'a>> = Vec::new();
    for kernel in kernels {
        let phase = phases.partition_point(|p| p.start <= kernel.start);
        let end = kernel.end.max(kernel.start);
        let slot = *index.entry((phase, &*kernel.name)).or_insert_with(|| {
            groups.push(CoarseKernelSpan {
                name: &kernel.name,
                phase,
                start: kernel.start,
                end,
                calls: 0,
                busy: 0,
                worker_bits: [0; 4],
            });
            groups.len() - 1
        });
        let group = &mut groups[slot];
        group.start = group.start.min(kernel.start);
        group.end = group.end.max(end);
        group.calls += 1;
        group.busy = group.busy.saturating_add(end - kernel.start);
        let worker = usize::from(kernel.worker);
        group.worker_bits[worker / 64] |= 1 << (worker % 64);
    }
    // Stable, so equal spans keep the order of their first calls: the output is deterministic.
    groups.sort_by_key(|g| (g.start, g.end));
    groups
}

/// First-fit lanes for spans sorted by start, so that no two spans on one lane overlap (events
/// on one trace thread must nest, and these only ever touch). Returns each span's lane and the
/// number of lanes.
fn assign_lanes(groups: &[CoarseKernelSpan]) -> (Vec<usize>, usize) {
    let mut lane_ends: Vec<u64> = Vec::new();
    let lanes = groups
        .iter()
        .map(
            |group| match lane_ends.iter().position(|&end| end <= group.start) {
                Some(lane) => {
                    lane_ends[lane] = group.end;
                    lane
                }
                None => {
                    lane_ends.push(group.end);
                    lane_ends.len() - 1
                }
            },
        )
        .collect();
    (lanes, lane_ends.len())
}

/// The phase kinds in the order pages and blobs number them.
pub(crate) const PHASE_KINDS: [PhaseKind; 4] = [
    PhaseKind::Startup,
    PhaseKind::Compute,
    PhaseKind::Exchange,
    PhaseKind::Sync,
];

/// The number of a phase kind in [`PHASE_KINDS`].
pub(crate) fn phase_index(kind: PhaseKind) -> usize {
    match kind {
        PhaseKind::Startup => 0,
        PhaseKind::Compute => 1,
        PhaseKind::Exchange => 2,
        PhaseKind::Sync => 3,
    }
}

/// Appends `{"ph":"X",…}` for the cycles `[start, end)`; `name_json` is already a JSON string.
/// `args` always has the cycles; `extra` adds integer args after them (keys without quotes).
fn push_complete_event(
    buffer: &mut Vec<u8>,
    clock: &TraceClock,
    tile: u32,
    thread: u32,
    (start, end): (u64, u64),
    name_json: &[u8],
    extra: &[(&[u8], u64)],
) {
    let start_ticks = clock.ticks(start);
    let end_ticks = clock.ticks(end.max(start));
    buffer.extend_from_slice(b"{\"ph\":\"X\",\"pid\":");
    push_integer(buffer, u64::from(tile));
    buffer.extend_from_slice(b",\"tid\":");
    push_integer(buffer, u64::from(thread));
    buffer.extend_from_slice(b",\"ts\":");
    push_ticks(buffer, start_ticks);
    buffer.extend_from_slice(b",\"dur\":");
    push_ticks(buffer, end_ticks - start_ticks);
    buffer.extend_from_slice(b",\"name\":");
    buffer.extend_from_slice(name_json);
    buffer.extend_from_slice(b",\"args\":{\"start_cycle\":");
    push_integer(buffer, start);
    buffer.extend_from_slice(b",\"end_cycle\":");
    push_integer(buffer, end);
    for (key, value) in extra {
        buffer.extend_from_slice(b",\"");
        buffer.extend_from_slice(key);
        buffer.extend_from_slice(b"\":");
        push_integer(buffer, *value);
    }
    buffer.extend_from_slice(b"}}");
}

fn push_integer(buffer: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut first = digits.len();
    loop {
        first -= 1;
        digits[first] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    buffer.extend_from_slice(&digits[first..]);
}

/// The number of tiles a profile describes, tolerating per-tile vectors of different lengths.
pub(crate) fn tile_count(profile: &Profile) -> u32 {
    let longest = profile.phases.len().max(profile.kernels.len()) as u32;
    profile.tiles.max(longest)
}

fn write_thread_metadata(
    buffer: &mut Vec<u8>,
    events: &mut EventSeparator,
    tile: u32,
    thread: u32,
    name: &str,
) -> io::Result<()> {
    events.next(buffer);
    write!(
        buffer,
        "{{\"ph\":\"M\",\"pid\":{tile},\"tid\":{thread},\"name\":\"thread_name\",\"args\":{{\"name\":\"{name}\"}}}}"
    )?;
    events.next(buffer);
    write!(
        buffer,
        "{{\"ph\":\"M\",\"pid\":{tile},\"tid\":{thread},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{thread}}}}}"
    )
}

/// Puts ",\n" before every event but the first, which keeps the JSON valid without knowing in
/// advance which event is last.
#[derive(Default)]
struct EventSeparator {
    written: bool,
}

impl EventSeparator {
    fn next(&mut self, buffer: &mut Vec<u8>) {
        if self.written {
            buffer.extend_from_slice(b",\n");
        }
        self.written = true;
    }
}

/// Converts cycles to trace microseconds with integer arithmetic, so that timestamps are exact
/// to 0.1 ns, identical on every run, and a span's `ts + dur` lands exactly on the next span's
/// `ts` (both are rounded from cycles, never accumulated).
struct TraceClock {
    clock_hz: u64,
}

/// Timestamps are written in units of 1e-4 µs (0.1 ns): finer than a cycle at any clock below
/// 10 GHz, and Perfetto keeps nanoseconds anyway.
const TICKS_PER_MICROSECOND: u64 = 10_000;
const TICKS_PER_SECOND: u64 = 1_000_000 * TICKS_PER_MICROSECOND;

impl TraceClock {
    fn new(clock_hz: u64) -> Self {
        // `Profile::seconds` treats a zero clock as 1 Hz; do the same.
        TraceClock {
            clock_hz: clock_hz.max(1),
        }
    }

    /// `cycle` in ticks, rounded to nearest.
    fn ticks(&self, cycle: u64) -> u64 {
        let half = self.clock_hz / 2;
        match cycle
            .checked_mul(TICKS_PER_SECOND)
            .and_then(|n| n.checked_add(half))
        {
            Some(numerator) => numerator / self.clock_hz,
            // Beyond ~1.8e9 cycles u64 overflows; u128 is exact but slower.
            None => {
                let numerator = u128::from(cycle) * u128::from(TICKS_PER_SECOND) + u128::from(half);
                u64::try_from(numerator / u128::from(self.clock_hz)).unwrap_or(u64::MAX)
            }
        }
    }
}

/// Appends ticks as decimal microseconds without trailing zeros: 123400 → "12.34".
fn push_ticks(buffer: &mut Vec<u8>, ticks: u64) {
    push_integer(buffer, ticks / TICKS_PER_MICROSECOND);
    let mut fraction = ticks % TICKS_PER_MICROSECOND;
    if fraction == 0 {
        return;
    }
    let mut digits = 4;
    while fraction.is_multiple_of(10) {
        fraction /= 10;
        digits -= 1;
    }
    buffer.push(b'.');
    // Leading zeros of the fraction: 0.0005 has three.
    let mut scale = 10u64.pow(digits - 1);
    while fraction < scale {
        buffer.push(b'0');
        scale /= 10;
    }
    push_integer(buffer, fraction);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks_text(ticks: u64) -> String {
        let mut out = Vec::new();
        push_ticks(&mut out, ticks);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ticks_print_as_short_decimals() {
        assert_eq!(ticks_text(0), "0");
        assert_eq!(ticks_text(123_400), "12.34");
        assert_eq!(ticks_text(10_007), "1.0007");
        assert_eq!(ticks_text(5), "0.0005");
        assert_eq!(ticks_text(10_050), "1.005");
        assert_eq!(ticks_text(u64::MAX), "1844674407370955.1615");
    }

    fn phase(kind: PhaseKind, start: u64, end: u64) -> PhaseSpan {
        PhaseSpan { kind, start, end }
    }

    fn call(worker: u8, name: &str, start: u64, end: u64) -> KernelSpan {
        KernelSpan {
            worker,
            name: name.into(),
            start,
            end,
            vertex: 0,
        }
    }

    #[test]
    fn coarse_spans_group_calls_by_phase_and_name() {
        let phases = [
            phase(PhaseKind::Compute, 0, 100),
            phase(PhaseKind::Sync, 100, 120),
            phase(PhaseKind::Compute, 120, 300),
        ];
        let kernels = [
            call(0, "a", 2, 40),
            call(1, "a", 3, 50),
            call(0, "b", 45, 90),
            call(0, "a", 92, 98),
            // The same kernel in the next compute phase is a new span.
            call(2, "a", 125, 200),
        ];
        let groups = coarse_kernel_spans(&phases, &kernels);
        let summary: Vec<(&str, usize, u64, u64, u64, u64, u64)> = groups
            .iter()
            .map(|g| {
                (
                    g.name,
                    g.phase,
                    g.start,
                    g.end,
                    g.calls,
                    g.workers(),
                    g.busy,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("a", 1, 2, 98, 3, 2, 38 + 47 + 6),
                ("b", 1, 45, 90, 1, 1, 45),
                ("a", 3, 125, 200, 1, 1, 75),
            ]
        );
        // "b" lies inside "a"'s span of the same phase: it takes a second lane; the next phase's
        // "a" starts after both and reuses the first.
        assert_eq!(assign_lanes(&groups), (vec![0, 1, 0], 2));
    }

    #[test]
    fn lanes_never_overlap() {
        let spans: Vec<KernelSpan> = (0..40u64)
            .map(|i| {
                call(
                    (i % 6) as u8,
                    ["x", "y", "z"][(i % 3) as usize],
                    i * 7 % 50,
                    i * 7 % 50 + 1 + i % 13,
                )
            })
            .collect();
        let groups = coarse_kernel_spans(&[], &spans);
        let (lanes, count) = assign_lanes(&groups);
        assert!(count >= 1);
        for lane in 0..count {
            let mut on_lane: Vec<(u64, u64)> = groups
                .iter()
                .zip(&lanes)
                .filter(|(_, &l)| l == lane)
                .map(|(g, _)| (g.start, g.end))
                .collect();
            on_lane.sort();
            assert!(on_lane.windows(2).all(|w| w[0].1 <= w[1].0), "{on_lane:?}");
        }
        let calls: u64 = groups.iter().map(|g| g.calls).sum();
        assert_eq!(calls, 40);
    }

    #[test]
    fn odd_input_groups_without_panicking() {
        // Unsorted phases, a span ending before it starts, the highest worker number.
        let phases = [
            phase(PhaseKind::Sync, 50, 60),
            phase(PhaseKind::Compute, 0, 50),
        ];
        let kernels = [call(255, "k", 30, 10), call(0, "m", u64::MAX - 1, u64::MAX)];
        let groups = coarse_kernel_spans(&phases, &kernels);
        assert_eq!(groups.iter().map(|g| g.calls).sum::<u64>(), 2);
        let backwards = groups.iter().find(|g| g.start == 30).unwrap();
        assert_eq!(
            (backwards.end, backwards.busy, backwards.workers()),
            (30, 0, 1)
        );
        assert_eq!(backwards.worker_bits[3], 1 << 63);
    }

    #[test]
    fn cycles_convert_at_the_machine_clock() {
        let clock = TraceClock::new(1_500_000_000);
        // 1500 cycles at 1.5 GHz is exactly one microsecond.
        assert_eq!(clock.ticks(1500), TICKS_PER_MICROSECOND);
        // One cycle is 0.667 ns, rounded to 0.1 ns.
        assert_eq!(clock.ticks(1), 7);
        // Past the u64 fast path the slow path agrees with it.
        let big = 3_000_000_000_000u64;
        assert_eq!(clock.ticks(big), big / 1500 * TICKS_PER_MICROSECOND);
    }
}
