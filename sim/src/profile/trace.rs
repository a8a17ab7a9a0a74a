//! A [`Profile`] as Chrome trace-event JSON (the "JSON Object Format": `traceEvents` plus
//! `displayTimeUnit`), which ui.perfetto.dev and chrome://tracing open. Tiles are processes
//! (pid = tile), contexts are threads: tid 0 is the supervisor's superstep track, tid 1..=6
//! are workers 0..=5. Phases and kernel spans are complete (`"ph":"X"`) events with `ts`/`dur`
//! in microseconds at the machine clock and the raw cycles in `args`.
//!
//! A full ipu21 run has hundreds of thousands of events, so the writer streams them straight to
//! a buffered writer and never builds the document in memory.

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
        TraceOptions { tiles: None, kernel_spans: true }
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

    // Every event but the first is preceded by ",\n", which keeps the JSON valid without
    // knowing in advance which event is last.
    let mut events = EventSeparator::default();
    for tile in tiles {
        let phases = profile.phases.get(tile as usize).map_or(&[][..], Vec::as_slice);
        let kernels = if options.kernel_spans {
            profile.kernels.get(tile as usize).map_or(&[][..], Vec::as_slice)
        } else {
            &[]
        };

        events.next(&mut out)?;
        write!(
            out,
            "{{\"ph\":\"M\",\"pid\":{tile},\"name\":\"process_name\",\"args\":{{\"name\":\"tile {tile}\"}}}}"
        )?;
        events.next(&mut out)?;
        write!(
            out,
            "{{\"ph\":\"M\",\"pid\":{tile},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{tile}}}}}"
        )?;
        write_thread_metadata(&mut out, &mut events, tile, SUPERSTEP_THREAD, "supersteps")?;
        // Name only the workers that ran something here: empty worker tracks on 1472 tiles
        // would bury the ones that matter.
        let mut workers_used = [false; 256];
        for kernel in kernels {
            workers_used[usize::from(kernel.worker)] = true;
        }
        for worker in (0..=u8::MAX).filter(|&w| workers_used[usize::from(w)]) {
            let name = format!("worker {worker}");
            write_thread_metadata(&mut out, &mut events, tile, worker_thread(worker), &name)?;
        }

        for phase in phases {
            events.next(&mut out)?;
            write!(
                out,
                "{{\"ph\":\"X\",\"pid\":{tile},\"tid\":{SUPERSTEP_THREAD},\"ts\":"
            )?;
            clock.write_span(&mut out, phase.start, phase.end)?;
            write!(
                out,
                ",\"name\":\"{}\",\"cat\":\"superstep\",\"args\":{{\"start_cycle\":{},\"end_cycle\":{}}}}}",
                phase_name(phase.kind),
                phase.start,
                phase.end
            )?;
        }
        for kernel in kernels {
            events.next(&mut out)?;
            write!(
                out,
                "{{\"ph\":\"X\",\"pid\":{tile},\"tid\":{},\"ts\":",
                worker_thread(kernel.worker)
            )?;
            clock.write_span(&mut out, kernel.start, kernel.end)?;
            out.write_all(b",\"name\":")?;
            serde_json::to_writer(&mut out, &kernel.name)?;
            write!(
                out,
                ",\"cat\":\"kernel\",\"args\":{{\"start_cycle\":{},\"end_cycle\":{}}}}}",
                kernel.start, kernel.end
            )?;
        }
    }
    out.write_all(b"\n]}\n")?;
    out.flush()
}

/// The number of tiles a profile describes, tolerating per-tile vectors of different lengths.
pub(crate) fn tile_count(profile: &Profile) -> u32 {
    let longest = profile.phases.len().max(profile.kernels.len()) as u32;
    profile.tiles.max(longest)
}

fn write_thread_metadata(
    out: &mut impl Write,
    events: &mut EventSeparator,
    tile: u32,
    thread: u32,
    name: &str,
) -> io::Result<()> {
    events.next(out)?;
    write!(
        out,
        "{{\"ph\":\"M\",\"pid\":{tile},\"tid\":{thread},\"name\":\"thread_name\",\"args\":{{\"name\":\"{name}\"}}}}"
    )?;
    events.next(out)?;
    write!(
        out,
        "{{\"ph\":\"M\",\"pid\":{tile},\"tid\":{thread},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{thread}}}}}"
    )
}

#[derive(Default)]
struct EventSeparator {
    written: bool,
}

impl EventSeparator {
    fn next(&mut self, out: &mut impl Write) -> io::Result<()> {
        if self.written {
            out.write_all(b",\n")?;
        }
        self.written = true;
        Ok(())
    }
}

/// Converts cycles to trace microseconds with integer arithmetic, so that timestamps are exact
/// to 0.1 ns, identical on every run, and a span's `ts + dur` lands exactly on the next span's
/// `ts` (both are rounded from cycles, never accumulated).
struct TraceClock {
    clock_hz: u128,
}

/// Timestamps are written in units of 1e-4 µs (0.1 ns): finer than a cycle at any clock below
/// 10 GHz, and Perfetto keeps nanoseconds anyway.
const TICKS_PER_MICROSECOND: u128 = 10_000;

impl TraceClock {
    fn new(clock_hz: u64) -> Self {
        // `Profile::seconds` treats a zero clock as 1 Hz; do the same.
        TraceClock { clock_hz: u128::from(clock_hz.max(1)) }
    }

    fn ticks(&self, cycle: u64) -> u128 {
        let numerator = u128::from(cycle) * 1_000_000 * TICKS_PER_MICROSECOND;
        (numerator + self.clock_hz / 2) / self.clock_hz
    }

    /// Writes `<ts>,"dur":<dur>` for the cycles `[start, end)`.
    fn write_span(&self, out: &mut impl Write, start: u64, end: u64) -> io::Result<()> {
        let start_ticks = self.ticks(start);
        let end_ticks = self.ticks(end.max(start));
        write_ticks(out, start_ticks)?;
        out.write_all(b",\"dur\":")?;
        write_ticks(out, end_ticks - start_ticks)
    }
}

/// Writes ticks as decimal microseconds without trailing zeros: 12_3400 → "12.34".
fn write_ticks(out: &mut impl Write, ticks: u128) -> io::Result<()> {
    let whole = ticks / TICKS_PER_MICROSECOND;
    let mut fraction = ticks % TICKS_PER_MICROSECOND;
    if fraction == 0 {
        return write!(out, "{whole}");
    }
    let mut digits = 4;
    while fraction % 10 == 0 {
        fraction /= 10;
        digits -= 1;
    }
    write!(out, "{whole}.{fraction:0digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks_text(ticks: u128) -> String {
        let mut out = Vec::new();
        write_ticks(&mut out, ticks).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ticks_print_as_short_decimals() {
        assert_eq!(ticks_text(0), "0");
        assert_eq!(ticks_text(123_400), "12.34");
        assert_eq!(ticks_text(10_007), "1.0007");
        assert_eq!(ticks_text(5), "0.0005");
    }

    #[test]
    fn cycles_convert_at_the_machine_clock() {
        let clock = TraceClock::new(1_500_000_000);
        // 1500 cycles at 1.5 GHz is exactly one microsecond.
        assert_eq!(clock.ticks(1500), TICKS_PER_MICROSECOND);
        // One cycle is 0.667 ns, rounded to 0.1 ns.
        assert_eq!(clock.ticks(1), 7);
    }
}
