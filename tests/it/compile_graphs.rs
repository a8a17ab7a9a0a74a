//! Small graphs through the whole compiler (plan → distributed program → tile program → image)
//! and the simulator on the `small` machine, every output compared bit for bit with the plan's
//! reference executor and checked against the graph's own interpreter.

use tessera::random_graph::random;
use tessera::target::target_of;
use tessera_codegen::compile::compile;
use tessera_codegen::graph::weights::{HostTensor, WeightStore};
use tessera_codegen::graph::{DType, Graph, GraphBuilder};
use tessera_codegen::plan::PlanOptions;
use tessera_codegen::refexec;
use tessera_sim::chip::{Chip, RunOptions};
use tessera_sim::MachineDescription;

/// Compiles and runs `graph` on `machine`, returning (plan reference, simulated) outputs.
fn run(
    machine: &str,
    graph: &Graph,
    store: &WeightStore,
    inputs: &[(String, Vec<u8>)],
) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    run_with(machine, graph, store, inputs, |_| {}).0
}

/// Per output: name, the plan reference's bytes, the simulated bytes.
type Outputs = Vec<(String, Vec<u8>, Vec<u8>)>;

/// [`run`] with the planner's options adjusted by `options`; also returns the plan report.
fn run_with(
    machine: &str,
    graph: &Graph,
    store: &WeightStore,
    inputs: &[(String, Vec<u8>)],
    options: impl FnOnce(&mut PlanOptions),
) -> (Outputs, tessera_codegen::plan::PlanReport) {
    let machine = MachineDescription::builtin(machine).unwrap();
    let target = target_of(&machine);
    let mut plan_options = PlanOptions::for_target(&target);
    options(&mut plan_options);
    let compiled =
        compile(graph, store, &target, &plan_options, None).unwrap_or_else(|e| panic!("{e}"));
    let mut chip = Chip::new(&machine).unwrap();
    chip.load_image(&compiled.back.image).unwrap();
    let report = chip
        .run(inputs, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = refexec::execute(&compiled.lowered.program, inputs).unwrap();
    let results = expected
        .into_iter()
        .map(|(name, want)| {
            let got = report.output(&name).unwrap().to_vec();
            (name, want, got)
        })
        .collect();
    (results, compiled.report)
}

fn assert_bit_exact(results: &[(String, Vec<u8>, Vec<u8>)]) {
    for (name, want, got) in results {
        if want != got {
            let first = (0..want.len()).find(|&i| want[i] != got[i]).unwrap_or(0);
            let count = want.iter().zip(got).filter(|(a, b)| a != b).count();
            panic!("output `{name}`: {count} of {} bytes differ, first at {first}: plan {:#04x}, simulated {:#04x}", want.len(), want[first], got[first]);
        }
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn cast_and_view() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2, 3, 8, 8]).unwrap();
    let h = b.cast("h", x, DType::F16).unwrap();
    let r = b.reshape("r", h, [2, 3, 2, 4, 2, 4]).unwrap();
    let t = b.transpose("t", r, &[0, 2, 4, 1, 3, 5]).unwrap();
    let p = b.reshape("p", t, [8, 48]).unwrap();
    b.output("h", h).unwrap();
    b.output("p", p).unwrap();
    let g = b.finish().unwrap();
    let inputs = vec![("x".to_string(), f32_bytes(&random(1, 2 * 3 * 64, 1.0)))];
    assert_bit_exact(&run("small", &g, &WeightStore::new(), &inputs));
}

/// `y = x · w + bias` with x `[m, k]` f16, w `[k, n]` f16 and bias `[n]` f32, seeded weights
/// and input from `seed`.
fn matmul_with_bias(
    m: usize,
    k: usize,
    n: usize,
    seed: u64,
) -> (Graph, WeightStore, Vec<(String, Vec<u8>)>) {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [m, k]).unwrap();
    let w = b.weight("w", DType::F16, [k, n]).unwrap();
    let bias = b.weight("bias", DType::F32, [n]).unwrap();
    let y = b.matmul("mm", x, w).unwrap();
    let y = b.bias_add("mm.bias", y, bias).unwrap();
    b.output("y", y).unwrap();
    let g = b.finish().unwrap();
    let mut store = WeightStore::new();
    store.insert(
        "w",
        HostTensor::new([k, n], random(seed, k * n, 0.2)).unwrap(),
    );
    store.insert(
        "bias",
        HostTensor::new([n], random(seed + 1, n, 0.5)).unwrap(),
    );
    let x: Vec<u8> = random(seed + 2, m * k, 1.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    (g, store, vec![("x".to_string(), x)])
}

#[test]
fn a_matmul_with_bias() {
    let (g, store, inputs) = matmul_with_bias(20, 48, 40, 2);
    assert_bit_exact(&run("small", &g, &store, &inputs));
}

/// A sum of two products and the bias add after it (the encoder's products split along K) run
/// as one `add_bias` call: the rewrite is reported, and every output bit is what the add and the
/// bias add give apart.
#[test]
fn a_sum_and_its_bias_add_run_as_one_pass_with_the_same_bits() {
    let (m, k, n) = (24, 32, 48);
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [m, k]).unwrap();
    let w0 = b.weight("w0", DType::F16, [k, n]).unwrap();
    let w1 = b.weight("w1", DType::F16, [k, n]).unwrap();
    let bias = b.weight("bias", DType::F32, [n]).unwrap();
    let y0 = b.matmul("part0", x, w0).unwrap();
    let y1 = b.matmul("part1", x, w1).unwrap();
    let s = b.add("sum", y0, y1).unwrap();
    let y = b.bias_add("sum.bias", s, bias).unwrap();
    b.output("y", y).unwrap();
    let g = b.finish().unwrap();
    let mut store = WeightStore::new();
    for (i, name) in ["w0", "w1"].into_iter().enumerate() {
        let w = HostTensor::new([k, n], random(7 + i as u64, k * n, 0.3)).unwrap();
        store.insert(name, w);
    }
    store.insert("bias", HostTensor::new([n], random(9, n, 2.0)).unwrap());
    let x: Vec<u8> = random(10, m * k, 1.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    let inputs = vec![("x".to_string(), x)];
    let (fused, report) = run_with("small", &g, &store, &inputs, |_| {});
    assert!(
        report.rewrites.iter().any(|r| r.contains("one add_bias")),
        "{:?}",
        report.rewrites
    );
    assert_bit_exact(&fused);
    let (apart, report) = run_with("small", &g, &store, &inputs, |o| {
        o.fuse_bias_adds = false;
    });
    assert!(!report.rewrites.iter().any(|r| r.contains("add_bias")));
    assert_bit_exact(&apart);
    assert_eq!(fused, apart);
}

/// A sum of parts (a product's K-chunks) and the bias add after it: the bias is added in the
/// sum's pass, every output bit as the two ops give apart.
#[test]
fn sum_parts_and_its_bias_add_run_as_one_pass_with_the_same_bits() {
    let (m, c, n) = (6, 5, 64);
    let mut b = GraphBuilder::new();
    let parts = b.input("parts", DType::F16, [m, c, n]).unwrap();
    let bias = b.weight("bias", DType::F32, [n]).unwrap();
    let s = b.sum_parts("sum", parts).unwrap();
    let y = b.bias_add("sum.bias", s, bias).unwrap();
    b.output("y", y).unwrap();
    let g = b.finish().unwrap();
    let mut store = WeightStore::new();
    store.insert("bias", HostTensor::new([n], random(11, n, 2.0)).unwrap());
    let x: Vec<u8> = random(12, m * c * n, 3.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    let inputs = vec![("parts".to_string(), x)];
    let (fused, report) = run_with("small", &g, &store, &inputs, |_| {});
    assert!(
        report.rewrites.iter().any(|r| r.contains("one sum_parts")),
        "{:?}",
        report.rewrites
    );
    assert_bit_exact(&fused);
    let (apart, _) = run_with("small", &g, &store, &inputs, |o| {
        o.fuse_bias_adds = false;
    });
    assert_bit_exact(&apart);
    assert_eq!(fused, apart);
}

/// SRAM-saving plans store a replicated weight once — on the product's grid, K split over the
/// row blocks, or (`spread_stored`) in the smallest whole K- and column-granule blocks dealt
/// around the chip's tiles — and gather it into the replicated layout before the product: the
/// result is the same bits either way.
#[test]
fn a_weight_stored_once_and_gathered_before_use() {
    for spread in [false, true] {
        stored_once_and_gathered(spread);
    }
}

fn stored_once_and_gathered(spread: bool) {
    let (g, store, inputs) = matmul_with_bias(64, 96, 64, 5);
    let (results, report) = run_with("small", &g, &store, &inputs, |o| {
        o.sram_saving = true;
        o.spread_stored = Some(spread);
        o.force = vec![(
            "mm".to_string(),
            "grid 4x4 cols/16 rows/16 weights gathered".to_string(),
        )];
    });
    let chosen = &report.ops.iter().find(|op| op.0 == "mm").unwrap().2;
    assert!(chosen.ends_with("weights gathered"), "{}", report.text());
    assert_bit_exact(&results);
}

/// A product whose operand blocks cannot fit a tile's budget under any strategy is split
/// along K into products that do, summed on the chip: planned, placed, run and bit-exact
/// against the plan's reference, with the report saying which product was split and why.
#[test]
fn a_product_too_large_for_any_strategy_is_split_along_k() {
    let (g, store, inputs) = matmul_with_bias(64, 4096, 64, 9);
    let (results, report) = run_with("small", &g, &store, &inputs, |o| {
        o.sram_budget = 208 * 1024;
        o.sram_saving_budget = 176 * 1024;
    });
    assert!(
        report.fallbacks.iter().any(|f| matches!(
            f,
            tessera_codegen::plan::Fallback::SplitK { label, .. } if label == "mm"
        )),
        "{}",
        report.text()
    );
    assert!(
        report.text().contains("`mm` split along K into 2 products"),
        "{}",
        report.text()
    );
    let parts: Vec<&str> = report.ops.iter().map(|op| op.0.as_str()).collect();
    assert!(
        parts.contains(&"mm.k0") && parts.contains(&"mm.k1"),
        "{parts:?}"
    );
    assert_bit_exact(&results);
}

/// A forced strategy that names no op, or no strategy of its op, is refused by name (it was
/// ignored, or ended in "no strategy fits: " with nothing after it).
#[test]
fn forced_strategies_that_match_nothing_are_refused_by_name() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [20, 48]).unwrap();
    let w = b.weight("w", DType::F16, [48, 40]).unwrap();
    let y = b.matmul("mm", x, w).unwrap();
    b.output("y", y).unwrap();
    let g = b.finish().unwrap();
    let machine = MachineDescription::builtin("small").unwrap();
    let target = target_of(&machine);
    let plan = |force: (&str, &str)| {
        let mut options = PlanOptions::for_target(&target);
        options.force = vec![(force.0.to_string(), force.1.to_string())];
        tessera_codegen::plan::plan(&g, &target, &options)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = plan(("nosuch", "grid 1x1"));
    assert!(e.starts_with("E-PLAN-003") && e.contains("`nosuch`"), "{e}");
    let e = plan(("mm", "grid 99x99"));
    assert!(
        e.starts_with("E-PLAN-001 matmul `mm`")
            && e.contains("`grid 99x99` is none of")
            && e.contains("grid "),
        "{e}"
    );
}

/// Debug aid: the tiny tower with every compute value as an extra output; names the first
/// value whose simulated bytes differ from the plan's reference.
#[test]
#[ignore]
fn tower_values_one_by_one() {
    use tessera_codegen::graph::{inline_repeats, Node, Op};
    let model =
        tessera::pipeline::Model::load(std::path::Path::new("testdata/hf/vision-f32"), None)
            .unwrap();
    let spec = tessera::pipeline::RunSpec {
        batch: 2,
        layers: 1,
        head: false,
        fp8: std::env::var("F16").is_err(),
        k_parts: None,
        key_blocks: Some(1),
        values_transposed: None,
    };
    let graph = inline_repeats(&tessera::pipeline::tower_graph(&model, &spec).unwrap()).unwrap();
    let mut g = graph.clone();
    let compute: Vec<_> = graph
        .nodes
        .iter()
        .filter(|(_, n)| {
            !matches!(
                n.op,
                Op::Input { .. } | Op::Weight { .. } | Op::Output { .. }
            )
        })
        .map(|(h, n)| (h, n.clone()))
        .collect();
    for (h, n) in &compute {
        g.nodes.append(Node {
            op: Op::Output {
                x: *h,
                name: format!("dbg{}:{}", h.index(), n.label),
            },
            ty: n.ty.clone(),
            label: format!("dbg{}", h.index()),
        });
    }
    let pixels = tessera::pipeline::synthetic_pixels(&model.config, 2, 3);
    let input: Vec<u8> = pixels.data().iter().flat_map(|v| v.to_le_bytes()).collect();
    let results = run(
        "small",
        &g,
        &model.store,
        &[("pixel_values".to_string(), input)],
    );
    let mut order: Vec<&(String, Vec<u8>, Vec<u8>)> = results.iter().collect();
    order.sort_by_key(|(n, _, _)| {
        n.trim_start_matches("dbg")
            .split(':')
            .next()
            .and_then(|i| i.parse::<usize>().ok())
            .unwrap_or(usize::MAX)
    });
    for (name, want, got) in order {
        let count = want.iter().zip(got).filter(|(a, b)| a != b).count();
        println!("{name}: {count} of {} bytes differ", want.len());
    }
}

#[test]
fn casts_to_fp8() {
    for (rows, cols) in [(2usize, 588usize), (32, 588), (5, 8)] {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [rows, cols]).unwrap();
        let y = b.cast("y", x, DType::f143(-4)).unwrap();
        b.output("y", y).unwrap();
        let g = b.finish().unwrap();
        let x: Vec<u8> = random(7, rows * cols, 3.0)
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
            .collect();
        assert_bit_exact(&run(
            "small",
            &g,
            &WeightStore::new(),
            &[("x".to_string(), x)],
        ));
    }
}

#[test]
fn patches_of_pixels() {
    for fp8 in [false, true] {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [2, 3, 56, 56]).unwrap();
        let h = b.cast("h", x, DType::F16).unwrap();
        let r = b.reshape("r", h, [2, 3, 4, 14, 4, 14]).unwrap();
        let t = b.transpose("t", r, &[0, 2, 4, 1, 3, 5]).unwrap();
        let p = b.reshape("p", t, [32, 588]).unwrap();
        let y = if fp8 {
            b.cast("y", p, DType::f143(-4)).unwrap()
        } else {
            b.gelu("y", p).unwrap()
        };
        b.output("y", y).unwrap();
        let g = b.finish().unwrap();
        let inputs = vec![("x".to_string(), f32_bytes(&random(1, 2 * 3 * 56 * 56, 1.0)))];
        assert_bit_exact(&run("small", &g, &WeightStore::new(), &inputs));
    }
}

#[test]
#[ignore]
fn patches_debug() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2, 3, 56, 56]).unwrap();
    let h = b.cast("h", x, DType::F16).unwrap();
    let r = b.reshape("r", h, [2, 3, 4, 14, 4, 14]).unwrap();
    let t = b.transpose("t", r, &[0, 2, 4, 1, 3, 5]).unwrap();
    let p = b.reshape("p", t, [32, 588]).unwrap();
    let y = b.gelu("y", p).unwrap();
    b.output("y", y).unwrap();
    let g = b.finish().unwrap();
    let xs = random(1, 2 * 3 * 56 * 56, 1.0);
    let inputs = vec![("x".to_string(), f32_bytes(&xs))];
    let results = run("small", &g, &WeightStore::new(), &inputs);
    let (_, want, got) = &results[0];
    let h = |b: &[u8], i: usize| {
        half::f16::from_bits(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])).to_f32()
    };
    let mut shown = 0;
    for row in 0..32 {
        for col in 0..588 {
            let i = row * 588 + col;
            if want[2 * i..2 * i + 2] != got[2 * i..2 * i + 2] && shown < 12 {
                let (n, py, px) = (row / 16, (row / 4) % 4, row % 4);
                let (c, ky, kx) = (col / 196, (col / 14) % 14, col % 14);
                let src = xs[((n * 3 + c) * 56 + py * 14 + ky) * 56 + px * 14 + kx];
                println!(
                    "row {row} col {col}: plan {} sim {} (gelu of {src})",
                    h(want, i),
                    h(got, i)
                );
                shown += 1;
            }
        }
    }
}

mod random_graphs {
    //! The compiler's structural promise: every graph the verifier accepts either compiles or is
    //! refused with a typed error naming the op; and what compiles runs bit-exactly against the
    //! plan's reference. Graphs are random sequences of every supported op on small shapes.

    use proptest::prelude::*;
    use tessera::random_graph::{
        build, build_loop, check_compiles_or_is_refused, check_loop_compiles_or_is_refused, Step,
        OP_KINDS,
    };

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        proptest::collection::vec(
            (0u8..OP_KINDS, any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(op, a, b, n)| Step {
                op,
                a,
                b,
                n,
            }),
            1..9,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn every_verified_graph_compiles_bit_exactly_or_is_refused_by_name(
            rows in 1usize..20, cols in 1usize..40, f32_input in proptest::bool::weighted(0.2), steps in steps(),
        ) {
            let Some(built) = build(rows, cols, f32_input, &steps) else { return Ok(()) };
            let verdict = check_compiles_or_is_refused(&built, "small", 1_000_000_000);
            prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
        }

        /// The same promise for loops: a repeat of a random layer compiled as one loop runs
        /// bit-exactly (every iteration with its own weights) or is refused by name.
        #[test]
        fn every_verified_loop_compiles_bit_exactly_or_is_refused_by_name(
            rows in 1usize..20, cols in 1usize..10, count in 2u32..5, steps in steps(),
        ) {
            let Some(built) = build_loop(rows, 4 * cols, count, &steps) else { return Ok(()) };
            let verdict = check_loop_compiles_or_is_refused(&built, "small", 1_000_000_000);
            prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
        }
    }
}

/// A broadcast value read as both operands of a batched product (one through a transpose).
fn broadcast_read_twice() -> (Graph, WeightStore) {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [1, 1]).unwrap();
    let g = b.weight("w1", DType::F32, [1]).unwrap();
    let be = b.weight("w2", DType::F32, [1]).unwrap();
    let l = b.layer_norm("op0", x, g, be, 1e-5).unwrap();
    let br = b.broadcast("op1", l, [2, 1, 1]).unwrap();
    let t = b.transpose("op3.t", br, &[0, 2, 1]).unwrap();
    let y = b.batched_matmul("op3", br, t).unwrap();
    b.output("y", y).unwrap();
    let graph = b.finish().unwrap();
    let mut store = WeightStore::new();
    store.insert("w1", HostTensor::new([1], vec![1.5]).unwrap());
    store.insert("w2", HostTensor::new([1], vec![0.25]).unwrap());
    (graph, store)
}

/// Found by the random graphs: a broadcast value read as both operands of a batched product
/// (one through a transpose) on the small chip.
#[test]
fn a_broadcast_read_twice_by_one_product() {
    let (graph, store) = broadcast_read_twice();
    let x: Vec<u8> = half::f16::from_f32(0.75).to_bits().to_le_bytes().to_vec();
    assert_bit_exact(&run("small", &graph, &store, &[("x".to_string(), x)]));
}

#[test]
#[ignore]
fn debug_broadcast_phases() {
    let (graph, store) = broadcast_read_twice();
    let machine = MachineDescription::builtin("small").unwrap();
    let target = target_of(&machine);
    let planned =
        tessera_codegen::plan::plan(&graph, &target, &PlanOptions::for_target(&target)).unwrap();
    let (mid, _) = tessera_codegen::plan::build::build(&planned, 0).unwrap();
    println!("{}", tessera_codegen::mid::dump::dump(&mid));
    let lowered = tessera_codegen::lower::lower(&mid, &store, 16).unwrap();
    for (p, phase) in lowered.program.phases.iter().enumerate() {
        for t in phase {
            println!(
                "phase {p}: {} words from tile {} buf {:?}+{} -> {:?}",
                t.words, t.sender, t.source.0, t.source.1, t.deliveries
            );
        }
    }
    for t in 0..2 {
        for (i, b) in lowered.program.tiles[t].buffers.iter().enumerate() {
            println!(
                "tile {t} buffer {i}: {} {} bytes live {:?}",
                b.name, b.bytes, b.live
            );
        }
    }
}

/// A three-layer loop whose product gathers its per-layer weight from where it is stored once:
/// each iteration sends its own layer's slice (copied out of the layered buffer first), and the
/// result is the same bits as the plan's reference and close to the graph interpreter.
#[test]
fn a_loop_gathers_each_layers_weight() {
    let (m, k) = (64usize, 64usize);
    let mut body = GraphBuilder::new();
    let x = body.input("x", DType::F16, [m, k]).unwrap();
    let w = body.weight("w", DType::F16, [k, k]).unwrap();
    let bias = body.weight("b", DType::F32, [k]).unwrap();
    let y = body.matmul("mm", x, w).unwrap();
    let y = body.bias_add("mm.bias", y, bias).unwrap();
    let y = body.add("residual", x, y).unwrap();
    body.output("y", y).unwrap();
    let body = body.finish().unwrap();
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F16, [m, k]).unwrap();
    let x = g.gelu("pre", x).unwrap();
    let r = g.region("layer", body).unwrap();
    let y = g.repeat("layers", r, 3, "l{i}.", &[x]).unwrap();
    g.output("y", y).unwrap();
    let g = g.finish().unwrap();
    let mut store = WeightStore::new();
    for i in 0..3 {
        let w = HostTensor::new([k, k], random(10 + i, k * k, 0.1)).unwrap();
        store.insert(format!("l{i}.w"), w);
        store.insert(
            format!("l{i}.b"),
            HostTensor::new([k], random(20 + i, k, 0.3)).unwrap(),
        );
    }
    let x: Vec<u8> = random(3, m * k, 1.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    let inputs = vec![("x".to_string(), x)];
    let (results, report) = run_with("small", &g, &store, &inputs, |o| {
        o.layer_loop = true;
        o.sram_saving = true;
        // Each layer's weights dealt around the chip, as a long loop's are.
        o.spread_stored = Some(true);
        o.force = vec![(
            "layer0.mm".to_string(),
            "grid 4x4 cols/16 rows/16 weights gathered".to_string(),
        )];
    });
    let chosen = &report.ops.iter().find(|op| op.0 == "layer0.mm").unwrap().2;
    assert!(chosen.ends_with("weights gathered"), "{}", report.text());
    assert_bit_exact(&results);
    let host = tessera_codegen::graph::evaluate(
        &g,
        &[(
            "x".to_string(),
            HostTensor::new(
                [m, k],
                inputs[0]
                    .1
                    .chunks_exact(2)
                    .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                    .collect(),
            )
            .unwrap(),
        )]
        .into_iter()
        .collect(),
        &store,
    )
    .unwrap();
    let got: Vec<f32> = results[0]
        .2
        .chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    let error = tessera_models::reference::compare(&host["y"].data, &got);
    assert!(error.relative_rms < 5e-3, "{}", error.relative_rms);
}

/// The planner reports its progress once per compute op, in order, with the candidates costed
/// so far (what `tessera compile` and `run` show while they plan).
#[test]
fn planning_reports_every_op_and_the_candidates_costed() {
    let (g, _, _) = matmul_with_bias(20, 48, 40, 2);
    let machine = MachineDescription::builtin("small").unwrap();
    let target = target_of(&machine);
    let seen = std::sync::Mutex::new(Vec::new());
    let planned = tessera_codegen::plan::plan_with_progress(
        &g,
        &target,
        &PlanOptions::for_target(&target),
        &|p| seen.lock().unwrap().push(p),
    )
    .unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for (i, p) in seen.iter().enumerate() {
        assert_eq!((p.ops_done, p.ops), (i, 2));
    }
    assert!(seen.windows(2).all(|w| w[0].costed <= w[1].costed));
    assert!(seen[1].costed > 0 && seen[1].costed <= planned.report.expansions);
}

/// A search bounded by `SearchLimits::max_expansions` plans the ops after the limit from its
/// best state alone, says so in its stop reason, and the plan still runs bit-exactly; without
/// the limit the same search plans every op with the whole beam.
#[test]
fn an_expansion_limit_plans_the_rest_greedily_and_says_so() {
    use tessera_codegen::plan::StopReason;
    let (g, store, inputs) = matmul_with_bias(64, 96, 64, 5);
    let (results, report) = run_with("small", &g, &store, &inputs, |o| {
        o.limits.max_expansions = Some(1);
    });
    assert_bit_exact(&results);
    let StopReason::ExpansionLimit {
        ops,
        limit,
        full_beam,
        ..
    } = report.stop
    else {
        panic!("{}", report.text());
    };
    assert_eq!((limit, full_beam), (1, 1), "{}", report.text());
    assert!(ops > full_beam, "{}", report.text());
    expect_test::expect![[r#"
        planned all 2 compute ops; the limit of 1 expansions ran out after 1 of them with a beam of 8, the other 1 planned greedily from the best state"#]]
    .assert_eq(&report.stop.to_string());
    let (_, unbounded) = run_with("small", &g, &store, &inputs, |_| {});
    assert!(
        matches!(unbounded.stop, StopReason::Planned { .. }),
        "{}",
        unbounded.text()
    );
    assert!(unbounded.expansions > report.expansions);
}
