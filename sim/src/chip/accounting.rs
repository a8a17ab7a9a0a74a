//! SRAM accounting from an image: per tile, bytes by category, used and free bytes, and the
//! largest free range of each region. Every allocated byte belongs to exactly one segment and so
//! to one category (the image guarantees segments do not overlap). Images are static, so the
//! peak of each category is its size in the image.

use crate::machine::MachineDescription;
use crate::profile::TileMemoryUsage;
use tessera_isa::image::TileImage;

/// The SRAM use of `tile` (or of an empty tile when the image has nothing there).
pub(super) fn tile_usage(
    machine: &MachineDescription,
    tile: u32,
    image: Option<&TileImage>,
) -> TileMemoryUsage {
    let mut usage = TileMemoryUsage {
        tile,
        ..TileMemoryUsage::default()
    };
    let segments = image.map(|t| t.segments.as_slice()).unwrap_or(&[]);
    for segment in segments {
        *usage.categories.entry(segment.category.name()).or_insert(0) += u64::from(segment.size);
        usage.used += u64::from(segment.size);
    }
    usage.free = u64::from(machine.sram_size()).saturating_sub(usage.used);
    for region in &machine.sram.regions {
        let start = u64::from(region.start);
        let end = start + u64::from(region.size);
        let mut cursor = start;
        let mut largest = 0u64;
        // Segments are sorted by address and disjoint.
        for segment in segments {
            let (lo, hi) = (u64::from(segment.address), segment.end());
            if hi <= cursor || lo >= end {
                continue;
            }
            largest = largest.max(lo.max(cursor) - cursor);
            cursor = cursor.max(hi);
        }
        largest = largest.max(end.saturating_sub(cursor));
        usage.largest_free.insert(region.name.clone(), largest);
    }
    usage
}
