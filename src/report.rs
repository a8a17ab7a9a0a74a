//! What a run of a compiled model reports: cycle totals, the encoder span, the estimate beside
//! the simulation, errors, SRAM by category, host times — as text and JSON — and the per-op
//! table that says where the cycles went (simulated superstep times shared among the ops of a
//! step in proportion to their estimates on its busiest tile).

use crate::pipeline::Outcome;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write;
use tessera_codegen::compile::CompiledGraph;
use tessera_codegen::tile::Program;
use tessera_sim::profile::Profile;
use tessera_sim::MachineDescription;

/// Simulated (start, end) cycle of every step as it ran (a loop's steps once per iteration, in
/// the order of [`Program::executed_steps`]): the `k`-th ends at global sync `k`.
pub fn step_times(profile: &Profile, program: &Program) -> Vec<(u64, u64)> {
    let steps = program.executed_steps().len();
    let mut out = Vec::with_capacity(steps);
    let mut start = profile.startup_cycles;
    for k in 0..steps {
        let end = profile.sync_releases.get(k).copied().unwrap_or(start);
        out.push((start, end));
        start = end;
    }
    out
}

/// An op label without its layer prefix (`layer3.fc1` → `fc1`; in an exchange row's list of
/// ops, each of them), for grouping layers.
pub fn op_kind(label: &str) -> String {
    fn one(label: &str) -> &str {
        match label.split_once('.') {
            Some((head, rest))
                if head.len() > 5
                    && head.starts_with("layer")
                    && head[5..].chars().all(|c| c.is_ascii_digit()) =>
            {
                rest
            }
            _ => label,
        }
    }
    match label.strip_prefix("exchange: ") {
        Some(list) => format!(
            "exchange: {}",
            list.split(", ").map(one).collect::<Vec<_>>().join(", ")
        ),
        None => one(label).to_string(),
    }
}

/// Simulated and estimated cycles per op label (exchange steps as `exchange: …` rows), and how
/// many times it ran (the iterations of a loop it is in, else 1); `steps` from [`step_times`].
pub fn per_op(
    compiled: &CompiledGraph,
    steps: &[(u64, u64)],
) -> BTreeMap<String, (u64, u64, usize)> {
    let mut out: BTreeMap<String, (u64, u64, usize)> = BTreeMap::new();
    let mut iterations: BTreeMap<String, std::collections::BTreeSet<u32>> = BTreeMap::new();
    let executed = compiled.lowered.program.executed_steps();
    for (k, &(step, iteration)) in executed.iter().enumerate() {
        let Some((label, est)) = compiled.estimate.steps.get(step) else {
            continue;
        };
        let simulated = steps.get(k).map(|(s, e)| e - s).unwrap_or(0);
        let shares = compiled
            .estimate
            .step_ops
            .get(step)
            .cloned()
            .unwrap_or_default();
        let total: u64 = shares.iter().map(|(_, c)| *c).sum();
        if shares.is_empty() || total == 0 {
            let e = out.entry(label.clone()).or_default();
            e.0 += simulated;
            e.1 += *est;
            iterations
                .entry(label.clone())
                .or_default()
                .insert(iteration);
            continue;
        }
        for (op, c) in shares {
            let e = out.entry(op.clone()).or_default();
            e.0 += simulated * c / total;
            e.1 += est * c / total;
            iterations.entry(op).or_default().insert(iteration);
        }
    }
    for (label, e) in &mut out {
        e.2 = iterations.get(label).map_or(1, |s| s.len());
    }
    out
}

/// The per-op table: the `top` ops by simulated cycles, grouped over layers.
pub fn op_table(compiled: &CompiledGraph, steps: &[(u64, u64)], top: usize) -> String {
    let mut grouped: BTreeMap<String, (u64, u64, usize)> = BTreeMap::new();
    for (label, (sim, est, runs)) in per_op(compiled, steps) {
        let e = grouped.entry(op_kind(&label)).or_default();
        e.0 += sim;
        e.1 += est;
        e.2 += runs;
    }
    let run: u64 = steps.iter().map(|(s, e)| e - s).sum::<u64>().max(1);
    let mut rows: Vec<(String, (u64, u64, usize))> = grouped.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "where the cycles go (simulated supersteps shared by estimate; all layers summed):"
    );
    let _ = writeln!(
        out,
        "  {:>11} {:>11} {:>6}  op",
        "simulated", "estimated", "share"
    );
    let mut rest = (0u64, 0u64);
    for (i, (label, (sim, est, count))) in rows.iter().enumerate() {
        if i >= top {
            rest.0 += sim;
            rest.1 += est;
            continue;
        }
        let times = if *count > 1 {
            format!(" (x{count})")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {sim:>11} {est:>11} {:>5.1}%  {label}{times}",
            100.0 * *sim as f64 / run as f64
        );
    }
    if rows.len() > top {
        let _ = writeln!(
            out,
            "  {:>11} {:>11} {:>5.1}%  ({} more)",
            rest.0,
            rest.1,
            100.0 * rest.0 as f64 / run as f64,
            rows.len() - top
        );
    }
    out
}

/// Cycles from the start of the first step running the first encoder layer's first LayerNorm
/// to the end of the last step running the last layer's second residual (steps as they ran).
pub fn encoder_span(compiled: &CompiledGraph, steps: &[(u64, u64)]) -> Option<u64> {
    let ops = &compiled.lowered.step_ops;
    let executed = compiled.lowered.program.executed_steps();
    let first = executed.iter().position(|&(s, _)| {
        ops[s]
            .iter()
            .any(|l| l.ends_with(".ln1") && l.starts_with("layer0."))
    })?;
    let last_layer = ops
        .iter()
        .flatten()
        .filter_map(|l| {
            l.strip_prefix("layer")
                .and_then(|r| r.split_once('.'))
                .and_then(|(n, _)| n.parse::<u32>().ok())
        })
        .max()?;
    let tail = format!("layer{last_layer}.residual2");
    let last = executed
        .iter()
        .rposition(|&(s, _)| ops[s].contains(&tail))?;
    Some(steps.get(last)?.1.saturating_sub(steps.get(first)?.0))
}

/// Names the profile after the compiled program's ops: supersteps by the ops in them, every
/// kernel span by the call it ran for (`fc1 (gemm_fp8)`: the worker's vertex base lies in that
/// call's vertex record), and the per-operation table.
pub fn name_steps(profile: &mut Profile, compiled: &CompiledGraph) {
    let program = &compiled.lowered.program;
    for (tile, spans) in profile.kernels.iter_mut().enumerate() {
        let (Some(records), Some(t)) = (
            compiled.back.report.call_vertices.get(tile),
            program.tiles.get(tile),
        ) else {
            continue;
        };
        let calls: Vec<&tessera_codegen::tile::KernelCall> = t.calls.iter().flatten().collect();
        // One name per call, shared by its spans (every worker, every iteration).
        let mut names: Vec<Option<std::sync::Arc<str>>> = vec![None; calls.len()];
        for span in spans.iter_mut() {
            let i = records.partition_point(|&(start, _)| start <= span.vertex);
            if let Some(k) = i.checked_sub(1).filter(|&k| span.vertex < records[k].1) {
                span.name = names[k]
                    .get_or_insert_with(|| {
                        format!("{} ({})", calls[k].label, calls[k].name()).into()
                    })
                    .clone();
            }
        }
    }
    let steps = step_times(profile, program);
    let mut grouped: BTreeMap<String, tessera_sim::profile::OperationCycles> = BTreeMap::new();
    for (label, (sim, est, runs)) in per_op(compiled, &steps) {
        let e = grouped.entry(op_kind(&label)).or_default();
        e.name = op_kind(&label);
        e.simulated += sim;
        e.estimated += est;
        e.count += runs as u32;
    }
    profile.operations = grouped.into_values().collect();
    // One name per superstep as it ran: a loop's steps once per iteration.
    let looped = program.looped.is_some();
    profile.superstep_names = program
        .executed_steps()
        .into_iter()
        .map(|(step, iteration)| {
            let label = match &program.steps[step] {
                tessera_codegen::tile::StepKind::Compute { label }
                | tessera_codegen::tile::StepKind::Exchange { label, .. } => label.clone(),
            };
            if looped && program.runs_of(step) > 1 {
                format!("{label} (iteration {iteration})")
            } else {
                label
            }
        })
        .collect();
}

/// SRAM of one tile by category group (weights, activations, exchange buffers, code, …).
pub fn sram_groups(categories: &BTreeMap<String, u64>) -> BTreeMap<&'static str, u64> {
    let mut out: BTreeMap<&'static str, u64> = BTreeMap::new();
    for (name, &bytes) in categories {
        let group = if name.starts_with("tensor:weights/") {
            "weights"
        } else if name.starts_with("tensor:exchange/") {
            "exchange buffers"
        } else if name.starts_with("tensor:") {
            "activations"
        } else if name == "code" {
            "code"
        } else if name.contains("exchange") {
            "exchange programs"
        } else if name.contains("vertex") {
            "vertex state"
        } else if name.contains("scratch") {
            "worker scratch"
        } else if name.contains("constants") {
            "constants"
        } else {
            "other"
        };
        *out.entry(group).or_default() += bytes;
    }
    out
}

/// The figures of a run.
pub struct RunSummary {
    pub machine: String,
    pub clock_hz: u64,
    pub sram_per_tile: u64,
    pub total: u64,
    pub startup: u64,
    pub cropped: u64,
    pub estimate: u64,
    pub supersteps: u64,
    pub running_tiles: usize,
    /// Running tiles × cycles the simulator advanced, and the bundles its tiles issued.
    pub tile_cycles: u64,
    pub bundles: u64,
    /// Per output: (name, max abs, relative rms, values).
    pub errors: Vec<(String, f64, f64, usize)>,
    pub mismatches: Vec<(String, usize)>,
    pub bit_exact: bool,
    /// Busiest tile by SRAM: (tile, used bytes, groups).
    pub peak_sram: (u32, u64, BTreeMap<&'static str, u64>),
    pub compile_seconds: f64,
    pub simulate_seconds: f64,
    pub reference_seconds: f64,
    /// The plan's reference executor and the host f32 reference, side by side in those.
    pub plan_reference_seconds: f64,
    pub host_reference_seconds: f64,
    /// The layers' loop, when the layers ran as one.
    pub layer_loop: Option<LoopSummary>,
}

/// How a loop of layers ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSummary {
    pub iterations: u32,
    /// Steps in the body.
    pub steps: usize,
    /// Simulated cycles of every iteration, from the start of its first step to the end of its
    /// last.
    pub iteration_cycles: Vec<u64>,
    /// The busiest tile's per-layer weights: bytes of one iteration's slices.
    pub weights_per_layer: u64,
}

impl LoopSummary {
    fn new(compiled: &CompiledGraph, profile: &Profile, tile: u32) -> Option<LoopSummary> {
        let program = &compiled.lowered.program;
        let l = program.looped.as_ref()?;
        let times = step_times(profile, program);
        let steps = l.last + 1 - l.first;
        let iteration_cycles = (0..l.count as usize)
            .filter_map(|i| {
                let first = times.get(l.first + i * steps)?;
                let last = times.get(l.first + (i + 1) * steps - 1)?;
                Some(last.1.saturating_sub(first.0))
            })
            .collect();
        let weights_per_layer = l
            .layered
            .get(tile as usize)
            .map_or(0, |m| m.values().map(|&s| s as u64).sum());
        Some(LoopSummary {
            iterations: l.count,
            steps,
            iteration_cycles,
            weights_per_layer,
        })
    }
}

impl RunSummary {
    pub fn new(
        machine: &MachineDescription,
        compiled: &CompiledGraph,
        outcome: &Outcome,
        compile_seconds: f64,
    ) -> RunSummary {
        let report = &outcome.report;
        let busiest = report
            .profile
            .memory
            .iter()
            .max_by_key(|m| (m.used, std::cmp::Reverse(m.tile)));
        let peak_sram = busiest
            .map(|m| (m.tile, m.used, sram_groups(&m.categories)))
            .unwrap_or_default();
        RunSummary {
            machine: machine.name.clone(),
            clock_hz: machine.clock_hz,
            sram_per_tile: machine.sram_size() as u64,
            total: report.total_cycles,
            startup: report.startup_cycles,
            cropped: report.cropped_cycles,
            estimate: compiled.estimate.cycles,
            supersteps: report.supersteps,
            running_tiles: compiled.back.report.running_tiles.len(),
            tile_cycles: report.tile_cycles,
            bundles: report.profile.bundles.iter().sum(),
            errors: outcome
                .errors
                .iter()
                .map(|(n, e)| (n.clone(), e.max_abs, e.relative_rms, e.count))
                .collect(),
            mismatches: outcome.mismatches.clone(),
            bit_exact: outcome.bit_exact(),
            compile_seconds,
            simulate_seconds: outcome.simulate_seconds,
            reference_seconds: outcome.reference_seconds,
            plan_reference_seconds: outcome.plan_reference_seconds,
            host_reference_seconds: outcome.host_reference_seconds,
            layer_loop: LoopSummary::new(compiled, &report.profile, peak_sram.0),
            peak_sram,
        }
    }

    fn us(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_hz.max(1) as f64 * 1e6
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "simulated in {:.2} s: {} supersteps on {} tiles ({:.1} M tile-cycles/s, {:.1} M bundles/s)",
            self.simulate_seconds,
            self.supersteps,
            self.running_tiles,
            self.tile_cycles as f64 / self.simulate_seconds.max(1e-9) / 1e6,
            self.bundles as f64 / self.simulate_seconds.max(1e-9) / 1e6
        );
        let gap = (self.estimate as f64 - self.cropped as f64) / self.cropped.max(1) as f64 * 100.0;
        let _ = writeln!(
            out,
            "cycles: total {} (start-up {}, cropped {} = {:.1} us at {:.2} GHz); estimate {} ({gap:+.1}% vs cropped)",
            self.total,
            self.startup,
            self.cropped,
            self.us(self.cropped),
            self.clock_hz as f64 / 1e9,
            self.estimate
        );
        let (tile, used, groups) = &self.peak_sram;
        let parts: Vec<String> = groups
            .iter()
            .map(|(g, b)| format!("{g} {}K", b / 1024))
            .collect();
        let _ = writeln!(
            out,
            "peak SRAM per tile: {} KiB of {} KiB (tile {tile}: {})",
            used / 1024,
            self.sram_per_tile / 1024,
            parts.join(", ")
        );
        if let Some(l) = &self.layer_loop {
            let n = l.iteration_cycles.len().max(1) as u64;
            let mean = l.iteration_cycles.iter().sum::<u64>() / n;
            let _ = writeln!(
                out,
                "layers: one loop of {} iterations over {} steps; per layer {mean} cycles (first {}, last {}); tile {tile}'s weights {:.1} KiB per layer",
                l.iterations,
                l.steps,
                l.iteration_cycles.first().unwrap_or(&0),
                l.iteration_cycles.last().unwrap_or(&0),
                l.weights_per_layer as f64 / 1024.0
            );
        }
        for (name, max_abs, rel_rms, count) in &self.errors {
            let _ = writeln!(
                out,
                "error vs the host f32 reference, {name}: max abs {max_abs:.3e}, relative rms {rel_rms:.2e} over {count} values"
            );
        }
        let exact = if self.bit_exact {
            "yes".to_string()
        } else {
            let bad: Vec<String> = self
                .mismatches
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(o, n)| format!("{o}: {n} bytes differ"))
                .collect();
            format!("NO ({})", bad.join(", "))
        };
        let _ = writeln!(out, "bit-exact vs the plan's reference (kernel references on the same tile program): {exact}");
        let _ = writeln!(
            out,
            "host time: compile {:.2} s, simulate {:.2} s, references {:.2} s (plan's {:.2} s beside host f32 {:.2} s)",
            self.compile_seconds,
            self.simulate_seconds,
            self.reference_seconds,
            self.plan_reference_seconds,
            self.host_reference_seconds
        );
        out
    }

    /// The JSON report (`--report`).
    pub fn json(&self, steps: &[(u64, u64)], compiled: &CompiledGraph) -> String {
        let span = encoder_span(compiled, steps);
        let errors: serde_json::Map<String, serde_json::Value> = self
            .errors
            .iter()
            .map(|(n, m, r, c)| (n.clone(), json!({"max_abs": m, "rel_rms": r, "values": c})))
            .collect();
        let first = self.errors.first();
        let ops: Vec<serde_json::Value> = per_op(compiled, steps)
            .into_iter()
            .map(|(label, (sim, est, runs))| json!({"op": label, "simulated": sim, "estimated": est, "runs": runs}))
            .collect();
        let value = json!({
            "machine": self.machine,
            "cycles": {
                "total": self.total,
                "startup": self.startup,
                "cropped": self.cropped,
                "encoder_span": span,
                "estimate": self.estimate,
            },
            "error": {
                "max_abs": first.map(|e| e.1),
                "rel_rms": first.map(|e| e.2),
                "outputs": errors,
            },
            "bit_exact": self.bit_exact,
            "sram": {
                "peak_bytes_per_tile": self.peak_sram.1,
                "peak_tile": self.peak_sram.0,
                "by_category": self.peak_sram.2,
            },
            "time": {
                "compile_s": self.compile_seconds,
                "simulate_s": self.simulate_seconds,
                "reference_s": self.reference_seconds,
                "plan_reference_s": self.plan_reference_seconds,
                "host_reference_s": self.host_reference_seconds,
            },
            "supersteps": self.supersteps,
            "running_tiles": self.running_tiles,
            "tile_cycles": self.tile_cycles,
            "bundles": self.bundles,
            "layer_loop": self.layer_loop.as_ref().map(|l| json!({
                "iterations": l.iterations,
                "steps": l.steps,
                "iteration_cycles": l.iteration_cycles,
                "weights_per_layer_bytes": l.weights_per_layer,
            })),
            "ops": ops,
        });
        serde_json::to_string_pretty(&value).unwrap_or_default()
    }
}
