//! Profile outputs on a synthetic full-chip profile (1472 tiles, ~160 phases and ~110 kernel
//! spans each): the Chrome trace parses with the right metadata and event counts, the HTML page
//! embeds its data and fetches nothing, and the text/JSON reports carry the right numbers.
//!
//! Set `TESSERA_PROFILE_OUT=DIR` to also write the synthetic profile there, e.g. to look at it
//! with `scripts/check_profile.sh DIR`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Deserialize;
use tessera_sim::profile::report::{memory_report_json, memory_summary, run_summary};
use tessera_sim::profile::trace::{KernelSpans, TraceOptions};
use tessera_sim::profile::{
    write_html, write_profile, write_trace, KernelSpan, PhaseKind, PhaseSpan, Profile,
    TileExchange, TileMemoryUsage,
};

const TILES: u32 = 1472;
const SUPERSTEPS: u64 = 40;
const CLOCK_HZ: u64 = 1_500_000_000;
const TILE_SRAM: u64 = 638_976;
const KERNEL_NAMES: [&str; 6] = [
    "matmul_f16_amp",
    "layernorm_stats",
    "gelu_f16",
    "softmax_rows",
    "residual_add_f16",
    "cast_f16_to_f8",
];

/// A small deterministic generator (xorshift64*), so the profile is the same on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// A bulk-synchronous run: start-up (load, then wait), then supersteps of compute, sync,
/// exchange, sync, with tile-dependent work so that some tiles are visibly on the critical
/// path; workers run kernels inside the compute phases.
fn synthetic_profile(tiles: u32) -> Profile {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let tile_count = tiles as usize;
    let mut phases: Vec<Vec<PhaseSpan>> = vec![Vec::new(); tile_count];
    let mut kernels: Vec<Vec<KernelSpan>> = vec![Vec::new(); tile_count];
    let sync_latency = 90;

    let load_ends: Vec<u64> = (0..tiles).map(|_| 18_000 + random.below(6_000)).collect();
    let startup_cycles = load_ends.iter().max().unwrap() + sync_latency;
    for (tile, &load_end) in load_ends.iter().enumerate() {
        phases[tile].push(PhaseSpan {
            kind: PhaseKind::Startup,
            start: 0,
            end: load_end,
        });
        phases[tile].push(PhaseSpan {
            kind: PhaseKind::Sync,
            start: load_end,
            end: startup_cycles,
        });
    }

    let mut now = startup_cycles;
    for step in 0..SUPERSTEPS {
        // Compute: a base amount per step, more on a band of "hot" tiles, plus noise.
        let base = 2_000 + (step % 7) * 900;
        let compute_ends: Vec<u64> = (0..tiles)
            .map(|tile| {
                let hot = if (tile / 64) % 5 == (step as u32) % 5 {
                    base / 2
                } else {
                    0
                };
                now + base + hot + random.below(base / 3)
            })
            .collect();
        let released = compute_ends.iter().max().unwrap() + sync_latency;
        for (tile, &end) in compute_ends.iter().enumerate() {
            phases[tile].push(PhaseSpan {
                kind: PhaseKind::Compute,
                start: now,
                end,
            });
            // A third of the workers run a kernel in each compute phase, some of them two.
            for worker in 0..6u8 {
                if random.below(3) != 0 {
                    continue;
                }
                let span = end - now;
                let first_end = now + span / 3 + random.below(span / 3);
                let name =
                    KERNEL_NAMES[((step as usize) + usize::from(worker)) % KERNEL_NAMES.len()];
                kernels[tile].push(KernelSpan {
                    worker,
                    name: name.into(),
                    start: now + 4,
                    end: first_end,
                    vertex: 0,
                });
                if random.below(3) == 0 {
                    let name = KERNEL_NAMES[(step as usize + 3) % KERNEL_NAMES.len()];
                    let start = first_end + 6;
                    kernels[tile].push(KernelSpan {
                        worker,
                        name: name.into(),
                        start,
                        end: end - 2,
                        vertex: 0,
                    });
                }
            }
            phases[tile].push(PhaseSpan {
                kind: PhaseKind::Sync,
                start: end,
                end: released,
            });
        }
        now = released;
        let exchange_ends: Vec<u64> = (0..tiles)
            .map(|_| now + 300 + random.below(1_500))
            .collect();
        let released = exchange_ends.iter().max().unwrap() + sync_latency;
        for (tile, &end) in exchange_ends.iter().enumerate() {
            phases[tile].push(PhaseSpan {
                kind: PhaseKind::Exchange,
                start: now,
                end,
            });
            phases[tile].push(PhaseSpan {
                kind: PhaseKind::Sync,
                start: end,
                end: released,
            });
        }
        now = released;
    }
    for tile_kernels in &mut kernels {
        tile_kernels.sort_by_key(|k| (k.start, k.worker));
    }

    let memory = (0..tiles)
        .map(|tile| {
            let mut categories = BTreeMap::new();
            categories.insert("code".to_string(), 24_000 + random.below(16_000));
            categories.insert("vertex state".to_string(), 2_000 + random.below(4_000));
            categories.insert("exchange program".to_string(), 1_000 + random.below(3_000));
            categories.insert("worker scratch".to_string(), 6 * 1024);
            categories.insert(
                format!("tensor:layer{}.weights", tile % 12),
                150_000 + random.below(200_000),
            );
            categories.insert(
                "tensor:activations".to_string(),
                40_000 + random.below(60_000),
            );
            if tile % 3 == 0 {
                categories.insert("constants".to_string(), 512);
            }
            categories.insert("padding".to_string(), random.below(2_000));
            let used: u64 = categories.values().sum();
            let free = TILE_SRAM - used;
            let largest_free = BTreeMap::from([
                ("standard".to_string(), free / 4),
                ("interleaved".to_string(), free / 2),
            ]);
            TileMemoryUsage {
                tile,
                categories,
                used,
                free,
                largest_free,
            }
        })
        .collect();
    let exchange = (0..tiles)
        .map(|_| TileExchange {
            bytes_sent: 10_000 + random.below(50_000),
            bytes_received: 10_000 + random.below(50_000),
            bytes_unheard: 0,
        })
        .collect();
    let bundles = (0..tiles).map(|_| 100_000 + random.below(50_000)).collect();
    Profile {
        machine: "ipu21".into(),
        clock_hz: CLOCK_HZ,
        tiles,
        total_cycles: now,
        startup_cycles,
        cropped_cycles: now - startup_cycles - 40,
        phases,
        kernels,
        memory,
        exchange,
        syncs: 1 + 2 * SUPERSTEPS,
        bundles,
        sync_releases: Vec::new(),
        superstep_names: Vec::new(),
        operations: Vec::new(),
    }
}

/// `1234567` → `"1,234,567"`, written independently of the crate's formatter.
fn grouped(value: u64) -> String {
    let text = value.to_string();
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (index, byte) in bytes.iter().enumerate() {
        if index > 0 && (bytes.len() - index).is_multiple_of(3) {
            out.push(b',');
        }
        out.push(*byte);
    }
    String::from_utf8(out).unwrap()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-profile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

// Borrowed strings keep parsing a full-chip trace (~60 MB) quick in the test profile.
#[derive(Deserialize)]
struct Trace<'a> {
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'a str,
    #[serde(rename = "traceEvents", borrow)]
    trace_events: Vec<TraceEvent<'a>>,
    #[serde(rename = "otherData")]
    other_data: serde_json::Value,
}

#[derive(Deserialize)]
struct TraceEvent<'a> {
    ph: &'a str,
    pid: u32,
    #[serde(default)]
    tid: Option<u32>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    ts: Option<f64>,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default, borrow)]
    args: TraceArgs<'a>,
}

/// The union of the args the writer uses.
#[derive(Default, Deserialize)]
struct TraceArgs<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    sort_index: Option<u32>,
    start_cycle: Option<u64>,
    end_cycle: Option<u64>,
    calls: Option<u64>,
    workers: Option<u64>,
    busy_cycles: Option<u64>,
}

fn trace_bytes(profile: &Profile, options: &TraceOptions) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(64 << 20);
    write_trace(&mut bytes, profile, options).expect("trace writes");
    bytes
}

fn parse_trace(bytes: &[u8]) -> Trace<'_> {
    serde_json::from_slice(bytes).expect("trace.json is valid JSON")
}

fn micros(cycles: u64) -> f64 {
    cycles as f64 / CLOCK_HZ as f64 * 1e6
}

/// The run-wide profile is built once and shared, since building it is most of the work.
fn profile() -> &'static Profile {
    static PROFILE: std::sync::OnceLock<Profile> = std::sync::OnceLock::new();
    PROFILE.get_or_init(|| synthetic_profile(TILES))
}

#[test]
fn a_full_trace_has_a_process_per_tile_and_a_thread_per_context() {
    let profile = profile();
    let options = TraceOptions {
        tiles: None,
        kernels: KernelSpans::Full,
    };
    let bytes = trace_bytes(profile, &options);
    let size = bytes.len();
    let trace = parse_trace(&bytes);
    assert_eq!(trace.display_time_unit, "ns");
    assert_eq!(trace.other_data["kernel_spans"], "full");

    let mut process_names = BTreeMap::new();
    let mut sort_indices = 0;
    let mut thread_names: BTreeMap<(u32, u32), String> = BTreeMap::new();
    let mut complete_events = 0usize;
    for event in &trace.trace_events {
        match (event.ph, event.name.as_ref()) {
            ("M", "process_name") => {
                process_names.insert(event.pid, event.args.name.clone().unwrap().into_owned());
            }
            ("M", "process_sort_index") => {
                assert_eq!(event.args.sort_index, Some(event.pid));
                sort_indices += 1;
            }
            ("M", "thread_name") => {
                let name = event.args.name.clone().unwrap().into_owned();
                thread_names.insert((event.pid, event.tid.unwrap()), name);
            }
            ("M", _) => {}
            ("X", _) => complete_events += 1,
            (other, _) => panic!("unexpected event phase {other}"),
        }
    }
    assert_eq!(process_names.len(), TILES as usize);
    assert_eq!(process_names[&7], "tile 7");
    assert_eq!(sort_indices, TILES as usize);
    assert_eq!(thread_names[&(7, 0)], "supersteps");
    for (tile, tile_kernels) in profile.kernels.iter().enumerate() {
        let workers: BTreeSet<u8> = tile_kernels.iter().map(|k| k.worker).collect();
        for worker in workers {
            let tid = u32::from(worker) + 1;
            assert_eq!(
                thread_names[&(tile as u32, tid)],
                format!("worker {worker}")
            );
        }
    }
    let phase_count: usize = profile.phases.iter().map(Vec::len).sum();
    let kernel_count: usize = profile.kernels.iter().map(Vec::len).sum();
    assert_eq!(complete_events, phase_count + kernel_count);

    // Timestamps are microseconds at the machine clock; the cycles ride along in args.
    let tile = 5;
    let first_compute = profile.phases[tile]
        .iter()
        .find(|p| p.kind == PhaseKind::Compute)
        .unwrap();
    let event = trace
        .trace_events
        .iter()
        .find(|e| e.ph == "X" && e.pid == tile as u32 && e.tid == Some(0) && e.name == "Compute")
        .unwrap();
    assert!((event.ts.unwrap() - micros(first_compute.start)).abs() < 1e-3);
    assert!((event.dur.unwrap() - micros(first_compute.end - first_compute.start)).abs() < 1e-3);
    assert_eq!(event.args.start_cycle, Some(first_compute.start));
    assert_eq!(event.args.end_cycle, Some(first_compute.end));
    let kernel = &profile.kernels[tile][0];
    let kernel_event = trace
        .trace_events
        .iter()
        .find(|e| {
            e.ph == "X" && e.pid == tile as u32 && e.tid == Some(u32::from(kernel.worker) + 1)
        })
        .unwrap();
    assert_eq!(kernel_event.name, &*kernel.name);
    assert_eq!(kernel_event.args.start_cycle, Some(kernel.start));

    // About 120 bytes per event keeps a full-chip trace loadable.
    assert!(
        size < (phase_count + kernel_count) * 130,
        "trace is {size} bytes"
    );
}

#[test]
fn trace_can_be_limited_to_a_tile_range_without_kernels() {
    let profile = profile();
    let options = TraceOptions {
        tiles: Some(10..13),
        kernels: KernelSpans::None,
    };
    let bytes = trace_bytes(profile, &options);
    let trace = parse_trace(&bytes);
    let pids: BTreeSet<u32> = trace.trace_events.iter().map(|e| e.pid).collect();
    assert_eq!(pids, BTreeSet::from([10, 11, 12]));
    let complete = trace.trace_events.iter().filter(|e| e.ph == "X").count();
    assert_eq!(
        complete,
        (10..13).map(|t| profile.phases[t].len()).sum::<usize>()
    );
    assert!(trace.trace_events.iter().all(|e| e.tid.unwrap_or(0) == 0));
}

#[test]
fn the_default_trace_has_coarse_kernel_spans_that_keep_the_totals() {
    let profile = profile();
    let bytes = trace_bytes(profile, &TraceOptions::default());
    let trace = parse_trace(&bytes);
    assert_eq!(trace.other_data["kernel_spans"], "coarse");

    let mut thread_names: BTreeMap<(u32, u32), String> = BTreeMap::new();
    // Per (tile, tid): the events' cycle spans in file order.
    let mut tracks: BTreeMap<(u32, u32), Vec<(u64, u64)>> = BTreeMap::new();
    // Per (tile, kernel name): calls and busy cycles as the trace states them.
    let mut totals: BTreeMap<(u32, String), (u64, u64)> = BTreeMap::new();
    // Per tile: the coarse spans, to check that each call lies inside one of its name.
    let mut spans: BTreeMap<u32, Vec<(String, u64, u64)>> = BTreeMap::new();
    let mut phase_events = 0;
    for event in &trace.trace_events {
        let tid = event.tid.unwrap_or(0);
        match event.ph {
            "M" if event.name == "thread_name" => {
                let name = event.args.name.clone().unwrap().into_owned();
                thread_names.insert((event.pid, tid), name);
            }
            "M" => {}
            "X" => {
                let (start, end) = (
                    event.args.start_cycle.unwrap(),
                    event.args.end_cycle.unwrap(),
                );
                // Times are the cycles at the machine clock, as for every event.
                assert!((event.ts.unwrap() - micros(start)).abs() < 1e-3);
                assert!((event.dur.unwrap() - micros(end - start)).abs() < 1e-3);
                tracks
                    .entry((event.pid, tid))
                    .or_default()
                    .push((start, end));
                if tid == 0 {
                    phase_events += 1;
                    assert!(event.args.calls.is_none());
                    continue;
                }
                // A single call carries no totals; its span is its cycles.
                let calls = event.args.calls.unwrap_or(1);
                let workers = event.args.workers.unwrap_or(1);
                let busy = event.args.busy_cycles.unwrap_or(end - start);
                assert_eq!(event.args.calls.is_some(), calls > 1);
                assert!((1..=6).contains(&workers) && workers <= calls);
                // The workers were busy for at most the whole span each.
                assert!(
                    busy <= workers * (end - start),
                    "{busy} busy in {start}..{end}"
                );
                let entry = totals
                    .entry((event.pid, event.name.to_string()))
                    .or_default();
                entry.0 += calls;
                entry.1 += busy;
                spans
                    .entry(event.pid)
                    .or_default()
                    .push((event.name.to_string(), start, end));
            }
            other => panic!("unexpected event phase {other}"),
        }
    }

    // Supersteps are all there, exactly.
    let phase_count: usize = profile.phases.iter().map(Vec::len).sum();
    assert_eq!(phase_events, phase_count);
    let tile = 9u32;
    let expected: Vec<(u64, u64)> = profile.phases[tile as usize]
        .iter()
        .map(|p| (p.start, p.end))
        .collect();
    assert_eq!(tracks[&(tile, 0)], expected);

    // Kernel lanes are named, and no two events on one thread overlap (Perfetto needs events
    // on a thread to nest); overlapping kernels of one phase took a second lane somewhere.
    let mut most_lanes = 0;
    for (&(tile, tid), track) in &tracks {
        if tid > 0 {
            let expected = if tid == 1 {
                "kernels".to_string()
            } else {
                format!("kernels {tid}")
            };
            assert_eq!(thread_names[&(tile, tid)], expected);
            most_lanes = most_lanes.max(tid);
        }
        let mut sorted = track.clone();
        sorted.sort();
        for pair in sorted.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "tile {tile} tid {tid}: {pair:?}");
        }
    }
    assert!(
        most_lanes >= 2,
        "the synthetic kernels overlap across names"
    );
    assert!(most_lanes <= 6);

    // Totals per tile and kernel: every call counted once, busy cycles summed exactly.
    let mut expected_totals: BTreeMap<(u32, String), (u64, u64)> = BTreeMap::new();
    for (tile, kernels) in profile.kernels.iter().enumerate() {
        for kernel in kernels {
            let entry = expected_totals
                .entry((tile as u32, kernel.name.to_string()))
                .or_default();
            entry.0 += 1;
            entry.1 += kernel.end - kernel.start;
        }
    }
    assert_eq!(totals, expected_totals);
    // Every call lies inside a coarse span of its name on its tile.
    for tile in [0usize, 9, 700, 1471] {
        for kernel in &profile.kernels[tile] {
            assert!(
                spans[&(tile as u32)]
                    .iter()
                    .any(|(name, start, end)| **name == *kernel.name
                        && *start <= kernel.start
                        && kernel.end <= *end),
                "tile {tile}: {kernel:?}"
            );
        }
    }

    // Fewer events and bytes than with every call. (Here only a few workers share a kernel in
    // a phase; in real runs all six do, and the coarse trace is several times smaller.)
    let kernel_count: usize = profile.kernels.iter().map(Vec::len).sum();
    let coarse_events: usize = spans.values().map(Vec::len).sum();
    assert!(
        coarse_events < kernel_count * 9 / 10,
        "{coarse_events} vs {kernel_count}"
    );
    let full = trace_bytes(
        profile,
        &TraceOptions {
            tiles: None,
            kernels: KernelSpans::Full,
        },
    );
    assert!(
        bytes.len() < full.len(),
        "{} vs {}",
        bytes.len(),
        full.len()
    );
}

#[test]
fn trace_detail_names_round_trip() {
    for name in KernelSpans::NAMES {
        assert_eq!(KernelSpans::from_name(name).unwrap().name(), name);
    }
    assert_eq!(
        KernelSpans::from_name("coarse"),
        Some(KernelSpans::default())
    );
    assert_eq!(KernelSpans::from_name("everything"), None);
}

/// The JSON blob the page embeds.
fn embedded_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"profile-data\">";
    let start = html.find(open).expect("the page embeds its data") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("the embedded data is JSON")
}

#[test]
fn html_is_self_contained_and_embeds_the_timeline() {
    let profile = profile();
    let mut bytes = Vec::new();
    write_html(&mut bytes, profile).unwrap();
    let html = String::from_utf8(bytes).unwrap();

    // Nothing is fetched: no external scripts, styles, fonts or images.
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("<link") && !html.contains("<script src") && !html.contains("@import"));
    assert!(html.contains("<pre id=\"errors\"></pre>"));
    assert!(html.contains("dataset.rendered = \"ok\""));

    let data = embedded_data(&html);
    assert_eq!(data["tiles"], TILES);
    assert_eq!(data["total_cycles"], profile.total_cycles);
    assert_eq!(data["workers"], 6);
    // Phases are [kind, gap, duration] triples; decoding tile 9 gives back its spans.
    let flat: Vec<u64> = data["phases"][9]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let mut cursor = 0;
    let decoded: Vec<(u64, u64, u64)> = flat
        .chunks(3)
        .map(|triple| {
            let start = cursor + triple[1];
            cursor = start + triple[2];
            (triple[0], start, cursor)
        })
        .collect();
    let expected: Vec<(u64, u64, u64)> = profile.phases[9]
        .iter()
        .map(|p| {
            let kind = match p.kind {
                PhaseKind::Startup => 0,
                PhaseKind::Compute => 1,
                PhaseKind::Exchange => 2,
                PhaseKind::Sync => 3,
            };
            (kind, p.start, p.end)
        })
        .collect();
    assert_eq!(decoded, expected);
    let names: Vec<&str> = data["kernel_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        names.iter().collect::<BTreeSet<_>>(),
        KERNEL_NAMES.iter().collect::<BTreeSet<_>>()
    );
    assert_eq!(
        data["kernels"][9].as_array().unwrap().len(),
        4 * profile.kernels[9].len()
    );

    // The summary header carries the run's numbers.
    assert!(html.contains(&grouped(profile.total_cycles)));
    assert!(html.contains(&grouped(profile.cropped_cycles)));
    assert!(html.contains(&grouped(profile.startup_cycles)));
    assert!(html.contains(&grouped(profile.total_exchange_bytes())));
    let (busiest_tile, busiest_cycles) = profile.busiest_tiles(1)[0];
    assert!(html.contains(&format!(
        "<li data-tile=\"{busiest_tile}\"><span class=\"tile\">tile {busiest_tile}</span>"
    )));
    assert!(html.contains(&grouped(busiest_cycles)));
    // SRAM: 50 bars, and the chip total in the table footer.
    assert_eq!(html.matches("<div class=\"mrow\"").count(), 50);
    let chip: u64 = profile.memory.iter().map(|m| m.used + m.free).sum();
    assert!(html.contains(&grouped(chip)));
    // A full-chip page stays a few megabytes.
    assert!(html.len() < 8 << 20, "profile.html is {} bytes", html.len());
}

#[test]
fn names_cannot_break_out_of_the_page() {
    let mut profile = synthetic_profile(4);
    profile.machine = "m<&>".into();
    profile.kernels[0][0].name = "evil</script><script>alert(1)</script>".into();
    let mut bytes = Vec::new();
    write_html(&mut bytes, &profile).unwrap();
    let html = String::from_utf8(bytes).unwrap();
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "only the data and code elements close"
    );
    assert!(html.contains("m&lt;&amp;&gt;"));
    let data = embedded_data(&html);
    assert!(data["kernel_names"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("evil</script>")));
    assert_eq!(data["machine"], "m<&>");
}

#[test]
fn reports_carry_the_right_numbers() {
    let profile = profile();
    let summary = run_summary(profile);
    assert!(summary.contains("ipu21"));
    assert!(summary.contains(&grouped(profile.total_cycles)));
    assert!(summary.contains(&grouped(profile.cropped_cycles)));
    assert!(summary.contains(&grouped(profile.syncs)));
    assert!(summary.contains(&grouped(profile.total_exchange_bytes())));
    let total_us = micros(profile.total_cycles);
    assert!(summary.contains(&format!("{total_us:.2} µs")));
    for (tile, cycles) in profile.busiest_tiles(10) {
        assert!(summary.contains(&format!("tile {tile}")), "{summary}");
        assert!(summary.contains(&grouped(cycles)));
    }
    assert!(summary.lines().count() <= 24, "fits a screen:\n{summary}");

    let memory = memory_summary(profile);
    let code: u64 = profile.memory.iter().map(|m| m.categories["code"]).sum();
    let used: u64 = profile.memory.iter().map(|m| m.used).sum();
    let chip = u64::from(TILES) * TILE_SRAM;
    let code_line = memory
        .lines()
        .find(|l| l.trim_start().starts_with("code "))
        .expect(&memory);
    assert!(code_line.contains(&grouped(code)), "{code_line}");
    assert!(code_line.contains(&format!("{:.1}%", code as f64 * 100.0 / chip as f64)));
    assert!(memory.contains(&grouped(used)));
    assert!(memory.contains(&grouped(chip)));
    let fullest = profile
        .memory
        .iter()
        .max_by_key(|m| (m.used, std::cmp::Reverse(m.tile)))
        .unwrap();
    assert!(memory.contains(&format!("tile {}", fullest.tile)));
    assert!(memory.lines().count() <= 30, "fits a screen:\n{memory}");

    let report: serde_json::Value = serde_json::from_str(&memory_report_json(profile)).unwrap();
    assert_eq!(report["tile_count"], TILES);
    assert_eq!(report["chip_sram_bytes"], chip);
    assert_eq!(report["used_bytes"], used);
    assert_eq!(report["categories"]["code"], code);
    assert_eq!(report["tiles"].as_array().unwrap().len(), TILES as usize);
    assert_eq!(
        report["tiles"][3]["largest_free"]["standard"],
        profile.memory[3].largest_free["standard"]
    );
}

#[test]
fn write_profile_creates_the_directory_and_both_files() {
    let small = synthetic_profile(16);
    let dir = scratch_dir("small").join("nested");
    write_profile(&dir, &small).unwrap();
    let html = std::fs::read_to_string(dir.join("profile.html")).unwrap();
    assert_eq!(embedded_data(&html)["tiles"], 16);
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("trace.json")).unwrap()).unwrap();
    assert!(trace["traceEvents"].as_array().unwrap().len() > 16 * 100);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();

    // An empty profile (nothing ran) still writes valid outputs.
    let empty_dir = scratch_dir("empty");
    write_profile(&empty_dir, &Profile::default()).unwrap();
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(empty_dir.join("trace.json")).unwrap()).unwrap();
    assert_eq!(trace["traceEvents"].as_array().unwrap().len(), 0);
    assert!(!memory_summary(&Profile::default()).is_empty());
    assert!(!run_summary(&Profile::default()).is_empty());
    std::fs::remove_dir_all(empty_dir).unwrap();

    if let Some(out) = std::env::var_os("TESSERA_PROFILE_OUT") {
        write_profile(&PathBuf::from(out), profile()).unwrap();
    }
}
