//! The one general data movement of the distributed level: a value moved from any layout to
//! any other through any view. [`segments`] finds where every destination byte comes from;
//! [`movement`] decides how the bytes travel (local copies, exchange transfers, staging) and
//! what each tile does.

pub mod after;
pub mod execute;
mod mixed;
pub mod movement;
pub mod reach;
mod route;
pub mod segments;

pub use movement::{
    plan_movement, plan_movement_with, Buf, LocalCopy, Move, Movement, RoutePolicy, Run,
};
pub use segments::{block_segments, Segment, Side, Source};
