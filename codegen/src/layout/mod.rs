//! Where a value's elements live on the chip: which tiles hold which block of its index space
//! ([`Distribution`]), how a block's elements are ordered in a tile's buffer ([`Order`], resolved
//! to byte offsets by a [`ShardMap`]), and how one value's index space reads another's
//! ([`View`]: reshape, transpose, slice, broadcast, split and merge of heads, zero padding).
//!
//! These three are the whole vocabulary of the distributed level: a mid-level value is a shape,
//! a dtype and a [`Layout`]; the one general data movement, `Redistribute`, moves a value from
//! any layout to any other through any view (see [`crate::redist`]).
//!
//! Conventions used everywhere:
//!
//! * a *block* is a box of the index space (one range per dimension) produced by splitting every
//!   dimension at the distribution's bounds; blocks are numbered row-major over the block grid;
//! * a block lives on one or more tiles (replicas); a tile holds at most one block of a value;
//! * every tile's buffer for a value has the same size and order: the *padded box* (the largest
//!   block extent per dimension, rounded up as the order requires), so every tile calls the same
//!   kernels with the same parameters. Positions of the padded box outside a tile's real block
//!   are padding.

pub mod dist;
pub mod order;
pub mod view;

pub use dist::{even_bounds, Distribution, TileGrid};
pub use order::{Order, ShardMap};
pub use view::{View, ViewStep};

use crate::graph::DType;

/// Largest rank of a value the distributed level handles (a patch extraction view has rank 6).
pub const MAX_RANK: usize = 8;

/// A multi-index of at most [`MAX_RANK`] dimensions (the first `rank` entries are used).
pub type Index = [u32; MAX_RANK];

/// Why a layout or view is malformed. The planner only builds valid ones; these errors guard
/// the constructors against bad sizes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("E-LAYOUT-001 rank {rank} is outside 1..={MAX_RANK}")]
    Rank { rank: usize },
    #[error("E-LAYOUT-002 dimension {dim}: bounds {bounds:?} do not split 0..{extent} into non-empty blocks")]
    Bounds {
        dim: usize,
        extent: u32,
        bounds: Vec<u32>,
    },
    #[error("E-LAYOUT-003 {blocks} blocks but {lists} tile lists")]
    TileLists { blocks: usize, lists: usize },
    #[error("E-LAYOUT-004 block {block} has no tile")]
    NoTile { block: usize },
    #[error("E-LAYOUT-005 tile {tile} holds two blocks ({first} and {second})")]
    TwoBlocks {
        tile: u32,
        first: usize,
        second: usize,
    },
    #[error("E-LAYOUT-006 a shard of {bytes} bytes is too large")]
    TooLarge { bytes: u64 },
    #[error("E-LAYOUT-007 order {order:?} needs rank ≥ 2, the value has rank {rank}")]
    OrderRank { order: Order, rank: usize },
    #[error("E-LAYOUT-008 view: {reason}")]
    View { reason: String },
}

/// A value's full layout: distribution, element order and number format.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub dist: Distribution,
    pub order: Order,
    pub dtype: DType,
}

impl Layout {
    /// The shard map every tile's buffer of this layout follows.
    pub fn shard_map(&self) -> Result<ShardMap, LayoutError> {
        ShardMap::new(
            self.order,
            &self.dist.padded_box(),
            self.dtype.size_bytes() as u32,
        )
    }

    /// Bytes of one tile's buffer.
    pub fn shard_bytes(&self) -> Result<u32, LayoutError> {
        Ok(self.shard_map()?.bytes())
    }
}
