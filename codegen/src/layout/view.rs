//! [`View`]: how the elements of one index space are read from another, for the graph's
//! reshape, transpose, slice, pad, broadcast, split-heads and merge-heads ops.
//!
//! A view maps a *destination* index to the *source* index it reads, through a list of steps
//! applied in order (the last step yields the source index), or to a zero (padding). Views compose by concatenation, so
//! a chain of view ops in the graph becomes one view, and a `Redistribute` reads its source
//! through it: no view op ever copies data by itself.

use super::{Index, LayoutError, MAX_RANK};

/// One step of a view, from the destination side to the source side.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ViewStep {
    /// The same row-major elements: destination shape `to`, source shape `from`.
    Reshape { from: Vec<u32>, to: Vec<u32> },
    /// Destination dimension `k` is source dimension `perm[k]`.
    Transpose { perm: Vec<u8> },
    /// Source index along `axis` = destination index + `start`.
    Slice { axis: u8, start: u32 },
    /// Numpy broadcasting, right-aligned: a source dimension of extent 1 reads index 0;
    /// destination dimensions before the source's are dropped.
    Broadcast { from: Vec<u32>, to: Vec<u32> },
    /// Zero padding at the end of dimension `axis`: a destination index at or past `extent`
    /// (the source's extent) reads no element but a zero; the others read the same index.
    Pad { axis: u8, extent: u32 },
}

/// A destination-index → source-index map with its two shapes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct View {
    shape: Vec<u32>,
    source: Vec<u32>,
    steps: Vec<ViewStep>,
}

fn rank_ok(shape: &[u32]) -> Result<(), LayoutError> {
    if shape.is_empty() || shape.len() > MAX_RANK {
        return Err(LayoutError::Rank { rank: shape.len() });
    }
    Ok(())
}

fn bad(reason: String) -> LayoutError {
    LayoutError::View { reason }
}

impl View {
    /// The identity on `shape`.
    pub fn identity(shape: &[u32]) -> View {
        View {
            shape: shape.to_vec(),
            source: shape.to_vec(),
            steps: Vec::new(),
        }
    }

    pub fn is_identity(&self) -> bool {
        self.steps.is_empty()
    }

    /// The destination shape.
    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    /// The source shape.
    pub fn source_shape(&self) -> &[u32] {
        &self.source
    }

    pub fn steps(&self) -> &[ViewStep] {
        &self.steps
    }

    /// `source` read as `to` (same element count).
    pub fn reshape(source: &[u32], to: &[u32]) -> Result<View, LayoutError> {
        rank_ok(source)?;
        rank_ok(to)?;
        let n = |s: &[u32]| s.iter().map(|&d| d as u64).product::<u64>();
        if n(source) != n(to) {
            return Err(bad(format!(
                "reshape {source:?} to {to:?} changes the element count"
            )));
        }
        if source == to {
            return Ok(View::identity(source));
        }
        Ok(View {
            shape: to.to_vec(),
            source: source.to_vec(),
            steps: vec![ViewStep::Reshape {
                from: source.to_vec(),
                to: to.to_vec(),
            }],
        })
    }

    /// `source` with its dimensions permuted: result dimension `k` is source dimension `perm[k]`.
    pub fn transpose(source: &[u32], perm: &[usize]) -> Result<View, LayoutError> {
        rank_ok(source)?;
        let mut seen = [false; MAX_RANK];
        if perm.len() != source.len()
            || perm
                .iter()
                .any(|&p| p >= source.len() || std::mem::replace(&mut seen[p], true))
        {
            return Err(bad(format!(
                "{perm:?} is not a permutation of 0..{}",
                source.len()
            )));
        }
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            return Ok(View::identity(source));
        }
        Ok(View {
            shape: perm.iter().map(|&p| source[p]).collect(),
            source: source.to_vec(),
            steps: vec![ViewStep::Transpose {
                perm: perm.iter().map(|&p| p as u8).collect(),
            }],
        })
    }

    /// `start..end` of dimension `axis`.
    pub fn slice(source: &[u32], axis: usize, start: u32, end: u32) -> Result<View, LayoutError> {
        rank_ok(source)?;
        if axis >= source.len() || start >= end || end > source[axis] {
            return Err(bad(format!(
                "slice {start}..{end} of dimension {axis} of {source:?}"
            )));
        }
        let mut shape = source.to_vec();
        shape[axis] = end - start;
        Ok(View {
            shape,
            source: source.to_vec(),
            steps: vec![ViewStep::Slice {
                axis: axis as u8,
                start,
            }],
        })
    }

    /// `source` padded with zeros at the end of dimension `axis` to `len` (≥ its extent).
    pub fn pad(source: &[u32], axis: usize, len: u32) -> Result<View, LayoutError> {
        rank_ok(source)?;
        if axis >= source.len() || len < source[axis] {
            return Err(bad(format!("pad dimension {axis} of {source:?} to {len}")));
        }
        if len == source[axis] {
            return Ok(View::identity(source));
        }
        let mut shape = source.to_vec();
        shape[axis] = len;
        Ok(View {
            shape,
            source: source.to_vec(),
            steps: vec![ViewStep::Pad {
                axis: axis as u8,
                extent: source[axis],
            }],
        })
    }

    /// `source` broadcast to `to` (numpy rules, right-aligned).
    pub fn broadcast(source: &[u32], to: &[u32]) -> Result<View, LayoutError> {
        rank_ok(source)?;
        rank_ok(to)?;
        let offset = to.len().checked_sub(source.len()).ok_or_else(|| {
            bad(format!(
                "cannot broadcast {source:?} to the lower rank {to:?}"
            ))
        })?;
        for (d, &e) in source.iter().enumerate() {
            if e != 1 && e != to[d + offset] {
                return Err(bad(format!("cannot broadcast {source:?} to {to:?}")));
            }
        }
        if source == to {
            return Ok(View::identity(source));
        }
        Ok(View {
            shape: to.to_vec(),
            source: source.to_vec(),
            steps: vec![ViewStep::Broadcast {
                from: source.to_vec(),
                to: to.to_vec(),
            }],
        })
    }

    /// `[B·T, H·D]` read as `[B·H, T, D]` (the graph's `SplitHeads`).
    pub fn split_heads(source: &[u32], heads: u32, batch: u32) -> Result<View, LayoutError> {
        let [rows, cols] = source else {
            return Err(bad(format!(
                "split_heads of rank-{} {source:?}",
                source.len()
            )));
        };
        if heads == 0 || batch == 0 || rows % batch != 0 || cols % heads != 0 {
            return Err(bad(format!(
                "split_heads of {source:?} into {heads} heads, batch {batch}"
            )));
        }
        let (t, d) = (rows / batch, cols / heads);
        // dest [B·H, T, D] → [B, H, T, D] → (transpose) [B, T, H, D] → [B·T, H·D].
        let four = View::reshape(&[batch, heads, t, d], &[batch * heads, t, d])?;
        let swapped = View::transpose(&[batch, t, heads, d], &[0, 2, 1, 3])?;
        let back = View::reshape(source, &[batch, t, heads, d])?;
        four.then(&swapped)?.then(&back)
    }

    /// `[B·H, T, D]` read as `[B·T, H·D]` (the graph's `MergeHeads`).
    pub fn merge_heads(source: &[u32], heads: u32) -> Result<View, LayoutError> {
        let [bh, t, d] = source else {
            return Err(bad(format!(
                "merge_heads of rank-{} {source:?}",
                source.len()
            )));
        };
        if heads == 0 || bh % heads != 0 {
            return Err(bad(format!("merge_heads of {source:?} with {heads} heads")));
        }
        let batch = bh / heads;
        // dest [B·T, H·D] → [B, T, H, D] → (transpose) [B, H, T, D] → [B·H, T, D].
        let four = View::reshape(&[batch, *t, heads, *d], &[batch * t, heads * d])?;
        let swapped = View::transpose(&[batch, heads, *t, *d], &[0, 2, 1, 3])?;
        let back = View::reshape(source, &[batch, heads, *t, *d])?;
        four.then(&swapped)?.then(&back)
    }

    /// This view followed by `next`: the destination of `next` is this view's source. The
    /// result reads `next`'s source with this view's shape.
    pub fn then(&self, next: &View) -> Result<View, LayoutError> {
        if self.source != next.shape {
            return Err(bad(format!(
                "composing a view of {:?} with a view producing {:?}",
                self.source, next.shape
            )));
        }
        let mut steps = self.steps.clone();
        steps.extend(next.steps.iter().cloned());
        Ok(View {
            shape: self.shape.clone(),
            source: next.source.clone(),
            steps,
        })
    }

    /// The source index read by destination index `dest` (in range), written to `source`; false
    /// when `dest` reads a zero of a [`ViewStep::Pad`] (then `source` is meaningless).
    #[inline]
    #[must_use]
    pub fn map(&self, dest: &[u32], source: &mut Index) -> bool {
        let mut cur: Index = [0; MAX_RANK];
        cur[..dest.len()].copy_from_slice(dest);
        let mut rank = dest.len();
        for step in &self.steps {
            match step {
                ViewStep::Reshape { from, to } => {
                    let mut flat: u64 = 0;
                    for (d, &e) in to.iter().enumerate() {
                        flat = flat * e as u64 + cur[d] as u64;
                    }
                    for d in (0..from.len()).rev() {
                        let e = from[d] as u64;
                        cur[d] = (flat % e) as u32;
                        flat /= e;
                    }
                    rank = from.len();
                }
                ViewStep::Transpose { perm } => {
                    let mut next: Index = [0; MAX_RANK];
                    for (k, &p) in perm.iter().enumerate() {
                        next[p as usize] = cur[k];
                    }
                    cur = next;
                }
                ViewStep::Slice { axis, start } => cur[*axis as usize] += start,
                ViewStep::Broadcast { from, to } => {
                    let offset = to.len() - from.len();
                    let mut next: Index = [0; MAX_RANK];
                    for (d, &e) in from.iter().enumerate() {
                        next[d] = if e == 1 { 0 } else { cur[d + offset] };
                    }
                    cur = next;
                    rank = from.len();
                }
                ViewStep::Pad { axis, extent } => {
                    if cur[*axis as usize] >= *extent {
                        return false;
                    }
                }
            }
        }
        source[..rank].copy_from_slice(&cur[..rank]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(view: &View, dest: &[u32]) -> Vec<u32> {
        let mut s = [0; MAX_RANK];
        assert!(view.map(dest, &mut s), "{dest:?} reads an element");
        s[..view.source_shape().len()].to_vec()
    }

    #[test]
    fn a_pad_reads_zeros_past_the_source() {
        let v = View::pad(&[2, 3], 1, 5).unwrap();
        assert_eq!(v.shape(), &[2, 5]);
        assert_eq!(read(&v, &[1, 2]), vec![1, 2]);
        let mut s = [0; MAX_RANK];
        assert!(!v.map(&[1, 3], &mut s) && !v.map(&[0, 4], &mut s));
        // Through a transpose: the padded dimension moves.
        let t = View::transpose(&[2, 5], &[1, 0]).unwrap().then(&v).unwrap();
        assert_eq!(read(&t, &[2, 1]), vec![1, 2]);
        assert!(!t.map(&[3, 0], &mut s));
        assert!(View::pad(&[2, 3], 1, 2).is_err() && View::pad(&[2, 3], 2, 4).is_err());
        assert!(View::pad(&[2, 3], 1, 3).unwrap().is_identity());
    }

    #[test]
    fn split_and_merge_heads_follow_the_graph_definition() {
        // out[b·H + h, t, d] = x[b·T + t, h·D + d] with B 2, T 3, H 4, D 5.
        let v = View::split_heads(&[6, 20], 4, 2).unwrap();
        assert_eq!(v.shape(), &[8, 3, 5]);
        assert_eq!(read(&v, &[4 + 2, 1, 3]), vec![3 + 1, 2 * 5 + 3]);
        let m = View::merge_heads(&[8, 3, 5], 4).unwrap();
        assert_eq!(m.shape(), &[6, 20]);
        assert_eq!(read(&m, &[3 + 1, 2 * 5 + 3]), vec![4 + 2, 1, 3]);
        // merge ∘ split is the identity map.
        let round = m.then(&v).unwrap();
        for r in 0..6 {
            for c in 0..20 {
                assert_eq!(read(&round, &[r, c]), vec![r, c]);
            }
        }
    }

    #[test]
    fn transpose_slice_broadcast() {
        let t = View::transpose(&[2, 3, 4], &[0, 2, 1]).unwrap();
        assert_eq!(t.shape(), &[2, 4, 3]);
        assert_eq!(read(&t, &[1, 3, 2]), vec![1, 2, 3]);
        let s = View::slice(&[4, 10], 1, 6, 9).unwrap();
        assert_eq!(read(&s, &[2, 1]), vec![2, 7]);
        let b = View::broadcast(&[1, 3], &[2, 4, 3]).unwrap();
        assert_eq!(read(&b, &[1, 2, 2]), vec![0, 2]);
        assert!(View::broadcast(&[2, 3], &[4, 3]).is_err());
        assert!(View::transpose(&[2, 3], &[0, 0]).is_err());
        assert!(View::slice(&[4], 0, 3, 3).is_err());
    }
}
