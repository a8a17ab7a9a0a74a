//! Random small graphs for the compiler's structural promise: every verified graph compiles and runs bit-exactly, or is refused by name.
//!
//! A graph is a list of [`Step`]s over one input; the property test in `tests/it/compile_graphs.rs`
//! draws the steps with proptest and the `compile_graph` fuzz target decodes them from bytes,
//! and both judge the result with [`check_compiles_or_is_refused`].

use tessera_codegen::compile::{compile, CompileError};
use tessera_codegen::graph::weights::{HostTensor, WeightStore};
use tessera_codegen::graph::{fit_fp8_weight_scales, DType, Graph, GraphBuilder, Op, ValueHandle};
use tessera_codegen::plan::PlanOptions;
use tessera_codegen::refexec;
use tessera_sim::chip::{Chip, RunOptions};
use tessera_sim::MachineDescription;

/// Number of op kinds a [`Step`] chooses from (`op % OP_KINDS`).
pub const OP_KINDS: u8 = 14;

/// One step of a random graph: which op, and numbers it draws its parameters from.
#[derive(Clone, Debug)]
pub struct Step {
    pub op: u8,
    pub a: u8,
    pub b: u8,
    pub n: u8,
}

impl Step {
    /// A step from four bytes (the fuzz target's decoding).
    pub fn from_bytes(bytes: [u8; 4]) -> Step {
        Step {
            op: bytes[0] % OP_KINDS,
            a: bytes[1],
            b: bytes[2],
            n: bytes[3],
        }
    }
}

/// A built random graph with its weights and input.
pub struct Built {
    pub graph: Graph,
    pub store: WeightStore,
    pub inputs: Vec<(String, Vec<u8>)>,
}

/// Deterministic pseudo-random values in `[-scale, scale)` (xorshift from `seed`).
pub fn random(seed: u64, n: usize, scale: f32) -> Vec<f32> {
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

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Builds a graph from `steps`; ops whose operands do not fit are skipped (the builder's
/// own errors are the graph level's business, tested there).
pub fn build(rows: usize, cols: usize, f32_input: bool, steps: &[Step]) -> Option<Built> {
    let mut b = GraphBuilder::new();
    let mut store = WeightStore::new();
    let mut values: Vec<ValueHandle> = Vec::new();
    let mut used = std::collections::HashSet::new();
    let x = b
        .input(
            "x",
            if f32_input { DType::F32 } else { DType::F16 },
            [rows, cols],
        )
        .ok()?;
    let bytes = if f32_input {
        f32_bytes(&random(5, rows * cols, 2.0))
    } else {
        random(5, rows * cols, 2.0)
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
            .collect()
    };
    values.push(x);
    let mut weights = 0;
    let mut weight =
        |b: &mut GraphBuilder, store: &mut WeightStore, dtype: DType, shape: Vec<usize>| {
            weights += 1;
            let name = format!("w{weights}");
            let n: usize = shape.iter().product();
            store.insert(
                name.clone(),
                HostTensor::new(shape.clone(), random(weights as u64 * 31, n, 0.5))
                    .expect("the data has the shape's element count"),
            );
            b.weight(&name, dtype, shape)
                .expect("weight names are fresh and their dims come from built values")
        };
    for (i, s) in steps.iter().enumerate() {
        let pick = |k: u8| values[k as usize % values.len()];
        let x = pick(s.a);
        let ty = b.ty(x).expect("`values` holds only built values").clone();
        let dims: Vec<usize> = ty.shape.0.clone();
        let last = *dims.last().expect("no value built here has rank below 2");
        let label = format!("op{i}");
        let made = match s.op {
            0 => b.gelu(&label, x),
            1 => b.softmax(&label, x, [0.5f32, 0.125, 1.0, -1.0][s.n as usize % 4]),
            2 => {
                let g = weight(&mut b, &mut store, DType::F32, vec![last]);
                let be = weight(&mut b, &mut store, DType::F32, vec![last]);
                b.layer_norm(&label, x, g, be, 1e-5)
            }
            3 => {
                let w = weight(&mut b, &mut store, DType::F32, vec![last]);
                b.bias_add(&label, x, w)
            }
            4 => {
                let y = values
                    .iter()
                    .copied()
                    .find(|&v| v != x && b.ty(v) == Some(&ty))
                    .unwrap_or(x);
                b.add(&label, x, y)
            }
            5 | 6 if dims.len() == 2 => {
                // A product with a weight, f16 or FP8 (the input cast first).
                let n = 8 + (s.n as usize % 40);
                if s.op == 6 && ty.dtype == DType::F16 {
                    let c = b.cast(&format!("{label}.in"), x, DType::f143(-4)).ok()?;
                    used.insert(c);
                    let w = weight(&mut b, &mut store, DType::f152(-8), vec![last, n]);
                    b.matmul(&label, c, w)
                } else {
                    let w = weight(&mut b, &mut store, ty.dtype, vec![last, n]);
                    b.matmul(&label, x, w)
                }
            }
            7 if dims.len() == 2 => b.transpose(&label, x, &[1, 0]),
            8 if dims.len() == 2 && dims[0].is_multiple_of(2) => {
                b.reshape(&label, x, [2, dims[0] / 2, last])
            }
            9 => {
                let axis = s.b as usize % dims.len();
                if dims[axis] < 2 {
                    continue;
                }
                let start = s.n as usize % (dims[axis] - 1);
                b.slice(&label, x, axis, start, dims[axis])
            }
            10 if dims.len() == 2 && last.is_multiple_of(2) => b.split_heads(&label, x, 2, 1),
            11 if dims.len() == 3 && dims[0].is_multiple_of(2) => b.merge_heads(&label, x, 2),
            12 if dims.len() == 3 => {
                // Attention-shaped: x · (x viewed transposed).
                let t = b.transpose(&format!("{label}.t"), x, &[0, 2, 1]).ok()?;
                used.insert(t);
                b.batched_matmul(&label, x, t)
            }
            13 => {
                let mut shape = vec![1 + s.n as usize % 3];
                shape.extend(&dims);
                b.broadcast(&label, x, shape)
            }
            _ => continue,
        };
        let Ok(v) = made else { continue };
        used.insert(x);
        if let Op::Slice { .. } | Op::Add { .. } = b.graph().nodes[v].op {
            used.insert(x);
        }
        for (_, operand) in b.graph().nodes[v].op.operands() {
            used.insert(operand);
        }
        values.push(v);
    }
    // Every value no op reads becomes an output (the verifier wants no dead values).
    let leaves: Vec<ValueHandle> = values
        .iter()
        .copied()
        .filter(|v| !used.contains(v))
        .collect();
    for (k, v) in leaves.iter().enumerate() {
        b.output(&format!("y{k}"), *v).ok()?;
    }
    let mut graph = b.finish().ok()?;
    fit_fp8_weight_scales(&mut graph, &store).ok()?;
    Some(Built {
        graph,
        store,
        inputs: vec![("x".to_string(), bytes)],
    })
}

/// A graph whose `[rows, cols]` f16 input goes through `pre` (a GeLU), then a repeat of
/// `count` iterations of a random chain of shape-keeping ops (`steps`: GeLU, LayerNorm, bias,
/// products with a `[cols, cols]` weight in f16 or FP8, softmax, each feeding the next) with a
/// residual add of the iteration's input, then a GeLU; every iteration has its own weights.
pub fn build_loop(rows: usize, cols: usize, count: u32, steps: &[Step]) -> Option<Built> {
    let mut body = GraphBuilder::new();
    let mut store = WeightStore::new();
    let x = body.input("x", DType::F16, [rows, cols]).ok()?;
    let mut weights = 0u64;
    let mut weight =
        |body: &mut GraphBuilder, store: &mut WeightStore, dtype, shape: Vec<usize>| {
            weights += 1;
            let name = format!("w{weights}");
            let n: usize = shape.iter().product();
            for i in 0..count {
                let data = random(weights * 31 + i as u64 * 7, n, 0.5);
                store.insert(
                    format!("l{i}.{name}"),
                    HostTensor::new(shape.clone(), data).ok()?,
                );
            }
            body.weight(&name, dtype, shape).ok()
        };
    let mut cur = x;
    for (i, s) in steps.iter().enumerate() {
        let label = format!("op{i}");
        cur = match s.op % 6 {
            0 => body.gelu(&label, cur).ok()?,
            1 => {
                let g = weight(&mut body, &mut store, DType::F32, vec![cols])?;
                let be = weight(&mut body, &mut store, DType::F32, vec![cols])?;
                body.layer_norm(&label, cur, g, be, 1e-5).ok()?
            }
            2 => {
                let w = weight(&mut body, &mut store, DType::F32, vec![cols])?;
                body.bias_add(&label, cur, w).ok()?
            }
            3 => {
                let w = weight(&mut body, &mut store, DType::F16, vec![cols, cols])?;
                body.matmul(&label, cur, w).ok()?
            }
            4 => {
                let c = body
                    .cast(&format!("{label}.in"), cur, DType::f143(-4))
                    .ok()?;
                let w = weight(&mut body, &mut store, DType::f152(-8), vec![cols, cols])?;
                body.matmul(&label, c, w).ok()?
            }
            _ => body.softmax(&label, cur, 0.5).ok()?,
        };
    }
    let y = body.add("residual", x, cur).ok()?;
    body.output("y", y).ok()?;
    let body = body.finish().ok()?;
    let mut g = GraphBuilder::new();
    let input = g.input("x", DType::F16, [rows, cols]).ok()?;
    let pre = g.gelu("pre", input).ok()?;
    let region = g.region("layer", body).ok()?;
    let y = g.repeat("layers", region, count, "l{i}.", &[pre]).ok()?;
    let post = g.gelu("post", y).ok()?;
    g.output("y", post).ok()?;
    let mut graph = g.finish().ok()?;
    fit_fp8_weight_scales(&mut graph, &store).ok()?;
    let bytes = random(5, rows * cols, 2.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    Some(Built {
        graph,
        store,
        inputs: vec![("x".to_string(), bytes)],
    })
}

/// Compiles `built` for the built-in machine `machine` and, if it compiles, runs it on the chip
/// within `max_cycles` and compares every output with the plan's reference executor. `Ok` when
/// it runs bit-exactly or the planner refuses it naming an op; `Err` says what broke the promise.
pub fn check_compiles_or_is_refused(
    built: &Built,
    machine: &str,
    max_cycles: u64,
) -> Result<(), String> {
    check_with(built, machine, max_cycles, false)
}

/// [`check_compiles_or_is_refused`] with its repeats kept as loops: what compiles must also have
/// kept the loop.
pub fn check_loop_compiles_or_is_refused(
    built: &Built,
    machine: &str,
    max_cycles: u64,
) -> Result<(), String> {
    check_with(built, machine, max_cycles, true)
}

/// The built-in machine `name`, its target, and the planner's options for it (repeats kept as
/// a loop when `layer_loop`).
fn setting(
    name: &str,
    layer_loop: bool,
) -> Result<
    (
        MachineDescription,
        tessera_codegen::target::Target,
        PlanOptions,
    ),
    String,
> {
    let machine = MachineDescription::builtin(name).map_err(|e| e.to_string())?;
    let target = crate::target::target_of(&machine);
    let options = PlanOptions {
        layer_loop,
        ..PlanOptions::for_target(&target)
    };
    Ok((machine, target, options))
}

fn check_with(
    built: &Built,
    machine: &str,
    max_cycles: u64,
    layer_loop: bool,
) -> Result<(), String> {
    let (machine, target, options) = setting(machine, layer_loop)?;
    let dump = || tessera_codegen::graph::dump(&built.graph);
    match compile(&built.graph, &built.store, &target, &options, None) {
        Err(error) => {
            let text = error.to_string();
            // A refusal is the planner's (an op no kernel runs, or memory); any other stage
            // failing on a verified graph is a compiler bug.
            let refusal = matches!(
                error,
                CompileError::Plan(_)
                    | CompileError::NoFinalistFits(_)
                    | CompileError::NothingFits { .. }
            );
            if !refusal {
                return Err(format!("not a planner refusal: {text}\n{}", dump()));
            }
            // It names the op: its label (`op3`, `op3.in`, …) or its node.
            if !(text.contains("`op") || text.contains('%') || text.contains("`y")) {
                return Err(format!("the refusal names no op: {text}\n{}", dump()));
            }
            Ok(())
        }
        Ok(compiled) => {
            if layer_loop && compiled.lowered.program.looped.is_none() {
                return Err(format!("the loop was not kept\n{}", dump()));
            }
            let mut chip = Chip::new(&machine).map_err(|e| e.to_string())?;
            chip.load_image(&compiled.back.image)
                .map_err(|e| format!("the image does not load: {e}\n{}", dump()))?;
            let options = RunOptions {
                max_cycles,
                ..RunOptions::default()
            };
            let report = chip
                .run(&built.inputs, &options)
                .map_err(|e| format!("the run fails: {e}\n{}", dump()))?;
            let expected = refexec::execute(&compiled.lowered.program, &built.inputs)
                .map_err(|e| format!("the reference executor fails: {e}\n{}", dump()))?;
            for (name, want) in expected {
                let got = report
                    .output(&name)
                    .ok_or_else(|| format!("no output `{name}`"))?;
                if got != want.as_slice() {
                    return Err(format!(
                        "output `{name}` differs from the plan's reference\n{}",
                        dump()
                    ));
                }
            }
            Ok(())
        }
    }
}

/// The fast half of [`check_compiles_or_is_refused`], for fuzzing the planner and the lowering
/// at hundreds of graphs a second: plans `built` on `machine` (its repeats kept as a loop when
/// `layer_loop`), then builds, lowers and verifies every finalist, without placing, emitting or
/// simulating. A verified graph plans or is refused by the planner naming an op; every finalist
/// builds a mid program that lowers to a tile program the tile verifier accepts.
pub fn check_plans_and_lowers(
    built: &Built,
    machine: &str,
    layer_loop: bool,
) -> Result<(), String> {
    use tessera_codegen::plan::{build::build, plan};
    let (_, target, options) = setting(machine, layer_loop)?;
    let dump = || tessera_codegen::graph::dump(&built.graph);
    let planned = match plan(&built.graph, &target, &options) {
        Ok(planned) => planned,
        Err(error) => {
            let text = error.to_string();
            if !(text.contains("`op") || text.contains('%') || text.contains("`y")) {
                return Err(format!("the refusal names no op: {text}\n{}", dump()));
            }
            return Ok(());
        }
    };
    for finalist in 0..planned.finalists.len() {
        let (mid, _) = build(&planned, finalist)
            .map_err(|e| format!("finalist {finalist} does not build: {e}\n{}", dump()))?;
        let lowered = tessera_codegen::lower::lower(&mid, &built.store, target.tiles)
            .map_err(|e| format!("finalist {finalist} does not lower: {e}\n{}", dump()))?;
        tessera_codegen::tile::verify::verify(&lowered.program)
            .map_err(|e| format!("finalist {finalist}'s tile program: {e}\n{}", dump()))?;
    }
    Ok(())
}
