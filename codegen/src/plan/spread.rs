//! Candidate distributions the strategies choose from: rows of any rank spread over a number of
//! tiles, and the grids of matrix products. All start at tile 0 and fill tiles row-major, except
//! weights stored once ([`stored_spread`]), which are dealt around all the chip's tiles.

use crate::layout::{even_bounds, Distribution, LayoutError, TileGrid};

/// Block counts for the leading dimensions (all but the last) of `shape` over at most `tiles`
/// tiles, splitting from the outermost dimension; the innermost leading dimension is split in
/// multiples of `granule`.
fn leading_counts(shape: &[u32], tiles: u32, granule: u32) -> Vec<u32> {
    let rank = shape.len();
    let mut counts = vec![1u32; rank];
    let mut left = tiles.max(1);
    for d in 0..rank.saturating_sub(1) {
        let g = if d + 2 == rank { granule.max(1) } else { 1 };
        let pieces = shape[d].div_ceil(g);
        let c = pieces.min(left).max(1);
        counts[d] = c;
        left /= c;
        if left == 0 {
            break;
        }
    }
    counts
}

/// The leading dimensions of `shape` split over at most `tiles` tiles, the last dimension
/// whole (every tile holds whole rows). Rank 1: one block on tile 0.
pub fn rows(shape: &[u32], tiles: u32, granule: u32) -> Result<Distribution, LayoutError> {
    let rank = shape.len();
    let counts = leading_counts(shape, tiles, granule);
    let mut bounds = Vec::with_capacity(rank);
    let mut grid_dims = Vec::new();
    let mut dim_map = Vec::with_capacity(rank);
    for d in 0..rank {
        if d + 1 == rank {
            bounds.push(vec![0, shape[d]]);
            dim_map.push(None);
            continue;
        }
        let g = if d + 2 == rank { granule.max(1) } else { 1 };
        let b = even_bounds(shape[d], counts[d], g);
        grid_dims.push(b.len() as u32 - 1);
        dim_map.push(Some(grid_dims.len() - 1));
        bounds.push(b);
    }
    if grid_dims.is_empty() {
        grid_dims.push(1);
    }
    Distribution::on_grid(
        shape.to_vec(),
        bounds,
        &TileGrid::new(grid_dims, 0),
        &dim_map,
    )
}

/// `[R, N]` with fewer rows than `tiles` spread over the chip as rows × column blocks: every
/// row on its own set of tiles, its `N` values cut into `tiles / R` blocks (at least 2) of whole
/// `granule`s. `None` when the rows alone fill the chip, for another rank, or when `N` has too
/// few granules to cut.
pub fn row_column_spread(
    shape: &[u32],
    tiles: u32,
    granule: u32,
) -> Option<Result<Distribution, LayoutError>> {
    let &[r, n] = shape else {
        return None;
    };
    let cols = (tiles / r.max(1)).min(n.div_ceil(granule.max(1)));
    if r == 0 || cols < 2 {
        return None;
    }
    let bounds = vec![even_bounds(r, r, 1), even_bounds(n, cols, granule)];
    let grid = TileGrid::new(
        vec![bounds[0].len() as u32 - 1, bounds[1].len() as u32 - 1],
        0,
    );
    Some(Distribution::on_grid(
        shape.to_vec(),
        bounds,
        &grid,
        &[Some(0), Some(1)],
    ))
}

/// Row counts of the blocks [`block_spreads`] tries: the row blocks of the products' grids
/// (a K-split product's sum in the blocks its consumers read as the unsplit product wrote them),
/// and 9, So400m's key blocks of 81 tokens: the queries' and keys' sum in 9 × 160 blocks puts a
/// head's keys of one key block on one tile (one layer with the head at batch 1: 304,129 →
/// 301,937 cropped; its operands' exchange 5.0k → 6.0k, the sums' step 4.4k → 3.5k, the q/k/v
/// exchange 11.7k → 11.1k estimated).
pub const BLOCK_ROW_COUNTS: [u32; 5] = [3, 6, 9, 12, 24];

/// `[R, N]` as blocks of rows × columns: for each row-block count `tr` of [`BLOCK_ROW_COUNTS`]
/// below `R`, the rows in `tr` even blocks and `N` in as many column blocks of whole `granule`s
/// as the remaining tiles hold (at least 2), laid row-major over the tiles from tile 0. Other
/// ranks: none. A product's operand gathered from such blocks arrives in few long runs where
/// rows spread one to a tile arrive in one run per row.
pub fn block_spreads(shape: &[u32], tiles: u32, granule: u32) -> Vec<Distribution> {
    let &[r, n] = shape else {
        return Vec::new();
    };
    let mut out: Vec<Distribution> = Vec::new();
    for tr in BLOCK_ROW_COUNTS {
        if tr >= r || tr > tiles {
            continue;
        }
        let tc = (tiles / tr).min(n / granule.max(1));
        if tc < 2 {
            continue;
        }
        let bounds = vec![even_bounds(r, tr, 1), even_bounds(n, tc, granule)];
        let grid = TileGrid::new(
            vec![bounds[0].len() as u32 - 1, bounds[1].len() as u32 - 1],
            0,
        );
        if let Ok(d) = Distribution::on_grid(shape.to_vec(), bounds, &grid, &[Some(0), Some(1)]) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// Most row-block counts [`weight_block_spreads`] offers.
const WEIGHT_BLOCK_ROW_CHOICES: usize = 2;

/// `[R, N]` (both multiples of 16) as blocks of 16 columns × an even share of the rows in whole
/// 16s: the most row blocks dividing `R / 16` that fit the tiles beside every column block, and
/// the next fewer. Each block is then one AMP channel block over whole K-blocks, so a sum
/// written in `$CWEI` order (`add_cwei_f16`) is what a product reading it as B takes, in one
/// run per block. Other shapes: none.
pub fn weight_block_spreads(shape: &[u32], tiles: u32) -> Vec<Distribution> {
    const BLOCK: u32 = 16;
    let &[r, n] = shape else {
        return Vec::new();
    };
    if r == 0 || n == 0 || !r.is_multiple_of(BLOCK) || !n.is_multiple_of(BLOCK) {
        return Vec::new();
    }
    let (k_blocks, tc) = (r / BLOCK, n / BLOCK);
    let most = tiles / tc;
    (1..=k_blocks.min(most))
        .rev()
        .filter(|tr| k_blocks.is_multiple_of(*tr))
        .take(WEIGHT_BLOCK_ROW_CHOICES)
        .filter_map(|tr| {
            let bounds = vec![even_bounds(r, tr, BLOCK), even_bounds(n, tc, BLOCK)];
            let grid = TileGrid::new(vec![tr, tc], 0);
            Distribution::on_grid(shape.to_vec(), bounds, &grid, &[Some(0), Some(1)]).ok()
        })
        .collect()
}

/// The three distributions of a product `[.., M, K] × [.., K, N] → [.., M, N]` on a grid of
/// `lead` blocks of the leading dimensions (flattened, outermost first) × `tm` row blocks × `tn`
/// column blocks (rows in multiples of `rg`, columns of `cg`): the result in blocks; `a` its
/// row blocks whole in K, replicated over the column blocks; `b` its column blocks whole in K,
/// replicated over the row blocks.
pub struct ProductGrid {
    pub out: Distribution,
    pub a: Distribution,
    pub b: Distribution,
    /// `b` stored once: each column block split along K (in multiples of `kg`) over the row
    /// blocks that use it, so every tile of the grid holds a slice and the replicas are
    /// gathered from their neighbours at use (a weight too big to keep replicated).
    pub b_stored: Distribution,
    /// Blocks actually used along (lead, rows, columns).
    pub counts: (u32, u32, u32),
}

#[allow(clippy::too_many_arguments)]
pub fn product_grid(
    out_shape: &[u32],
    k: u32,
    lead: u32,
    tm: u32,
    tn: u32,
    rg: u32,
    cg: u32,
    kg: u32,
) -> Result<ProductGrid, LayoutError> {
    let rank = out_shape.len();
    if rank < 2 {
        return Err(LayoutError::Rank { rank });
    }
    let (m, n) = (out_shape[rank - 2], out_shape[rank - 1]);
    // Leading dimensions: split the outermost over `lead` blocks, the others whole.
    let mut lead_bounds: Vec<Vec<u32>> = Vec::with_capacity(rank - 2);
    for d in 0..rank - 2 {
        lead_bounds.push(if d == 0 {
            even_bounds(out_shape[0], lead, 1)
        } else {
            vec![0, out_shape[d]]
        });
    }
    let lead_count = lead_bounds.first().map(|b| b.len() as u32 - 1).unwrap_or(1);
    let rows = even_bounds(m, tm, rg);
    let cols = even_bounds(n, tn, cg);
    let (cm, cn) = (rows.len() as u32 - 1, cols.len() as u32 - 1);
    let grid = TileGrid::new(vec![lead_count, cm, cn], 0);
    let lead_map = |d: usize| if d == 0 { Some(0) } else { None };
    let mut out_bounds = lead_bounds.clone();
    out_bounds.push(rows.clone());
    out_bounds.push(cols.clone());
    let mut out_map: Vec<Option<usize>> = (0..rank - 2).map(lead_map).collect();
    out_map.extend([Some(1), Some(2)]);
    let out = Distribution::on_grid(out_shape.to_vec(), out_bounds, &grid, &out_map)?;
    let mut a_shape = out_shape.to_vec();
    a_shape[rank - 1] = k;
    let mut a_bounds = lead_bounds.clone();
    a_bounds.push(rows);
    a_bounds.push(vec![0, k]);
    let mut a_map: Vec<Option<usize>> = (0..rank - 2).map(lead_map).collect();
    a_map.extend([Some(1), None]);
    let a = Distribution::on_grid(a_shape, a_bounds, &grid, &a_map)?;
    let mut b_shape = out_shape.to_vec();
    b_shape[rank - 2] = k;
    let mut b_bounds = lead_bounds;
    b_bounds.push(vec![0, k]);
    b_bounds.push(cols);
    let mut b_map: Vec<Option<usize>> = (0..rank - 2).map(lead_map).collect();
    b_map.extend([None, Some(2)]);
    let b = Distribution::on_grid(b_shape.clone(), b_bounds.clone(), &grid, &b_map)?;
    b_bounds[rank - 2] = even_bounds(k, cm, kg);
    b_map[rank - 2] = Some(1);
    let b_stored = Distribution::on_grid(b_shape, b_bounds, &grid, &b_map)?;
    Ok(ProductGrid {
        out,
        a,
        b,
        b_stored,
        counts: (lead_count, cm, cn),
    })
}

/// A weight `[K, N]` stored once over at most `tiles` tiles: K split in slices of whole
/// `kg`-row granules, N in `cg`-column granules, on the grid shape whose largest block is
/// smallest (fewest blocks among equals), block `i` (row-major) on tile `(base + i) % tiles`.
///
/// Why not the product's own grid: a loop keeps every layer's weights resident, so what decides
/// whether a model fits is the busiest tile's sum over all stored weights. The product grids all
/// start at tile 0 and put their larger K-slices first; stored on them, tile 0 held 14.8 KB of
/// each So400m layer's 10.3 KB mean. Smallest blocks, each weight starting where its share of
/// the model's weight bytes puts it ([`stored_bases`]), bring that to 11.8 KB.
pub fn stored_spread(
    shape: &[u32],
    kg: u32,
    cg: u32,
    tiles: u32,
    base: u32,
) -> Result<Distribution, LayoutError> {
    let &[k, n] = shape else {
        return Err(LayoutError::Rank { rank: shape.len() });
    };
    let tiles = tiles.max(1);
    let (kg, cg) = (kg.max(1), cg.max(1));
    let (k_granules, n_granules) = (k.div_ceil(kg).max(1), n.div_ceil(cg).max(1));
    let mut best: Option<(u64, u32, u32, u32)> = None;
    for rows in 1..=k_granules.min(tiles) {
        let cols = n_granules.min(tiles / rows).max(1);
        let largest = k_granules.div_ceil(rows) as u64
            * kg as u64
            * n_granules.div_ceil(cols) as u64
            * cg as u64;
        let key = (largest, rows * cols, rows, cols);
        if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
            best = Some(key);
        }
    }
    let (_, _, rows, cols) = best.unwrap_or((0, 1, 1, 1));
    let bounds = vec![even_bounds(k, rows, kg), even_bounds(n, cols, cg)];
    let blocks = (bounds[0].len() - 1) * (bounds[1].len() - 1);
    let lists = (0..blocks as u32)
        .map(|i| vec![(base % tiles + i) % tiles])
        .collect();
    Distribution::new(shape.to_vec(), bounds, lists)
}

/// Where each weight stored once starts ([`stored_spread`]'s `base`), indexed by node: the
/// weights laid end to end around the ring of `tiles` tiles in graph order, each starting at
/// its share of the bytes before it (`copies` of a weight count as many, as a loop keeps every
/// layer's). A function of the graph alone, so the planner and the plan builder agree.
pub fn stored_bases(sizes: impl Iterator<Item = Option<u64>>, tiles: u32) -> Vec<u32> {
    let sizes: Vec<Option<u64>> = sizes.collect();
    let total: u64 = sizes.iter().flatten().sum();
    let mut before = 0u64;
    sizes
        .iter()
        .map(|s| {
            let base = if total == 0 {
                0
            } else {
                (tiles as u128 * before as u128 / total as u128) as u32
            };
            before += s.unwrap_or(0);
            base
        })
        .collect()
}

/// A distribution of a vector `[n]` matching the last dimension of `like`: on every tile of
/// `like`, the elements of that tile's last-dimension range (a bias for `like`'s columns).
pub fn columns_of(like: &Distribution) -> Result<Distribution, LayoutError> {
    let rank = like.rank();
    let n = like.shape()[rank - 1];
    let bounds = vec![like.bounds()[rank - 1].clone()];
    let counts = like.counts();
    let cols = counts[rank - 1] as usize;
    let mut tiles = vec![Vec::new(); cols];
    for block in 0..like.block_count() {
        let c = like.block_coords(block)[rank - 1] as usize;
        tiles[c].extend_from_slice(like.tiles_of(block));
    }
    for t in &mut tiles {
        t.sort_unstable();
    }
    Distribution::new(vec![n], bounds, tiles)
}

/// A parameter vector held on every tile of `params` (replicated) stored once instead: split
/// into pieces of whole words (at least 16 values) on distinct tiles of `params`, so each tile
/// keeps a piece and the whole is gathered before use. `None` when `params` is not replicated.
pub fn stored_once(params: &Distribution) -> Option<Distribution> {
    if params.rank() != 1 || params.replication() <= 1 {
        return None;
    }
    let n = params.shape()[0];
    let mut tiles: Vec<u32> = params.all_tiles().collect();
    tiles.sort_unstable();
    tiles.dedup();
    let piece = n.div_ceil(tiles.len() as u32).max(16).next_multiple_of(4);
    let bounds: Vec<u32> = (0..n.div_ceil(piece))
        .map(|i| i * piece)
        .chain([n])
        .collect();
    let lists = tiles
        .iter()
        .take(bounds.len() - 1)
        .map(|&t| vec![t])
        .collect();
    Distribution::new(vec![n], vec![bounds], lists).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fill_the_tiles_from_the_outermost_dimension() {
        let d = rows(&[16, 729, 729], 1472, 1).unwrap();
        assert_eq!(d.counts(), vec![16, 92, 1]);
        assert_eq!(d.tile_count(), 16 * 92);
        let d = rows(&[729, 1152], 1472, 1).unwrap();
        assert_eq!(d.counts(), vec![729, 1]);
        let d = rows(&[8], 4, 1).unwrap();
        assert_eq!(d.tile_count(), 1);
    }

    /// Rows fewer than the tiles are cut into column blocks of whole granules, one block per
    /// tile, covering every value once; rows that fill the chip, or too few granules, are not.
    #[test]
    fn a_row_column_spread_fills_the_chip_in_whole_granules() {
        for (shape, tiles, cols) in [
            ([729u32, 4304u32], 1472u32, 2u32),
            ([729, 1152], 1472, 2),
            ([16, 1152], 1472, 36),
            ([100, 100], 1472, 4),
            ([3, 64], 8, 2),
        ] {
            let d = row_column_spread(&shape, tiles, 32).unwrap().unwrap();
            assert_eq!(d.counts(), vec![shape[0], cols], "{shape:?}");
            assert!(d.tile_count() as u32 <= tiles);
            let all: Vec<u32> = d.all_tiles().collect();
            let mut distinct = all.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(
                distinct.len(),
                all.len(),
                "{shape:?}: a tile holds two blocks"
            );
            let cuts = &d.bounds()[1];
            assert_eq!((cuts[0], *cuts.last().unwrap()), (0, shape[1]));
            assert!(
                cuts[..cuts.len() - 1].iter().all(|c| c % 32 == 0),
                "{cuts:?}"
            );
        }
        assert!(row_column_spread(&[1472, 64], 1472, 32).is_none());
        assert!(row_column_spread(&[729, 32], 1472, 32).is_none());
        assert!(row_column_spread(&[4, 729, 64], 1472, 32).is_none());
    }

    /// Block spreads cover every value once, one block a tile, within the tiles; their column
    /// cuts fall on whole granules and their rows are split in several-row blocks; other ranks
    /// and too few columns give none.
    #[test]
    fn block_spreads_cover_the_value_once_in_whole_granules() {
        for (shape, tiles) in [
            ([729u32, 3840u32], 1472u32),
            ([64, 768], 1472),
            ([30, 40], 16),
        ] {
            let spreads = block_spreads(&shape, tiles, 16);
            assert!(!spreads.is_empty(), "{shape:?}");
            for d in spreads {
                let counts = d.counts();
                assert!(
                    counts[0] > 1 && counts[0] < shape[0],
                    "{shape:?}: {counts:?}"
                );
                assert!(counts[1] >= 2, "{shape:?}: {counts:?}");
                let all: Vec<u32> = d.all_tiles().collect();
                assert!(all.iter().all(|&t| t < tiles));
                let mut distinct = all.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(
                    distinct.len(),
                    all.len(),
                    "{shape:?}: a tile holds two blocks"
                );
                let blocks: u64 = (0..d.block_count())
                    .map(|b| {
                        d.block_box(b)
                            .iter()
                            .map(|r| u64::from(r.end - r.start))
                            .product::<u64>()
                    })
                    .sum();
                assert_eq!(blocks, u64::from(shape[0]) * u64::from(shape[1]));
                let cuts = &d.bounds()[1];
                assert!(
                    cuts[..cuts.len() - 1].iter().all(|c| c % 16 == 0),
                    "{cuts:?}"
                );
            }
        }
        let d = &block_spreads(&[729, 3840], 1472, 16)[1];
        assert_eq!(d.counts(), vec![6, 240]);
        assert!(block_spreads(&[729, 16], 1472, 16).is_empty());
        assert!(block_spreads(&[4, 729, 64], 1472, 16).is_empty());
        assert!(block_spreads(&[3, 64], 1472, 16).is_empty());
    }

    proptest::proptest! {
        /// Weight-block spreads of any `[16a, 16b]` on any chip: every block exactly 16
        /// columns and the same whole number of 16-row K-blocks, one block a tile within the
        /// tiles, covering the value once; other shapes give none.
        #[test]
        fn weight_block_spreads_are_even_whole_amp_blocks(
            a in 1u32..200,
            b in 1u32..120,
            tiles in 1u32..2000,
            odd in 1u32..16,
        ) {
            let shape = [16 * a, 16 * b];
            let spreads = weight_block_spreads(&shape, tiles);
            proptest::prop_assert!(spreads.len() <= WEIGHT_BLOCK_ROW_CHOICES);
            proptest::prop_assert_eq!(spreads.is_empty(), b > tiles);
            for d in &spreads {
                let first = d.block_box(0);
                let rows = first[0].end - first[0].start;
                proptest::prop_assert!(rows % 16 == 0);
                let mut tiles_used: Vec<u32> = d.all_tiles().collect();
                proptest::prop_assert!(tiles_used.iter().all(|&t| t < tiles));
                let n = tiles_used.len();
                tiles_used.sort_unstable();
                tiles_used.dedup();
                proptest::prop_assert_eq!(tiles_used.len(), n);
                let mut covered = 0u64;
                for block in 0..d.block_count() {
                    let bx = d.block_box(block);
                    proptest::prop_assert_eq!(bx[0].end - bx[0].start, rows);
                    proptest::prop_assert_eq!(bx[1].end - bx[1].start, 16);
                    covered += u64::from(rows) * 16;
                }
                proptest::prop_assert_eq!(covered, u64::from(shape[0]) * u64::from(shape[1]));
            }
            proptest::prop_assert!(weight_block_spreads(&[16 * a + odd, 16 * b], tiles).is_empty());
            proptest::prop_assert!(weight_block_spreads(&[16 * a, 16 * b, 16], tiles).is_empty());
        }
    }

    #[test]
    fn stored_weights_take_the_smallest_blocks_and_start_at_their_share() {
        // Every tile holds at most one block, and blocks never exceed the tiles.
        for (k, n) in [(1152u32, 4304u32), (2152, 1152), (64, 48), (1, 1)] {
            let d = stored_spread(&[k, n], 32, 16, 1472, 7).unwrap();
            assert!(d.block_count() <= 1472);
            assert_eq!(d.replication(), 1);
        }
        let small = stored_spread(&[64, 48], 32, 16, 4, 3).unwrap();
        assert_eq!(small.block_count(), 3);
        assert_eq!(small.tiles_of(1), &[0]);
        assert_eq!(
            stored_bases([Some(10), None, Some(30), Some(60)].into_iter(), 100),
            vec![0, 10, 10, 40]
        );
        assert_eq!(stored_bases([None, None].into_iter(), 100), vec![0, 0]);
    }

    #[test]
    fn product_grid_replicates_operands() {
        let g = product_grid(&[729, 3456], 1152, 1, 30, 48, 1, 72, 32).unwrap();
        assert_eq!(g.counts, (1, 30, 48));
        assert_eq!(g.a.replication(), 48);
        assert_eq!(g.b.replication(), 30);
        assert_eq!(g.b_stored.replication(), 1);
        assert_eq!(g.b_stored.counts(), vec![30, 48]);
        assert_eq!(g.b_stored.tile_count(), 30 * 48);
        assert_eq!(g.out.padded_box(), vec![25, 72]);
        let bias = columns_of(&g.out).unwrap();
        assert_eq!(bias.block_count(), 48);
        assert_eq!(bias.replication(), 30);
        let stored = stored_spread(&[1152, 3456], 32, 16, 1472, 1400).unwrap();
        assert_eq!(stored.counts(), vec![6, 216]);
        assert_eq!(stored.tiles_of(0), &[1400]);
        assert_eq!(stored.tiles_of(72), &[0]);
        assert_eq!(stored.padded_box(), vec![192, 16]);
        let att = product_grid(&[16, 729, 80], 729, 16, 92, 1, 1, 16, 16).unwrap();
        assert_eq!(att.counts, (16, 92, 1));
        assert_eq!(att.b.replication(), 92);
    }
}
