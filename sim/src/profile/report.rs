//! Text and JSON summaries of a [`Profile`]: the run at a glance and where each tile's SRAM went.
//! The helpers here (category totals, fullest tiles, number formatting) are shared with
//! `html.rs` so the page and the terminal agree on every number.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{Profile, TileMemoryUsage};

/// Members of a family (e.g. single tensors) listed under its total in [`memory_summary`]; the
/// rest are folded into one line so the summary stays on one screen.
const SUMMARY_FAMILY_MEMBERS: usize = 5;
/// Tiles listed in the "fullest tiles" part of [`memory_summary`].
const SUMMARY_FULLEST_TILES: usize = 10;
/// Tiles listed in the "busiest tiles" part of [`run_summary`].
const SUMMARY_BUSIEST_TILES: usize = 10;

/// SRAM of one category (`N` = `String`) or family (`N` = `&str`) summed over the chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SramTotal<N> {
    pub name: N,
    pub bytes: u64,
    /// Tiles with a non-zero amount of it.
    pub tiles_using: u32,
    /// The most it takes on any one tile.
    pub max_on_one_tile: u64,
}

impl<N: Ord> SramTotal<N> {
    fn new(name: N) -> Self {
        SramTotal {
            name,
            bytes: 0,
            tiles_using: 0,
            max_on_one_tile: 0,
        }
    }

    /// Adds one tile's `bytes`.
    fn add(&mut self, bytes: u64) {
        self.bytes += bytes;
        self.tiles_using += u32::from(bytes > 0);
        self.max_on_one_tile = self.max_on_one_tile.max(bytes);
    }

    /// Largest first, ties by name, so output is deterministic.
    fn largest_first(totals: impl IntoIterator<Item = Self>) -> Vec<Self> {
        let mut totals: Vec<Self> = totals.into_iter().collect();
        totals.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        totals
    }
}

/// One SRAM category summed over the chip.
pub(crate) type CategoryTotal = SramTotal<String>;

/// Every category over the chip, largest first (ties by name, so output is deterministic).
pub(crate) fn category_totals(profile: &Profile) -> Vec<CategoryTotal> {
    let mut totals: BTreeMap<&str, CategoryTotal> = BTreeMap::new();
    for tile in &profile.memory {
        for (name, &bytes) in &tile.categories {
            totals
                .entry(name)
                .or_insert_with(|| SramTotal::new(name.clone()))
                .add(bytes);
        }
    }
    SramTotal::largest_first(totals.into_values())
}

/// SRAM bytes of one tile (used + free): the profile does not carry the machine description.
pub(crate) fn tile_capacity(tile: &TileMemoryUsage) -> u64 {
    tile.used + tile.free
}

/// Bytes used, bytes free and total SRAM bytes over all tiles with a memory record.
pub(crate) fn chip_sram(profile: &Profile) -> (u64, u64, u64) {
    let used: u64 = profile.memory.iter().map(|t| t.used).sum();
    let free: u64 = profile.memory.iter().map(|t| t.free).sum();
    (used, free, used + free)
}

/// The `count` tiles using the most SRAM, fullest first (ties by tile number).
pub(crate) fn fullest_tiles(profile: &Profile, count: usize) -> Vec<&TileMemoryUsage> {
    let mut tiles: Vec<&TileMemoryUsage> = profile.memory.iter().collect();
    tiles.sort_by(|a, b| b.used.cmp(&a.used).then(a.tile.cmp(&b.tile)));
    tiles.truncate(count);
    tiles
}

/// The family a category belongs to: "tensor:q_proj" → "tensor". Pages colour by family so
/// that a category per tensor does not need a colour per tensor.
pub(crate) fn category_family(name: &str) -> &str {
    name.split_once(':').map_or(name, |(family, _)| family)
}

/// A category family summed over the chip: "tensor" sums every "tensor:NAME".
pub(crate) type FamilyTotal<'a> = SramTotal<&'a str>;

/// How a family shows in the SRAM tables: its row label, and its categories (largest first,
/// for member rows beneath it) when it groups several or one not named as the family; `None`
/// when the family row says it all.
pub(crate) fn family_rows<'c>(
    family: &FamilyTotal,
    categories: &'c [CategoryTotal],
) -> (String, Option<Vec<&'c CategoryTotal>>) {
    let members: Vec<&CategoryTotal> = categories
        .iter()
        .filter(|c| category_family(&c.name) == family.name)
        .collect();
    let is_group = members.len() > 1 || members.first().is_some_and(|c| c.name != family.name);
    if is_group {
        let label = format!("{} ({} categories)", family.name, members.len());
        (label, Some(members))
    } else {
        (family.name.to_string(), None)
    }
}

/// Every family over the chip, largest first (ties by name).
pub(crate) fn family_totals(profile: &Profile) -> Vec<FamilyTotal<'_>> {
    let mut by_family: BTreeMap<&str, FamilyTotal> = BTreeMap::new();
    for tile in &profile.memory {
        let mut on_this_tile: BTreeMap<&str, u64> = BTreeMap::new();
        for (name, &bytes) in &tile.categories {
            *on_this_tile.entry(category_family(name)).or_default() += bytes;
        }
        for (family, bytes) in on_this_tile {
            by_family
                .entry(family)
                .or_insert_with(|| SramTotal::new(family))
                .add(bytes);
        }
    }
    SramTotal::largest_first(by_family.into_values())
}

/// `1234567` → `"1,234,567"`.
pub(crate) fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// Bytes in binary units with three significant-ish digits: "512 B", "12.5 KiB", "1.25 MiB".
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {}", UNITS[unit])
}

/// `part` as a percentage of `whole`, one decimal ("0.0%" when `whole` is zero).
pub(crate) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0%".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// Cycles at the machine clock in microseconds, e.g. "823.04 µs".
pub(crate) fn micros(profile: &Profile, cycles: u64) -> String {
    format!("{:.2} µs", profile.seconds(cycles) * 1e6)
}

/// The clock as "1.500 GHz" (or MHz/kHz/Hz for slower clocks).
pub(crate) fn clock_text(clock_hz: u64) -> String {
    match clock_hz {
        hz if hz >= 1_000_000_000 => format!("{:.3} GHz", hz as f64 / 1e9),
        hz if hz >= 1_000_000 => format!("{:.3} MHz", hz as f64 / 1e6),
        hz if hz >= 1_000 => format!("{:.3} kHz", hz as f64 / 1e3),
        hz => format!("{hz} Hz"),
    }
}

/// Largest free range per region, "standard 8.00 KiB, interleaved 16.0 KiB".
pub(crate) fn largest_free_text(tile: &TileMemoryUsage) -> String {
    if tile.largest_free.is_empty() {
        return "-".to_string();
    }
    let parts: Vec<String> = tile
        .largest_free
        .iter()
        .map(|(region, &bytes)| format!("{region} {}", human_bytes(bytes)))
        .collect();
    parts.join(", ")
}

/// A one-screen text summary of SRAM: totals per category across the chip (bytes and share of
/// chip SRAM), the fullest tiles (used, free, largest free range per region), chip totals.
pub fn memory_summary(profile: &Profile) -> String {
    let (used, free, capacity) = chip_sram(profile);
    let mut text = String::new();
    let per_tile = profile.memory.first().map(tile_capacity).unwrap_or(0);
    let _ = writeln!(
        text,
        "SRAM on {}: {} tiles with memory records, {} bytes ({}; {} per tile)",
        profile.machine,
        profile.memory.len(),
        thousands(capacity),
        human_bytes(capacity),
        human_bytes(per_tile),
    );
    let _ = writeln!(
        text,
        "  used {} bytes ({}, {})   free {} bytes ({}, {})",
        thousands(used),
        human_bytes(used),
        percent(used, capacity),
        thousands(free),
        human_bytes(free),
        percent(free, capacity),
    );

    // One line per family; a family of several categories (one per tensor) also lists its
    // largest members, so that a hundred tensors do not push code and scratch off the screen.
    let families = family_totals(profile);
    let categories = category_totals(profile);
    // (label, bytes, tiles using and most on one tile when known)
    type Row = (String, u64, Option<(u32, u64)>);
    let mut rows: Vec<Row> = Vec::new();
    for family in &families {
        let (label, members) = family_rows(family, &categories);
        rows.push((
            label,
            family.bytes,
            Some((family.tiles_using, family.max_on_one_tile)),
        ));
        let Some(members) = members else {
            continue;
        };
        for member in members.iter().take(SUMMARY_FAMILY_MEMBERS) {
            rows.push((
                format!("  {}", member.name),
                member.bytes,
                Some((member.tiles_using, member.max_on_one_tile)),
            ));
        }
        if members.len() > SUMMARY_FAMILY_MEMBERS {
            let rest = &members[SUMMARY_FAMILY_MEMBERS..];
            let rest_bytes = rest.iter().map(|c| c.bytes).sum();
            rows.push((format!("  ({} more)", rest.len()), rest_bytes, None));
        }
    }
    let name_width = rows
        .iter()
        .map(|(label, _, _)| label.chars().count())
        .max()
        .unwrap_or(0)
        .max("category".len());
    let _ = writeln!(
        text,
        "\n  {:<name_width$}  {:>15}  {:>7}  {:>6}  {:>10}",
        "category", "bytes", "% chip", "tiles", "max/tile"
    );
    for (label, bytes, spread) in rows {
        let _ = write!(
            text,
            "  {label:<name_width$}  {:>15}  {:>7}",
            thousands(bytes),
            percent(bytes, capacity)
        );
        if let Some((tiles_using, max_on_one_tile)) = spread {
            let _ = write!(
                text,
                "  {tiles_using:>6}  {:>10}",
                human_bytes(max_on_one_tile)
            );
        }
        text.push('\n');
    }

    let fullest = fullest_tiles(profile, SUMMARY_FULLEST_TILES);
    if !fullest.is_empty() {
        let _ = writeln!(
            text,
            "\n  {:<10}  {:>9}  {:>6}  {:>9}  largest free range per region",
            "fullest", "used", "share", "free"
        );
        for tile in fullest {
            let _ = writeln!(
                text,
                "  {:<10}  {:>9}  {:>6}  {:>9}  {}",
                format!("tile {}", tile.tile),
                human_bytes(tile.used),
                percent(tile.used, tile_capacity(tile)),
                human_bytes(tile.free),
                largest_free_text(tile),
            );
        }
    }
    text
}

/// Per-tile SRAM use as JSON, for `--memory-report FILE.json`: chip totals, totals per
/// category, then every tile's categories, used, free and largest free range per region.
pub fn memory_report_json(profile: &Profile) -> String {
    #[derive(Serialize)]
    struct MemoryReport<'a> {
        machine: &'a str,
        tile_count: u32,
        chip_sram_bytes: u64,
        used_bytes: u64,
        free_bytes: u64,
        /// Category name → bytes over the chip.
        categories: BTreeMap<&'a str, u64>,
        tiles: &'a [TileMemoryUsage],
    }
    let (used, free, capacity) = chip_sram(profile);
    let mut categories: BTreeMap<&str, u64> = BTreeMap::new();
    for tile in &profile.memory {
        for (name, &bytes) in &tile.categories {
            *categories.entry(name).or_default() += bytes;
        }
    }
    let report = MemoryReport {
        machine: &profile.machine,
        tile_count: profile.tiles,
        chip_sram_bytes: capacity,
        used_bytes: used,
        free_bytes: free,
        categories,
        tiles: &profile.memory,
    };
    // Serialising plain structs of strings and integers cannot fail.
    serde_json::to_string_pretty(&report).unwrap_or_default()
}

/// A few lines about the run: cycles (total, start-up, cropped) with their time at the machine
/// clock, global syncs, exchange bytes, bundles and the busiest tiles.
pub fn run_summary(profile: &Profile) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Run on {}: {} tiles at {}",
        profile.machine,
        profile.tiles,
        clock_text(profile.clock_hz)
    );
    let rows = [
        ("total cycles", profile.total_cycles),
        ("start-up cycles", profile.startup_cycles),
        ("cropped cycles", profile.cropped_cycles),
    ];
    for (label, cycles) in rows {
        let _ = writeln!(
            text,
            "  {label:<16} {:>15}  ({})",
            thousands(cycles),
            micros(profile, cycles)
        );
    }
    let _ = writeln!(
        text,
        "  {:<16} {:>15}",
        "global syncs",
        thousands(profile.syncs)
    );
    let _ = writeln!(
        text,
        "  {:<16} {:>15}  ({} sent, all tiles)",
        "exchange bytes",
        thousands(profile.total_exchange_bytes()),
        human_bytes(profile.total_exchange_bytes())
    );
    let bundles: u64 = profile.bundles.iter().sum();
    let _ = writeln!(
        text,
        "  {:<16} {:>15}  (all tiles)",
        "bundles issued",
        thousands(bundles)
    );
    let busiest = profile.busiest_tiles(SUMMARY_BUSIEST_TILES);
    if !busiest.is_empty() {
        let _ = writeln!(text, "  busiest tiles (compute + exchange cycles):");
        for (tile, cycles) in busiest {
            let _ = writeln!(
                text,
                "    tile {tile:<6} {:>15}  ({} of total)",
                thousands(cycles),
                percent(cycles, profile.total_cycles)
            );
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_scaled() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(638_976), "624 KiB");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(1, 0), "0.0%");
        assert_eq!(category_family("tensor:q"), "tensor");
        assert_eq!(category_family("code"), "code");
    }
}
