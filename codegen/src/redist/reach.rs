//! [`read_source_blocks`]: which blocks of a source distribution a view reads, found on a
//! lattice of destination indices (a slice such as V of a fused QKV reads a third of the
//! product's blocks).

use crate::layout::{Distribution, Index, View, MAX_RANK};

/// Points of the destination lattice [`read_source_blocks`] maps (about).
const READ_LATTICE_POINTS: f64 = 32_768.0;

/// The source blocks `view` reads, in order. Found by mapping a lattice of destination indices,
/// each dimension's first and last index and about `READ_LATTICE_POINTS`^(1/rank) between; a
/// source block narrower than the lattice's step may be missed, which only charges the blocks
/// found more. A view of nothing reads every block.
pub fn read_source_blocks(from: &Distribution, view: &View) -> Vec<usize> {
    let shape = view.shape();
    let rank = shape.len();
    if rank == 0 || shape.contains(&0) {
        return (0..from.block_count()).collect();
    }
    let per_dim = READ_LATTICE_POINTS.powf(1.0 / rank as f64).max(2.0) as u32;
    let axes: Vec<Vec<u32>> = shape
        .iter()
        .map(|&e| {
            let step = e.div_ceil(per_dim).max(1);
            let mut a: Vec<u32> = (0..e).step_by(step as usize).collect();
            if a.last() != Some(&(e - 1)) {
                a.push(e - 1);
            }
            a
        })
        .collect();
    let mut read = vec![false; from.block_count()];
    let (mut at, mut dest): ([usize; MAX_RANK], Index) = ([0; MAX_RANK], [0; MAX_RANK]);
    let (mut source, mut local): (Index, Index) = ([0; MAX_RANK], [0; MAX_RANK]);
    let mut locator = from.locator();
    loop {
        for d in 0..rank {
            dest[d] = axes[d][at[d]];
        }
        if view.map(&dest[..rank], &mut source) {
            if let Some(r) = read.get_mut(locator.locate(&source[..from.rank()], &mut local)) {
                *r = true;
            }
        }
        // The next lattice point, last dimension fastest.
        let mut d = rank;
        loop {
            if d == 0 {
                return (0..read.len()).filter(|&b| read[b]).collect();
            }
            d -= 1;
            at[d] += 1;
            if at[d] < axes[d].len() {
                break;
            }
            at[d] = 0;
        }
    }
}
