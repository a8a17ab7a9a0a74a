//! Small graphs through the whole compiler (plan → distributed program → tile program → image)
//! and the simulator on the `small` machine, every output compared bit for bit with the plan's
//! reference executor and checked against the graph's own interpreter.

use tessera::target::target_of;
use tessera_codegen::compile::compile;
use tessera_codegen::graph::weights::{HostTensor, WeightStore};
use tessera_codegen::graph::{DType, Graph, GraphBuilder};
use tessera_codegen::plan::PlanOptions;
use tessera_codegen::refexec;
use tessera_sim::chip::{Chip, RunOptions};
use tessera_sim::MachineDescription;

fn random(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0 * scale
        })
        .collect()
}

/// Compiles and runs `graph` on `machine`, returning (plan reference, simulated) outputs.
fn run(
    machine: &str,
    graph: &Graph,
    store: &WeightStore,
    inputs: &[(String, Vec<u8>)],
) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let machine = MachineDescription::builtin(machine).unwrap();
    let target = target_of(&machine);
    let compiled = compile(
        graph,
        store,
        &target,
        &PlanOptions::for_target(&target),
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut chip = Chip::new(&machine).unwrap();
    chip.load_image(&compiled.back.image).unwrap();
    let report = chip
        .run(inputs, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = refexec::execute(&compiled.lowered.program, inputs).unwrap();
    expected
        .into_iter()
        .map(|(name, want)| {
            let got = report.output(&name).unwrap().to_vec();
            (name, want, got)
        })
        .collect()
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

#[test]
fn a_matmul_with_bias() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [20, 48]).unwrap();
    let w = b.weight("w", DType::F16, [48, 40]).unwrap();
    let bias = b.weight("bias", DType::F32, [40]).unwrap();
    let y = b.matmul("mm", x, w).unwrap();
    let y = b.bias_add("mm.bias", y, bias).unwrap();
    b.output("y", y).unwrap();
    let g = b.finish().unwrap();
    let mut store = WeightStore::new();
    store.insert(
        "w",
        HostTensor::new([48, 40], random(2, 48 * 40, 0.2)).unwrap(),
    );
    store.insert("bias", HostTensor::new([40], random(3, 40, 0.5)).unwrap());
    let x: Vec<u8> = random(4, 20 * 48, 1.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    assert_bit_exact(&run("small", &g, &store, &[("x".to_string(), x)]));
}

/// Debug aid: the tiny tower with every compute value as an extra output; names the first
/// value whose simulated bytes differ from the plan's reference.
#[test]
#[ignore]
fn tower_values_one_by_one() {
    use tessera_codegen::graph::{inline_repeats, Node, Op};
    let model = tessera::pipeline::Model::load(
        std::path::Path::new("../shared/testdata/hf/vision-f32"),
        None,
    )
    .unwrap();
    let spec = tessera::pipeline::RunSpec {
        batch: 2,
        layers: 1,
        head: false,
        fp8: std::env::var("F16").is_err(),
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
