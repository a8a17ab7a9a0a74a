//! Small hand-written tile programs for tests, examples and demos of the back end.

use crate::tile::{
    BufferCategory, BufferDecl, BufferId, HostPiecePlan, HostTensorPlan, KernelCall, Program,
    RegionRequirement, SymbolicTransfer,
};
use std::sync::Arc;
use tessera_kernels::table::{KernelParams, RegionNeed};
use tessera_kernels::Role;

/// A buffer of `bytes` in any region, 8-aligned, without contents.
pub(crate) fn buffer(
    name: &str,
    bytes: u32,
    category: BufferCategory,
    live: (usize, usize),
) -> BufferDecl {
    BufferDecl {
        name: name.into(),
        bytes,
        align: 8,
        region: RegionRequirement::Any,
        slot: None,
        category,
        live,
        alias_of: None,
        alias_offset: 0,
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
    let params = Arc::new(KernelParams::ResidualAdd { n, slots: None });
    let call = |a: BufferId, b: BufferId, out: BufferId| {
        KernelCall::new(
            params.clone(),
            vec![(a, 0), (b, 0), (out, 0)],
            Arc::from("residual"),
        )
        .expect("residual_add of n ≥ 1 halves")
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

/// Adds the operands of a call of `params` to `tile` of `program` (inputs with the bytes of
/// `data` as contents — constants from the kernel table win — live from step 0; outputs live
/// from `step` to `last` and read by the host as `{prefix}.{operand}` (`uint8`); scratch live
/// in `step`) and the call to `step`. Returns the call's operand specs.
fn add_call(
    program: &mut Program,
    tile: usize,
    step: usize,
    last: usize,
    prefix: &str,
    params: &Arc<KernelParams>,
    data: &[Vec<u8>],
) -> Result<(), tessera_kernels::table::KernelParamError> {
    let spec = params.spec()?;
    let mut bindings = Vec::new();
    for (k, b) in spec.operands.iter().enumerate() {
        let name = format!("{prefix}.{}", b.name);
        let (category, live) = match b.role {
            Role::Input => (BufferCategory::Weights(name.clone()), (0, step)),
            Role::Output => (BufferCategory::Tensor(name.clone()), (step, last)),
            Role::Scratch => (BufferCategory::Scratch, (step, step)),
        };
        let region = match b.region {
            RegionNeed::Any => RegionRequirement::Any,
            RegionNeed::Standard => RegionRequirement::Standard,
            RegionNeed::Interleaved => RegionRequirement::Interleaved,
        };
        let contents = match (&b.constant, b.role) {
            (Some(c), _) => Some(c.clone()),
            (None, Role::Input) => {
                let mut bytes = data.get(k).cloned().unwrap_or_default();
                bytes.resize(b.bytes as usize, 0);
                Some(Arc::new(bytes))
            }
            (None, Role::Output | Role::Scratch) => None,
        };
        let id = program.tiles[tile].add_buffer(BufferDecl {
            name: name.clone(),
            bytes: b.bytes.div_ceil(8) * 8,
            align: b.align.max(8),
            region,
            slot: b.slot,
            category,
            live,
            alias_of: None,
            alias_offset: 0,
            contents,
        });
        bindings.push((id, 0));
        if b.role == Role::Output && b.bytes > 0 {
            let piece = HostPiecePlan {
                tile: tile as u32,
                buffer: id,
                offset: 0,
                tensor_offset: 0,
                bytes: b.bytes,
            };
            program
                .outputs
                .push(tensor(&name, "uint8", vec![b.bytes as usize], vec![piece]));
        }
    }
    let call = KernelCall::new(params.clone(), bindings, Arc::from(prefix))?;
    program.tiles[tile].calls[step].push(call);
    Ok(())
}

/// A call and the bytes of its operands (inputs; other entries are ignored).
pub type CallWithData = (Arc<KernelParams>, Vec<Vec<u8>>);

/// One kernel call per tile: call `i` runs on tile `i` in a single compute step, its inputs as
/// buffer contents and each non-empty output as a host output `t{i}.{operand}` (`uint8`).
pub fn one_call_per_tile(
    tiles: u32,
    calls: &[CallWithData],
) -> Result<Program, tessera_kernels::table::KernelParamError> {
    let mut program = Program::new(tiles);
    let step = program.compute_step("one call per tile");
    for (i, (params, data)) in calls.iter().enumerate().take(tiles as usize) {
        add_call(&mut program, i, step, step, &format!("t{i}"), params, data)?;
    }
    Ok(program)
}

/// Every call on tile 0 of a one-tile program, call `i` in step `i`; outputs are host outputs
/// `s{i}.{operand}` (`uint8`), kept to the end. Successive calls change the supervisor CSRs.
pub fn calls_in_sequence(
    calls: &[CallWithData],
) -> Result<Program, tessera_kernels::table::KernelParamError> {
    let mut program = Program::new(1);
    for i in 0..calls.len() {
        program.compute_step(&format!("call {i}"));
    }
    let last = calls.len().saturating_sub(1);
    for (i, (params, data)) in calls.iter().enumerate() {
        add_call(&mut program, 0, i, last, &format!("s{i}"), params, data)?;
    }
    Ok(program)
}
