//! Tile SRAM: the address layout of memory elements and one tile's bytes with checked access.
//!
//! [`MemoryLayout`] is built once per machine from its [`SramDescription`] and shared by all
//! tiles. It maps an address to its region and to its [`MemoryElement`], the unit of which
//! only one access is possible per cycle (isa §5, \[C\] rule, sizes \[I\]). In a linear region each
//! element covers `element_bytes` consecutive bytes; in an interleaved region a pair of elements
//! covers `2 * element_bytes` bytes and the two alternate every `interleave_granule_bytes` (8 on
//! ipu21, so addresses differing in bit 3 are in different elements).
//!
//! [`TileMemory`] holds one tile's bytes and checks every access: the size is 1, 2, 4, 8 or 16
//! bytes, the access lies in SRAM, it is naturally aligned (isa §5 \[C\]), a 16-byte access lies in
//! an interleaved region (as `ld128` requires, isa §5 \[C\]), and a write does not touch a
//! write-protected range (code). Faults are values ([`MemoryFault`]), checked in that order.
//!
//! Project assumptions (\[I\]; the public sources do not say):
//! - Two accesses of one instruction in one cycle that touch the same element are a **fault**
//!   ([`MemoryFault::ElementClash`]), not a stall: whether hardware stalls or faults was not found
//!   (isa §5 "Conflict penalty"), and a fault makes a badly placed kernel visible at once.
//! - Memory is little-endian (instruction words are little-endian, isa §7 \[C\]) and starts zeroed,
//!   so runs are deterministic.
//!
//! Hot paths (`read*`, `write*`, `element_of`) do not allocate: region lookup is one table load
//! indexed by address, and the element is computed with precomputed per-region parameters.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::machine::{
    MachineDescription, MachineError, RegionDescription, SramDescription, MAX_ACCESS_BYTES,
};

/// A memory element, numbered in address order from 0 across all regions of a tile. Unique
/// within a tile; the same id on two tiles names the same position on different SRAMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryElement(u32);

impl MemoryElement {
    /// The element's number within its tile.
    pub fn index(self) -> u32 {
        self.0
    }
}

impl fmt::Display for MemoryElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Position of a region in the machine's `sram.regions` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionIndex(usize);

impl RegionIndex {
    /// Index into `sram.regions`.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A memory access that the tile cannot perform. Addresses are shown in hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MemoryFault {
    #[error("{size}-byte access at {addr:#x} is outside tile memory")]
    OutOfRange { addr: u32, size: u32 },
    #[error("{size}-byte access at {addr:#x} is not naturally aligned")]
    Misaligned { addr: u32, size: u32 },
    #[error("{size}-byte access at {addr:#x}: accesses are 1, 2, 4, 8 or 16 bytes")]
    UnsupportedSize { addr: u32, size: u32 },
    #[error("write at {addr:#x} touches write-protected memory (code)")]
    WriteToProtected { addr: u32 },
    #[error("16-byte access at {addr:#x} is not in an interleaved region")]
    NotInterleaved { addr: u32 },
    #[error("accesses at {first:#x} and {second:#x} in the same cycle both use memory element {element}")]
    ElementClash {
        first: u32,
        second: u32,
        element: MemoryElement,
    },
}

/// The elements one access touches: one, or both of an interleaved pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessElements {
    first: MemoryElement,
    second: Option<MemoryElement>,
}

impl AccessElements {
    /// The element holding the access's first byte.
    pub fn first(self) -> MemoryElement {
        self.first
    }

    /// The other element of the pair, if the access spans both.
    pub fn second(self) -> Option<MemoryElement> {
        self.second
    }

    /// Whether the access touches `element`.
    pub fn contains(self, element: MemoryElement) -> bool {
        self.first == element || self.second == Some(element)
    }

    /// An element both accesses touch, if any.
    pub fn shared_with(self, other: AccessElements) -> Option<MemoryElement> {
        [Some(self.first), self.second]
            .into_iter()
            .flatten()
            .find(|&element| other.contains(element))
    }
}

/// Per-region parameters precomputed so that `element_of` is a few integer operations (shifts
/// and masks when the unit is a power of two, as on every shipped machine).
#[derive(Debug, Clone)]
struct RegionGeometry {
    start: u32,
    /// Bytes covered by one element (linear) or one pair (interleaved).
    unit_bytes: u32,
    /// `log2(unit_bytes)` when `unit_bytes` is a power of two.
    unit_shift: Option<u32>,
    interleave: u32,
    first_element: u32,
}

impl RegionGeometry {
    #[inline]
    fn unit(&self, offset: u32) -> u32 {
        match self.unit_shift {
            Some(shift) => offset >> shift,
            None => offset / self.unit_bytes,
        }
    }
}

/// The SRAM address map of a tile: regions and memory elements.
#[derive(Debug, Clone)]
pub struct MemoryLayout {
    base: u32,
    end: u32,
    granule_shift: u32,
    /// log2 of the chunk size: the largest power of two dividing every region's size (so of
    /// their starts too, and each chunk lies in one region).
    chunk_shift: u32,
    /// Region index of each chunk from `base`: O(1) region lookup with a shift.
    region_of_chunk: Box<[u8]>,
    regions: Vec<RegionDescription>,
    geometry: Vec<RegionGeometry>,
    element_count: u32,
}

impl MemoryLayout {
    /// Builds the layout, validating the description first.
    pub fn new(sram: &SramDescription) -> Result<Self, MachineError> {
        sram.validate()?;
        // Validation guarantees: non-empty regions, at most MAX_REGIONS (fits u8), contiguous
        // from `base`, sizes non-zero multiples of element_bytes × interleave, no u32 overflow.
        let common = sram
            .regions
            .iter()
            .fold(0, |chunk, region| gcd(chunk, region.size));
        // Region offsets from `base` are sums of sizes, so multiples of the chunk too; every
        // size is a multiple of 16, so chunks are at least 16 bytes.
        let chunk_shift = common.trailing_zeros();
        let chunk_bytes = 1u32 << chunk_shift;
        let mut region_of_chunk = Vec::new();
        let mut geometry = Vec::with_capacity(sram.regions.len());
        let mut element_count = 0u32;
        for (index, region) in sram.regions.iter().enumerate() {
            let tag = u8::try_from(index).map_err(|_| MachineError::TooManyRegions {
                count: sram.regions.len(),
            })?;
            let chunks = (region.size / chunk_bytes) as usize;
            region_of_chunk.extend(std::iter::repeat_n(tag, chunks));
            geometry.push(RegionGeometry {
                start: region.start,
                unit_bytes: region.element_bytes * region.interleave,
                unit_shift: (region.element_bytes * region.interleave)
                    .is_power_of_two()
                    .then(|| (region.element_bytes * region.interleave).trailing_zeros()),
                interleave: region.interleave,
                first_element: element_count,
            });
            element_count += region.size / region.element_bytes;
        }
        Ok(Self {
            base: sram.base,
            end: sram.end(),
            granule_shift: sram.interleave_granule_bytes.trailing_zeros(),
            chunk_shift,
            region_of_chunk: region_of_chunk.into_boxed_slice(),
            regions: sram.regions.clone(),
            geometry,
            element_count,
        })
    }

    /// The layout of `machine`'s tile SRAM.
    pub fn from_machine(machine: &MachineDescription) -> Result<Self, MachineError> {
        Self::new(&machine.sram)
    }

    /// First SRAM address.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// One past the last SRAM address.
    pub fn end(&self) -> u32 {
        self.end
    }

    /// Bytes of SRAM.
    pub fn size(&self) -> u32 {
        self.end - self.base
    }

    /// Number of memory elements in the tile.
    pub fn element_count(&self) -> u32 {
        self.element_count
    }

    /// The regions, in address order.
    pub fn regions(&self) -> &[RegionDescription] {
        &self.regions
    }

    #[inline]
    fn region_index(&self, addr: u32) -> Option<usize> {
        if addr >= self.end {
            return None;
        }
        let offset = addr.checked_sub(self.base)?;
        let chunk = (offset >> self.chunk_shift) as usize;
        self.region_of_chunk.get(chunk).copied().map(usize::from)
    }

    /// The region holding `addr`, or `None` outside SRAM.
    pub fn region_of(&self, addr: u32) -> Option<(RegionIndex, &RegionDescription)> {
        let index = self.region_index(addr)?;
        Some((RegionIndex(index), self.regions.get(index)?))
    }

    /// Whether `addr` lies in an interleaved region.
    #[inline]
    pub fn is_interleaved(&self, addr: u32) -> bool {
        self.region_index(addr)
            .and_then(|index| self.geometry.get(index))
            .is_some_and(|geometry| geometry.interleave > 1)
    }

    /// The memory element holding the byte at `addr`, or `None` outside SRAM.
    #[inline]
    pub fn element_of(&self, addr: u32) -> Option<MemoryElement> {
        let geometry = self.geometry.get(self.region_index(addr)?)?;
        let offset = addr - geometry.start;
        let unit = geometry.unit(offset);
        // `interleave` is 1 or 2 (validated): the lane is a mask, not a division.
        let lane = (offset >> self.granule_shift) & (geometry.interleave - 1);
        Some(MemoryElement(
            geometry.first_element + unit * geometry.interleave + lane,
        ))
    }

    /// Checks that a `size`-byte access at `addr` is possible, reporting the first failed rule
    /// in the order: size, range, alignment, interleaving.
    #[inline]
    pub fn check_access(&self, addr: u32, size: u32) -> Result<(), MemoryFault> {
        if !size.is_power_of_two() || size > MAX_ACCESS_BYTES {
            return Err(MemoryFault::UnsupportedSize { addr, size });
        }
        if addr < self.base || u64::from(addr) + u64::from(size) > u64::from(self.end) {
            return Err(MemoryFault::OutOfRange { addr, size });
        }
        // `size` is a power of two: a mask, not a division (this check runs on every access).
        if addr & (size - 1) != 0 {
            return Err(MemoryFault::Misaligned { addr, size });
        }
        if size == MAX_ACCESS_BYTES && !self.is_interleaved(addr) {
            return Err(MemoryFault::NotInterleaved { addr });
        }
        Ok(())
    }

    /// The elements a valid `size`-byte access at `addr` touches. Both elements of a pair for
    /// a 16-byte interleaved access; one element otherwise.
    pub fn elements_of_access(&self, addr: u32, size: u32) -> Result<AccessElements, MemoryFault> {
        self.check_access(addr, size)?;
        let out_of_range = MemoryFault::OutOfRange { addr, size };
        // A checked access is naturally aligned and at most two granules wide, so its first
        // and last bytes name every element it touches.
        let first = self.element_of(addr).ok_or(out_of_range)?;
        let last = self.element_of(addr + (size - 1)).ok_or(out_of_range)?;
        Ok(AccessElements {
            first,
            second: (last != first).then_some(last),
        })
    }

    /// [`MemoryLayout::elements_of_access`] of an access that passed [`MemoryLayout::check_access`]
    /// (`fault` if, impossibly, it lies outside every region). An access no wider than the
    /// interleave granule lies in one element, as element sizes are multiples of the granule.
    #[inline]
    fn checked_access_elements(
        &self,
        addr: u32,
        size: u32,
        fault: MemoryFault,
    ) -> Result<AccessElements, MemoryFault> {
        let first = self.element_of(addr).ok_or(fault)?;
        if size <= 1 << self.granule_shift {
            return Ok(AccessElements {
                first,
                second: None,
            });
        }
        let last = self.element_of(addr + (size - 1)).ok_or(fault)?;
        Ok(AccessElements {
            first,
            second: (last != first).then_some(last),
        })
    }

    /// Checks the `(address, size)` accesses one instruction makes in one cycle: each must be a
    /// valid access, and no two may touch the same memory element (a clash is a fault; see the
    /// module docs). `first` in the clash fault is the earlier access in `accesses`.
    pub fn check_element_clash(&self, accesses: &[(u32, u32)]) -> Result<(), MemoryFault> {
        for &(addr, size) in accesses {
            self.check_access(addr, size)?;
        }
        // The common case, once per pace bundle: valid accesses in distinct elements, the
        // elements as bits of one word (a tile has at most 64 of them on every shipped machine).
        // Any clash, or a layout with more elements, takes the general path below, which
        // names the clash.
        if self.element_count <= u64::BITS {
            let mut seen = 0u64;
            let mut disjoint = true;
            for &(addr, size) in accesses {
                let Ok(elements) = self.checked_access_elements(
                    addr,
                    size,
                    MemoryFault::OutOfRange { addr, size },
                ) else {
                    disjoint = false;
                    break;
                };
                let bits = (1u64 << elements.first.0)
                    | elements.second.map_or(0, |second| 1u64 << second.0);
                disjoint &= seen & bits == 0;
                seen |= bits;
            }
            if disjoint {
                return Ok(());
            }
        }
        // The pace family makes at most three accesses: work out each one's elements once.
        const FEW: usize = 4;
        if accesses.len() <= FEW {
            let mut elements = [AccessElements {
                first: MemoryElement(0),
                second: None,
            }; FEW];
            for (slot, &(addr, size)) in elements.iter_mut().zip(accesses) {
                *slot = self.checked_access_elements(
                    addr,
                    size,
                    MemoryFault::OutOfRange { addr, size },
                )?;
            }
            for (index, &(second, _)) in accesses.iter().enumerate() {
                for (&(first, _), first_elements) in accesses[..index].iter().zip(&elements) {
                    if let Some(element) = first_elements.shared_with(elements[index]) {
                        return Err(MemoryFault::ElementClash {
                            first,
                            second,
                            element,
                        });
                    }
                }
            }
            return Ok(());
        }
        for (index, &(second, second_size)) in accesses.iter().enumerate() {
            let second_elements = self.elements_of_access(second, second_size)?;
            for &(first, first_size) in &accesses[..index] {
                let first_elements = self.elements_of_access(first, first_size)?;
                if let Some(element) = first_elements.shared_with(second_elements) {
                    return Err(MemoryFault::ElementClash {
                        first,
                        second,
                        element,
                    });
                }
            }
        }
        Ok(())
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// One tile's SRAM contents with checked access and write protection.
#[derive(Debug, Clone)]
pub struct TileMemory {
    layout: Arc<MemoryLayout>,
    base: u32,
    bytes: Vec<u8>,
    /// Sorted, disjoint, non-adjacent write-protected address ranges.
    protected: Vec<Range<u32>>,
    /// One bit per [`PROTECT_GRANULE`] bytes from `base`: set where a protected range touches
    /// the granule. A write to a granule whose bit is clear needs no search of `protected`.
    protected_granules: Vec<u64>,
}

/// Bytes per bit of [`TileMemory`]'s protection summary; a multiple of the widest access, so
/// one aligned access lies in one granule.
const PROTECT_GRANULE: u32 = 64;

impl TileMemory {
    /// A zeroed SRAM with no protected ranges.
    pub fn new(layout: Arc<MemoryLayout>) -> Self {
        let granules = layout.size().div_ceil(PROTECT_GRANULE) as usize;
        Self {
            base: layout.base(),
            bytes: vec![0; layout.size() as usize],
            layout,
            protected: Vec::new(),
            protected_granules: vec![0; granules.div_ceil(64)],
        }
    }

    /// The address map this memory follows.
    pub fn layout(&self) -> &MemoryLayout {
        &self.layout
    }

    /// First SRAM address.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// All bytes, the first at `base`.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn offset(&self, addr: u32) -> usize {
        (addr - self.base) as usize
    }

    /// Reads a `size`-byte access (1, 2, 4, 8 or 16 bytes) at `addr`.
    #[inline]
    pub fn read(&self, addr: u32, size: u32) -> Result<&[u8], MemoryFault> {
        self.layout.check_access(addr, size)?;
        let start = self.offset(addr);
        self.bytes
            .get(start..start + size as usize)
            .ok_or(MemoryFault::OutOfRange { addr, size })
    }

    fn read_array<const N: usize>(&self, addr: u32) -> Result<[u8; N], MemoryFault> {
        let size = N as u32;
        <[u8; N]>::try_from(self.read(addr, size)?)
            .map_err(|_| MemoryFault::OutOfRange { addr, size })
    }

    /// Reads a byte.
    pub fn read_u8(&self, addr: u32) -> Result<u8, MemoryFault> {
        self.read_array::<1>(addr).map(u8::from_le_bytes)
    }

    /// Reads a little-endian 16-bit value.
    pub fn read_u16(&self, addr: u32) -> Result<u16, MemoryFault> {
        self.read_array(addr).map(u16::from_le_bytes)
    }

    /// Reads a little-endian 32-bit value.
    pub fn read_u32(&self, addr: u32) -> Result<u32, MemoryFault> {
        self.read_array(addr).map(u32::from_le_bytes)
    }

    /// Reads a little-endian 64-bit value.
    pub fn read_u64(&self, addr: u32) -> Result<u64, MemoryFault> {
        self.read_array(addr).map(u64::from_le_bytes)
    }

    /// Writes `data` (1, 2, 4, 8 or 16 bytes) at `addr`, refusing protected memory.
    #[inline]
    pub fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault> {
        let size = u32::try_from(data.len()).unwrap_or(u32::MAX);
        self.layout.check_access(addr, size)?;
        // A checked access lies in one granule: most writes are cleared by one bit.
        if self.granule_may_be_protected(addr) && self.is_protected(addr, size) {
            return Err(MemoryFault::WriteToProtected { addr });
        }
        let start = self.offset(addr);
        self.bytes
            .get_mut(start..start + data.len())
            .ok_or(MemoryFault::OutOfRange { addr, size })?
            .copy_from_slice(data);
        Ok(())
    }

    /// Writes a little-endian 32-bit value.
    pub fn write_u32(&mut self, addr: u32, value: u32) -> Result<(), MemoryFault> {
        self.write(addr, &value.to_le_bytes())
    }

    /// Writes a little-endian 64-bit value.
    pub fn write_u64(&mut self, addr: u32, value: u64) -> Result<(), MemoryFault> {
        self.write(addr, &value.to_le_bytes())
    }

    /// The byte range for a host-side transfer of `len` bytes at `addr`, if it lies in SRAM.
    fn host_range(&self, addr: u32, len: usize) -> Result<Range<usize>, MemoryFault> {
        let size = u32::try_from(len).unwrap_or(u32::MAX);
        let fault = MemoryFault::OutOfRange { addr, size };
        let start = addr.checked_sub(self.base).ok_or(fault)? as usize;
        let end = start.checked_add(len).ok_or(fault)?;
        if end > self.bytes.len() {
            return Err(fault);
        }
        Ok(start..end)
    }

    /// Host-side read of any `len` bytes at `addr` (e.g. reading outputs back): checks only
    /// that they lie in SRAM.
    pub fn read_range(&self, addr: u32, len: usize) -> Result<&[u8], MemoryFault> {
        let range = self.host_range(addr, len)?;
        self.bytes.get(range).ok_or(MemoryFault::OutOfRange {
            addr,
            size: u32::try_from(len).unwrap_or(u32::MAX),
        })
    }

    /// Image loading: writes any number of bytes at any address, ignoring alignment and write
    /// protection, but still only inside SRAM.
    pub fn load_unchecked(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault> {
        let range = self.host_range(addr, data.len())?;
        if let Some(target) = self.bytes.get_mut(range) {
            target.copy_from_slice(data);
        }
        Ok(())
    }

    /// Makes `range` write-protected (e.g. code). An empty range is a no-op.
    pub fn protect(&mut self, range: Range<u32>) -> Result<(), MemoryFault> {
        if range.is_empty() {
            return Ok(());
        }
        let size = range.end - range.start;
        if range.start < self.base || range.end > self.layout.end() {
            return Err(MemoryFault::OutOfRange {
                addr: range.start,
                size,
            });
        }
        // Keep the list sorted and merged so the write check is one binary search.
        let at = self.protected.partition_point(|r| r.start < range.start);
        self.protected.insert(at, range.clone());
        let mut merged: Vec<Range<u32>> = Vec::with_capacity(self.protected.len());
        for next in self.protected.drain(..) {
            match merged.last_mut() {
                Some(last) if next.start <= last.end => last.end = last.end.max(next.end),
                _ => merged.push(next),
            }
        }
        self.protected = merged;
        let first = (range.start - self.base) / PROTECT_GRANULE;
        let last = (range.end - 1 - self.base) / PROTECT_GRANULE;
        for granule in first..=last {
            self.protected_granules[(granule / 64) as usize] |= 1 << (granule % 64);
        }
        Ok(())
    }

    /// Whether a protected range touches the granule of `addr` (an address in SRAM).
    #[inline]
    fn granule_may_be_protected(&self, addr: u32) -> bool {
        let granule = (addr - self.base) / PROTECT_GRANULE;
        self.protected_granules
            .get((granule / 64) as usize)
            .is_none_or(|bits| bits >> (granule % 64) & 1 != 0)
    }

    /// Whether any byte of `size` bytes at `addr` is write-protected.
    pub fn is_protected(&self, addr: u32, size: u32) -> bool {
        let end = u64::from(addr) + u64::from(size);
        let index = self.protected.partition_point(|r| r.end <= addr);
        self.protected
            .get(index)
            .is_some_and(|r| u64::from(r.start) < end && size > 0)
    }

    /// The write-protected ranges, sorted and merged.
    pub fn protected_ranges(&self) -> &[Range<u32>] {
        &self.protected
    }

    /// [`MemoryLayout::check_element_clash`] for this tile.
    pub fn check_element_clash(&self, accesses: &[(u32, u32)]) -> Result<(), MemoryFault> {
        self.layout.check_element_clash(accesses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipu21_layout() -> Arc<MemoryLayout> {
        let machine = MachineDescription::builtin("ipu21").unwrap();
        Arc::new(MemoryLayout::from_machine(&machine).unwrap())
    }

    /// Element sizes that are not powers of two (48-byte elements, linear and interleaved)
    /// take the division path of `element_of`; it must agree with the definition: element
    /// `first + (offset / unit) * interleave + (offset / granule) % interleave`.
    #[test]
    fn odd_element_sizes_map_by_the_definition() {
        let region = |name: &str, start, size, interleave| RegionDescription {
            name: name.into(),
            start,
            size,
            element_bytes: 48,
            interleave,
        };
        let sram = SramDescription {
            base: 0x1000,
            interleave_granule_bytes: 8,
            regions: vec![
                region("linear", 0x1000, 48 * 10, 1),
                region("pairs", 0x1000 + 480, 96 * 5, 2),
            ],
            executable_end: None,
        };
        let layout = MemoryLayout::new(&sram).unwrap();
        for addr in 0x1000..0x1000 + 960 {
            let expected = if addr < 0x1000 + 480 {
                (addr - 0x1000) / 48
            } else {
                let offset = addr - (0x1000 + 480);
                10 + (offset / 96) * 2 + (offset / 8) % 2
            };
            assert_eq!(
                layout.element_of(addr),
                Some(MemoryElement(expected)),
                "{addr:#x}"
            );
        }
        assert_eq!(layout.element_of(0x1000 + 960), None);
    }

    /// Writes next to protected code, in the same 64-byte protection granule and in the ones
    /// around it, are refused exactly where a protected byte is written.
    #[test]
    fn protection_granules_only_shortcut_the_search() {
        let mut memory = TileMemory::new(ipu21_layout());
        memory.protect(0x4C044..0x4C04C).unwrap();
        memory.protect(0x4C0C0..0x4C100).unwrap();
        for addr in (0x4C000..0x4C140).step_by(4) {
            let protected =
                (0x4C044..0x4C04C).contains(&addr) || (0x4C0C0..0x4C100).contains(&addr);
            assert_eq!(memory.write_u32(addr, 1).is_err(), protected, "{addr:#x}");
        }
    }

    #[test]
    fn regions_are_found_by_address() {
        let layout = ipu21_layout();
        assert!(layout.region_of(0x4BFFF).is_none());
        let (index, region) = layout.region_of(0x4C000).unwrap();
        assert_eq!((index.index(), region.name.as_str()), (0, "standard"));
        assert_eq!(layout.region_of(0x7FFFF).unwrap().0.index(), 0);
        assert_eq!(layout.region_of(0x80000).unwrap().1.name, "interleaved");
        assert_eq!(layout.region_of(0xE7FFF).unwrap().0.index(), 1);
        assert!(layout.region_of(0xE8000).is_none());
        assert!(layout.region_of(u32::MAX).is_none());
        assert!(!layout.is_interleaved(0x7FFF8));
        assert!(layout.is_interleaved(0x80000));
    }

    #[test]
    fn elements_are_numbered_in_address_order() {
        let layout = ipu21_layout();
        assert_eq!(layout.element_count(), 13 + 26);
        assert_eq!(layout.element_of(0x4C000), Some(MemoryElement(0)));
        assert_eq!(layout.element_of(0x7FFFF), Some(MemoryElement(12)));
        assert_eq!(layout.element_of(0x80000), Some(MemoryElement(13)));
        assert_eq!(layout.element_of(0x80008), Some(MemoryElement(14)));
        assert_eq!(layout.element_of(0x88000), Some(MemoryElement(15)));
        assert_eq!(layout.element_of(0xE7FF8), Some(MemoryElement(38)));
    }

    #[test]
    fn sixteen_byte_access_touches_both_elements_of_its_pair() {
        let layout = ipu21_layout();
        let elements = layout.elements_of_access(0x80010, 16).unwrap();
        assert_eq!(elements.first(), MemoryElement(13));
        assert_eq!(elements.second(), Some(MemoryElement(14)));
        let single = layout.elements_of_access(0x80018, 8).unwrap();
        assert_eq!((single.first(), single.second()), (MemoryElement(14), None));
    }

    #[test]
    fn protection_ranges_merge() {
        let mut memory = TileMemory::new(ipu21_layout());
        memory.protect(0x4C100..0x4C200).unwrap();
        memory.protect(0x4C000..0x4C100).unwrap();
        memory.protect(0x4C400..0x4C500).unwrap();
        memory.protect(0x4C180..0x4C480).unwrap();
        let merged = 0x4C000..0x4C500;
        assert_eq!(memory.protected_ranges(), std::slice::from_ref(&merged));
        assert!(memory.is_protected(0x4C4F8, 8));
        assert!(!memory.is_protected(0x4C500, 8));
    }

    #[test]
    fn gcd_of_region_sizes() {
        assert_eq!(gcd(0, 0x34000), 0x34000);
        assert_eq!(gcd(0x34000, 0x68000), 0x34000);
        assert_eq!(gcd(0x4000, 0x6000), 0x2000);
    }
    proptest::proptest! {
        /// `check_element_clash` (its bit-set fast path and its general path) says what the
        /// definition says: the first invalid access's fault, else the first pair, in order,
        /// whose accesses share an element, else success.
        #[test]
        fn element_clash_checks_follow_the_definition(
            accesses in proptest::collection::vec(
                (0u32..0x34000 + 0x68000, proptest::sample::select(vec![1u32, 2, 4, 8, 16, 3])),
                0..5,
            ),
        ) {
            let layout = ipu21_layout();
            let accesses: Vec<(u32, u32)> = accesses
                .into_iter()
                .map(|(offset, size)| {
                    // Mostly aligned, so that the element rules are reached.
                    let addr = layout.base() + offset;
                    (if size.is_power_of_two() { addr & !(size - 1) } else { addr }, size)
                })
                .collect();
            let expected = (|| {
                for &(addr, size) in &accesses {
                    layout.check_access(addr, size)?;
                }
                for (index, &(second, second_size)) in accesses.iter().enumerate() {
                    let b = layout.elements_of_access(second, second_size)?;
                    for &(first, first_size) in &accesses[..index] {
                        let a = layout.elements_of_access(first, first_size)?;
                        if let Some(element) = a.shared_with(b) {
                            return Err(MemoryFault::ElementClash { first, second, element });
                        }
                    }
                }
                Ok(())
            })();
            proptest::prop_assert_eq!(layout.check_element_clash(&accesses), expected);
        }
    }
}
