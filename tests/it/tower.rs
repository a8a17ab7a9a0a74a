//! The main job end to end: SigLIP vision towers loaded from checkpoints in the layouts Hugging
//! Face transformers writes, compiled for every tile, simulated, and checked — bit for bit
//! against the plan's reference, and within a documented tolerance of the host f32 reference
//! (which itself reproduces transformers' activations, `models/tests/it/hf_oracle.rs`) and of the
//! graph's own interpreter.
//!
//! Tolerances (relative rms of the outputs; measured values in the README):
//! * f16 GEMMs: < 5e-3 against f32 (only f16 storage and the AMP's f16 partials between
//!   K-blocks differ from f32);
//! * FP8 GEMMs (F143 activations at scale −4, F143 weights): < 0.15 against f32 — the
//!   quantization of every GEMM input to 3 mantissa bits, compounded over the layers of these
//!   small random-weight models — and < 8e-2 against the graph interpreter, which quantizes
//!   exactly where the graph says from exact sums: the chip's f16 partial sums and bias, and its
//!   f32 transcendentals, move values by an f16 ulp or so, which flips the odd FP8 rounding by a
//!   whole FP8 step (1/8 relative) and compounds over the layers (measured 3.6–4.7 %).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tessera::pipeline::{
    compile_graph, run_and_check, tower_graph, Model, Outcome, RunRecording, RunSpec,
};
use tessera_codegen::graph::{evaluate, HostTensor};
use tessera_codegen::plan::PlanOptions;
use tessera_models::pixels::PixelValues;
use tessera_models::reference::compare;
use tessera_models::siglip::graph::EncoderKParts;
use tessera_sim::MachineDescription;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/hf")
        .join(path)
}

fn pixels_of(path: &Path) -> PixelValues {
    let array = tessera::npy::NpyArray::read(path).unwrap();
    PixelValues::new(&array.shape, array.to_f32_vec().unwrap()).unwrap()
}

/// Compiles and runs `model` on `machine` and returns the outcome and the graph interpreter's
/// outputs.
/// The tower's graph compiled for `machine` with the default plan options.
fn compile(
    machine: &str,
    model: &Model,
    spec: &RunSpec,
) -> (
    MachineDescription,
    tessera_codegen::graph::Graph,
    tessera_codegen::compile::CompiledGraph,
) {
    let machine = MachineDescription::builtin(machine).unwrap();
    let graph = tower_graph(model, spec).unwrap();
    let options = PlanOptions::for_target(&tessera::target::target_of(&machine));
    let compiled = compile_graph(&machine, &graph, &model.store, &options, None)
        .unwrap_or_else(|e| panic!("{e}"));
    (machine, graph, compiled)
}

/// The built-in tower of `tessera run` and its run: batch 2, both layers, the head, FP8, the
/// default K-parts and key blocks.
fn main_job() -> (Model, RunSpec) {
    let spec = checkpoint_spec(None);
    (Model::builtin(1), spec)
}

/// Runs `compiled` and asserts it is bit-exact against the plan's reference.
fn assert_runs_bit_exactly(
    machine: &MachineDescription,
    model: &Model,
    spec: &RunSpec,
    compiled: &tessera_codegen::compile::CompiledGraph,
    pixels: &PixelValues,
) {
    let outcome = run_and_check(
        machine,
        model,
        spec,
        compiled,
        pixels,
        RunRecording::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.bit_exact(), "{:?}", outcome.mismatches);
}

/// The test checkpoint's usual run: 2 layers with the head, FP8, batch 2, K unsplit, with
/// `key_blocks`.
fn checkpoint_spec(key_blocks: Option<usize>) -> RunSpec {
    RunSpec {
        batch: 2,
        layers: 2,
        head: true,
        fp8: true,
        k_parts: None,
        key_blocks,
        values_transposed: None,
    }
}

/// The test checkpoint's run with the encoder's products split along K (2, 2, 2, 4), whole-row
/// attention, the head, FP8, batch 2.
fn k_split_spec() -> RunSpec {
    RunSpec {
        batch: 2,
        layers: 2,
        head: true,
        fp8: true,
        k_parts: Some(EncoderKParts {
            qkv: 2,
            out_proj: 2,
            fc1: 2,
            fc2: 4,
        }),
        key_blocks: Some(1),
        values_transposed: None,
    }
}

fn run(
    machine: &str,
    model: &Model,
    spec: &RunSpec,
    pixels: &PixelValues,
) -> (Outcome, BTreeMap<String, HostTensor>) {
    let (machine, graph, compiled) = compile(machine, model, spec);
    let outcome = run_and_check(
        &machine,
        model,
        spec,
        &compiled,
        pixels,
        RunRecording {
            kernel_spans: true,
            ..RunRecording::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let input = HostTensor::new(pixels.shape().to_vec(), pixels.data().to_vec()).unwrap();
    let inputs: BTreeMap<String, HostTensor> =
        [("pixel_values".to_string(), input)].into_iter().collect();
    let interpreted = evaluate(&graph, &inputs, &model.store).unwrap();
    (outcome, interpreted)
}

fn check(
    outcome: &Outcome,
    interpreted: &BTreeMap<String, HostTensor>,
    vs_f32: f64,
    vs_graph: f64,
) {
    assert!(
        outcome.bit_exact(),
        "not bit-exact against the plan's reference: {:?}",
        outcome.mismatches
    );
    assert_eq!(outcome.errors.len(), outcome.outputs.len());
    for (name, error) in &outcome.errors {
        assert!(
            error.relative_rms < vs_f32,
            "{name}: relative rms {} vs f32 (limit {vs_f32})",
            error.relative_rms
        );
        assert_eq!(error.non_finite, 0, "{name}");
    }
    for (name, _, values) in &outcome.outputs {
        let graph = compare(&interpreted[name].data, values);
        assert!(
            graph.relative_rms < vs_graph,
            "{name}: relative rms {} vs the graph interpreter (limit {vs_graph})",
            graph.relative_rms
        );
    }
}

#[test]
fn transformers_checkpoints_run_bit_exactly_on_the_small_chip() {
    for dir in ["vision-f32", "siglip-bf16-sharded"] {
        let model = Model::load(&testdata(dir), None).unwrap();
        assert!(model.head);
        let pixels = pixels_of(&testdata(&format!("{dir}/pixel_values.npy")));
        for fp8 in [true, false] {
            let spec = RunSpec {
                batch: 2,
                layers: 2,
                head: true,
                fp8,
                k_parts: None,
                key_blocks: Some(1),
                values_transposed: None,
            };
            let (outcome, interpreted) = run("small", &model, &spec, &pixels);
            let shapes: Vec<&[usize]> = outcome
                .outputs
                .iter()
                .map(|(_, s, _)| s.as_slice())
                .collect();
            assert_eq!(shapes, vec![&[2usize, 16, 64][..], &[2, 64][..]], "{dir}");
            if fp8 {
                check(&outcome, &interpreted, 0.15, 8e-2);
            } else {
                check(&outcome, &interpreted, 5e-3, 5e-3);
            }
        }
    }
}

/// Every encoder product with K split (`--k-parts 2,2,2,4`): the chunks run as the batch
/// entries of one product and a tree of adds sums them; the outputs stay bit-exact against the
/// plan's reference and within the FP8 tolerances of the unsplit graph.
#[test]
fn encoder_products_split_along_k_run_bit_exactly() {
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    let spec = k_split_spec();
    let graph = tower_graph(&model, &spec).unwrap();
    let graph = tessera_codegen::graph::inline_repeats(&graph).unwrap();
    let labels: Vec<&str> = graph.nodes.iter().map(|(_, n)| n.label.as_str()).collect();
    for split in ["qkv", "out_proj", "fc1", "fc2"] {
        for layer in 0..2 {
            let parts = format!("layer{layer}.{split}.parts");
            assert!(labels.contains(&parts.as_str()), "{parts} missing");
        }
    }
    // fc2's four chunks: two adds, then one.
    assert!(labels.contains(&"layer1.fc2.sum1.0"));
    let (outcome, interpreted) = run("small", &model, &spec, &pixels);
    check(&outcome, &interpreted, 0.15, 8e-2);
}

/// The encoder's attention split along the keys (`--key-blocks`): every block's scores,
/// `softmax_part` and product with its values on their own tiles, `attention_combine`
/// rescaling the blocks; bit-exact against the plan's reference and within the FP8 tolerances
/// of the graph interpreter (its exact softmax) and of f32, with the head, at batch 2.
#[test]
fn attention_split_along_the_keys_runs_bit_exactly() {
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    for blocks in [2, 4] {
        let spec = checkpoint_spec(Some(blocks));
        let graph = tower_graph(&model, &spec).unwrap();
        let graph = tessera_codegen::graph::inline_repeats(&graph).unwrap();
        // The patches' pad to whole FP8 K-blocks aside (`patches.pad`).
        let mnemonics: Vec<&str> = graph
            .nodes
            .iter()
            .filter(|(_, n)| n.label != "patches.pad")
            .map(|(_, n)| n.op.mnemonic())
            .collect();
        // 16 tokens in blocks of 8 or 4 keys: each block's values padded with zero rows to a
        // whole AMP K-block, as its exponentials are.
        for op in ["softmax_part", "attention_combine", "pad"] {
            assert_eq!(
                mnemonics.iter().filter(|m| **m == op).count(),
                2,
                "{op} once per layer"
            );
        }
        let softmaxes = mnemonics.iter().filter(|m| **m == "softmax").count();
        assert_eq!(
            softmaxes, 1,
            "the head's softmax only, none over whole encoder rows"
        );
        let (outcome, interpreted) = run("small", &model, &spec, &pixels);
        check(&outcome, &interpreted, 0.15, 8e-2);
    }
}

/// The values projected transposed (`--values-transposed true`): no element-wise relayout of
/// the values, the value bias through the output projection; bit-exact and within the same
/// tolerances, with the head, at batch 2.
#[test]
fn values_projected_transposed_run_bit_exactly() {
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    let spec = RunSpec {
        values_transposed: Some(true),
        ..checkpoint_spec(Some(2))
    };
    let graph = tower_graph(&model, &spec).unwrap();
    let graph = tessera_codegen::graph::inline_repeats(&graph).unwrap();
    let labels: Vec<&str> = graph.nodes.iter().map(|(_, n)| n.label.as_str()).collect();
    assert!(labels.contains(&"layer0.v.t.parts") || labels.contains(&"layer0.v.t"));
    assert!(
        !labels.iter().any(|l| l.ends_with(".v.pad")),
        "no pad of the values"
    );
    let (outcome, interpreted) = run("small", &model, &spec, &pixels);
    check(&outcome, &interpreted, 0.15, 8e-2);
}

/// With key blocks and the QKV product split along K, the values' partials are summed on their
/// own into `$CWEI` order (`add_cwei_f16`, `Precision::values_summed_as_weights`, the default):
/// each key block padded to whole K-blocks in the sum's operands, no pad of the values after
/// it, the planner's sum in weight order; bit-exact and within the FP8 tolerances, with the
/// head, at batch 2.
#[test]
fn values_summed_as_weights_run_bit_exactly() {
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    let spec = RunSpec {
        k_parts: Some(EncoderKParts {
            qkv: 2,
            ..EncoderKParts::NONE
        }),
        ..checkpoint_spec(Some(2))
    };
    let graph = tower_graph(&model, &spec).unwrap();
    let graph = tessera_codegen::graph::inline_repeats(&graph).unwrap();
    let labels: Vec<&str> = graph.nodes.iter().map(|(_, n)| n.label.as_str()).collect();
    for layer in 0..2 {
        for label in ["v.sum0.0", "qk.sum0.0", "v.part1.pad"] {
            let label = format!("layer{layer}.{label}");
            assert!(labels.contains(&label.as_str()), "{label} missing");
        }
    }
    assert!(
        !labels.iter().any(|l| l.ends_with(".v.pad")),
        "no pad of the values after their sum"
    );
    let (machine, _, compiled) = compile("small", &model, &spec);
    let value_sums: Vec<_> = compiled
        .mid
        .nodes
        .iter()
        .filter(|(_, n)| n.label.ends_with("v.sum0.0"))
        .collect();
    assert!(!value_sums.is_empty());
    for (_, n) in value_sums {
        assert!(
            matches!(n.op, tessera_codegen::mid::MidOp::Add { .. })
                && n.layout.order == tessera_codegen::layout::Order::Cwei,
            "{}: the values summed in $CWEI order",
            n.label
        );
    }
    let outcome = run_and_check(
        &machine,
        &model,
        &spec,
        &compiled,
        &pixels,
        RunRecording::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (_, interpreted) = run("small", &model, &spec, &pixels);
    check(&outcome, &interpreted, 0.15, 8e-2);
}

#[test]
fn a_112_pixel_tower_in_transformers_layout_runs_on_ipu21() {
    // 112×112 pixels (64 tokens), hidden 256, 4 heads, 2 layers, batch 2, with the head: written
    // as transformers' SiglipVisionModel.save_pretrained does (no name prefix), loaded back.
    let builtin = Model::builtin(7);
    let dir = std::env::temp_dir().join(format!("tessera-tower-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let selection = tessera_models::siglip::weights::WeightSelection::full(&builtin.config);
    tessera_models::siglip::save_checkpoint(
        &dir,
        &builtin.config,
        &builtin.store,
        &selection,
        &tessera_models::siglip::SaveOptions::default(),
    )
    .unwrap();
    let model = Model::load(&dir, None).unwrap();
    assert_eq!(model.info.as_ref().unwrap().prefix, "");
    let pixels = tessera::pipeline::synthetic_pixels(&model.config, 2, 11);
    let spec = checkpoint_spec(Some(1));
    let (outcome, interpreted) = run("ipu21", &model, &spec, &pixels);
    check(&outcome, &interpreted, 0.15, 8e-2);
    assert!(outcome.report.profile.sync_releases.len() as u64 == outcome.report.supersteps);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Host threads change nothing: the simulation (outputs, every cycle figure, the profile), the
/// plan's reference and the host reference (both parallel inside) give the same bits on one,
/// two and three threads — each run with its rayon pool and the simulator's of that size. Nor
/// do the simulator's fast paths: the three-thread run goes without them.
#[test]
fn the_whole_run_is_the_same_on_any_number_of_host_threads() {
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    let spec = checkpoint_spec(Some(1));
    let machine = MachineDescription::builtin("small").unwrap();
    let graph = tower_graph(&model, &spec).unwrap();
    let options = PlanOptions::for_target(&tessera::target::target_of(&machine));
    let compiled = compile_graph(&machine, &graph, &model.store, &options, None).unwrap();
    let outcomes: Vec<Outcome> = [1, 2, 3]
        .into_iter()
        .map(|threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                run_and_check(
                    &machine,
                    &model,
                    &spec,
                    &compiled,
                    &pixels,
                    RunRecording {
                        threads: Some(threads),
                        progress: None,
                        kernel_spans: true,
                        fast_paths: threads != 3,
                    },
                )
            })
            .unwrap()
        })
        .collect();
    let bits = |outcome: &Outcome| {
        let values: Vec<Vec<u32>> = outcome
            .outputs
            .iter()
            .map(|(_, _, v)| v.iter().map(|x| x.to_bits()).collect())
            .collect();
        let errors: Vec<(u64, u64, usize)> = outcome
            .errors
            .iter()
            .map(|(_, e)| {
                (
                    e.max_abs.to_bits(),
                    e.relative_rms.to_bits(),
                    e.max_abs_index,
                )
            })
            .collect();
        (values, errors, outcome.mismatches.clone())
    };
    let first = &outcomes[0];
    assert!(first.bit_exact());
    for other in &outcomes[1..] {
        assert_eq!(other.report, first.report);
        assert_eq!(bits(other), bits(first));
    }
}

/// Products whose operand arrives in rows of whole AMP K-blocks may read it where the exchange
/// left it (`gemm_*` with A in rows) instead of relaid into panels: the planner picks that for
/// the built-in model's QKV product at batch 2 on ipu21, and the run stays bit-exact.
#[test]
fn products_read_rows_where_the_exchange_left_them() {
    use tessera_codegen::layout::order::Order;
    use tessera_codegen::mid::MidOp;
    let (model, spec) = main_job();
    let (machine, _, compiled) = compile("ipu21", &model, &spec);
    let nodes = &compiled.mid.nodes;
    let in_rows: Vec<&str> = nodes
        .iter()
        .filter_map(|(_, n)| {
            let MidOp::MatMul { a, .. } = n.op else {
                return None;
            };
            matches!(nodes[a].layout.order, Order::RowMajor { .. }).then_some(n.label.as_str())
        })
        .collect();
    assert!(
        in_rows.iter().any(|l| l.ends_with("qkv")),
        "the QKV product reads its rows: {in_rows:?}"
    );
    let pixels = tessera::pipeline::synthetic_pixels(&model.config, 2, 3);
    assert_runs_bit_exactly(&machine, &model, &spec, &compiled, &pixels);
}

/// A tile's copies of its own source block run in the producer's step or go, the block written
/// straight into its part of the consumer's operand (`LowerOptions::own_blocks_early`:
/// `lower/rebalance.rs`, `lower/in_consumer.rs`): the built-in tower compiles for the ipu21 with
/// them; the same plan lowered without them makes more copy calls and places no source buffer
/// inside another; both tile programs verify. (That runs with them are bit-exact is every run
/// test's business: the compiler takes them first.)
#[test]
fn own_blocks_go_into_their_consumers() {
    use tessera_codegen::lower::{lower_with, LowerOptions};
    use tessera_codegen::tile::verify::verify;
    let (model, spec) = main_job();
    let (machine, _graph, compiled) = compile("ipu21", &model, &spec);
    assert!(
        compiled.lower_options.own_blocks_early,
        "the compiler takes own blocks early first"
    );
    let without = lower_with(
        &compiled.mid,
        &model.store,
        machine.tiles,
        LowerOptions {
            own_blocks_early: false,
            ..compiled.lower_options
        },
    )
    .unwrap();
    verify(&compiled.lowered.program).unwrap();
    verify(&without.program).unwrap();
    let inside = |p: &tessera_codegen::tile::Program| {
        p.tiles
            .iter()
            .flat_map(|t| &t.buffers)
            .filter(|b| b.alias_of.is_some() && b.alias_offset > 0)
            .count()
    };
    let calls = |p: &tessera_codegen::tile::Program| {
        p.tiles
            .iter()
            .map(|t| t.calls.iter().map(Vec::len).sum::<usize>())
            .sum::<usize>()
    };
    assert!(
        inside(&compiled.lowered.program) > 0,
        "no block placed in its consumer"
    );
    assert_eq!(inside(&without.program), 0);
    assert!(calls(&compiled.lowered.program) < calls(&without.program));
}

/// Exchanges that stage nothing on their senders join the earliest exchange phase in use once
/// their source is ready (`LowerOptions::early_exchanges`): the built-in tower compiles for the
/// ipu21 with them, in fewer phases than the same plan lowered without them, and both tile
/// programs verify. (That runs with them are bit-exact is every run test's business: the
/// compiler takes them first.)
#[test]
fn exchanges_without_sender_copies_join_earlier_phases() {
    use tessera_codegen::lower::{lower_with, LowerOptions};
    use tessera_codegen::tile::verify::verify;
    let (model, spec) = main_job();
    let (machine, _graph, compiled) = compile("ipu21", &model, &spec);
    assert!(
        compiled.lower_options.early_exchanges,
        "the compiler takes early exchanges first"
    );
    let late = lower_with(
        &compiled.mid,
        &model.store,
        machine.tiles,
        LowerOptions {
            early_exchanges: false,
            ..compiled.lower_options
        },
    )
    .unwrap();
    verify(&compiled.lowered.program).unwrap();
    verify(&late.program).unwrap();
    // Per exchanged op: the compute steps before the phase it runs in.
    let phase_of = |lowered: &tessera_codegen::lower::Lowered| {
        let mut computes = 0;
        let mut at = BTreeMap::new();
        for (step, ops) in lowered.program.steps.iter().zip(&lowered.step_ops) {
            match step {
                tessera_codegen::tile::StepKind::Compute { .. } => computes += 1,
                tessera_codegen::tile::StepKind::Exchange { .. } => {
                    for op in ops {
                        at.entry(op.clone()).or_insert(computes);
                    }
                }
            }
        }
        at
    };
    let (early, later) = (phase_of(&compiled.lowered), phase_of(&late));
    let moved: Vec<&String> = early
        .iter()
        .filter(|(op, &step)| later.get(*op).is_some_and(|&l| step < l))
        .map(|(op, _)| op)
        .collect();
    assert!(!moved.is_empty(), "no exchange moved to an earlier phase");
    for (op, step) in &early {
        assert!(
            later.get(op).is_none_or(|l| step <= l),
            "{op} runs later with early exchanges"
        );
    }
    assert!(
        compiled.lowered.program.phases.len() <= late.program.phases.len(),
        "no phase is added"
    );
}

/// Sums of K-chunks and bias adds whose operands can sit in three different memory elements
/// take the kernels' paced loops (`ResidualAdd`/`BiasAdd`/`AddBias` with element slots, a
/// fresh result) where the kernels' estimates say it pays, and the run stays bit-exact.
#[test]
fn sums_and_bias_adds_take_the_one_bundle_loop_where_it_pays() {
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    let spec = k_split_spec();
    let (machine, _graph, compiled) = compile("small", &model, &spec);
    let mut fast = 0;
    for tile in &compiled.lowered.program.tiles {
        for call in tile.calls.iter().flatten() {
            if let Some(slots) = call.params.elementwise_slots() {
                let [a, b, c] = slots;
                assert!(a != b && a != c && b != c, "{slots:?}");
                fast += 1;
            }
        }
    }
    assert!(fast > 0, "no sum or bias add in element slots");
    assert_runs_bit_exactly(&machine, &model, &spec, &compiled, &pixels);
}

/// A product split along K with its result in panels of 16 columns (`PlanOptions::
/// panel_results`, here forced with `--force "OP=LABEL out panels"`): one `gemm_*` call per
/// column block, the same A, each block's `$CWEI` blocks of B and its panel of the result; the
/// sums read a column block's rows as one run. The run stays bit-exact, every product of the
/// split in panels.
#[test]
fn split_products_with_results_in_panels_run_bit_exactly() {
    use tessera_codegen::layout::order::Order;
    use tessera_codegen::mid::MidOp;
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    let pixels = pixels_of(&testdata("vision-f32/pixel_values.npy"));
    let spec = k_split_spec();
    let (_, graph, first) = compile("small", &model, &spec);
    let machine = MachineDescription::builtin("small").unwrap();
    let mut options = PlanOptions::for_target(&tessera::target::target_of(&machine));
    for split in ["qkv", "fc1"] {
        let op = format!("layer0.{split}.parts");
        let (_, _, label, _) = first
            .report
            .ops
            .iter()
            .find(|(name, ..)| *name == op)
            .unwrap_or_else(|| panic!("{op} in the plan"));
        let label = label.trim_end_matches(" out panels");
        options.force.push((op, format!("{label} out panels")));
    }
    let compiled = compile_graph(&machine, &graph, &model.store, &options, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let nodes = &compiled.mid.nodes;
    let in_panels: Vec<&str> = nodes
        .iter()
        .filter_map(|(_, n)| {
            let MidOp::MatMul { .. } = n.op else {
                return None;
            };
            (n.layout.order == Order::Panels).then_some(n.label.as_str())
        })
        .collect();
    for split in ["qkv", "fc1"] {
        assert!(
            in_panels
                .iter()
                .any(|l| *l == format!("layer0.{split}.parts")),
            "layer0.{split}.parts in panels: {in_panels:?}"
        );
    }
    assert_runs_bit_exactly(&machine, &model, &spec, &compiled, &pixels);
}

/// The refinements after the search (`codegen/src/plan/refine.rs`: another strategy for a sum,
/// the later ops replayed by label; split products' results in panels) keep a change only
/// where the plan's cost falls: the refined plan never costs more than the search's own.
#[test]
fn refinements_after_the_search_never_raise_the_plan_cost() {
    use tessera_codegen::plan::plan;
    let model = Model::load(&testdata("vision-f32"), None).unwrap();
    for (spec, machine) in [(k_split_spec(), "small"), (checkpoint_spec(None), "ipu21")] {
        let graph = tower_graph(&model, &spec).unwrap();
        let target = tessera::target::target_of(&MachineDescription::builtin(machine).unwrap());
        let on = PlanOptions::for_target(&target);
        let off = PlanOptions {
            refine_sums: false,
            panel_results: false,
            ..on.clone()
        };
        let cost = |o: &PlanOptions| plan(&graph, &target, o).unwrap().report.finalists[0];
        let (refined, searched) = (cost(&on), cost(&off));
        assert!(refined <= searched, "{machine}: {refined} > {searched}");
    }
}
