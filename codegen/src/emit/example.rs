//! Small hand-written tile programs for tests, examples and demos of the back end.

use crate::tile::{
    BufferCategory, BufferDecl, BufferId, HostPiecePlan, HostTensorPlan, KernelCall, Program,
    RegionRequirement, SymbolicTransfer,
};
use std::sync::Arc;
use tessera_kernels::split::split_words;
use tessera_kernels::{Buffer, Case, Kernel, Region, Role, VertexWord};

/// The `residual_add_f16` case template for `n` halves (input data zero: it comes from the
/// bound buffers).
pub fn residual_add_case(n: u32) -> Case {
    let bytes = 2 * n as usize;
    let mut vertex = vec![
        VertexWord::Address {
            buffer: 0,
            offset: 0,
        },
        VertexWord::Address {
            buffer: 1,
            offset: 0,
        },
        VertexWord::Address {
            buffer: 2,
            offset: 0,
        },
        VertexWord::Value(n),
    ];
    vertex.extend(split_words(n / 4));
    Case {
        kernel: "residual_add_f16".into(),
        name: format!("n={n}"),
        buffers: vec![
            Buffer::input("a", vec![0; bytes], Region::Standard, None),
            Buffer::input("b", vec![0; bytes], Region::Standard, None),
            Buffer::output("out", bytes, Region::Standard, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

fn buffer(name: &str, bytes: u32, category: BufferCategory, live: (usize, usize)) -> BufferDecl {
    BufferDecl {
        name: name.into(),
        bytes,
        align: 8,
        region: RegionRequirement::Any,
        slot: None,
        category,
        live,
        alias_of: None,
        contents: None,
    }
}

fn tensor(
    name: &str,
    dtype: &str,
    shape: Vec<usize>,
    pieces: Vec<HostPiecePlan>,
) -> HostTensorPlan {
    HostTensorPlan {
        name: name.into(),
        dtype: dtype.into(),
        shape,
        pieces,
    }
}

/// `tiles` tiles, `elements` halves each; inputs `x`, `y` and output `out`, all `[tiles, elements]`
/// f16, tile `t` holding row `t`:
///
/// 0. compute: `s = x + y` (`residual_add_f16`);
/// 1. exchange: every tile sends `s` to the next tile's `r` (tile `tiles - 1` to tile 0);
/// 2. compute: `o = r + x`, so `out[t] = (x[t-1] + y[t-1]) + x[t]`.
///
/// With one tile there is nothing to send (the phase is empty) and step 2 reads `s`.
///
/// `y` dies after step 0 and `s` after step 1, so later buffers may reuse their memory.
pub fn rotate_add(tiles: u32, elements: u32) -> Program {
    let n = elements;
    let row = 2 * n;
    let bytes = row.div_ceil(8) * 8;
    let mut program = Program::new(tiles);
    let tensor_name = |name: &str| BufferCategory::Tensor(name.into());
    let mut ids: Vec<[BufferId; 5]> = Vec::new();
    for tile in &mut program.tiles {
        let x = tile.add_buffer(buffer("x", bytes, tensor_name("x"), (0, 2)));
        let y = tile.add_buffer(buffer("y", bytes, tensor_name("y"), (0, 0)));
        let s = tile.add_buffer(buffer(
            "s",
            bytes,
            tensor_name("s"),
            if tiles > 1 { (0, 1) } else { (0, 2) },
        ));
        let r = tile.add_buffer(buffer("r", bytes, tensor_name("r"), (1, 2)));
        let o = tile.add_buffer(buffer("o", bytes, tensor_name("out"), (2, 2)));
        ids.push([x, y, s, r, o]);
    }
    let call = |a: BufferId, b: BufferId, out: BufferId| KernelCall {
        kernel: "residual_add_f16",
        case: std::sync::Arc::new(residual_add_case(n)),
        bindings: vec![(a, 0), (b, 0), (out, 0)],
    };
    let first = program.compute_step("s = x + y");
    for (t, &[x, y, s, _, _]) in ids.iter().enumerate() {
        program.tiles[t].calls[first].push(call(x, y, s));
    }
    let transfers = (0..tiles)
        .filter(|_| tiles > 1)
        .map(|t| {
            let next = (t + 1) % tiles;
            SymbolicTransfer {
                sender: t,
                source: (ids[t as usize][2], 0),
                words: bytes / 4,
                deliveries: vec![(next, ids[next as usize][3], 0)],
                label: format!("s{t}→r{next}"),
            }
        })
        .collect();
    program.exchange_step("rotate s", transfers);
    let last = program.compute_step("o = r + x");
    for (t, &[x, _, s, r, o]) in ids.iter().enumerate() {
        // One tile has no one to send to: it keeps its own `s`.
        let received = if tiles > 1 { r } else { s };
        program.tiles[t].calls[last].push(call(received, x, o));
    }
    let pieces = |k: usize| {
        (0..tiles)
            .map(|t| HostPiecePlan {
                tile: t,
                buffer: ids[t as usize][k],
                offset: 0,
                tensor_offset: t as u64 * row as u64,
                bytes: row,
            })
            .collect()
    };
    let shape = vec![tiles as usize, n as usize];
    program.inputs = vec![
        tensor("x", "float16", shape.clone(), pieces(0)),
        tensor("y", "float16", shape.clone(), pieces(1)),
    ];
    program.outputs = vec![tensor("out", "float16", shape, pieces(4))];
    program
}

/// Adds `case`'s buffers to `tile` of `program` (inputs as contents, live from step 0; outputs
/// live from `step` to `last` and read by the host as `{prefix}.{buffer}` (`uint8`); scratch
/// live in `step`) and its call to `step`.
fn add_case(
    program: &mut Program,
    tile: usize,
    step: usize,
    last: usize,
    prefix: &str,
    kernel: &'static dyn Kernel,
    case: &Case,
) {
    let mut template = case.clone();
    let mut bindings = Vec::new();
    for (k, b) in case.buffers.iter().enumerate() {
        let name = format!("{prefix}.{}", b.name);
        let (category, live) = match b.role {
            Role::Input => (BufferCategory::Weights(name.clone()), (0, step)),
            Role::Output => (BufferCategory::Tensor(name.clone()), (step, last)),
            Role::Scratch => (BufferCategory::Scratch, (step, step)),
        };
        let region = match b.region {
            Region::Standard => RegionRequirement::Standard,
            Region::Interleaved => RegionRequirement::Interleaved,
        };
        let contents = (b.role == Role::Input).then(|| Arc::new(b.bytes.clone()));
        let id = program.tiles[tile].add_buffer(BufferDecl {
            name: name.clone(),
            bytes: b.len() as u32,
            align: b.align.max(8),
            region,
            slot: b.element_slot,
            category,
            live,
            alias_of: None,
            contents,
        });
        bindings.push((id, 0));
        template.buffers[k].bytes = vec![0; b.len()];
        if b.role == Role::Output && !b.is_empty() {
            let piece = HostPiecePlan {
                tile: tile as u32,
                buffer: id,
                offset: 0,
                tensor_offset: 0,
                bytes: b.len() as u32,
            };
            program
                .outputs
                .push(tensor(&name, "uint8", vec![b.len()], vec![piece]));
        }
    }
    program.tiles[tile].calls[step].push(KernelCall {
        kernel: kernel.name(),
        case: std::sync::Arc::new(template),
        bindings,
    });
}

/// One kernel call per tile: case `i` runs on tile `i` in a single compute step, its inputs as
/// buffer contents and each non-empty output as a host output `t{i}.{buffer}` (`uint8`).
pub fn one_call_per_tile(tiles: u32, cases: &[(&'static dyn Kernel, Case)]) -> Program {
    let mut program = Program::new(tiles);
    let step = program.compute_step("one call per tile");
    for (i, (kernel, case)) in cases.iter().enumerate().take(tiles as usize) {
        add_case(&mut program, i, step, step, &format!("t{i}"), *kernel, case);
    }
    program
}

/// Every case on tile 0 of a one-tile program, case `i` in step `i`; outputs are host outputs
/// `s{i}.{buffer}` (`uint8`), kept to the end. Successive calls change the supervisor CSRs.
pub fn calls_in_sequence(cases: &[(&'static dyn Kernel, Case)]) -> Program {
    let mut program = Program::new(1);
    for i in 0..cases.len() {
        program.compute_step(&format!("call {i}"));
    }
    let last = cases.len().saturating_sub(1);
    for (i, (kernel, case)) in cases.iter().enumerate() {
        add_case(&mut program, 0, i, last, &format!("s{i}"), *kernel, case);
    }
    program
}
