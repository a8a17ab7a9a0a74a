//! Typed handles into append-only arenas (the naga pattern).
//!
//! A [`Handle<T>`] is a 32-bit index that only makes sense in the [`Arena<T>`] that created it.
//! Handles are `Copy`, ordered by creation, and carry their element type, so a node handle can
//! never be used where a region handle is expected. Arenas only grow: a handle stays valid for
//! the life of its arena. A handle from another arena is not detected by the type system; the
//! builder and the verifier check ranges and report typed errors instead of panicking.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// An index into an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// A handle with the given index. Normal code gets handles from [`Arena::append`]; this is
    /// for tests, deserialisers and passes that renumber.
    pub const fn from_index(index: u32) -> Handle<T> {
        Handle {
            index,
            marker: PhantomData,
        }
    }

    /// The index in the arena (creation order).
    pub const fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.index)
    }
}

/// An append-only vector addressed by [`Handle<T>`].
#[derive(Clone, Debug, PartialEq)]
pub struct Arena<T> {
    data: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { data: Vec::new() }
    }
}

impl<T> Arena<T> {
    pub fn new() -> Arena<T> {
        Arena::default()
    }

    /// Adds a value and returns its handle.
    ///
    /// Arenas hold at most `u32::MAX` elements; beyond that this panics (a graph that large
    /// is far outside anything the compiler handles).
    pub fn append(&mut self, value: T) -> Handle<T> {
        let index = u32::try_from(self.data.len()).expect("arena holds at most u32::MAX items");
        self.data.push(value);
        Handle::from_index(index)
    }

    pub fn get(&self, handle: Handle<T>) -> Option<&T> {
        self.data.get(handle.index())
    }

    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut T> {
        self.data.get_mut(handle.index())
    }

    /// True if `handle` is in range for this arena.
    pub fn contains(&self, handle: Handle<T>) -> bool {
        handle.index() < self.data.len()
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// `(handle, &value)` in creation order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (Handle<T>, &T)> + ExactSizeIterator {
        self.data
            .iter()
            .enumerate()
            .map(|(i, v)| (Handle::from_index(i as u32), v))
    }

    /// `(handle, &mut value)` in creation order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Handle<T>, &mut T)> {
        self.data
            .iter_mut()
            .enumerate()
            .map(|(i, v)| (Handle::from_index(i as u32), v))
    }

    /// The handle the next [`Arena::append`] will return.
    pub fn next_handle(&self) -> Handle<T> {
        Handle::from_index(self.data.len() as u32)
    }
}

/// Indexing panics on an out-of-range handle; use [`Arena::get`] where the handle may come from
/// outside (the builder and the verifier do).
impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, handle: Handle<T>) -> &T {
        &self.data[handle.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, handle: Handle<T>) -> &mut T {
        &mut self.data[handle.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_get_iter() {
        let mut a: Arena<&str> = Arena::new();
        assert!(a.is_empty());
        let h0 = a.append("zero");
        let h1 = a.append("one");
        assert_eq!(h0.index(), 0);
        assert_eq!(h1.index(), 1);
        assert!(h0 < h1);
        assert_eq!(a[h1], "one");
        assert_eq!(a.get(h0), Some(&"zero"));
        assert_eq!(a.get(Handle::from_index(2)), None);
        assert!(!a.contains(Handle::from_index(2)));
        assert_eq!(a.next_handle(), Handle::from_index(2));
        let items: Vec<_> = a.iter().map(|(h, v)| (h.index(), *v)).collect();
        assert_eq!(items, vec![(0, "zero"), (1, "one")]);
        *a.get_mut(h0).unwrap() = "nil";
        assert_eq!(a[h0], "nil");
        assert_eq!(format!("{h1:?}"), "[1]");
    }
}
