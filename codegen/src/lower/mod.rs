//! Distributed level → tile level: per tile buffers, kernel calls, exchange transfers and host
//! pieces for every mid-level op. Ops run in steps: compute ops accumulate into the current
//! compute step; a gather closes it and becomes an exchange step.

mod calls;
mod weights;

use crate::dist::{resolve, Format, MidOp, MidProgram, Order, Shard, ValueId};
use crate::graph::weights::WeightStore;
use crate::tile::{
    BufferCategory, BufferDecl, BufferId, HostPiecePlan, HostTensorPlan, KernelCall, Program,
    RegionRequirement, StepKind, SymbolicTransfer,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tessera_isa::numerics::Fp8Format;

/// Why lowering failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-LOWER-{code:03} %{op} ({name}): {reason}")]
pub struct LowerError {
    pub code: u32,
    pub op: usize,
    pub name: String,
    pub reason: String,
}

/// Where a value's shard lives on a tile.
#[derive(Clone, Copy, Debug)]
struct Site {
    buffer: BufferId,
    offset: u32,
}

/// Weights converted for the kernels, shared by the lowerings of one weight store (the planner
/// lowers every candidate grid): each FP8 weight is quantized once, and each column block put in
/// `$CWEI` order once however many grids use it. Safe to share between threads; the result does
/// not depend on which lowering converts first.
#[derive(Default)]
pub struct WeightCache {
    /// (tensor name, its data's address and length, format, scale) → the FP8 codes of the whole weight.
    quantized: Cells<WeightKey>,
    /// (weight, first column, end column, padded width) → the block's bytes.
    blocks: Cells<(WeightKey, u32, u32, u32)>,
}

type WeightKey = (String, usize, usize, Fp8Format, i8);

/// Byte vectors by key, each made once.
type Cells<K> = Mutex<HashMap<K, Arc<OnceLock<Arc<Vec<u8>>>>>>;

/// The value of `key` in `map`, made by `make` once (other threads asking meanwhile wait).
/// `make` must not use the thread pool: it runs inside the cell's initialiser, and a worker
/// that stole another task needing the same cell would wait on itself.
fn once<K: std::hash::Hash + Eq>(
    map: &Cells<K>,
    key: K,
    make: impl FnOnce() -> Vec<u8>,
) -> Arc<Vec<u8>> {
    let cell = map
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    cell.get_or_init(|| Arc::new(make())).clone()
}

impl WeightCache {
    /// Columns `cols` of the K × N weight `name` as FP8 `$CWEI` blocks, `width` columns wide.
    #[allow(clippy::too_many_arguments)]
    fn blocks(
        &self,
        name: &str,
        values: &[f32],
        k: u32,
        n: u32,
        cols: std::ops::Range<u32>,
        width: u32,
        format: Fp8Format,
        scale: i8,
    ) -> Arc<Vec<u8>> {
        let weight: WeightKey = (
            name.to_string(),
            values.as_ptr() as usize,
            values.len(),
            format,
            scale,
        );
        once(
            &self.blocks,
            (weight.clone(), cols.start, cols.end, width),
            || {
                let codes = once(&self.quantized, weight, || {
                    weights::quantize_all(values, format, scale)
                });
                weights::cwei_blocks_of_codes(&codes, k, n, cols, width)
            },
        )
    }
}

struct Lowering<'a> {
    mid: &'a MidProgram,
    store: &'a WeightStore,
    cache: &'a WeightCache,
    program: Program,
    /// Per value, per tile: where its shard is.
    sites: Vec<HashMap<u32, Site>>,
    /// Per tile, per buffer: steps it is used in (min, max).
    uses: Vec<Vec<(usize, usize)>>,
    /// Shards of values, resolved on first use by [`Lowering::shard_on`].
    resolved: HashMap<u32, Vec<Shard>>,
    /// The compute step ops are currently added to.
    current: Option<usize>,
    op: usize,
}

fn fbytes(format: Format) -> u32 {
    format.bytes()
}

impl Lowering<'_> {
    fn fail(&self, code: u32, reason: impl Into<String>) -> LowerError {
        LowerError {
            code,
            op: self.op,
            name: self.mid.ops[self.op].name().into(),
            reason: reason.into(),
        }
    }

    fn buffer(&mut self, tile: u32, decl: BufferDecl) -> BufferId {
        let id = self.program.tiles[tile as usize].add_buffer(decl);
        self.uses[tile as usize].push((usize::MAX, 0));
        id
    }

    fn touch(&mut self, tile: u32, buffer: BufferId, step: usize) {
        let entry = &mut self.uses[tile as usize][buffer.0 as usize];
        entry.0 = entry.0.min(step);
        entry.1 = entry.1.max(step);
    }

    fn compute_step(&mut self) -> usize {
        match self.current {
            Some(step) => step,
            None => {
                let label = format!("compute after %{}", self.op);
                let step = self.program.compute_step(&label);
                self.current = Some(step);
                step
            }
        }
    }

    fn shards(&self, value: ValueId) -> Vec<Shard> {
        resolve(&self.mid.grid, self.mid.value(value))
    }

    /// The first of `value`'s shards (in [`resolve`] order) on `tile`; a value's shards are
    /// resolved once.
    fn shard_on(&mut self, value: ValueId, tile: u32) -> Option<Shard> {
        let mid = self.mid;
        let shards = self
            .resolved
            .entry(value.0)
            .or_insert_with(|| resolve(&mid.grid, mid.value(value)));
        // Shards are sorted by tile first.
        let i = shards.partition_point(|s| s.tile < tile);
        shards.get(i).filter(|s| s.tile == tile).cloned()
    }

    fn site(&self, value: ValueId, tile: u32) -> Result<Site, LowerError> {
        self.sites[value.0 as usize]
            .get(&tile)
            .copied()
            .ok_or_else(|| self.fail(2, format!("%{} has no shard on tile {tile}", value.0)))
    }

    /// Bytes of one shard row in the value's order.
    fn row_bytes(&self, value: ValueId, shard: &Shard) -> u32 {
        let v = self.mid.value(value);
        match v.layout.order {
            Order::RowMajor { stride } => stride * fbytes(v.layout.format),
            Order::Panels => (shard.cols.end - shard.cols.start).div_ceil(32) * 32,
            Order::CweiBlocks | Order::Vector => {
                (shard.cols.end - shard.cols.start) * fbytes(v.layout.format)
            }
        }
    }

    fn shard_bytes(&self, value: ValueId, shard: &Shard) -> u32 {
        self.row_bytes(value, shard) * (shard.rows.end - shard.rows.start)
    }

    /// A fresh buffer for a value's shard on a tile.
    fn new_site(
        &mut self,
        value: ValueId,
        shard: &Shard,
        region: RegionRequirement,
        slot: Option<u8>,
    ) -> Site {
        let v = self.mid.value(value);
        let bytes = self.shard_bytes(value, shard).max(8).div_ceil(8) * 8;
        let decl = BufferDecl {
            name: v.name.clone(),
            bytes,
            align: 16,
            region,
            slot,
            category: BufferCategory::Tensor(v.name.clone()),
            live: (0, 0),
            alias_of: None,
            contents: None,
        };
        let buffer = self.buffer(shard.tile, decl);
        let site = Site { buffer, offset: 0 };
        self.sites[value.0 as usize].insert(shard.tile, site);
        site
    }

    /// The single reader of `value` if it is a gather (producers write straight into the gathered buffer).
    fn gathered_by(&self, value: ValueId) -> Option<ValueId> {
        let readers = self.mid.readers(value);
        match readers.as_slice() {
            [r] if matches!(self.mid.ops[*r], MidOp::Gather { .. }) => Some(ValueId(*r as u32)),
            _ => None,
        }
    }

    /// Where the shard of `value` on `shard.tile` should be written: inside the buffer of the
    /// gather that reads it (allocated on first use) at the shard's position, or a new buffer.
    fn output_site(
        &mut self,
        value: ValueId,
        shard: &Shard,
        region: RegionRequirement,
        slot: Option<u8>,
    ) -> Site {
        if let Some(gather) = self.gathered_by(value) {
            let gathered_shard = self
                .shard_on(gather, shard.tile)
                .expect("a gather covers its sources' tiles");
            let base = match self.sites[gather.0 as usize].get(&shard.tile) {
                Some(site) => *site,
                None => self.new_site(gather, &gathered_shard, RegionRequirement::Any, Some(0)),
            };
            let offset = self.position_in_gather(value, gather, shard, &gathered_shard);
            let site = Site {
                buffer: base.buffer,
                offset: base.offset + offset,
            };
            self.sites[value.0 as usize].insert(shard.tile, site);
            return site;
        }
        self.new_site(value, shard, region, slot)
    }

    /// Byte offset of a source shard inside the gathered row block.
    fn position_in_gather(
        &self,
        source: ValueId,
        gather: ValueId,
        shard: &Shard,
        gathered: &Shard,
    ) -> u32 {
        match self.mid.value(gather).layout.order {
            Order::RowMajor { .. } => {
                (shard.rows.start - gathered.rows.start) * self.row_bytes(gather, gathered)
            }
            _ => {
                let _ = source;
                (shard.cols.start / 32) * 32 * (gathered.rows.end - gathered.rows.start)
            }
        }
    }

    fn call(&mut self, tile: u32, step: usize, call: KernelCall) {
        for &(buffer, _) in &call.bindings {
            self.touch(tile, buffer, step);
        }
        self.program.tiles[tile as usize].calls[step].push(call);
    }

    /// A small per-call scratch buffer.
    fn scratch(&mut self, tile: u32, bytes: usize, region: RegionRequirement) -> BufferId {
        self.buffer(
            tile,
            BufferDecl {
                name: "scratch".into(),
                bytes: (bytes.max(16) as u32).div_ceil(16) * 16,
                align: 16,
                region,
                slot: None,
                category: BufferCategory::Scratch,
                live: (0, 0),
                alias_of: None,
                contents: None,
            },
        )
    }

    fn constant(
        &mut self,
        tile: u32,
        name: &str,
        bytes: Arc<Vec<u8>>,
        region: RegionRequirement,
        align: u32,
    ) -> BufferId {
        let decl = BufferDecl {
            name: name.into(),
            bytes: (bytes.len() as u32).div_ceil(16) * 16,
            align,
            region,
            slot: None,
            category: BufferCategory::Weights(name.into()),
            live: (0, 0),
            alias_of: None,
            contents: Some(bytes),
        };
        let id = self.buffer(tile, decl);
        self.touch(tile, id, 0);
        id
    }

    fn weight(&self, tensor: &str) -> Result<&crate::graph::weights::HostTensor, LowerError> {
        self.store
            .get(tensor)
            .ok_or_else(|| self.fail(3, format!("weight `{tensor}` is not in the store")))
    }

    fn lower_op(&mut self, k: usize) -> Result<(), LowerError> {
        self.op = k;
        let id = ValueId(k as u32);
        let op = self.mid.ops[k].clone();
        let value = self.mid.value(id).clone();
        match op {
            MidOp::Input { tensor } => {
                for shard in self.shards(id) {
                    let site = self.new_site(id, &shard, RegionRequirement::Any, None);
                    self.touch(shard.tile, site.buffer, 0);
                    self.host_pieces(&tensor, id, &shard, site, true);
                }
            }
            // Weights are converted and placed by the ops that read them (they know the layout).
            MidOp::Weight { .. } => {}
            MidOp::LayerNorm {
                x,
                gamma,
                beta,
                eps,
            } => {
                // The LayerNorm kernels work on 4-element groups; the panel reorder that follows
                // copies whole 32-byte K-blocks.
                if value.cols % 32 != 0 {
                    return Err(self.fail(
                        17,
                        format!("the hidden width must be a multiple of 32 for the LayerNorm and panel kernels, not {}", value.cols),
                    ));
                }
                let step = self.compute_step();
                let (gamma_name, beta_name) = (
                    self.mid.value(gamma).name.clone(),
                    self.mid.value(beta).name.clone(),
                );
                let gamma_bytes = Arc::new(weights::f32_bytes(&self.weight(&gamma_name)?.data));
                let beta_bytes = Arc::new(weights::f32_bytes(&self.weight(&beta_name)?.data));
                for shard in self.shards(id) {
                    let rows = (shard.rows.end - shard.rows.start) as usize;
                    let input = self.site(x, shard.tile)?;
                    let output = self.output_site(id, &shard, RegionRequirement::Any, None);
                    let g = self.constant(
                        shard.tile,
                        &gamma_name,
                        gamma_bytes.clone(),
                        RegionRequirement::Any,
                        8,
                    );
                    let b = self.constant(
                        shard.tile,
                        &beta_name,
                        beta_bytes.clone(),
                        RegionRequirement::Any,
                        8,
                    );
                    let format = value.layout.format;
                    let (case, scratch) = {
                        let key = format!("layernorm {rows} {} {eps} {format:?}", value.cols);
                        let case = calls::memo(key, || {
                            calls::layernorm(rows, value.cols as usize, eps, format).0
                        });
                        let scratch: Vec<usize> = case
                            .buffers
                            .iter()
                            .filter(|b| b.role == tessera_kernels::Role::Scratch)
                            .map(|b| b.len())
                            .collect();
                        (case, scratch)
                    };
                    let mut bindings = vec![
                        (input.buffer, input.offset),
                        (g, 0),
                        (b, 0),
                        (output.buffer, output.offset),
                    ];
                    for bytes in scratch {
                        let s = self.scratch(shard.tile, bytes, RegionRequirement::Any);
                        bindings.push((s, 0));
                    }
                    self.call(
                        shard.tile,
                        step,
                        KernelCall {
                            kernel: calls::kernel_name(&case),
                            case,
                            bindings,
                        },
                    );
                }
            }
            MidOp::Cast { .. } => return Err(self.fail(
                10,
                "a standalone cast is not lowered (it should have been fused into its producer)",
            )),
            MidOp::Gather { x } => {
                self.current = None;
                let mut transfers = Vec::new();
                let gathered: Vec<Shard> = self.shards(id);
                for shard in &gathered {
                    if !self.sites[k].contains_key(&shard.tile) {
                        self.new_site(id, shard, RegionRequirement::Any, Some(0));
                    }
                }
                for source in self.shards(x) {
                    let site = self.site(x, source.tile)?;
                    let bytes = self.shard_bytes(x, &source);
                    let (i, _) = (
                        source.tile / self.mid.grid.tn,
                        source.tile % self.mid.grid.tn,
                    );
                    let mut deliveries = Vec::new();
                    for target in gathered
                        .iter()
                        .filter(|t| t.tile / self.mid.grid.tn == i && t.tile != source.tile)
                    {
                        let base = self.sites[k][&target.tile];
                        let offset = self.position_in_gather(x, id, &source, target);
                        deliveries.push((target.tile, base.buffer, base.offset + offset));
                    }
                    if deliveries.is_empty() || bytes == 0 {
                        continue;
                    }
                    transfers.push(SymbolicTransfer {
                        sender: source.tile,
                        source: (site.buffer, site.offset),
                        words: bytes.div_ceil(4),
                        deliveries,
                        label: format!("{} from tile {}", value.name, source.tile),
                    });
                }
                let step = self
                    .program
                    .exchange_step(&format!("gather {}", value.name), Vec::new());
                for t in &transfers {
                    self.touch(t.sender, t.source.0, step);
                    for &(tile, buffer, _) in &t.deliveries {
                        self.touch(tile, buffer, step);
                    }
                }
                let StepKind::Exchange { phase, .. } = self.program.steps[step] else {
                    unreachable!()
                };
                self.program.phases[phase] = transfers;
            }
            MidOp::ToPanels { x } => {
                let step = self.compute_step();
                for shard in self.shards(id) {
                    let input = self.site(x, shard.tile)?;
                    let stride = self.row_bytes(x, &shard);
                    let rows = (shard.rows.end - shard.rows.start) as usize;
                    let kbs = (shard.cols.end - shard.cols.start).div_ceil(32) as usize;
                    let output = self.output_site(id, &shard, RegionRequirement::Any, Some(0));
                    let case = calls::memo(format!("panelize {rows} {stride} {kbs}"), || {
                        calls::panelize(rows, stride as usize, kbs)
                    });
                    self.call(
                        shard.tile,
                        step,
                        KernelCall {
                            kernel: calls::kernel_name(&case),
                            case,
                            bindings: vec![
                                (input.buffer, input.offset),
                                (output.buffer, output.offset),
                            ],
                        },
                    );
                }
            }
            MidOp::MatMul { a, w } => {
                let step = self.compute_step();
                let w_value = self.mid.value(w).clone();
                let (
                    Format::Fp8 {
                        format: a_format,
                        scale: a_scale,
                    },
                    Format::Fp8 {
                        format: w_format,
                        scale: w_scale,
                    },
                ) = (self.mid.value(a).layout.format, w_value.layout.format)
                else {
                    return Err(self.fail(11, "FP8 operands expected"));
                };
                let Order::RowMajor { stride } = value.layout.order else {
                    return Err(self.fail(12, "matmul result must be row-major"));
                };
                // The GEMM's row jump is a 10-bit pace stride in 8-byte atoms.
                const MAX_COLUMNS: u32 = (8 * (511 + 3) / 2) as u32;
                if stride > MAX_COLUMNS {
                    return Err(self.fail(16, format!("a {stride}-column GEMM output block exceeds the FP8 GEMM kernel's {MAX_COLUMNS} columns; use more column blocks")));
                }
                let values = &self
                    .store
                    .get(&w_value.name)
                    .ok_or_else(|| {
                        self.fail(3, format!("weight `{}` is not in the store", w_value.name))
                    })?
                    .data;
                for shard in self.shards(id) {
                    let rows = (shard.rows.end - shard.rows.start) as usize;
                    let input = self.site(a, shard.tile)?;
                    let blocks = self.cache.blocks(
                        &w_value.name,
                        values,
                        w_value.rows,
                        w_value.cols,
                        shard.cols.clone(),
                        stride,
                        w_format,
                        w_scale,
                    );
                    let wb = self.constant(
                        shard.tile,
                        &w_value.name,
                        blocks,
                        RegionRequirement::Interleaved,
                        16,
                    );
                    let output =
                        self.output_site(id, &shard, RegionRequirement::Interleaved, Some(2));
                    let k_dim = w_value.rows as usize;
                    let case = calls::memo(format!("gemm_fp8 {rows} {k_dim} {stride} {a_format:?} {w_format:?} {a_scale} {w_scale}"), || {
                        calls::gemm_fp8(rows, k_dim, stride as usize, a_format, w_format, a_scale as i32 + w_scale as i32)
                    });
                    let s = self.scratch(shard.tile, 16, RegionRequirement::Standard);
                    self.call(
                        shard.tile,
                        step,
                        KernelCall {
                            kernel: calls::kernel_name(&case),
                            case,
                            bindings: vec![
                                (input.buffer, input.offset),
                                (wb, 0),
                                (output.buffer, output.offset),
                                (s, 0),
                            ],
                        },
                    );
                }
            }
            MidOp::BiasAdd { x, bias } => {
                let step = self.compute_step();
                let Order::RowMajor { stride } = value.layout.order else {
                    return Err(self.fail(13, "bias_add needs rows"));
                };
                let bias_name = self.mid.value(bias).name.clone();
                let data = self.weight(&bias_name)?.data.clone();
                for shard in self.shards(id) {
                    let site = self.site(x, shard.tile)?;
                    self.sites[k].insert(shard.tile, site);
                    let bytes = Arc::new(weights::f16_vector(&data, shard.cols.clone(), stride));
                    let b = self.constant(shard.tile, &bias_name, bytes, RegionRequirement::Any, 8);
                    let rows = (shard.rows.end - shard.rows.start) as usize;
                    let case = calls::memo(format!("bias_add {rows} {stride}"), || {
                        calls::bias_add(rows, stride as usize)
                    });
                    self.call(
                        shard.tile,
                        step,
                        KernelCall {
                            kernel: calls::kernel_name(&case),
                            case,
                            bindings: vec![
                                (site.buffer, site.offset),
                                (b, 0),
                                (site.buffer, site.offset),
                            ],
                        },
                    );
                }
            }
            MidOp::Gelu { x } => {
                let step = self.compute_step();
                let Order::RowMajor { stride } = value.layout.order else {
                    return Err(self.fail(14, "gelu needs rows"));
                };
                for shard in self.shards(id) {
                    let input = self.site(x, shard.tile)?;
                    let output = self.output_site(id, &shard, RegionRequirement::Any, None);
                    let n = (shard.rows.end - shard.rows.start) as usize * stride as usize;
                    let format = value.layout.format;
                    let case =
                        calls::memo(format!("gelu {n} {format:?}"), || calls::gelu(n, format));
                    self.call(
                        shard.tile,
                        step,
                        KernelCall {
                            kernel: calls::kernel_name(&case),
                            case,
                            bindings: vec![
                                (input.buffer, input.offset),
                                (output.buffer, output.offset),
                            ],
                        },
                    );
                }
            }
            MidOp::Add { a, b } => {
                let step = self.compute_step();
                let Order::RowMajor { stride } = value.layout.order else {
                    return Err(self.fail(15, "add needs rows"));
                };
                for shard in self.shards(id) {
                    let (sa, sb) = (self.site(a, shard.tile)?, self.site(b, shard.tile)?);
                    let output = self.output_site(id, &shard, RegionRequirement::Any, None);
                    let n = (shard.rows.end - shard.rows.start) as usize * stride as usize;
                    let case = calls::memo(format!("residual_add {n}"), || calls::residual_add(n));
                    self.call(
                        shard.tile,
                        step,
                        KernelCall {
                            kernel: calls::kernel_name(&case),
                            case,
                            bindings: vec![
                                (sa.buffer, sa.offset),
                                (sb.buffer, sb.offset),
                                (output.buffer, output.offset),
                            ],
                        },
                    );
                }
            }
            MidOp::Output { x, tensor } => {
                for shard in self.shards(id) {
                    let site = self.site(x, shard.tile)?;
                    self.sites[k].insert(shard.tile, site);
                    self.host_pieces(&tensor, id, &shard, site, false);
                    self.touch(shard.tile, site.buffer, usize::MAX - 1);
                }
            }
        }
        Ok(())
    }

    /// One host piece per row of a shard of `value` (the tensor is row-major on the host).
    fn host_pieces(
        &mut self,
        tensor: &str,
        value: ValueId,
        shard: &Shard,
        site: Site,
        input: bool,
    ) {
        let row_bytes = self.row_bytes(value, shard);
        let v = self.mid.value(value).clone();
        let element = fbytes(v.layout.format);
        let plan = self.host_tensor(tensor, &v, input);
        for r in shard.rows.clone() {
            plan.pieces.push(HostPiecePlan {
                tile: shard.tile,
                buffer: site.buffer,
                offset: site.offset + (r - shard.rows.start) * row_bytes,
                tensor_offset: (r as u64 * v.cols as u64 + shard.cols.start as u64)
                    * element as u64,
                bytes: (shard.cols.end - shard.cols.start) * element,
            });
        }
    }

    fn host_tensor(
        &mut self,
        name: &str,
        value: &crate::dist::MidValue,
        input: bool,
    ) -> &mut HostTensorPlan {
        let list = if input {
            &mut self.program.inputs
        } else {
            &mut self.program.outputs
        };
        if let Some(i) = list.iter().position(|t| t.name == name) {
            return &mut list[i];
        }
        let dtype = match value.layout.format {
            Format::F32 => "float32",
            Format::F16 => "float16",
            Format::Fp8 { .. } => "uint8",
        };
        list.push(HostTensorPlan {
            name: name.into(),
            dtype: dtype.into(),
            shape: vec![value.rows as usize, value.cols as usize],
            pieces: Vec::new(),
        });
        list.last_mut().unwrap()
    }
}

/// Lowers a verified mid-level program to the tile level for `tiles` chip tiles.
pub fn lower(mid: &MidProgram, store: &WeightStore, tiles: u32) -> Result<Program, LowerError> {
    lower_with(mid, store, tiles, &WeightCache::default())
}

/// [`lower`] with converted weights shared with other lowerings of the same `store`.
pub fn lower_with(
    mid: &MidProgram,
    store: &WeightStore,
    tiles: u32,
    cache: &WeightCache,
) -> Result<Program, LowerError> {
    let mut lowering = Lowering {
        mid,
        store,
        cache,
        program: Program::new(tiles),
        sites: vec![HashMap::new(); mid.ops.len()],
        uses: vec![Vec::new(); tiles as usize],
        resolved: HashMap::new(),
        current: None,
        op: 0,
    };
    for k in 0..mid.ops.len() {
        lowering.lower_op(k)?;
    }
    if lowering.program.steps.is_empty() {
        lowering.program.compute_step("empty");
    }
    let last = lowering.program.steps.len() - 1;
    let Lowering {
        mut program, uses, ..
    } = lowering;
    for (tile, uses) in program.tiles.iter_mut().zip(uses) {
        for (buffer, (first, end)) in tile.buffers.iter_mut().zip(uses) {
            let first = if first == usize::MAX { 0 } else { first };
            let end = end.min(last);
            // Host inputs and constants are loaded before step 0.
            let first = if buffer.contents.is_some() { 0 } else { first };
            buffer.live = (first.min(end), end.max(first));
        }
    }
    for input in &program.inputs {
        for piece in &input.pieces {
            let buffer = &mut program.tiles[piece.tile as usize].buffers[piece.buffer.0 as usize];
            buffer.live.0 = 0;
        }
    }
    Ok(program)
}
