//! [`Distribution`]: how a value's index space is cut into blocks and which tiles hold each block.
//!
//! Every dimension is split at its `bounds` (`0 = b₀ < b₁ < … < b_n = extent`); the blocks are the
//! boxes of that grid, numbered row-major. Each block lists the tiles holding a copy of it
//! (replicas; a weight stored once has one tile per block). A tile holds at most one block of a
//! value, so "the shard of a value on a tile" is well defined.

use super::{Index, LayoutError, MAX_RANK};
use std::ops::Range;

/// A value's blocks and the tiles that hold them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Distribution {
    shape: Vec<u32>,
    bounds: Vec<Vec<u32>>,
    tiles: Vec<Vec<u32>>,
    /// `(tile, block)` for every replica, sorted by tile (derived).
    by_tile: Vec<(u32, u32)>,
}

/// `extent` split into `parts` blocks whose sizes are multiples of `granule` (except the last,
/// which ends at `extent`), as even as possible, larger blocks first; fewer blocks when there
/// are fewer granules than parts. Returns the bounds (`0, …, extent`).
pub fn even_bounds(extent: u32, parts: u32, granule: u32) -> Vec<u32> {
    let granule = granule.max(1);
    let granules = extent.div_ceil(granule);
    let parts = parts.clamp(1, granules.max(1));
    let base = granules / parts;
    let extra = granules % parts;
    let mut bounds = Vec::with_capacity(parts as usize + 1);
    let mut next = 0u32;
    bounds.push(0);
    for p in 0..parts {
        next += base + u32::from(p < extra);
        bounds.push((next.saturating_mul(granule)).min(extent));
    }
    bounds.dedup();
    bounds
}

/// A grid of tiles: `dims` (row-major), starting at tile `base`. Distributions are laid out on
/// grids: every value dimension is split over one grid dimension or not split, and a block is
/// replicated over the grid dimensions none of its dimensions uses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileGrid {
    pub dims: Vec<u32>,
    pub base: u32,
}

impl TileGrid {
    pub fn new(dims: Vec<u32>, base: u32) -> TileGrid {
        TileGrid { dims, base }
    }

    /// Number of tiles.
    pub fn tiles(&self) -> u32 {
        self.dims.iter().product()
    }

    /// The tile at grid coordinates `coord`.
    pub fn tile(&self, coord: &[u32]) -> u32 {
        let mut linear = 0u32;
        for (c, d) in coord.iter().zip(&self.dims) {
            linear = linear * d + c;
        }
        self.base + linear
    }
}

impl Distribution {
    /// A distribution from its parts, checked: `bounds[d]` splits `0..shape[d]` into non-empty
    /// blocks, every block has a tile, no tile holds two blocks.
    pub fn new(
        shape: Vec<u32>,
        bounds: Vec<Vec<u32>>,
        tiles: Vec<Vec<u32>>,
    ) -> Result<Distribution, LayoutError> {
        let rank = shape.len();
        if rank == 0 || rank > MAX_RANK || bounds.len() != rank {
            return Err(LayoutError::Rank { rank });
        }
        for (dim, (b, &extent)) in bounds.iter().zip(&shape).enumerate() {
            let ok = b.len() >= 2
                && b[0] == 0
                && b[b.len() - 1] == extent
                && b.windows(2).all(|w| w[0] < w[1]);
            if !ok {
                return Err(LayoutError::Bounds {
                    dim,
                    extent,
                    bounds: b.clone(),
                });
            }
        }
        let blocks: usize = bounds.iter().map(|b| b.len() - 1).product();
        if tiles.len() != blocks {
            return Err(LayoutError::TileLists {
                blocks,
                lists: tiles.len(),
            });
        }
        let mut by_tile = Vec::with_capacity(tiles.iter().map(Vec::len).sum());
        for (block, list) in tiles.iter().enumerate() {
            if list.is_empty() {
                return Err(LayoutError::NoTile { block });
            }
            by_tile.extend(list.iter().map(|&t| (t, block as u32)));
        }
        by_tile.sort_unstable();
        if let Some(w) = by_tile.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(LayoutError::TwoBlocks {
                tile: w[0].0,
                first: w[0].1 as usize,
                second: w[1].1 as usize,
            });
        }
        Ok(Distribution {
            shape,
            bounds,
            tiles,
            by_tile,
        })
    }

    /// The whole value as one block on `tiles` (replicated when several).
    pub fn replicated(shape: Vec<u32>, tiles: Vec<u32>) -> Result<Distribution, LayoutError> {
        let bounds = shape.iter().map(|&e| vec![0, e]).collect();
        Distribution::new(shape, bounds, vec![tiles])
    }

    /// Blocks on a [`TileGrid`]: dimension `d` is split at `bounds[d]` over grid dimension
    /// `dim_map[d]` (`None`: not split, one block), and a block is replicated over the grid
    /// dimensions no value dimension uses. The number of blocks along a split dimension must
    /// not exceed the grid's extent there (grid coordinates past it hold nothing).
    pub fn on_grid(
        shape: Vec<u32>,
        bounds: Vec<Vec<u32>>,
        grid: &TileGrid,
        dim_map: &[Option<usize>],
    ) -> Result<Distribution, LayoutError> {
        let rank = shape.len();
        if dim_map.len() != rank || bounds.len() != rank {
            return Err(LayoutError::Rank { rank });
        }
        let counts: Vec<u32> = bounds.iter().map(|b| b.len() as u32 - 1).collect();
        for (d, m) in dim_map.iter().enumerate() {
            let fits = match m {
                Some(g) => grid.dims.get(*g).is_some_and(|&e| counts[d] <= e),
                None => counts[d] == 1,
            };
            if !fits {
                return Err(LayoutError::Bounds {
                    dim: d,
                    extent: shape[d],
                    bounds: bounds[d].clone(),
                });
            }
        }
        let blocks: usize = counts.iter().map(|&c| c as usize).product();
        let mut tiles = vec![Vec::new(); blocks];
        let mut coord = vec![0u32; grid.dims.len()];
        let total = grid.tiles();
        for linear in 0..total {
            let mut rest = linear;
            for g in (0..grid.dims.len()).rev() {
                coord[g] = rest % grid.dims[g];
                rest /= grid.dims[g];
            }
            let mut block = 0usize;
            let mut inside = true;
            for d in 0..rank {
                let c = match dim_map[d] {
                    Some(g) => coord[g],
                    None => 0,
                };
                if c >= counts[d] {
                    inside = false;
                    break;
                }
                block = block * counts[d] as usize + c as usize;
            }
            if inside {
                tiles[block].push(grid.base + linear);
            }
        }
        Distribution::new(shape, bounds, tiles)
    }

    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn bounds(&self) -> &[Vec<u32>] {
        &self.bounds
    }

    /// Blocks along each dimension.
    pub fn counts(&self) -> Vec<u32> {
        self.bounds.iter().map(|b| b.len() as u32 - 1).collect()
    }

    pub fn block_count(&self) -> usize {
        self.tiles.len()
    }

    /// The tiles holding `block` (replica order).
    pub fn tiles_of(&self, block: usize) -> &[u32] {
        &self.tiles[block]
    }

    /// Every tile holding some block, ascending.
    pub fn all_tiles(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_tile.iter().map(|&(t, _)| t)
    }

    /// Number of tiles holding a block.
    pub fn tile_count(&self) -> usize {
        self.by_tile.len()
    }

    /// Largest number of replicas of any block.
    pub fn replication(&self) -> usize {
        self.tiles.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// The block on `tile`, if any.
    pub fn block_on(&self, tile: u32) -> Option<usize> {
        self.by_tile
            .binary_search_by_key(&tile, |&(t, _)| t)
            .ok()
            .map(|i| self.by_tile[i].1 as usize)
    }

    /// Per-dimension block coordinates of `block`.
    pub fn block_coords(&self, block: usize) -> Index {
        let mut coords = [0u32; MAX_RANK];
        let mut rest = block;
        for d in (0..self.rank()).rev() {
            let count = self.bounds[d].len() - 1;
            coords[d] = (rest % count) as u32;
            rest /= count;
        }
        coords
    }

    /// The box of `block`: one range per dimension.
    pub fn block_box(&self, block: usize) -> Vec<Range<u32>> {
        let coords = self.block_coords(block);
        (0..self.rank())
            .map(|d| {
                let c = coords[d] as usize;
                self.bounds[d][c]..self.bounds[d][c + 1]
            })
            .collect()
    }

    /// The block holding global index `index` (in range), and the index within the block.
    pub fn locate(&self, index: &[u32], local: &mut Index) -> usize {
        let mut block = 0usize;
        for d in 0..self.rank() {
            let b = &self.bounds[d];
            // The last bound not above the index.
            let c = b.partition_point(|&x| x <= index[d]) - 1;
            local[d] = index[d] - b[c];
            block = block * (b.len() - 1) + c;
        }
        block
    }

    /// A [`Locator`] over this distribution.
    pub fn locator(&self) -> Locator<'_> {
        Locator {
            dist: self,
            last: [(1, 0, 0); MAX_RANK],
        }
    }

    /// The largest block extent along every dimension.
    pub fn padded_box(&self) -> Vec<u32> {
        self.bounds
            .iter()
            .map(|b| b.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0))
            .collect()
    }

    /// The same blocks of the first `keep` dimensions on the same tiles, over a value whose
    /// later dimensions are `trailing`, each whole: how an op that reads or writes whole rows
    /// of another width (a softmax part's statistics, an attention combine's blocks) lays out
    /// its other operands. Every dimension of `self` from `keep` on must be whole.
    pub fn with_trailing(
        &self,
        keep: usize,
        trailing: &[u32],
    ) -> Result<Distribution, LayoutError> {
        if keep > self.rank() {
            return Err(LayoutError::Rank { rank: keep });
        }
        if let Some(dim) = (keep..self.rank()).find(|&d| !self.is_whole(d)) {
            return Err(LayoutError::Bounds {
                dim,
                extent: self.shape[dim],
                bounds: self.bounds[dim].clone(),
            });
        }
        // Whole trailing dimensions: one old block per new block, so no replicas join.
        self.with_trailing_replicated(keep, trailing)
    }

    /// As [`Distribution::with_trailing`], but the dimensions from `keep` on may be split: the
    /// tiles of every block that differs only there hold the one new block (replicas). The
    /// operand of an op whose result's columns are split but which reads whole rows of it
    /// (an attention combine's statistics, the same on every column block of a row).
    pub fn with_trailing_replicated(
        &self,
        keep: usize,
        trailing: &[u32],
    ) -> Result<Distribution, LayoutError> {
        if keep > self.rank() {
            return Err(LayoutError::Rank { rank: keep });
        }
        let mut shape = self.shape[..keep].to_vec();
        shape.extend_from_slice(trailing);
        let mut bounds = self.bounds[..keep].to_vec();
        bounds.extend(trailing.iter().map(|&e| vec![0, e]));
        // Blocks are numbered row-major (`block_coords`): the old blocks of new block `o` are
        // `o · inner .. (o + 1) · inner`.
        let inner: usize = self.bounds[keep..].iter().map(|b| b.len() - 1).product();
        let tiles = self
            .tiles
            .chunks(inner.max(1))
            .map(|group| group.iter().flatten().copied().collect())
            .collect();
        Distribution::new(shape, bounds, tiles)
    }

    /// The same blocks on the same tiles over a value with one more dimension, `extent` long
    /// and whole, inserted at `at`: the operand of an op that reduces that dimension away.
    pub fn with_whole_dim(&self, at: usize, extent: u32) -> Result<Distribution, LayoutError> {
        if at > self.rank() || self.rank() >= MAX_RANK {
            return Err(LayoutError::Rank {
                rank: self.rank() + 1,
            });
        }
        let mut shape = self.shape.clone();
        shape.insert(at, extent);
        let mut bounds = self.bounds.clone();
        bounds.insert(at, vec![0, extent]);
        Distribution::new(shape, bounds, self.tiles.clone())
    }

    /// Whether dimension `dim` is one block.
    pub fn is_whole(&self, dim: usize) -> bool {
        self.bounds.get(dim).is_some_and(|b| b.len() == 2)
    }

    /// A short description: `[4x1 blocks of 183x1152 on 4 tiles, ×2 replicas]`.
    pub fn describe(&self) -> String {
        let counts: Vec<String> = self.counts().iter().map(u32::to_string).collect();
        let padded: Vec<String> = self.padded_box().iter().map(u32::to_string).collect();
        let replicas = self.replication();
        let first = self.by_tile.first().map(|t| t.0).unwrap_or(0);
        let last = self.by_tile.last().map(|t| t.0).unwrap_or(0);
        let mut text = format!(
            "{} blocks of {} on {} tiles ({first}..={last})",
            counts.join("x"),
            padded.join("x"),
            self.tile_count()
        );
        if replicas > 1 {
            text.push_str(&format!(", x{replicas} replicas"));
        }
        text
    }
}

/// [`Distribution::locate`] for a stream of nearby indices (a block's elements in memory order):
/// it keeps the block interval it last found along every dimension, so an index inside it needs
/// no search. The answers are `locate`'s.
pub struct Locator<'a> {
    dist: &'a Distribution,
    /// Per dimension: the last interval found, `[start, end)`, and its block index along it
    /// (`start > end` before the first search).
    last: [(u32, u32, usize); MAX_RANK],
}

impl Locator<'_> {
    /// The block holding global index `index` (in range), and the index within the block.
    pub fn locate(&mut self, index: &[u32], local: &mut Index) -> usize {
        let mut block = 0usize;
        for d in 0..self.dist.rank() {
            let b = &self.dist.bounds[d];
            let (start, end, c) = &mut self.last[d];
            let x = index[d];
            if !(*start <= x && x < *end) {
                // The last bound not above the index.
                *c = b.partition_point(|&y| y <= x) - 1;
                (*start, *end) = (b[*c], b[*c + 1]);
            }
            local[d] = x - *start;
            block = block * (b.len() - 1) + *c;
        }
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_bounds_respect_granules() {
        assert_eq!(even_bounds(10, 3, 1), vec![0, 4, 7, 10]);
        assert_eq!(even_bounds(100, 3, 16), vec![0, 48, 80, 100]);
        assert_eq!(even_bounds(20, 8, 16), vec![0, 16, 20]);
        assert_eq!(even_bounds(5, 1, 1), vec![0, 5]);
        assert_eq!(even_bounds(5, 9, 1), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn grid_distribution_replicates_over_unused_dimensions() {
        // A [6, 8] matrix in 3 row blocks on a 3x2 grid: each row block on both columns.
        let grid = TileGrid::new(vec![3, 2], 10);
        let d = Distribution::on_grid(
            vec![6, 8],
            vec![vec![0, 2, 4, 6], vec![0, 8]],
            &grid,
            &[Some(0), None],
        )
        .unwrap();
        assert_eq!(d.block_count(), 3);
        assert_eq!(d.tiles_of(1), &[12, 13]);
        assert_eq!(d.block_on(15), Some(2));
        assert_eq!(d.block_on(9), None);
        assert_eq!(d.replication(), 2);
        let mut local = [0; MAX_RANK];
        assert_eq!(d.locate(&[5, 7], &mut local), 2);
        assert_eq!(&local[..2], &[1, 7]);
        assert_eq!(d.block_box(1), vec![2..4, 0..8]);
    }

    #[test]
    fn bad_distributions_are_refused() {
        assert!(matches!(
            Distribution::new(vec![4], vec![vec![0, 2, 2, 4]], vec![vec![0]; 3]),
            Err(LayoutError::Bounds { .. })
        ));
        assert!(matches!(
            Distribution::new(vec![4], vec![vec![0, 2, 4]], vec![vec![0], vec![0]]),
            Err(LayoutError::TwoBlocks { tile: 0, .. })
        ));
        assert!(matches!(
            Distribution::new(vec![4], vec![vec![0, 4]], vec![vec![]]),
            Err(LayoutError::NoTile { block: 0 })
        ));
    }

    proptest::proptest! {
        /// A locator answers as `locate` does, whatever the order of the indices it is asked.
        #[test]
        fn a_locator_answers_as_locate(
            cuts in proptest::collection::vec(1u32..6, 1..5),
            rows in 1u32..40,
            asks in proptest::collection::vec((0u32..1000, 0u32..1000), 1..200),
        ) {
            // A [rows, Σ cuts] matrix in row blocks of 7 and the given column blocks.
            let cols: u32 = cuts.iter().sum();
            let mut col_bounds = vec![0];
            for c in &cuts {
                col_bounds.push(col_bounds.last().unwrap() + c);
            }
            let row_bounds: Vec<u32> = (0..rows.div_ceil(7)).map(|i| i * 7).chain([rows]).collect();
            let blocks = (row_bounds.len() - 1) * (col_bounds.len() - 1);
            let d = Distribution::new(
                vec![rows, cols],
                vec![row_bounds, col_bounds],
                (0..blocks as u32).map(|t| vec![t]).collect(),
            )
            .unwrap();
            let mut locator = d.locator();
            for (r, c) in asks {
                let index = [r % rows, c % cols];
                let (mut a, mut b) = ([0; MAX_RANK], [0; MAX_RANK]);
                proptest::prop_assert_eq!(locator.locate(&index, &mut a), d.locate(&index, &mut b));
                proptest::prop_assert_eq!(&a[..2], &b[..2]);
            }
        }
    }
}
