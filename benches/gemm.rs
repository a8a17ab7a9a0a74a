//! The AMP GEMM kernels at the per-tile shapes of the So400m/14 plan (one layer with the head,
//! batch 1: `tessera compile --model DIR --dump D --dump-tile 100` lists them), each case checked
//! bit for bit against its reference and run on one tile:
//!
//! - printed once per shape: simulated cycles, MAC/cycle (real MACs, m·k·n, over simulated
//!   cycles; the AMP's peak is 128 FP8 or 64 F16 MAC/cycle), the share of the peak, the `$CWEI`
//!   loads and the kernel's estimate;
//! - timed by criterion: the host time to simulate the case (throughput: simulated cycles).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::sync::Arc;
use tessera::check::{prepare, run_case};
use tessera::kernels::gemm::{AmpGemm, GemmSpec, Precision, GEMM_F16, GEMM_FP8};
use tessera::sim::memory::MemoryLayout;
use tessera::sim::MachineDescription;

/// One product's per-tile call: op, kernel, m, k, n, A read in rows of K bytes (else panels).
struct Shape {
    op: &'static str,
    kernel: &'static AmpGemm,
    m: usize,
    k: usize,
    n: usize,
    a_rows: bool,
}

const fn shape(
    op: &'static str,
    kernel: &'static AmpGemm,
    (m, k, n): (usize, usize, usize),
    a_rows: bool,
) -> Shape {
    Shape {
        op,
        kernel,
        m,
        k,
        n,
        a_rows,
    }
}

/// The plan's shapes at 773395c (per tile; K and N padded to whole K-blocks and column blocks).
const SHAPES: [Shape; 7] = [
    shape("layer0.qkv.parts", &GEMM_FP8, (61, 576, 64), true),
    shape("layer0.out_proj.parts", &GEMM_FP8, (41, 640, 32), true),
    shape("layer0.fc1.parts", &GEMM_FP8, (92, 576, 48), true),
    shape("layer0.fc2.parts", &GEMM_FP8, (49, 1088, 48), true),
    shape("layer0.scores", &GEMM_F16, (73, 80, 96), false),
    shape("layer0.context.parts", &GEMM_F16, (73, 96, 80), false),
    shape("patch_embed", &GEMM_FP8, (23, 608, 32), true),
];

fn spec(shape: &Shape) -> GemmSpec {
    let mut spec = GemmSpec::new(shape.m, shape.k, shape.n);
    if shape.a_rows {
        // FP8 rows of K bytes, as the exchange leaves them.
        spec.a_row_stride = Some(shape.k);
    }
    spec
}

fn peak(precision: Precision) -> f64 {
    match precision {
        Precision::Fp8 => 128.0,
        Precision::F16 => 64.0,
    }
}

fn gemm_shapes(c: &mut Criterion) {
    let machine = MachineDescription::builtin("ipu21").expect("ipu21");
    let layout = Arc::new(MemoryLayout::from_machine(&machine).expect("layout"));
    let mut group = c.benchmark_group("gemm_so400m_tile_shapes");
    group.sample_size(10);
    println!(
        "{:<22} {:>4} {:>5} {:>4} {:>9} {:>9} {:>6} {:>7} {:>9}",
        "op", "m", "k", "n", "cycles", "MAC/cyc", "peak", "loads", "estimate"
    );
    for shape in &SHAPES {
        let prepared = prepare(&machine, shape.kernel, None).expect("assemble");
        let case = shape.kernel.make_case(&spec(shape));
        let result = run_case(&machine, &layout, &prepared, &case, 1 << 32);
        assert!(result.passed, "{}: {:?}", shape.op, result.failure);
        let cycles = result.cycles.expect("cycles");
        let macs = (shape.m * shape.k * shape.n) as f64;
        let precision = shape.kernel.precision;
        let loads = shape.k.div_ceil(precision.block()) * shape.n.div_ceil(16);
        println!(
            "{:<22} {:>4} {:>5} {:>4} {:>9} {:>9.1} {:>5.0}% {:>7} {:>9}",
            shape.op,
            shape.m,
            shape.k,
            shape.n,
            cycles,
            macs / cycles as f64,
            100.0 * macs / cycles as f64 / peak(precision),
            loads,
            result.estimate
        );
        group.throughput(Throughput::Elements(cycles));
        group.bench_with_input(BenchmarkId::new("simulate", shape.op), &case, |b, case| {
            b.iter(|| run_case(&machine, &layout, &prepared, case, 1 << 32))
        });
    }
    group.finish();
}

criterion_group!(benches, gemm_shapes);
criterion_main!(benches);
