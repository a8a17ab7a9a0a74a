//! A [`Profile`] as one self-contained `profile.html`: inline CSS and JS (kept in
//! `assets/profile.css` and `assets/profile.js` and compiled in), no network, the
//! timeline data embedded as a JSON blob in a `<script type="application/json">` tag. The
//! summary, SRAM bars and totals table are rendered here as static HTML (readable with scripts
//! off, and testable from Rust); the script draws the zoomable per-tile timeline on a canvas.
//!
//! The blob is compact because a full ipu21 run has ~1472 × 100 phases: per tile, phases are
//! flat `[kind, gap since previous end, duration, …]` triples and kernels are
//! `[worker, name index, start minus previous start, duration, …]` quadruples with the names in
//! one table. The script reports success or failure on `<body data-rendered>` and in
//! `<pre id="errors">`, and what it drew on the canvases' `data-*` attributes, so a headless
//! browser can check the page (`scripts/check_profile.sh`, `tests/it/profile_browser.rs`).

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};

use super::report::{
    category_family, category_totals, chip_sram, clock_text, family_rows, family_totals,
    fullest_tiles, human_bytes, largest_free_text, micros, percent, thousands, tile_capacity,
    FamilyTotal,
};
use super::trace::{phase_index, phase_name, tile_count, PHASE_KINDS};
use super::Profile;

/// Tiles drawn as SRAM bars; the strip above them shows every tile.
const MEMORY_BAR_TILES: usize = 50;
/// Busiest tiles listed in the summary.
const SUMMARY_BUSIEST_TILES: usize = 10;
/// Members of a category family (e.g. single tensors) listed under the family's total row.
const TABLE_MEMBERS_PER_FAMILY: usize = 8;

/// Colours of the phase kinds, in `phase_index` order; the script uses the same list.
const PHASE_COLOURS: [&str; 4] = ["#b279a2", "#4c78a8", "#f58518", "#cfd4dc"];
/// Colours of the SRAM category families, largest family first; later families are grey.
const FAMILY_COLOURS: [&str; 10] = [
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6",
    "#9d755d", "#79706e",
];
const OTHER_FAMILY_COLOUR: &str = "#bab0ac";

/// Writes `profile` as a self-contained HTML page to `out` (buffered here).
pub fn write_html<W: Write>(out: W, profile: &Profile) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let title = format!("Tessera profile: {}", profile.machine);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape_html(&title)
    )?;
    write_summary(&mut out, profile)?;
    write_operations(&mut out, profile)?;
    write_timeline_section(&mut out, profile)?;
    write_memory_section(&mut out, profile)?;
    write_how_to_read(&mut out)?;
    out.write_all(b"<pre id=\"errors\"></pre>\n</main>\n")?;
    out.write_all(b"<script type=\"application/json\" id=\"profile-data\">")?;
    write_data_blob(&mut out, profile)?;
    write!(
        out,
        "</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )?;
    out.flush()
}

/// The header and summary cards: machine, tiles, cycles, time, syncs, exchange, busiest tiles.
fn write_summary(out: &mut impl Write, profile: &Profile) -> io::Result<()> {
    let (used, _free, capacity) = chip_sram(profile);
    let bundles: u64 = profile.bundles.iter().sum();
    writeln!(
        out,
        "<header><h1>Tessera profile <span class=\"machine\">{}</span></h1>\
         <p class=\"subtitle\">{} tiles · clock {} · times below are at this clock</p></header>",
        escape_html(&profile.machine),
        thousands(u64::from(profile.tiles)),
        clock_text(profile.clock_hz)
    )?;
    out.write_all(b"<section id=\"summary\"><div class=\"cards\">\n")?;
    let cards: [(&str, String, String); 8] = [
        (
            "Machine",
            escape_html(&profile.machine),
            format!("{} tiles", thousands(u64::from(profile.tiles))),
        ),
        (
            "Total cycles",
            thousands(profile.total_cycles),
            micros(profile, profile.total_cycles),
        ),
        (
            "Cropped cycles",
            thousands(profile.cropped_cycles),
            micros(profile, profile.cropped_cycles),
        ),
        (
            "Start-up cycles",
            thousands(profile.startup_cycles),
            micros(profile, profile.startup_cycles),
        ),
        (
            "Global syncs",
            thousands(profile.syncs),
            "chip-wide barriers".to_string(),
        ),
        (
            "Exchange",
            thousands(profile.total_exchange_bytes()),
            format!(
                "bytes sent ({})",
                human_bytes(profile.total_exchange_bytes())
            ),
        ),
        (
            "Bundles issued",
            thousands(bundles),
            "all tiles".to_string(),
        ),
        (
            "SRAM used",
            human_bytes(used),
            format!("{} of {}", percent(used, capacity), human_bytes(capacity)),
        ),
    ];
    for (label, value, note) in cards {
        writeln!(
            out,
            "<div class=\"card\"><div class=\"label\">{label}</div><div class=\"value\">{value}</div>\
             <div class=\"note\">{note}</div></div>"
        )?;
    }
    out.write_all(b"</div>\n")?;

    let busiest = profile.busiest_tiles(SUMMARY_BUSIEST_TILES);
    out.write_all(
        b"<div class=\"busiest\"><h3>Busiest tiles <span class=\"hint\">compute + exchange cycles \
          \xc2\xb7 click one to show it in the timeline</span></h3><ol>\n",
    )?;
    for (tile, cycles) in busiest {
        writeln!(
            out,
            "<li data-tile=\"{tile}\"><span class=\"tile\">tile {tile}</span>\
             <span class=\"meter\"><span style=\"width:{:.2}%\"></span></span>\
             <span class=\"num\">{}</span><span class=\"pct\">{} of total</span></li>",
            cycles as f64 * 100.0 / profile.total_cycles.max(1) as f64,
            thousands(cycles),
            percent(cycles, profile.total_cycles)
        )?;
    }
    out.write_all(b"</ol></div></section>\n")
}

/// The per-operation table, when the profile has one: where the run's cycles went, simulated
/// beside estimated, largest first.
fn write_operations(out: &mut impl Write, profile: &Profile) -> io::Result<()> {
    if profile.operations.is_empty() {
        return Ok(());
    }
    let mut rows: Vec<&super::OperationCycles> = profile.operations.iter().collect();
    rows.sort_by(|a, b| b.simulated.cmp(&a.simulated).then(a.name.cmp(&b.name)));
    let run: u64 = rows.iter().map(|r| r.simulated).sum::<u64>().max(1);
    out.write_all(b"<section id=\"operations\"><h2>Cycles by operation</h2>\n<table class=\"totals\"><thead><tr><th>operation</th><th>simulated cycles</th><th>estimated cycles</th><th>share</th></tr></thead><tbody>\n")?;
    for row in rows {
        let times = if row.count > 1 {
            format!(" (x{})", row.count)
        } else {
            String::new()
        };
        writeln!(
            out,
            "<tr><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape_html(&row.name),
            times,
            thousands(row.simulated),
            thousands(row.estimated),
            percent(row.simulated, run)
        )?;
    }
    out.write_all(b"</tbody></table>\n<p class=\"hint\">Simulated supersteps shared among the ops that ran in them in proportion to their estimates on the step's busiest tile; exchange phases are their own rows.</p></section>\n")
}

fn write_timeline_section(out: &mut impl Write, profile: &Profile) -> io::Result<()> {
    out.write_all(b"<section id=\"timeline\"><h2>Supersteps per tile</h2>\n<div class=\"toolbar\">\n<div class=\"legend\">")?;
    for kind in PHASE_KINDS {
        write!(
            out,
            "<span class=\"key\"><i style=\"background:{}\"></i>{}</span>",
            PHASE_COLOURS[phase_index(kind)],
            phase_name(kind)
        )?;
    }
    out.write_all(b"<span class=\"key\"><i class=\"idle\"></i>idle</span></div>\n")?;
    let last_tile = tile_count(profile).saturating_sub(1);
    write!(
        out,
        "<div class=\"controls\"><label>tiles <input id=\"tile-from\" type=\"number\" min=\"0\" max=\"{last_tile}\" value=\"0\"></label>\
         <label>to <input id=\"tile-to\" type=\"number\" min=\"0\" max=\"{last_tile}\" value=\"{last_tile}\"></label>\
         <button id=\"tile-apply\" type=\"button\">Show</button>\
         <button id=\"crop-view\" type=\"button\" title=\"Zoom the time axis to the cropped window\">Cropped window</button>\
         <button id=\"reset-view\" type=\"button\">Reset</button></div>\n</div>\n"
    )?;
    out.write_all(
        b"<div class=\"canvas-wrap\" id=\"timeline-wrap\"><canvas id=\"timeline-canvas\"></canvas>\
          <div class=\"tooltip\" id=\"timeline-tooltip\" hidden></div></div>\n\
          <p class=\"readout\" id=\"view-readout\"></p>\n\
          <p class=\"hint\">Wheel: zoom time around the cursor \xc2\xb7 Shift+wheel or wheel over the tile \
          labels: zoom tiles \xc2\xb7 drag: pan \xc2\xb7 double-click: zoom to the tiles around the cursor \
          \xc2\xb7 at 32 tiles or fewer each tile shows one lane per worker with its kernels \xc2\xb7 the \
          address bar keeps the view (<code>#tiles=0-7&amp;cycles=30000-60000</code>).</p>\n</section>\n",
    )
}

fn family_colour(families: &[FamilyTotal], family: &str) -> &'static str {
    families
        .iter()
        .position(|f| f.name == family)
        .and_then(|index| FAMILY_COLOURS.get(index).copied())
        .unwrap_or(OTHER_FAMILY_COLOUR)
}

/// SRAM: the all-tile strip (drawn by the script), the fullest tiles as stacked bars, and the
/// totals by category.
fn write_memory_section(out: &mut impl Write, profile: &Profile) -> io::Result<()> {
    let (used, free, capacity) = chip_sram(profile);
    let families = family_totals(profile);
    let fullest = fullest_tiles(profile, MEMORY_BAR_TILES);
    out.write_all(b"<section id=\"memory\"><h2>SRAM per tile</h2>\n")?;
    write!(
        out,
        "<p class=\"lead\">{} used of {} ({}) on {} tiles; {} free.",
        human_bytes(used),
        human_bytes(capacity),
        percent(used, capacity),
        thousands(profile.memory.len() as u64),
        human_bytes(free)
    )?;
    if let Some(top) = fullest.first() {
        write!(
            out,
            " Fullest: tile {} at {} ({} free).",
            top.tile,
            percent(top.used, tile_capacity(top)),
            human_bytes(top.free)
        )?;
    }
    out.write_all(b"</p>\n")?;
    out.write_all(
        b"<div class=\"canvas-wrap strip\" id=\"memory-strip-wrap\"><canvas id=\"memory-strip\"></canvas>\
          <div class=\"tooltip\" id=\"memory-tooltip\" hidden></div></div>\n\
          <p class=\"hint\">Every tile's SRAM use as a share of its capacity (the fullest tile of each \
          pixel column; red above 90%). Click to show a tile in the timeline.</p>\n",
    )?;

    out.write_all(b"<div class=\"legend\">")?;
    for family in &families {
        write!(
            out,
            "<span class=\"key\"><i style=\"background:{}\"></i>{}</span>",
            family_colour(&families, family.name),
            escape_html(family.name)
        )?;
    }
    out.write_all(b"<span class=\"key\"><i class=\"free\"></i>free</span></div>\n")?;

    write!(
        out,
        "<h3>The {} fullest tiles</h3>\n<div class=\"membars\">\n",
        fullest.len()
    )?;
    for tile in &fullest {
        let tile_bytes = tile_capacity(tile).max(1);
        write!(
            out,
            "<div class=\"mrow\" data-tile=\"{}\"><span class=\"mlabel\">tile {}</span><span class=\"mbar\">",
            tile.tile, tile.tile
        )?;
        // Segments by family in the legend's order, so bars compare at a glance.
        for family in &families {
            let members: Vec<(&String, &u64)> = tile
                .categories
                .iter()
                .filter(|(name, &bytes)| bytes > 0 && category_family(name) == family.name)
                .collect();
            let bytes: u64 = members.iter().map(|(_, &b)| b).sum();
            if bytes == 0 {
                continue;
            }
            let mut title = format!("{}: {} bytes", family.name, thousands(bytes));
            if members.len() > 1 || members[0].0 != family.name {
                let mut sorted = members.clone();
                sorted.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
                for (name, bytes) in sorted.iter().take(TABLE_MEMBERS_PER_FAMILY) {
                    title.push_str(&format!("\n  {name}: {} bytes", thousands(**bytes)));
                }
                if sorted.len() > TABLE_MEMBERS_PER_FAMILY {
                    title.push_str(&format!(
                        "\n  … {} more",
                        sorted.len() - TABLE_MEMBERS_PER_FAMILY
                    ));
                }
            }
            write!(
                out,
                "<span class=\"seg\" style=\"width:{:.3}%;background:{}\" title=\"{}\"></span>",
                bytes as f64 * 100.0 / tile_bytes as f64,
                family_colour(&families, family.name),
                escape_html(&title)
            )?;
        }
        writeln!(
            out,
            "<span class=\"seg free\" style=\"width:{:.3}%\" title=\"free: {} bytes\"></span></span>\
             <span class=\"mnote\">{} used ({}) · {} free · largest free: {}</span></div>",
            tile.free as f64 * 100.0 / tile_bytes as f64,
            thousands(tile.free),
            human_bytes(tile.used),
            percent(tile.used, tile_bytes),
            human_bytes(tile.free),
            escape_html(&largest_free_text(tile))
        )?;
    }
    out.write_all(b"</div>\n")?;

    out.write_all(
        b"<h3>Totals by category</h3>\n<table class=\"totals\"><thead><tr><th>category</th>\
          <th>bytes</th><th></th><th>% of chip SRAM</th><th>tiles using</th><th>most on one tile</th>\
          </tr></thead><tbody>\n",
    )?;
    let categories = category_totals(profile);
    for family in &families {
        let (label, members) = family_rows(family, &categories);
        writeln!(
            out,
            "<tr class=\"family\"><td><i style=\"background:{}\"></i>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            family_colour(&families, family.name),
            escape_html(&label),
            thousands(family.bytes),
            human_bytes(family.bytes),
            percent(family.bytes, capacity),
            family.tiles_using,
            human_bytes(family.max_on_one_tile)
        )?;
        let Some(members) = members else {
            continue;
        };
        for member in members.iter().take(TABLE_MEMBERS_PER_FAMILY) {
            writeln!(
                out,
                "<tr class=\"member\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape_html(&member.name),
                thousands(member.bytes),
                human_bytes(member.bytes),
                percent(member.bytes, capacity),
                member.tiles_using,
                human_bytes(member.max_on_one_tile)
            )?;
        }
        if members.len() > TABLE_MEMBERS_PER_FAMILY {
            let rest = &members[TABLE_MEMBERS_PER_FAMILY..];
            let rest_bytes: u64 = rest.iter().map(|c| c.bytes).sum();
            writeln!(
                out,
                "<tr class=\"member\"><td>… {} more</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td></tr>",
                rest.len(),
                thousands(rest_bytes),
                human_bytes(rest_bytes),
                percent(rest_bytes, capacity)
            )?;
        }
    }
    write!(
        out,
        "</tbody><tfoot><tr><td>used</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td></tr>\
         <tr><td>free</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td></tr>\
         <tr><td>chip SRAM</td><td>{}</td><td>{}</td><td>100.0%</td><td>{}</td><td></td></tr>\
         </tfoot></table>\n</section>\n",
        thousands(used),
        human_bytes(used),
        percent(used, capacity),
        thousands(free),
        human_bytes(free),
        percent(free, capacity),
        thousands(capacity),
        human_bytes(capacity),
        profile.memory.len()
    )
}

fn write_how_to_read(out: &mut impl Write) -> io::Result<()> {
    out.write_all(
        "<section id=\"how-to-read\"><h2>How to read this</h2>\n<p>The chip runs in bulk-synchronous \
         supersteps: every tile computes on its own SRAM, all tiles meet at a global sync, then \
         they exchange data, and so on. In the timeline each row is a tile and time runs left to \
         right in cycles; a phase is <b>Compute</b> when the tile ran code and sent nothing, \
         <b>Exchange</b> when it sent or received exchange words, <b>Sync</b> while it waited at a \
         global sync for the slowest tile, and <b>Startup</b> while code, weights and inputs were \
         loaded. Long grey Sync bars mean the tile had too little to do compared with the busiest \
         tile; a tile that is Compute while most are Sync is on the critical path. <b>Total \
         cycles</b> run from the start of loading to the last activity; <b>cropped cycles</b> start \
         after start-up and end when the last output is written (the dashed lines). Zoom to 32 \
         tiles or fewer to see each worker's kernels (their names show when there is room; hover \
         for details). The SRAM bars show where each of the fullest tiles' bytes went, and the \
         table sums each category over the chip. Times are at the machine clock.</p>\n</section>\n"
            .as_bytes(),
    )
}

/// Writes the JSON the script reads. Numbers are written directly (no intermediate document),
/// strings through serde_json and then made safe inside a `<script>` element.
fn write_data_blob(out: &mut impl Write, profile: &Profile) -> io::Result<()> {
    let tiles = tile_count(profile);
    let workers = profile
        .kernels
        .iter()
        .flatten()
        .map(|k| usize::from(k.worker) + 1)
        .max()
        .unwrap_or(0);
    write!(
        out,
        "{{\"machine\":{},\"clock_hz\":{},\"tiles\":{tiles},\"total_cycles\":{},\
         \"startup_cycles\":{},\"cropped_cycles\":{},\"workers\":{workers},",
        script_safe_json(&profile.machine),
        profile.clock_hz,
        profile.total_cycles,
        profile.startup_cycles,
        profile.cropped_cycles
    )?;
    write!(
        out,
        "\"phase_colours\":{},",
        script_safe_json(&PHASE_COLOURS)
    )?;
    let kind_names: Vec<&str> = PHASE_KINDS.iter().map(|&k| phase_name(k)).collect();
    write!(
        out,
        "\"phase_kinds\":{},\n\"phases\":[",
        script_safe_json(&kind_names)
    )?;
    for tile in 0..tiles as usize {
        if tile > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(b"[")?;
        let mut previous_end: i128 = 0;
        for (index, phase) in profile.phases.get(tile).into_iter().flatten().enumerate() {
            let separator = if index > 0 { "," } else { "" };
            let gap = i128::from(phase.start) - previous_end;
            let duration = phase.end.saturating_sub(phase.start);
            write!(
                out,
                "{separator}{},{gap},{duration}",
                phase_index(phase.kind)
            )?;
            previous_end = i128::from(phase.start) + i128::from(duration);
        }
        out.write_all(b"]")?;
    }

    // Kernel names go into one table; spans refer to them by index.
    let mut name_index: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    out.write_all(b"],\n\"kernels\":[")?;
    for tile in 0..tiles as usize {
        if tile > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(b"[")?;
        let mut previous_start: i128 = 0;
        for (index, kernel) in profile.kernels.get(tile).into_iter().flatten().enumerate() {
            let name = *name_index.entry(&kernel.name).or_insert_with(|| {
                names.push(&kernel.name);
                names.len() - 1
            });
            let separator = if index > 0 { "," } else { "" };
            let delta = i128::from(kernel.start) - previous_start;
            let duration = kernel.end.saturating_sub(kernel.start);
            write!(
                out,
                "{separator}{},{name},{delta},{duration}",
                kernel.worker
            )?;
            previous_start = i128::from(kernel.start);
        }
        out.write_all(b"]")?;
    }
    write!(out, "],\n\"kernel_names\":{},\n", script_safe_json(&names))?;

    // Per-tile arrays, indexed by tile number (memory records carry their own tile number).
    let mut used = vec![0u64; tiles as usize];
    let mut capacity = vec![0u64; tiles as usize];
    for record in &profile.memory {
        if let Some(slot) = used.get_mut(record.tile as usize) {
            *slot = record.used;
            capacity[record.tile as usize] = tile_capacity(record);
        }
    }
    let sent: Vec<u64> = (0..tiles as usize)
        .map(|t| profile.exchange.get(t).map_or(0, |e| e.bytes_sent))
        .collect();
    let received: Vec<u64> = (0..tiles as usize)
        .map(|t| profile.exchange.get(t).map_or(0, |e| e.bytes_received))
        .collect();
    write!(
        out,
        "\"memory_used\":{},\n\"memory_capacity\":{},\n\"bytes_sent\":{},\n\"bytes_received\":{}}}",
        script_safe_json(&used),
        script_safe_json(&capacity),
        script_safe_json(&sent),
        script_safe_json(&received)
    )
}

/// JSON that can sit inside `<script>`: `<` only occurs inside strings in JSON, and there
/// `\u003c` means the same, so no `</script>` or `<!--` can end the element early.
fn script_safe_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".to_string())
        .replace('<', "\\u003c")
}

fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '\n' => escaped.push_str("&#10;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The page's style sheet and script live in real files beside this one, so that editors,
/// linters and the browser test see them as CSS and JavaScript; they are compiled in, so the
/// written page still needs nothing beside it.
const STYLE: &str = include_str!("assets/profile.css");
const SCRIPT: &str = include_str!("assets/profile.js");

#[cfg(test)]
mod tests {
    use super::{SCRIPT, STYLE};

    /// The assets are pasted into `<script>` and `<style>` as they are, so a closing tag (or, in
    /// a script, an HTML comment opener) in them would end the element early and break the page.
    #[test]
    fn the_assets_cannot_end_their_elements_early() {
        let script = SCRIPT.to_ascii_lowercase();
        assert!(!script.contains("</script") && !script.contains("<!--"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
        // Both are real files with content, not empty placeholders.
        assert!(SCRIPT.contains("\"use strict\";") && SCRIPT.contains("dataset.rendered = \"ok\""));
        assert!(STYLE.contains("#timeline-canvas"));
    }
}
