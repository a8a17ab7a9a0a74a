//! A [`Profile`] as Chrome trace-event JSON (the "JSON Object Format": `traceEvents` plus
//! `displayTimeUnit`), which ui.perfetto.dev and chrome://tracing open. Tiles are processes
//! (pid = tile), contexts are threads: tid 0 is the supervisor's superstep track, tid 1..=6
//! are workers 0..=5. Phases and kernel spans are complete (`"ph":"X"`) events with `ts`/`dur`
//! in microseconds at the machine clock and the raw cycles in `args`.
//!
//! A full ipu21 run has hundreds of thousands of events, so the writer streams them straight to
//! a buffered writer and never builds the document in memory.

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};
use std::ops::Range;

use super::{PhaseKind, Profile};

/// The superstep track of each tile (the supervisor context).
pub const SUPERSTEP_THREAD: u32 = 0;

/// Thread id of worker `worker` (tid 0 is the superstep track).
pub fn worker_thread(worker: u8) -> u32 {
    u32::from(worker) + 1
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

/// What to put in a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// Only these tiles (`None`: every tile). A subset keeps traces of big runs small enough for
    /// a browser to load quickly.
    pub tiles: Option<Range<u32>>,
    /// Also write per-worker kernel spans (threads 1..=6), not just the supersteps.
    pub kernel_spans: bool,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            tiles: None,
            kernel_spans: true,
        }
    }
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
         \"cropped_cycles\":{},\"syncs\":{}}},\n\"traceEvents\":[\n",
        profile.clock_hz,
        profile.tiles,
        profile.total_cycles,
        profile.startup_cycles,
        profile.cropped_cycles,
        profile.syncs
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
        let kernels = if options.kernel_spans {
            profile
                .kernels
                .get(tile as usize)
                .map_or(&[][..], Vec::as_slice)
        } else {
            &[]
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
        // Name only the workers that ran something here: empty worker tracks on 1472 tiles
        // would bury the ones that matter.
        let mut workers_used = [false; 256];
        for kernel in kernels {
            workers_used[usize::from(kernel.worker)] = true;
        }
        for worker in (0..=u8::MAX).filter(|&w| workers_used[usize::from(w)]) {
            let name = format!("worker {worker}");
            write_thread_metadata(&mut buffer, &mut events, tile, worker_thread(worker), &name)?;
        }

        for phase in phases {
            events.next(&mut buffer);
            let name = &phase_names[phase_index(phase.kind)];
            let span = (phase.start, phase.end);
            push_complete_event(&mut buffer, &clock, tile, SUPERSTEP_THREAD, span, name);
        }
        for kernel in kernels {
            events.next(&mut buffer);
            let name = kernel_names
                .entry(&kernel.name)
                .or_insert_with(|| serde_json::to_vec(&kernel.name).unwrap_or_default());
            let thread = worker_thread(kernel.worker);
            let span = (kernel.start, kernel.end);
            push_complete_event(&mut buffer, &clock, tile, thread, span, name);
        }
        out.write_all(&buffer)?;
    }
    out.write_all(b"\n]}\n")?;
    out.flush()
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
fn push_complete_event(
    buffer: &mut Vec<u8>,
    clock: &TraceClock,
    tile: u32,
    thread: u32,
    (start, end): (u64, u64),
    name_json: &[u8],
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
