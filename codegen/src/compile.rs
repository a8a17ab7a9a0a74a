//! The whole compiler as one call: plan a graph (a bounded search over per-op layouts), build
//! and verify the chosen distributed-level program, lower and verify the tile program, place it
//! and emit the image — placing once, and falling back to the next finalist only when a plan
//! does not fit a tile. Every stage's error is typed and names where it happened.

use crate::emit::{self, EmitError};
use crate::estimate::{estimate, Estimate};
use crate::graph::inline::inline_repeats;
use crate::graph::split_k::{split_contraction, SplitError};
use crate::graph::weights::WeightStore;
use crate::graph::{Graph, ValueHandle};
use crate::layout::order::AMP_BLOCK_BYTES;
use crate::lower::{lower_with, LowerError, LowerOptions, Lowered};
use crate::mid::MidProgram;
use crate::plan::{build::build, plan_with_progress, Fallback, PlanError, PlanOptions, PlanReport};
use crate::target::Target;
use crate::tile::verify::{verify, TileVerifyError};
use std::time::Instant;

/// Why a graph did not compile.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Lower(#[from] LowerError),
    #[error(transparent)]
    Tile(#[from] TileVerifyError),
    #[error(transparent)]
    Emit(#[from] EmitError),
    #[error(transparent)]
    Split(#[from] SplitError),
    /// Weighing a phase's multicasts as unicasts (`exchange::spread`).
    #[error("E-COMPILE-003 weighing multicasts as unicasts: {0}")]
    Spread(#[source] crate::exchange::ExchangeError),
    #[error("E-COMPILE-001 no finalist fits the machine: {}", .0.join("; "))]
    NoFinalistFits(Vec<String>),
    #[error("E-COMPILE-002 {first}; with SRAM-saving strategies: {second}")]
    NothingFits {
        first: Box<CompileError>,
        second: Box<CompileError>,
    },
}

/// How long each stage took, in seconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct StageTimes {
    pub plan: f64,
    pub lower: f64,
    pub emit: f64,
}

/// A compiled graph.
pub struct CompiledGraph {
    /// The graph as compiled (repeats unrolled).
    pub graph: Graph,
    pub mid: MidProgram,
    pub lowered: Lowered,
    pub back: emit::Compiled,
    pub estimate: Estimate,
    pub report: PlanReport,
    /// Which finalist was emitted (0 = the planner's best).
    pub finalist: usize,
    /// The lowering it was emitted with (the first of `LOWER_LADDER` that placed).
    pub lower_options: LowerOptions,
    pub times: StageTimes,
}

/// Progress of a compile, for a front end's progress display.
pub trait Progress: Sync {
    fn stage(&self, stage: &str);
}

impl<F: Fn(&str) + Sync> Progress for F {
    fn stage(&self, stage: &str) {
        self(stage)
    }
}

/// Plans, lowers, places and emits `graph` with weights from `store` for `target`.
pub fn compile(
    graph: &Graph,
    store: &WeightStore,
    target: &Target,
    options: &PlanOptions,
    progress: Option<&dyn Progress>,
) -> Result<CompiledGraph, CompileError> {
    let clock = Instant::now();
    let say = |s: &str| {
        if options.trace.timing {
            options
                .trace
                .line(&format!("[{:8.2} s] {s}", clock.elapsed().as_secs_f64()));
        }
        if let Some(p) = progress {
            p.stage(s);
        }
    };
    let mut times = StageTimes::default();
    if options.sram_saving {
        // Asked for from the start: the same splitting and tightening as the fallback.
        return compile_split(graph, store, target, options, &say, progress, &mut times);
    }
    match compile_with(graph, store, target, options, &say, progress, &mut times) {
        // A plan that does not fit is tried again with strategies that spend cycles to save
        // SRAM (weights stored once and gathered at use); the first error is kept when that
        // fails too, as it names the smaller search's limit.
        Err(
            first @ (CompileError::Plan(PlanError::DoesNotFit { .. })
            | CompileError::NoFinalistFits(_)),
        ) if !options.sram_saving => {
            say(&format!(
                "{first}; planning again with SRAM-saving strategies"
            ));
            let saving = PlanOptions {
                sram_saving: true,
                ..options.clone()
            };
            match compile_split(graph, store, target, &saving, &say, progress, &mut times) {
                Ok(mut compiled) => {
                    // The report says why the slower strategies were searched.
                    compiled.report.fallbacks.push(Fallback::SramSaving {
                        because: first.to_string(),
                    });
                    Ok(compiled)
                }
                Err(second) => Err(CompileError::NothingFits {
                    first: Box::new(first),
                    second: Box::new(second),
                }),
            }
        }
        other => other,
    }
}

/// Products split along K at most this many times in one compile.
const MAX_SPLITS: usize = 4;

/// Times an SRAM-saving compile plans again with a smaller budget when no finalist fits, and
/// the bytes taken off each time (measured on So400m batch 2: the planner's fixed reserve fell
/// short by up to 18 KiB of copy tables and exchange code on the busiest tile, and its
/// accepted plan had ~34 KiB of headroom).
const MAX_TIGHTENINGS: usize = 2;
const TIGHTENING_BYTES: u32 = 48 * 1024;

/// [`compile_with`], splitting a matrix product along K into two (see
/// [`split_contraction`]) and planning again whenever planning stops at a product no strategy
/// fits — each part needs half the SRAM — at most [`MAX_SPLITS`] times, and planning again
/// with a smaller budget when no finalist fits placement, at most [`MAX_TIGHTENINGS`] times.
/// The report says which products were split, what was planned again, and why.
fn compile_split(
    graph: &Graph,
    store: &WeightStore,
    target: &Target,
    options: &PlanOptions,
    say: &dyn Fn(&str),
    progress: Option<&dyn Progress>,
    times: &mut StageTimes,
) -> Result<CompiledGraph, CompileError> {
    let mut current = if options.layer_loop {
        crate::graph::inline::inline_repeats_as_loop(graph)
    } else {
        inline_repeats(graph)
    }
    .map_err(SplitError::from)?;
    let mut splits: Vec<Fallback> = Vec::new();
    let mut options = options.clone();
    let mut tightened = 0;
    loop {
        match compile_with(&current, store, target, &options, say, progress, times) {
            // The planner's SRAM model leaves out copy tables and exchange code, so a plan it
            // accepts can still fail placement: plan again leaving more of each tile to them
            // (and split what then does not fit), at most MAX_TIGHTENINGS times.
            Err(CompileError::NoFinalistFits(refusals)) if tightened < MAX_TIGHTENINGS => {
                tightened += 1;
                options.sram_budget = options.sram_budget.saturating_sub(TIGHTENING_BYTES);
                options.sram_saving_budget =
                    options.sram_saving_budget.saturating_sub(TIGHTENING_BYTES);
                let why = Fallback::Tightened {
                    kib: TIGHTENING_BYTES / 1024,
                    refusals: refusals.join("; "),
                };
                say(&why.to_string());
                splits.push(why);
            }
            Err(CompileError::Plan(PlanError::DoesNotFit {
                node,
                label,
                reasons,
                ..
            })) if splits.len() - tightened < MAX_SPLITS
                && u32::try_from(node).ok().is_some_and(|n| {
                    current
                        .node(ValueHandle::from_index(n))
                        .is_some_and(|n| matches!(n.op, crate::graph::Op::MatMul { .. }))
                }) =>
            {
                let Some(product) = u32::try_from(node).ok().map(ValueHandle::from_index) else {
                    return Err(SplitError::NotAProduct(node).into());
                };
                let Some((_, b)) = current
                    .node(product)
                    .and_then(|n| n.op.operands().get(1).copied())
                else {
                    return Err(SplitError::NotAProduct(node).into());
                };
                let granule =
                    AMP_BLOCK_BYTES as usize / current.nodes[b].ty.dtype.size_bytes().max(1);
                let why = Fallback::SplitK {
                    label,
                    refusals: crate::plan::prune::describe(&reasons),
                };
                say(&why.to_string());
                current = split_contraction(&current, product, 2, granule)?;
                splits.push(why);
            }
            Err(e) => return Err(e),
            Ok(mut compiled) => {
                compiled.report.fallbacks.extend(splits);
                return Ok(compiled);
            }
        }
    }
}

fn compile_with(
    graph: &Graph,
    store: &WeightStore,
    target: &Target,
    options: &PlanOptions,
    say: &dyn Fn(&str),
    progress: Option<&dyn Progress>,
    times: &mut StageTimes,
) -> Result<CompiledGraph, CompileError> {
    let started = Instant::now();
    say("planning");
    let tick = |p: crate::plan::SearchProgress| {
        if let Some(progress) = progress {
            progress.stage(&format!(
                "planning: op {} of {}, {} candidates costed",
                p.ops_done + 1,
                p.ops,
                p.costed
            ));
        }
    };
    let planned = plan_with_progress(graph, target, options, &tick)?;
    times.plan += started.elapsed().as_secs_f64();
    let mut refusals = Vec::new();
    for finalist in 0..planned.finalists.len() {
        // Paced copies, early exchanges and own blocks early first; a finalist that does not
        // lower or place with them is tried again with fewer before the next finalist. A plan
        // that saves SRAM spends it on neither early exchanges nor own blocks early (at 27
        // So400m layers the first do not place: each layer's gathered weights would arrive at
        // the start of the layer; at batch 4 the second do not: a product's operand would be
        // live beside its gathered weights).
        let ladder = if options.sram_saving {
            &LOWER_LADDER[2..]
        } else {
            &LOWER_LADDER[..]
        };
        for (attempt, options_lower) in ladder.iter().copied().enumerate() {
            let last_attempt = attempt + 1 == ladder.len();
            say(&format!("building finalist {finalist}"));
            let started = Instant::now();
            let (mid, log) = build(&planned, finalist)?;
            say("lowering");
            let mut lowered = match lower_with(&mid, store, target.tiles, options_lower) {
                Ok(lowered) => lowered,
                Err(e) if !last_attempt => {
                    say(&format!(
                        "finalist {finalist} with {} does not lower: {e}",
                        lower_options_text(options_lower)
                    ));
                    times.lower += started.elapsed().as_secs_f64();
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if options.trace.timing {
                constants_by_op(&lowered.program, &options.trace);
            }
            crate::exchange::spread::spread_multicasts(target, &mut lowered.program)
                .map_err(CompileError::Spread)?;
            say("verifying the tile program");
            verify(&lowered.program)?;
            times.lower += started.elapsed().as_secs_f64();
            say("placing and emitting");
            let started = Instant::now();
            match emit::compile(target, &lowered.program) {
                Ok(back) => {
                    times.emit += started.elapsed().as_secs_f64();
                    if options.trace.timing {
                        let placeholder: Vec<Vec<u32>> = lowered
                            .program
                            .tiles
                            .iter()
                            .map(|t| vec![0; t.buffers.len()])
                            .collect();
                        for (phase, cycles) in back.report.phase_cycles.iter().enumerate() {
                            let load = crate::exchange::ExchangePhase {
                                transfers: lowered.program.resolve_phase(phase, &placeholder),
                            }
                            .load();
                            let paired = back.report.phase_paired.get(phase).copied();
                            options.trace.line(&format!(
                                "  phase {phase}: scheduled in {cycles} cycles ({load}; {} paired)",
                                paired.unwrap_or(0)
                            ));
                        }
                    }
                    let estimate = estimate(target, &lowered.program, &back.report.phase_cycles);
                    let mut report = planned.report.clone();
                    report.rewrites = log.applied;
                    report
                        .rewrites
                        .extend(log.refused.into_iter().map(|r| format!("refused: {r}")));
                    return Ok(CompiledGraph {
                        graph: planned.graph.clone(),
                        mid,
                        lowered,
                        back,
                        estimate,
                        report,
                        finalist,
                        lower_options: options_lower,
                        times: *times,
                    });
                }
                // A finalist that does not fit the tiles (its buffers, or its code and vertex
                // state in the standard region) gives way to the next.
                Err(e @ (EmitError::Place(_) | EmitError::DoesNotFit { .. })) => {
                    say(&format!(
                        "finalist {finalist} with {} does not fit: {e}",
                        lower_options_text(options_lower)
                    ));
                    times.emit += started.elapsed().as_secs_f64();
                    if last_attempt {
                        refusals.push(format!("finalist {finalist}: {e}"));
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Err(CompileError::NoFinalistFits(refusals))
}

/// The lowerings a finalist is tried with, in order: each gives up a choice that costs
/// placement freedom (own blocks early and early exchanges lengthen destination buffers'
/// lives; paced copies put buffers in element slots).
const LOWER_LADDER: [LowerOptions; 4] = [
    LowerOptions {
        paced_copies: true,
        early_exchanges: true,
        own_blocks_early: true,
    },
    LowerOptions {
        paced_copies: true,
        early_exchanges: true,
        own_blocks_early: false,
    },
    LowerOptions {
        paced_copies: true,
        early_exchanges: false,
        own_blocks_early: false,
    },
    LowerOptions {
        paced_copies: false,
        early_exchanges: false,
        own_blocks_early: false,
    },
];

/// The choices of `options` for people.
fn lower_options_text(options: LowerOptions) -> String {
    let LowerOptions {
        paced_copies,
        early_exchanges,
        own_blocks_early,
    } = options;
    let yes_no = |on: bool| if on { "on" } else { "off" };
    format!(
        "paced copies {}, early exchanges {}, own blocks early {}",
        yes_no(paced_copies),
        yes_no(early_exchanges),
        yes_no(own_blocks_early)
    )
}

/// Traces, per op, the most constant bytes (kernel tables) one tile holds for it and the tile.
fn constants_by_op(program: &crate::tile::Program, trace: &crate::trace::Trace) {
    let mut worst: std::collections::BTreeMap<&str, (u64, u32)> = Default::default();
    for tile in &program.tiles {
        let mut per: std::collections::BTreeMap<&str, u64> = Default::default();
        for b in &tile.buffers {
            if b.category == crate::tile::BufferCategory::Constants {
                let op = b.name.rsplit_once('.').map_or("", |(op, _)| op);
                *per.entry(op).or_default() += b.bytes as u64;
            }
        }
        for (op, bytes) in per {
            let w = worst.entry(op).or_default();
            if bytes > w.0 {
                *w = (bytes, tile.tile);
            }
        }
    }
    for (op, (bytes, tile)) in worst {
        trace.line(&format!("  constants {op}: {bytes} bytes on tile {tile}"));
    }
}
