//! Strategies: for every graph compute op, the ways it can run — the layout of its result and
//! the layout each operand must be brought to. This is the one place that knows which
//! distributions each op kind can use; adding an op means adding its arm here, in
//! [`crate::lower`] (its kernel calls) and in the mid verifier.
//!
//! | op | strategies |
//! |---|---|
//! | matmul `[M,K]×[K,N]` | grids of row × column blocks (a few shapes ranked by a quick model, columns in 16s or in whole heads), operands `Panels` and `Cwei` |
//! | batched matmul `[B,M,K]×[B,K,N]` | (batch entries × query blocks) grids; for few rows (M ≤ 128), (batch entries × column blocks) grids; (batch entries × row × column blocks) grids ranked as plain products' |
//! | bias add, add, gelu, cast | follow the operand's layout; rows over the chip; rows × column blocks of 32 when the rows are fewer than the tiles |
//! | add (2-D) | also blocks of several rows × 16s of columns (`blocks 6x240 on 1440`): a K-split product's sum in the blocks its consumers gather from in long runs; and blocks of 16s of rows × 16 columns written in `$CWEI` order (`blocks 18x80 on 1440 cwei`): a sum a product reads as its weights |
//! | softmax, layernorm | follow when rows are whole; rows over the chip |

use super::forms::{BaseKind, Form};
use super::spread::{
    block_spreads, columns_of, product_grid, row_column_spread, rows, stored_bases, stored_once,
    stored_spread, weight_block_spreads,
};
use super::{value_dims, PlanError};
use crate::graph::op::view_op;
use crate::graph::{DType, Graph, Op, ValueHandle};
use crate::layout::order::AMP_BLOCK_BYTES;
use crate::layout::{Distribution, Layout, Order, ShardMap};
use std::sync::Arc;

/// What kind of layout a strategy gives its op. The search keeps its beam diverse in the product
/// grids (the decisions whose worth later ops reveal), and reports show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// A product on a grid of row × column blocks (per batch entry for batched products).
    Grid,
    /// An op in the layout of one of its operands, as it stands.
    Follow,
    /// An op with its rows spread over some tiles.
    Rows,
}

/// One way to run an op.
#[derive(Clone, Debug)]
pub struct Strategy {
    /// For reports and `--force`: `grid 30x48 cols/72`, `follow x`, `rows on 729`.
    pub label: String,
    pub kind: StrategyKind,
    pub out: Layout,
    /// The layout every operand is brought to, in the op's operand order.
    pub operands: Vec<Layout>,
    /// Per operand (absent = none): the layout a weight is stored in when that is not the one
    /// the op reads; the weight is then redistributed into `operands[j]` before each use.
    pub stored: Vec<Option<Layout>>,
}

/// What strategies are generated from.
pub struct Ctx<'g> {
    pub graph: &'g Graph,
    pub forms: &'g [Form],
    pub tiles: u32,
    /// Column granules worth trying for products besides 16 (head widths).
    pub granules: Vec<u32>,
    /// Row granules worth trying for products besides 1 and 16 ([`key_block_granules`]).
    pub row_granules: Vec<u32>,
    /// Grid shapes tried per product.
    pub grids_per_product: usize,
    /// See [`super::PlanOptions::sram_saving`].
    pub sram_saving: bool,
    /// See [`super::PlanOptions::softmax_part_panels`].
    pub softmax_part_panels: bool,
    /// See [`super::PlanOptions::products_read_rows`].
    pub products_read_rows: bool,
    /// Per node: the tile a matrix weight stored once starts at ([`stored_bases`]); empty
    /// when weights stored once stay on their products' grids.
    pub stored_bases: Vec<u32>,
}

/// Weights stored once are dealt around all tiles ([`stored_spread`]) only when the model's
/// weights take more than 1/4 of every tile: the spread layout's gathers come from more, smaller
/// blocks and cost more (3 So400m layers: 2,776,977 cropped cycles spread, 2,606,438 estimated
/// on the grids, +7 %), while 27 layers (45 % of every tile) fit only spread.
pub const SPREAD_ABOVE_SHARE: u64 = 4;

impl Ctx<'_> {
    /// The tile each matrix weight of `graph` stored once starts at, indexed by node; empty
    /// (weights stored on their products' grids) unless the weights take more than
    /// 1/[`SPREAD_ABOVE_SHARE`] of every tile's `sram` bytes (`sram` 0: always spread).
    pub fn stored_bases(graph: &Graph, tiles: u32, sram: u32) -> Vec<u32> {
        let sizes: Vec<Option<u64>> = graph
            .nodes
            .iter()
            .map(|(h, n)| {
                let matrix = matches!(n.op, Op::Weight { .. }) && n.ty.shape.0.len() == 2;
                matrix.then(|| super::resident_bytes(graph, h))
            })
            .collect();
        let per_tile = sizes.iter().flatten().sum::<u64>() / tiles.max(1) as u64;
        if sram > 0 && per_tile * SPREAD_ABOVE_SHARE <= sram as u64 {
            return Vec::new();
        }
        stored_bases(sizes.into_iter(), tiles)
    }
}

/// In an SRAM-saving plan, a replicated parameter vector (operands `operands`, laid out as
/// `params`) may be stored once and gathered before use, as replicated product weights are:
/// the `stored` list of that strategy.
fn gathered_params(
    ctx: &Ctx,
    is_weight: bool,
    params: &Distribution,
    order: Order,
    dtype: DType,
    operands: &[usize],
) -> Option<Vec<Option<Layout>>> {
    if !ctx.sram_saving || !is_weight {
        return None;
    }
    let stored = stored_once(params)?;
    let mut list = vec![None; operands.iter().max()? + 1];
    for &j in operands {
        list[j] = Some(lay(stored.clone(), order, dtype));
    }
    Some(list)
}

/// `pinned`, after its variant that stores `what` once and gathers it (`stored`), if any.
fn push_with_gathered(
    out: &mut Vec<Strategy>,
    pinned: Strategy,
    stored: Option<Vec<Option<Layout>>>,
    what: &str,
) {
    if let Some(stored) = stored {
        out.push(Strategy {
            label: format!("{} {what} gathered", pinned.label),
            stored,
            ..pinned.clone()
        });
    }
    out.push(pinned);
}

fn lay(dist: Distribution, order: Order, dtype: DType) -> Layout {
    Layout { dist, order, dtype }
}

/// The row length (padded last dimension) of `dist` in `order` for `dtype`.
fn row_elements(dist: &Distribution, order: Order, dtype: DType) -> Option<u32> {
    ShardMap::new(order, &dist.padded_box(), dtype.size_bytes() as u32)
        .ok()
        .map(|m| m.row_elements())
}

/// The order a row op takes when it follows the layout `l` of its input: `l`'s own row-major
/// padding when each shard row is whole words, else rows padded to 4 elements (a row op never
/// writes AMP panels or weight blocks).
fn followed_row_order(l: &Layout, dtype: DType) -> Order {
    match l.order {
        Order::RowMajor { align }
            if row_elements(&l.dist, l.order, dtype).is_some_and(|r| r % 4 == 0) =>
        {
            Order::RowMajor { align }
        }
        Order::RowMajor { .. } | Order::Panels | Order::Cwei => Order::RowMajor { align: 4 },
    }
}

/// Head widths: the column count of every SplitHeads input divided by its heads (so products
/// feeding attention can give each tile whole heads).
pub fn head_granules(graph: &Graph) -> Vec<u32> {
    let mut out: Vec<u32> = graph
        .nodes
        .iter()
        .filter_map(|(_, n)| {
            let Op::SplitHeads { x, heads, .. } = &n.op else {
                return None;
            };
            let cols = *graph.nodes[*x].ty.shape.0.last()? as u32;
            Some(cols / (*heads as u32).max(1))
        })
        .filter(|&g| g > 0 && g != 16)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Key-block lengths of attention split along the keys (every `SoftmaxPart`'s row length):
/// a product whose rows are tokens cut at these multiples sends each key block's values from
/// one tile, so a block's keys fill whole `$CWEI` lanes from one sender and the values can be
/// reordered once at their source instead of on every query block's tile.
pub fn key_block_granules(graph: &Graph) -> Vec<u32> {
    let mut out: Vec<u32> = graph
        .nodes
        .iter()
        .filter_map(|(_, n)| {
            let Op::SoftmaxPart { x, .. } = &n.op else {
                return None;
            };
            Some(*graph.nodes[*x].ty.shape.0.last()? as u32)
        })
        .filter(|&g| g > 16)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// (tm, tn) shapes of a product grid for `M×K×N` on `tiles`, best first by a quick model: AMP
/// time (MACs per cycle, a launch per 16-column × K-block pair) plus the activation rows each
/// tile receives; `count` of them.
fn grid_shapes(
    m: u32,
    k: u32,
    n: u32,
    cg: u32,
    tiles: u32,
    fp8: bool,
    count: usize,
) -> Vec<(u32, u32)> {
    let (macs, kb) = if fp8 { (128u64, 32u64) } else { (64, 16) };
    let max_tn = n.div_ceil(cg.max(1)).max(1);
    let mut all: Vec<(u64, u32, u32)> = Vec::new();
    let mut tm = 1u32;
    while tm <= m.min(tiles) {
        let tn = (tiles / tm).min(max_tn).max(1);
        let rows = m.div_ceil(tm) as u64;
        let cols = (n.div_ceil(tn).div_ceil(cg) * cg).div_ceil(16) as u64 * 16;
        let (k64, kbs, nbs) = (k as u64, (k as u64).div_ceil(kb), cols / 16);
        let compute = rows * k64 * cols / macs + kbs * nbs * (6 * (4 * rows.div_ceil(6) + 28) + 60);
        let receive = rows * k64 * if fp8 { 1 } else { 2 } / 4;
        all.push((compute + receive, tm, tn));
        // Geometric steps, so planning stays proportional to log(tiles).
        tm = (tm + 1).max(tm * 5 / 4);
    }
    all.sort_unstable();
    all.dedup_by_key(|e| (e.1, e.2));
    all.truncate(count);
    all.into_iter().map(|(_, tm, tn)| (tm, tn)).collect()
}

/// The dtype of FP8-or-f16 matmul operands, or why the op cannot run on the AMP.
fn amp_fp8(
    graph: &Graph,
    h: ValueHandle,
    a: ValueHandle,
    b: ValueHandle,
) -> Result<bool, PlanError> {
    match (graph.nodes[a].ty.dtype, graph.nodes[b].ty.dtype) {
        (DType::Fp8 { .. }, DType::Fp8 { .. }) => Ok(true),
        (DType::F16, DType::F16) => Ok(false),
        (x, y) => Err(PlanError::op(
            graph,
            h,
            format!("no AMP kernel multiplies {x} by {y} (FP8 × FP8 or f16 × f16)"),
        )),
    }
}

fn needs_f16(
    graph: &Graph,
    h: ValueHandle,
    operand: ValueHandle,
    what: &str,
) -> Result<(), PlanError> {
    let dtype = graph.nodes[operand].ty.dtype;
    if dtype != DType::F16 {
        return Err(PlanError::op(
            graph,
            h,
            format!("{what} is {dtype}; the kernels take f16"),
        ));
    }
    Ok(())
}

/// Row spreads of `shape` worth trying: all tiles, a half and a quarter (distinct ones).
/// The layouts a row op (bias add, softmax) is tried in: its input's own layout when
/// `followed` is given, then each row spread, rows padded to 4 elements.
fn row_op_layouts(
    ctx: &Ctx,
    shape: &[u32],
    followed: Option<Arc<Layout>>,
    dtype: DType,
    spread: Spread,
) -> Vec<(String, StrategyKind, Distribution, Order)> {
    let mut dists: Vec<(String, StrategyKind, Distribution, Order)> = Vec::new();
    if let Some(l) = followed {
        let order = followed_row_order(&l, dtype);
        dists.push((
            "follow x".into(),
            StrategyKind::Follow,
            l.dist.clone(),
            order,
        ));
    }
    for d in row_spreads(ctx, shape, spread) {
        dists.push((
            spread_label(&d),
            StrategyKind::Rows,
            d,
            Order::RowMajor { align: 4 },
        ));
    }
    dists
}

/// Whether an op's rows may be cut into column blocks when they are fewer than the tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spread {
    /// Whole rows only (softmax, layernorm).
    WholeRows,
    /// Element-wise: rows, or rows × column blocks when the rows alone leave tiles idle
    /// ([`row_column_spread`]).
    Elements,
}

/// Columns of a row × column spread in whole 32-element granules: a product reading the value
/// as AMP panels (32-byte K-blocks) gets whole K-blocks from each source tile.
const SPREAD_COLUMN_GRANULE: u32 = 32;

/// Columns of a block of [`block_spreads`]: a whole AMP block of a product's output (16 halves).
const BLOCK_COLUMN_GRANULE: u32 = 16;

/// `rows on N`, or `rows x C cols on N` for a row × column spread.
fn spread_label(d: &Distribution) -> String {
    let counts = d.counts();
    match counts[..] {
        // Row blocks of several rows (`block_spreads`), not one row a block.
        [r, c] if c > 1 && r < d.shape()[0] => format!("blocks {r}x{c} on {}", d.tile_count()),
        [_, c] if c > 1 => format!("rows x {c} cols on {}", d.tile_count()),
        _ => format!("rows on {}", d.tile_count()),
    }
}

fn row_spreads(ctx: &Ctx, shape: &[u32], spread: Spread) -> Vec<Distribution> {
    let tiles = ctx.tiles;
    let mut spreads: Vec<(u32, u32)> = vec![(tiles, 1), (tiles / 2, 1), (tiles / 4, 1)];
    if ctx.sram_saving {
        // Rows in whole AMP panels (16 rows): a product reading the value as panels then
        // receives each source tile's rows as whole panel rows, written in place without a
        // staging copy of the operand.
        spreads.push((tiles, PANEL_ROWS));
    }
    let mut out: Vec<Distribution> = Vec::new();
    for (n, granule) in spreads {
        if let Ok(d) = rows(shape, n.max(1), granule) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    match spread {
        Spread::WholeRows => {}
        Spread::Elements => {
            if let Some(Ok(d)) = row_column_spread(shape, tiles, SPREAD_COLUMN_GRANULE) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
    out
}

/// Rows of one AMP panel of a product's A operand.
const PANEL_ROWS: u32 = 16;

/// Every strategy for compute node `h`. `current(v)` is the layout chosen for compute base `v`.
pub fn strategies(
    ctx: &Ctx,
    h: ValueHandle,
    current: &dyn Fn(ValueHandle) -> Option<Arc<Layout>>,
) -> Result<Vec<Strategy>, PlanError> {
    let graph = ctx.graph;
    let node = &graph.nodes[h];
    let shape = value_dims(graph, h);
    let rank = shape.len();
    let dtype = node.ty.dtype;
    // The layout of operand `x` when it is a computed value read without a view.
    let followed = |x: ValueHandle| -> Option<Arc<Layout>> {
        let form = &ctx.forms[x.index()];
        if form.kind == BaseKind::Compute && form.view.is_identity() {
            current(form.base)
        } else {
            None
        }
    };
    let mut out: Vec<Strategy> = Vec::new();
    match &node.op {
        Op::MatMul { a, b } | Op::BatchedMatMul { a, b } => {
            let fp8 = amp_fp8(graph, h, *a, *b)?;
            let (ad, bd) = (graph.nodes[*a].ty.dtype, graph.nodes[*b].ty.dtype);
            let k = *value_dims(graph, *a).last().unwrap_or(&1);
            let (m, n) = (shape[rank - 2], shape[rank - 1]);
            let batched = matches!(node.op, Op::BatchedMatMul { .. });
            let lead = if batched { shape[0].min(ctx.tiles) } else { 1 };
            // K-slices of a stored weight: whole AMP blocks.
            let kg = AMP_BLOCK_BYTES / bd.size_bytes().max(1) as u32;
            // The weight stored once dealt around all tiles, when the plan spreads (the same
            // for every grid); laid out as the operand (the host converts through its view).
            let b_dims = value_dims(graph, *b);
            let spread = if !batched && b_dims.len() == 2 && !ctx.stored_bases.is_empty() {
                let base = ctx.forms[b.index()].base;
                let start = ctx.stored_bases.get(base.index()).copied().unwrap_or(0);
                Some(
                    stored_spread(&b_dims, kg, 16, ctx.tiles, start).map_err(|e| {
                        PlanError::layout(graph, h, "the weight's stored spread", e)
                    })?,
                )
            } else {
                None
            };
            let per_lead = (ctx.tiles / lead).max(1);
            let mut granules = vec![16u32];
            if ctx.sram_saving && !batched && n >= 64 {
                // Whole FP8 K-blocks: a consumer reading this result as AMP panels then
                // receives each K-block from one tile, in one window per block.
                granules.push(AMP_BLOCK_BYTES);
            }
            if !batched {
                granules.extend(ctx.granules.iter().copied().filter(|&g| n % g == 0));
            }
            for cg in granules {
                let shapes = if batched {
                    // Row blocks with one column block (the attention matrices are narrow, head
                    // width, or whole rows), and, for a product whose rows are few and columns
                    // many (a transposed context, `vᵀ pᵀ`: the head width streams through each
                    // `$CWEI` load of a block of the columns), all rows with the columns split.
                    let mut qbs: Vec<(u32, u32)> = [per_lead, per_lead / 2, per_lead / 4]
                        .into_iter()
                        .filter(|&q| q >= 1)
                        .map(|q| (q.min(m), 1))
                        .collect();
                    let column_blocks = n.div_ceil(cg);
                    if m <= 128 && column_blocks > 1 {
                        for q in [per_lead, per_lead / 2] {
                            if q >= 2 {
                                qbs.push((1, q.min(column_blocks)));
                            }
                        }
                    }
                    // Row × column grids per batch entry, ranked by the same quick model as
                    // plain products: a head's scores `q kᵀ` split over keys as well as queries
                    // stream hundreds of query rows through each `$CWEI` load of 16 keys,
                    // instead of 8 rows through each of 46 loads of the whole key range.
                    if column_blocks > 1 {
                        qbs.extend(grid_shapes(
                            m,
                            k,
                            n,
                            cg,
                            per_lead,
                            fp8,
                            ctx.grids_per_product,
                        ));
                    }
                    qbs.sort_unstable();
                    qbs.dedup();
                    qbs
                } else {
                    grid_shapes(m, k, n, cg, ctx.tiles, fp8, ctx.grids_per_product)
                };
                // A in rows, besides panels, where its K fills whole AMP K-blocks and its rows
                // fit the pace stride field: the product reads its operand where an exchange
                // left the rows, with no relayout into panels.
                let a_row_bytes = k as usize * ad.size_bytes();
                let a_orders: &[(Order, &str)] = if ctx.products_read_rows
                    && a_row_bytes.is_multiple_of(AMP_BLOCK_BYTES as usize)
                    && a_row_bytes <= tessera_kernels::gemm::MAX_ROW_STRIDE_BYTES
                {
                    &[(Order::Panels, ""), (Order::DENSE, " a rows")]
                } else {
                    &[(Order::Panels, "")]
                };
                let mut row_granules = vec![1u32, 16];
                if !batched {
                    row_granules.extend(ctx.row_granules.iter().copied().filter(|&g| m % g == 0));
                }
                for (tm, tn) in shapes {
                    for &rg in &row_granules {
                        if rg > 1 && m < 2 * rg {
                            continue;
                        }
                        let grid = product_grid(&shape, k, lead, tm, tn, rg, cg, kg)
                            .map_err(|e| PlanError::layout(graph, h, "a product grid", e))?;
                        let (l, cm, cn) = grid.counts;
                        let label = format!(
                            "grid {}{cm}x{cn} cols/{cg} rows/{rg}",
                            if batched {
                                format!("{l}x")
                            } else {
                                String::new()
                            }
                        );
                        let weights = lay(grid.b.clone(), Order::Cwei, bd);
                        for &(a_order, a_label) in a_orders {
                            let label = format!("{label}{a_label}");
                            let pinned = Strategy {
                                label: label.clone(),
                                kind: StrategyKind::Grid,
                                out: lay(
                                    grid.out.clone(),
                                    Order::RowMajor { align: 16 },
                                    DType::F16,
                                ),
                                operands: vec![lay(grid.a.clone(), a_order, ad), weights.clone()],
                                stored: Vec::new(),
                            };
                            // A replicated weight may instead be stored once and gathered into
                            // the replicated layout before each use: slower, but it leaves the
                            // SRAM to activations (what larger batches need).
                            let stored = lay(
                                spread.clone().unwrap_or(grid.b_stored.clone()),
                                Order::Cwei,
                                bd,
                            );
                            let streams = ctx.sram_saving
                                && ctx.forms[b.index()].kind == BaseKind::Weight
                                && weights.dist.replication() > 1
                                && stored.dist.replication() == 1;
                            // SRAM-saving plans store every replicated weight once.
                            out.push(if streams {
                                Strategy {
                                    label: format!("{label} weights gathered"),
                                    stored: vec![None, Some(stored)],
                                    ..pinned
                                }
                            } else {
                                pinned
                            });
                        }
                    }
                }
            }
        }
        Op::BiasAdd { x, bias } => {
            needs_f16(graph, h, *x, "x")?;
            let dists = row_op_layouts(ctx, &shape, followed(*x), dtype, Spread::Elements);
            for (label, kind, dist, order) in dists {
                let bias_dist = columns_of(&dist)
                    .map_err(|e| PlanError::layout(graph, h, "the bias's columns", e))?;
                let is_weight = ctx.forms[bias.index()].kind == BaseKind::Weight;
                let gathered = gathered_params(ctx, is_weight, &bias_dist, order, DType::F16, &[1]);
                let pinned = Strategy {
                    label,
                    kind,
                    out: lay(dist.clone(), order, DType::F16),
                    operands: vec![
                        lay(dist, order, DType::F16),
                        lay(bias_dist, order, DType::F16),
                    ],
                    stored: Vec::new(),
                };
                push_with_gathered(&mut out, pinned, gathered, "bias");
            }
        }
        Op::Add { a, b } => {
            needs_f16(graph, h, *a, "a")?;
            needs_f16(graph, h, *b, "b")?;
            let mut layouts: Vec<(String, StrategyKind, Layout)> = Vec::new();
            for (name, x) in [("a", *a), ("b", *b)] {
                if let Some(l) = followed(x) {
                    if !layouts.iter().any(|(_, _, e)| e == &*l) {
                        layouts.push((
                            format!("follow {name}"),
                            StrategyKind::Follow,
                            (*l).clone(),
                        ));
                    }
                }
            }
            for d in row_spreads(ctx, &shape, Spread::Elements)
                .into_iter()
                .chain(block_spreads(&shape, ctx.tiles, BLOCK_COLUMN_GRANULE))
            {
                layouts.push((
                    spread_label(&d),
                    StrategyKind::Rows,
                    lay(d, Order::DENSE, DType::F16),
                ));
            }
            for (label, kind, l) in layouts {
                out.push(Strategy {
                    label,
                    kind,
                    out: l.clone(),
                    operands: vec![l.clone(), l],
                    stored: Vec::new(),
                });
            }
            // The sum written as AMP weights from rows (`add_cwei_f16`): a product reading it
            // as its B takes each block whole.
            for d in weight_block_spreads(&shape, ctx.tiles) {
                out.push(Strategy {
                    label: format!("{} cwei", spread_label(&d)),
                    kind: StrategyKind::Rows,
                    out: lay(d.clone(), Order::Cwei, DType::F16),
                    operands: vec![lay(d.clone(), Order::DENSE, DType::F16); 2],
                    stored: Vec::new(),
                });
            }
        }
        Op::Gelu { x } | Op::Cast { x, .. } => {
            let from = graph.nodes[*x].ty.dtype;
            if let Op::Cast { to, .. } = &node.op {
                let ok = matches!(
                    (from, *to),
                    (DType::F32, DType::F16) | (DType::F16, DType::Fp8 { .. })
                );
                if !ok {
                    return Err(PlanError::op(graph, h, format!("no kernel casts {from} to {to} (f32 → f16 and f16 → FP8 are supported)")));
                }
            } else {
                needs_f16(graph, h, *x, "x")?;
            }
            let mut layouts: Vec<(String, StrategyKind, Distribution, Order)> = Vec::new();
            if let Some(l) = followed(*x) {
                layouts.push((
                    "follow x".into(),
                    StrategyKind::Follow,
                    l.dist.clone(),
                    l.order,
                ));
            }
            for d in row_spreads(ctx, &shape, Spread::Elements) {
                layouts.push((spread_label(&d), StrategyKind::Rows, d, Order::DENSE));
            }
            for (label, kind, dist, order) in layouts {
                out.push(Strategy {
                    label,
                    kind,
                    out: lay(dist.clone(), order, dtype),
                    operands: vec![lay(dist, order, from)],
                    stored: Vec::new(),
                });
            }
        }
        Op::Softmax { x, scale } => {
            needs_f16(graph, h, *x, "x")?;
            if !(scale.is_finite() && *scale > 0.0) {
                return Err(PlanError::op(
                    graph,
                    h,
                    format!("softmax scale {scale}: the kernel takes a finite scale > 0"),
                ));
            }
            // Softmax rows must be whole on a tile to follow x.
            let whole = followed(*x).filter(|l| l.dist.is_whole(rank - 1));
            let dists = row_op_layouts(ctx, &shape, whole, dtype, Spread::WholeRows);
            for (label, kind, dist, order) in dists {
                out.push(Strategy {
                    label,
                    kind,
                    out: lay(dist.clone(), Order::RowMajor { align: 4 }, DType::F16),
                    operands: vec![lay(dist, order, DType::F16)],
                    stored: Vec::new(),
                });
            }
        }
        Op::SoftmaxPart { x, scale } => {
            needs_f16(graph, h, *x, "x")?;
            if !(scale.is_finite() && *scale > 0.0) {
                return Err(PlanError::op(
                    graph,
                    h,
                    format!("softmax_part scale {scale}: the kernel takes a finite scale > 0"),
                ));
            }
            let k = value_dims(graph, *x)[rank - 1];
            // The result has x's blocks of the leading dimensions, its rows 4 wider.
            let whole = followed(*x).filter(|l| l.dist.is_whole(rank - 1));
            let mut dists: Vec<(String, StrategyKind, Distribution, Order)> = Vec::new();
            if let Some(l) = whole {
                if let Ok(d) = l.dist.with_trailing(rank - 1, &[shape[rank - 1]]) {
                    dists.push((
                        "follow x".into(),
                        StrategyKind::Follow,
                        d,
                        followed_row_order(&l, DType::F16),
                    ));
                }
            }
            for d in row_spreads(ctx, &shape, Spread::WholeRows) {
                dists.push((
                    spread_label(&d),
                    StrategyKind::Rows,
                    d,
                    Order::RowMajor { align: 4 },
                ));
            }
            // At scale 1 the kernel also writes AMP panels, which a product reads in place.
            let outs: &[Order] = if ctx.softmax_part_panels && *scale == 1.0 && rank >= 2 {
                &[Order::RowMajor { align: 4 }, Order::Panels]
            } else {
                &[Order::RowMajor { align: 4 }]
            };
            for (label, kind, dist, order) in dists {
                let Ok(xd) = dist.with_trailing(rank - 1, &[k]) else {
                    continue;
                };
                for &o in outs {
                    out.push(Strategy {
                        label: match o {
                            Order::Panels => format!("{label}, panels out"),
                            Order::RowMajor { .. } | Order::Cwei => label.clone(),
                        },
                        kind,
                        out: lay(dist.clone(), o, DType::F16),
                        operands: vec![lay(xd.clone(), order, DType::F16)],
                        stored: Vec::new(),
                    });
                }
            }
        }
        Op::AttentionCombine { parts, .. } => {
            // parts [.., C, R, D]: each key block's rows together, as its product writes them
            // (rows of whole 16-column blocks), so a sender's rows for one tile are one run.
            let pd = value_dims(graph, *parts);
            let blocks = pd[pd.len() - 3];
            // Whole rows, or rows × column blocks where the rows alone leave tiles idle (the
            // pooling head: a few rows of the hidden width); a row's statistics go whole to each
            // of its column blocks. Statistics `[.., C, R, 2]` with the parts' blocks of rows, as
            // each block's softmax part writes them: a sender's rows for one tile are one run
            // and the kernel reads them where they land (`stats_block`).
            let mut dists: Vec<(String, StrategyKind, Distribution)> = Vec::new();
            for d in row_spreads(ctx, &shape, Spread::Elements) {
                dists.push((spread_label(&d), StrategyKind::Rows, d));
            }
            for (label, kind, dist) in dists {
                let (Ok(p), Ok(s)) = (
                    dist.with_whole_dim(rank - 2, blocks),
                    dist.with_trailing_replicated(rank - 1, &[2])
                        .and_then(|s| s.with_whole_dim(rank - 2, blocks)),
                ) else {
                    continue;
                };
                out.push(Strategy {
                    label,
                    kind,
                    out: lay(dist, Order::RowMajor { align: 8 }, DType::F16),
                    operands: vec![
                        lay(p, Order::RowMajor { align: 16 }, DType::F16),
                        lay(s, Order::DENSE, DType::F16),
                    ],
                    stored: Vec::new(),
                });
            }
        }
        Op::SumParts { x } => {
            needs_f16(graph, h, *x, "x")?;
            let xd = value_dims(graph, *x);
            let parts = xd[xd.len() - 2];
            // The result in whole rows or rows × column blocks; each tile receives all parts of
            // its block.
            for d in row_spreads(ctx, &shape, Spread::Elements) {
                let Ok(p) = d.with_whole_dim(rank - 1, parts) else {
                    continue;
                };
                out.push(Strategy {
                    label: spread_label(&d),
                    kind: StrategyKind::Rows,
                    out: lay(d, Order::RowMajor { align: 8 }, DType::F16),
                    operands: vec![lay(p, Order::RowMajor { align: 8 }, DType::F16)],
                    stored: Vec::new(),
                });
            }
        }
        Op::LayerNorm { x, gamma, beta, .. } => {
            needs_f16(graph, h, *x, "x")?;
            let n = shape[rank - 1];
            let param_dtype = graph.nodes[*gamma].ty.dtype;
            for p in [*gamma, *beta] {
                let dtype = graph.nodes[p].ty.dtype;
                let readable = match dtype {
                    DType::F32 => true,
                    DType::F16 => n.is_multiple_of(4),
                    DType::Fp8 { .. } => false,
                };
                if ctx.forms[p.index()].kind != BaseKind::Weight
                    || !readable
                    || dtype != param_dtype
                {
                    return Err(PlanError::op(
                        graph,
                        h,
                        "gamma and beta must be weights of one type: f32, or f16 where the width is a multiple of 4 (the kernels read f32 or f16 parameters)",
                    ));
                }
            }
            if rank > 1 && !n.is_multiple_of(4) && shape[..rank - 1].iter().any(|&d| d > 1) {
                return Err(PlanError::op(
                    graph,
                    h,
                    format!(
                        "rows of {n} values: the kernel needs a multiple of 4 for several rows"
                    ),
                ));
            }
            // (label, kind, the result's distribution, x's): whole rows, or with f16 parameters
            // a row's columns split over tiles, each holding the whole rows beside its block for
            // the statistics (`layernorm_h_cols_*`): the statistics repeat on the row's tiles and
            // the normalising splits, where whole rows leave the normalising on the one tile of a
            // row (the pooling head's one row).
            let mut dists: Vec<(String, StrategyKind, Distribution, Distribution)> = Vec::new();
            let mut offer = |label: String, kind: StrategyKind, d: Distribution| {
                if dists.iter().any(|(_, _, e, _)| e == &d) {
                    return;
                }
                if d.is_whole(rank - 1) {
                    dists.push((label, kind, d.clone(), d));
                    return;
                }
                // Even blocks of whole groups of 4 (every tile's block is the padded one).
                let bounds = &d.bounds()[rank - 1];
                let width = bounds.get(1).copied().unwrap_or(0);
                let even = width > 0
                    && width.is_multiple_of(4)
                    && bounds.windows(2).all(|w| w[1] - w[0] == width);
                if param_dtype != DType::F16 || !even {
                    return;
                }
                if let Ok(rows) = d.with_trailing_replicated(rank - 1, &[n]) {
                    dists.push((format!("{label}, rows beside"), kind, d, rows));
                }
            };
            if let Some(l) = followed(*x) {
                offer("follow x".into(), StrategyKind::Follow, l.dist.clone());
            }
            for d in row_spreads(ctx, &shape, Spread::WholeRows) {
                offer(format!("rows on {}", d.tile_count()), StrategyKind::Rows, d);
            }
            for d in row_spreads(ctx, &shape, Spread::Elements) {
                if !d.is_whole(rank - 1) {
                    offer(spread_label(&d), StrategyKind::Rows, d);
                }
            }
            for (label, kind, dist, x_dist) in dists {
                let params = columns_of(&dist)
                    .map_err(|e| PlanError::layout(graph, h, "the parameters' columns", e))?;
                let gathered =
                    gathered_params(ctx, true, &params, Order::DENSE, param_dtype, &[1, 2]);
                let pinned = Strategy {
                    label,
                    kind,
                    out: lay(dist, Order::DENSE, dtype),
                    operands: vec![
                        lay(x_dist, Order::DENSE, DType::F16),
                        lay(params.clone(), Order::DENSE, param_dtype),
                        lay(params, Order::DENSE, param_dtype),
                    ],
                    stored: Vec::new(),
                };
                push_with_gathered(&mut out, pinned, gathered, "params");
            }
        }
        Op::Input { .. }
        | Op::Weight { .. }
        | view_op!()
        | Op::Repeat { .. }
        | Op::Output { .. } => {}
    }
    if out.is_empty()
        && !node.op.operands().is_empty()
        && !super::forms::is_view(&node.op)
        && !matches!(node.op, Op::Output { .. })
    {
        return Err(PlanError::op(graph, h, "no strategy fits this op"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
