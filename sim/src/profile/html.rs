//! A [`Profile`] as one self-contained `profile.html`: inline CSS and JS, no network, the
//! timeline data embedded as a JSON blob in a `<script type="application/json">` tag. The
//! summary, SRAM bars and totals table are rendered here as static HTML (readable with scripts
//! off, and testable from Rust); the script draws the zoomable per-tile timeline on a canvas.
//!
//! The blob is compact because a full ipu21 run has ~1472 × 100 phases: per tile, phases are
//! flat `[kind, gap since previous end, duration, …]` triples and kernels are
//! `[worker, name index, start minus previous start, duration, …]` quadruples with the names in
//! one table. The script reports success or failure on `<body data-rendered>` and in
//! `<pre id="errors">` so a headless browser can check the page (`scripts/check_profile.sh`).

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};

use super::report::{
    category_family, category_totals, chip_sram, clock_text, family_totals, fullest_tiles,
    human_bytes, largest_free_text, micros, percent, thousands, tile_capacity, FamilyTotal,
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
        let members: Vec<_> = categories
            .iter()
            .filter(|c| category_family(&c.name) == family.name)
            .collect();
        let is_group = members.len() > 1 || members.first().is_some_and(|c| c.name != family.name);
        let label = if is_group {
            format!("{} ({} categories)", family.name, members.len())
        } else {
            family.name.to_string()
        };
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
        if !is_group {
            continue;
        }
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

const STYLE: &str = r##"
:root { --ink:#1f2933; --muted:#65717e; --line:#dfe3e8; --panel:#ffffff; --bg:#f4f6f8; --accent:#4c78a8; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1600px; margin: 0 auto; padding: 18px 24px 40px; }
header h1 { margin: 0; font-size: 22px; font-weight: 650; }
header .machine { color: var(--accent); }
.subtitle { margin: 2px 0 14px; color: var(--muted); }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 16px 0 8px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin-bottom: 16px; }
.hint { color: var(--muted); font-size: 12px; font-weight: normal; margin: 6px 0 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(145px, 1fr)); gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; background: #fafbfc; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .note { color: var(--muted); font-size: 12px; }
.busiest ol { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 2px 24px; }
.busiest li { display: grid; grid-template-columns: 68px minmax(60px, 1fr) 76px 86px; align-items: center; gap: 8px; padding: 2px 4px; border-radius: 4px; cursor: pointer; font-variant-numeric: tabular-nums; }
.busiest li:hover, .mrow:hover { background: #eef3f9; }
.busiest .meter { height: 8px; background: #edf0f3; border-radius: 4px; overflow: hidden; }
.busiest .meter span { display: block; height: 100%; background: var(--accent); }
.busiest .num { text-align: right; }
.busiest .pct { color: var(--muted); font-size: 12px; }
.toolbar { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px 20px; margin-bottom: 8px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 4px 0; }
.key { display: inline-flex; align-items: center; gap: 6px; font-size: 13px; }
.key i, .totals td i { display: inline-block; width: 14px; height: 12px; border-radius: 2px; }
.totals td i { margin-right: 8px; vertical-align: -1px; }
.key i.idle { background: #fff; border: 1px solid #c4cad2; }
.key i.free, .seg.free { background: repeating-linear-gradient(135deg, #eceff3 0 4px, #f8f9fb 4px 8px); border: 1px solid #d6dbe1; }
.controls { display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
.controls input { width: 72px; padding: 3px 6px; border: 1px solid #c4cad2; border-radius: 4px; font: inherit; }
button { font: inherit; padding: 3px 12px; border: 1px solid #b8c0ca; border-radius: 4px; background: #f7f8fa; cursor: pointer; }
button:hover { background: #e9edf2; }
.canvas-wrap { position: relative; border: 1px solid var(--line); border-radius: 4px; overflow: hidden; background: #fbfcfd; }
#timeline-canvas { display: block; width: 100%; height: 620px; cursor: crosshair; }
#timeline-canvas.dragging { cursor: grabbing; }
.strip canvas { display: block; width: 100%; height: 96px; cursor: pointer; }
.readout { margin: 6px 0 0; font-variant-numeric: tabular-nums; font-size: 13px; }
.tooltip { position: absolute; pointer-events: none; background: rgba(28, 33, 40, .94); color: #f3f5f7; padding: 6px 9px; border-radius: 5px; font-size: 12px; line-height: 1.5; white-space: pre; max-width: 460px; box-shadow: 0 2px 8px rgba(0,0,0,.25); z-index: 2; }
.tooltip b { color: #fff; }
.lead { margin: 0 0 10px; }
.membars { display: grid; gap: 1px; }
.mrow { display: grid; grid-template-columns: 74px minmax(200px, 1fr) minmax(380px, auto); align-items: center; gap: 10px; padding: 1px 4px; border-radius: 3px; cursor: pointer; font-size: 12px; font-variant-numeric: tabular-nums; }
.mlabel { text-align: right; color: var(--muted); }
.mbar { display: flex; height: 13px; border-radius: 2px; overflow: hidden; background: #f3f5f7; }
.seg { display: block; height: 100%; }
.seg.free { border: none; }
.mnote { color: #3e4a56; white-space: nowrap; }
table.totals { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
.totals th, .totals td { padding: 3px 12px; border-bottom: 1px solid #edf0f3; text-align: right; }
.totals th:first-child, .totals td:first-child { text-align: left; }
.totals th { color: var(--muted); font-weight: 600; font-size: 12px; }
.totals tr.member td { color: var(--muted); font-size: 12px; }
.totals tr.member td:first-child { padding-left: 34px; }
.totals tfoot td { font-weight: 600; border-bottom: none; }
#how-to-read p { max-width: 980px; margin: 0; }
#errors { color: #b42318; background: #fff4f2; border: 1px solid #f1b5ac; padding: 10px; border-radius: 6px; white-space: pre-wrap; }
#errors:empty { display: none; }
"##;

const SCRIPT: &str = r##"
"use strict";
(function () {
  const errorsBox = document.getElementById("errors");
  function reportError(text) {
    errorsBox.textContent += text + "\n";
    document.body.dataset.rendered = "error: " + String(text).split("\n")[0];
  }
  window.onerror = function (message, source, line, column, error) {
    reportError(error && error.stack ? String(error.stack) : message + " at " + source + ":" + line + ":" + column);
  };
  window.addEventListener("unhandledrejection", function (event) {
    reportError("unhandled rejection: " + event.reason);
  });

  const KERNEL_COLOURS = ["#8fc3e8", "#9fd89a", "#f7b6a0", "#f3d98b", "#c7b3e5", "#a7dcd6",
    "#f5b3c9", "#d5c2a5", "#b9d27c", "#f0a35e", "#9ab0f0", "#d6d6d6"];
  const IDLE = 4;

  const formatInt = (n) => Math.round(n).toLocaleString("en-US");
  function formatBytes(bytes) {
    if (bytes < 1024) return bytes + " B";
    const units = ["KiB", "MiB", "GiB", "TiB"];
    let value = bytes / 1024, unit = 0;
    while (value >= 1024 && unit + 1 < units.length) { value /= 1024; unit++; }
    return value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2) + " " + units[unit];
  }
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const clamp = (value, low, high) => Math.min(Math.max(value, low), high);

  // Index of the first span whose end is after `cycle` (spans of one track never overlap, so
  // their ends are sorted like their starts).
  function firstEndAfter(ends, cycle) {
    let low = 0, high = ends.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (ends[mid] <= cycle) low = mid + 1; else high = mid;
    }
    return low;
  }

  // The span nearest to `cycle` within `tolerance` cycles (one containing it wins), or -1.
  function findSpan(starts, ends, cycle, tolerance) {
    let best = -1, bestDistance = Infinity;
    for (let i = firstEndAfter(ends, cycle - tolerance); i < starts.length && starts[i] <= cycle + tolerance; i++) {
      const distance = cycle < starts[i] ? starts[i] - cycle : cycle >= ends[i] ? cycle - ends[i] : 0;
      if (distance < bestDistance) { best = i; bestDistance = distance; }
    }
    return best;
  }

  // Decodes the blob once into typed arrays per tile; kernels are decoded on first use,
  // since only the (at most ~32) tiles shown in detail ever need them.
  function buildModel(data) {
    const tileCount = data.tiles;
    const phases = new Array(tileCount);
    let lastEnd = 0;
    for (let tile = 0; tile < tileCount; tile++) {
      const flat = data.phases[tile] || [];
      const count = Math.floor(flat.length / 3);
      const starts = new Float64Array(count), ends = new Float64Array(count), kinds = new Uint8Array(count);
      let cursor = 0;
      for (let i = 0; i < count; i++) {
        kinds[i] = Math.min(flat[3 * i], 3);
        starts[i] = cursor + flat[3 * i + 1];
        ends[i] = starts[i] + flat[3 * i + 2];
        cursor = ends[i];
      }
      if (count) lastEnd = Math.max(lastEnd, ends[count - 1]);
      phases[tile] = { starts, ends, kinds };
    }
    const kernelCache = new Map();
    function kernelsOf(tile) {
      let lanes = kernelCache.get(tile);
      if (lanes) return lanes;
      const flat = data.kernels[tile] || [];
      const count = Math.floor(flat.length / 4);
      const perWorker = new Array(data.workers).fill(0);
      for (let i = 0; i < count; i++) perWorker[flat[4 * i]]++;
      lanes = perWorker.map((n) => ({ starts: new Float64Array(n), ends: new Float64Array(n), names: new Uint32Array(n), length: 0 }));
      let start = 0;
      for (let i = 0; i < count; i++) {
        const lane = lanes[flat[4 * i]];
        start += flat[4 * i + 2];
        lane.starts[lane.length] = start;
        lane.ends[lane.length] = start + flat[4 * i + 3];
        lane.names[lane.length] = flat[4 * i + 1];
        lane.length++;
      }
      kernelCache.set(tile, lanes);
      return lanes;
    }
    return {
      data, tileCount, phases, kernelsOf,
      workers: data.workers,
      endCycle: Math.max(1, data.total_cycles, lastEnd),
      colours: data.phase_colours,
      kinds: data.phase_kinds,
      micros: (cycles) => (cycles / Math.max(1, data.clock_hz) * 1e6).toFixed(3) + " µs",
    };
  }

  function niceStep(rough) {
    const power = Math.pow(10, Math.floor(Math.log10(Math.max(rough, 1e-9))));
    for (const m of [1, 2, 5, 10]) if (m * power >= rough) return m * power;
    return 10 * power;
  }
  function tickLabel(value, step) {
    const scaled = (unit, suffix) => {
      const decimals = step / unit >= 1 ? 0 : Math.ceil(-Math.log10(step / unit) - 1e-9);
      return (value / unit).toFixed(decimals) + suffix;
    };
    if (value === 0) return "0";
    if (step >= 1e6) return scaled(1e6, "M");
    if (step >= 1e3) return scaled(1e3, "k");
    return formatInt(value);
  }

  function createTimeline(model) {
    const canvas = document.getElementById("timeline-canvas");
    const wrap = document.getElementById("timeline-wrap");
    const tooltip = document.getElementById("timeline-tooltip");
    const readout = document.getElementById("view-readout");
    const tileFrom = document.getElementById("tile-from");
    const tileTo = document.getElementById("tile-to");
    const ctx = canvas.getContext("2d");
    const GUTTER = 78, AXIS = 26, PAD_RIGHT = 12, PAD_BOTTOM = 4;
    const DETAIL_TILES = 32;
    const data = model.data;
    const view = { t0: 0, t1: model.endCycle, r0: 0, rows: Math.max(1, model.tileCount) };
    let cssWidth = 0, cssHeight = 0;
    let accumulator = new Float32Array(0);
    let kindsRow = new Uint8Array(0);
    const textWidths = new Map();

    function plotArea() {
      return { x: GUTTER, y: AXIS, w: Math.max(16, Math.floor(cssWidth - GUTTER - PAD_RIGHT)), h: Math.max(16, cssHeight - AXIS - PAD_BOTTOM) };
    }
    function resize() {
      const ratio = window.devicePixelRatio || 1;
      cssWidth = wrap.clientWidth;
      cssHeight = canvas.clientHeight;
      const width = Math.round(cssWidth * ratio), height = Math.round(cssHeight * ratio);
      if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    }
    function clampView() {
      const full = model.endCycle;
      const width = clamp(view.t1 - view.t0, Math.min(8, full), full);
      view.t0 = clamp(view.t0, 0, full - width);
      view.t1 = view.t0 + width;
      view.rows = clamp(view.rows, 1, Math.max(1, model.tileCount));
      view.r0 = clamp(view.r0, 0, Math.max(0, model.tileCount - view.rows));
    }
    const isDetail = () => view.rows <= DETAIL_TILES + 1e-9 && model.tileCount > 0;
    // Inside one tile's row in detail mode: the phase band, then one lane per worker.
    function detailLayout(rowHeight) {
      const gap = rowHeight >= 14 ? 3 : 1;
      const usable = rowHeight - gap;
      if (!model.workers) return { phaseHeight: usable, laneHeight: 0, gap };
      const phaseHeight = clamp(usable * 0.3, 3, 26);
      return { phaseHeight, laneHeight: (usable - phaseHeight - 1) / model.workers, gap };
    }

    // For pixel columns 0..width, the phase kind covering most of the time of tiles
    // [fromTile, toTile), or IDLE when under 30% is covered. Cost is one pass over the visible
    // spans plus their widths in pixels, whatever the zoom.
    function rasterize(fromTile, toTile, width, scale) {
      const cells = width * 4;
      if (accumulator.length < cells) accumulator = new Float32Array(cells); else accumulator.fill(0, 0, cells);
      if (kindsRow.length < width) kindsRow = new Uint8Array(width);
      const t0 = view.t0, t1 = view.t1;
      for (let tile = fromTile; tile < toTile; tile++) {
        const track = model.phases[tile];
        const { starts, ends, kinds } = track;
        for (let i = firstEndAfter(ends, t0); i < starts.length; i++) {
          if (starts[i] >= t1) break;
          let x0 = (starts[i] - t0) * scale, x1 = (ends[i] - t0) * scale;
          if (x0 < 0) x0 = 0;
          if (x1 > width) x1 = width;
          if (x1 <= x0) continue;
          const kind = kinds[i], a = x0 | 0, b = x1 | 0;
          if (a === b) { accumulator[a * 4 + kind] += x1 - x0; continue; }
          accumulator[a * 4 + kind] += a + 1 - x0;
          for (let x = a + 1; x < b; x++) accumulator[x * 4 + kind] += 1;
          if (b < width) accumulator[b * 4 + kind] += x1 - b;
        }
      }
      const threshold = 0.3 * (toTile - fromTile);
      for (let x = 0; x < width; x++) {
        let best = IDLE, bestWeight = 0, sum = 0;
        for (let kind = 0; kind < 4; kind++) {
          const weight = accumulator[x * 4 + kind];
          sum += weight;
          if (weight > bestWeight) { bestWeight = weight; best = kind; }
        }
        kindsRow[x] = sum >= threshold ? best : IDLE;
      }
      return kindsRow;
    }
    function emitRuns(paths, kinds, width, x0, y, height) {
      for (let x = 0; x < width;) {
        const kind = kinds[x];
        let end = x + 1;
        while (end < width && kinds[end] === kind) end++;
        if (kind !== IDLE) paths[kind].rect(x0 + x, y, end - x, height);
        x = end;
      }
    }
    function fillPaths(paths, colours) {
      paths.forEach((path, index) => { ctx.fillStyle = colours[index % colours.length]; ctx.fill(path); });
    }

    // Many tiles: one raster line per tile, or per pixel row when tiles are thinner than 3 px.
    function drawDense(plot, rowHeight, scale) {
      const paths = [new Path2D(), new Path2D(), new Path2D(), new Path2D()];
      const width = plot.w;
      if (rowHeight >= 3) {
        const gap = rowHeight >= 7 ? 1 : 0;
        const first = Math.floor(view.r0), last = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows));
        for (let tile = first; tile < last; tile++) {
          const y0 = Math.round(plot.y + (tile - view.r0) * rowHeight);
          const y1 = Math.round(plot.y + (tile + 1 - view.r0) * rowHeight) - gap;
          if (y1 <= y0) continue;
          emitRuns(paths, rasterize(tile, tile + 1, width, scale), width, plot.x, y0, y1 - y0);
        }
      } else {
        let previousFrom = -1, previousTo = -1, kinds = null;
        for (let line = 0; line < Math.ceil(plot.h); line++) {
          const from = Math.floor(view.r0 + line / rowHeight);
          if (from >= model.tileCount) break;
          const to = Math.min(model.tileCount, Math.max(from + 1, Math.floor(view.r0 + (line + 1) / rowHeight)));
          if (from !== previousFrom || to !== previousTo) {
            kinds = rasterize(from, to, width, scale);
            previousFrom = from; previousTo = to;
          }
          emitRuns(paths, kinds, width, plot.x, plot.y + line, 1);
        }
      }
      fillPaths(paths, model.colours);
    }

    function textWidth(text, font) {
      const key = font + "|" + text;
      let width = textWidths.get(key);
      if (width === undefined) { ctx.font = font; width = ctx.measureText(text).width; textWidths.set(key, width); }
      return width;
    }

    // Few tiles: each tile gets its phase band and one lane per worker with kernel spans.
    function drawDetail(plot, rowHeight, scale) {
      const layout = detailLayout(rowHeight);
      const width = plot.w;
      const phasePaths = [new Path2D(), new Path2D(), new Path2D(), new Path2D()];
      const kernelPaths = KERNEL_COLOURS.map(() => new Path2D());
      const lanePath = new Path2D();
      const labels = [];
      const names = data.kernel_names;
      const first = Math.floor(view.r0), last = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows));
      for (let tile = first; tile < last; tile++) {
        const top = plot.y + (tile - view.r0) * rowHeight;
        const phaseTop = Math.round(top), phaseBottom = Math.round(top + layout.phaseHeight);
        emitRuns(phasePaths, rasterize(tile, tile + 1, width, scale), width, plot.x, phaseTop, Math.max(1, phaseBottom - phaseTop));
        if (!model.workers) continue;
        const lanes = model.kernelsOf(tile);
        for (let worker = 0; worker < model.workers; worker++) {
          const y = top + layout.phaseHeight + 1 + worker * layout.laneHeight;
          const height = Math.max(1, layout.laneHeight - (layout.laneHeight >= 6 ? 1 : 0));
          lanePath.rect(plot.x, y, width, height);
          const lane = lanes[worker];
          let lastPixel = -1;
          for (let i = firstEndAfter(lane.ends, view.t0); i < lane.length; i++) {
            if (lane.starts[i] >= view.t1) break;
            let x0 = Math.max(0, (lane.starts[i] - view.t0) * scale);
            let x1 = Math.min(width, (lane.ends[i] - view.t0) * scale);
            if (x1 - x0 < 1) {
              // Sub-pixel spans: draw one pixel per column, not one per span.
              if (Math.floor(x0) === lastPixel) continue;
              x0 = Math.floor(x0); x1 = x0 + 1;
            }
            lastPixel = Math.floor(x1 - 1e-6);
            const name = lane.names[i];
            kernelPaths[name % KERNEL_COLOURS.length].rect(plot.x + x0, y, x1 - x0, height);
            if (height >= 9 && x1 - x0 >= 28) labels.push([plot.x + x0, y, x1 - x0, height, name]);
          }
        }
      }
      fillPaths(phasePaths, model.colours);
      ctx.fillStyle = "#eef1f4";
      ctx.fill(lanePath);
      fillPaths(kernelPaths, KERNEL_COLOURS);
      ctx.fillStyle = "#1f2933";
      ctx.textBaseline = "middle";
      ctx.textAlign = "left";
      for (const [x, y, w, h, nameIndex] of labels) {
        const font = Math.min(12, Math.floor(h - 2)) + "px system-ui, sans-serif";
        let text = names[nameIndex];
        const full = textWidth(text, font);
        if (full + 8 > w) {
          const keep = Math.floor(text.length * (w - 14) / full);
          if (keep < 3) continue;
          text = text.slice(0, keep) + "…";
        }
        ctx.font = font;
        ctx.fillText(text, x + 4, y + h / 2 + 0.5);
      }
    }

    function drawMarker(plot, scale, cycle, label) {
      if (cycle <= view.t0 || cycle >= view.t1) return;
      const x = Math.round(plot.x + (cycle - view.t0) * scale) + 0.5;
      ctx.save();
      ctx.strokeStyle = "rgba(31, 41, 51, 0.75)";
      ctx.setLineDash([5, 4]);
      ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke();
      ctx.setLineDash([]);
      ctx.font = "11px system-ui, sans-serif";
      const width = ctx.measureText(label).width + 8;
      const left = x + 4 + width > plot.x + plot.w ? x - 4 - width : x + 4;
      ctx.fillStyle = "rgba(255, 255, 255, 0.9)";
      ctx.fillRect(left, plot.y + 4, width, 16);
      ctx.fillStyle = "#1f2933";
      ctx.textBaseline = "middle"; ctx.textAlign = "left";
      ctx.fillText(label, left + 4, plot.y + 12);
      ctx.restore();
    }

    function drawAxis(plot, scale) {
      const step = niceStep((view.t1 - view.t0) / Math.max(2, plot.w / 110));
      ctx.font = "11px system-ui, sans-serif";
      ctx.textBaseline = "alphabetic"; ctx.textAlign = "center";
      ctx.fillStyle = "#4a5561";
      const grid = new Path2D(), ticks = new Path2D();
      for (let cycle = Math.ceil(view.t0 / step) * step; cycle <= view.t1; cycle += step) {
        const x = Math.round(plot.x + (cycle - view.t0) * scale) + 0.5;
        ticks.moveTo(x, plot.y - 5); ticks.lineTo(x, plot.y);
        grid.moveTo(x, plot.y); grid.lineTo(x, plot.y + plot.h);
        ctx.fillText(tickLabel(cycle, step), x, plot.y - 8);
      }
      ctx.strokeStyle = "#9aa5b1"; ctx.stroke(ticks);
      ctx.strokeStyle = "rgba(31, 41, 51, 0.08)"; ctx.stroke(grid);
      ctx.textAlign = "left"; ctx.fillStyle = "#65717e";
      ctx.fillText("cycle", 8, plot.y - 8);
      ctx.strokeStyle = "#c4cad2";
      ctx.strokeRect(plot.x - 0.5, plot.y - 0.5, plot.w + 1, plot.h + 1);
    }

    // Label every 1, 2, 5, 10, 20, … tiles, whichever keeps labels 15 px apart.
    const tileStep = (rowHeight) => Math.max(1, niceStep(15 / rowHeight));
    function drawGutter(plot, rowHeight, detail) {
      ctx.save();
      ctx.beginPath(); ctx.rect(0, plot.y, plot.x - 2, plot.h); ctx.clip();
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      const first = Math.floor(view.r0), last = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows));
      if (detail) {
        const layout = detailLayout(rowHeight);
        for (let tile = first; tile < last; tile++) {
          const top = plot.y + (tile - view.r0) * rowHeight;
          ctx.font = "600 12px system-ui, sans-serif"; ctx.fillStyle = "#1f2933";
          ctx.fillText("tile " + tile, plot.x - 8, top + Math.max(layout.phaseHeight / 2, 6));
          if (layout.laneHeight >= 8) {
            ctx.font = Math.min(11, Math.floor(layout.laneHeight)) + "px system-ui, sans-serif"; ctx.fillStyle = "#65717e";
            for (let worker = 0; worker < model.workers; worker++)
              ctx.fillText("w" + worker, plot.x - 8, top + layout.phaseHeight + 1 + (worker + 0.5) * layout.laneHeight);
          }
        }
      } else if (rowHeight >= 13) {
        ctx.font = "12px system-ui, sans-serif"; ctx.fillStyle = "#1f2933";
        for (let tile = first; tile < last; tile++)
          ctx.fillText("tile " + tile, plot.x - 8, plot.y + (tile - view.r0 + 0.5) * rowHeight);
      } else {
        const step = tileStep(rowHeight);
        ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#4a5561";
        ctx.strokeStyle = "#9aa5b1";
        for (let tile = Math.ceil(view.r0 / step) * step; tile < view.r0 + view.rows; tile += step) {
          const y = Math.round(plot.y + (tile - view.r0 + 0.5) * rowHeight) + 0.5;
          ctx.beginPath(); ctx.moveTo(plot.x - 5, y); ctx.lineTo(plot.x, y); ctx.stroke();
          ctx.fillText(String(tile), plot.x - 8, y);
        }
      }
      ctx.restore();
      ctx.save();
      ctx.translate(12, plot.y + plot.h / 2); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#65717e";
      ctx.fillText("tile", 0, 0);
      ctx.restore();
    }

    function updateControls(detail) {
      const firstTile = Math.floor(view.r0), lastTile = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows)) - 1;
      if (document.activeElement !== tileFrom && document.activeElement !== tileTo) {
        tileFrom.value = firstTile; tileTo.value = lastTile;
      }
      writeHash(firstTile, lastTile);
      readout.textContent = "cycles " + formatInt(view.t0) + " – " + formatInt(view.t1) +
        " (" + model.micros(view.t0) + " – " + model.micros(view.t1) + ") · tiles " + firstTile + "–" + lastTile +
        " (" + (lastTile - firstTile + 1) + " shown) · " +
        (detail ? (model.workers ? "worker kernels shown" : "no kernel spans recorded") : "zoom to ≤ " + DETAIL_TILES + " tiles to see worker kernels");
    }

    // The view lives in the URL fragment (#tiles=A-B&cycles=C-D), so a view can be reloaded,
    // shared, or opened directly by a headless browser.
    function readHash() {
      const params = new URLSearchParams(location.hash.slice(1));
      const tiles = /^(\d+)-(\d+)$/.exec(params.get("tiles") || "");
      if (tiles) {
        const a = Number(tiles[1]), b = Number(tiles[2]);
        view.r0 = Math.min(a, b); view.rows = Math.abs(b - a) + 1;
      }
      const cycles = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(params.get("cycles") || "");
      if (cycles && Number(cycles[2]) > Number(cycles[1])) { view.t0 = Number(cycles[1]); view.t1 = Number(cycles[2]); }
    }
    function writeHash(firstTile, lastTile) {
      const full = view.t0 <= 0 && view.t1 >= model.endCycle && view.rows >= model.tileCount;
      const hash = full ? "" : "#tiles=" + firstTile + "-" + lastTile + "&cycles=" + Math.floor(view.t0) + "-" + Math.ceil(view.t1);
      if (hash === location.hash) return;
      try { history.replaceState(null, "", hash || location.pathname + location.search); } catch (error) { /* a sandboxed page may not rewrite its URL */ }
    }

    function draw() {
      resize();
      clampView();
      const plot = plotArea();
      ctx.clearRect(0, 0, cssWidth, cssHeight);
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(plot.x, plot.y, plot.w, plot.h);
      if (model.tileCount === 0) {
        ctx.fillStyle = "#65717e"; ctx.font = "14px system-ui, sans-serif";
        ctx.fillText("This profile has no tiles.", plot.x + 12, plot.y + 24);
        readout.textContent = "";
        return;
      }
      const rowHeight = plot.h / view.rows;
      const scale = plot.w / (view.t1 - view.t0);
      const detail = isDetail();
      ctx.save();
      ctx.beginPath(); ctx.rect(plot.x, plot.y, plot.w, plot.h); ctx.clip();
      if (detail) drawDetail(plot, rowHeight, scale); else drawDense(plot, rowHeight, scale);
      if (data.startup_cycles > 0) drawMarker(plot, scale, data.startup_cycles, "start-up ends");
      if (data.cropped_cycles > 0) drawMarker(plot, scale, data.startup_cycles + data.cropped_cycles, "cropped window ends");
      ctx.restore();
      drawAxis(plot, scale);
      drawGutter(plot, rowHeight, detail);
      updateControls(detail);
    }
    let drawPending = false;
    function requestDraw() {
      if (drawPending) return;
      drawPending = true;
      const run = () => { if (drawPending) { drawPending = false; draw(); } };
      requestAnimationFrame(run);
      // Hidden and headless pages may hold animation frames back; draw anyway.
      setTimeout(run, 100);
    }

    function hitTest(mouseX, mouseY) {
      const plot = plotArea();
      if (mouseX < plot.x || mouseX >= plot.x + plot.w || mouseY < plot.y || mouseY >= plot.y + plot.h) return null;
      const rowHeight = plot.h / view.rows;
      const tileF = view.r0 + (mouseY - plot.y) / rowHeight;
      const tile = Math.floor(tileF);
      if (tile < 0 || tile >= model.tileCount) return null;
      const scale = plot.w / (view.t1 - view.t0);
      const cycle = view.t0 + (mouseX - plot.x) / scale;
      const tolerance = 2 / scale;
      if (isDetail() && model.workers) {
        const layout = detailLayout(rowHeight);
        const local = (tileF - tile) * rowHeight - layout.phaseHeight - 1;
        if (local >= 0) {
          const worker = Math.floor(local / layout.laneHeight);
          // Below the last lane is the gap before the next tile: report the phase instead.
          if (worker < model.workers) {
            const lane = model.kernelsOf(tile)[worker];
            const i = findSpan(lane.starts, lane.ends, cycle, tolerance);
            if (i < 0) return { tile, cycle, worker, kind: "idle" };
            return { tile, cycle, worker, kind: "kernel", name: data.kernel_names[lane.names[i]], start: lane.starts[i], end: lane.ends[i] };
          }
        }
      }
      const track = model.phases[tile];
      const i = findSpan(track.starts, track.ends, cycle, tolerance);
      if (i < 0) return { tile, cycle, kind: "idle" };
      return { tile, cycle, kind: "phase", phase: model.kinds[track.kinds[i]], start: track.starts[i], end: track.ends[i] };
    }
    function tileFacts(tile) {
      const facts = [];
      if (data.bytes_sent[tile] || data.bytes_received[tile])
        facts.push("exchange: " + formatBytes(data.bytes_sent[tile]) + " sent, " + formatBytes(data.bytes_received[tile]) + " received");
      if (data.memory_capacity[tile])
        facts.push("SRAM: " + formatBytes(data.memory_used[tile]) + " used of " + formatBytes(data.memory_capacity[tile]));
      return facts.length ? "\n" + facts.join("\n") : "";
    }
    function describe(hit) {
      const span = (start, end) => "\ncycles " + formatInt(start) + " – " + formatInt(end) +
        "\n" + formatInt(end - start) + " cycles · " + model.micros(end - start);
      if (hit.kind === "phase") return "<b>tile " + hit.tile + " · " + hit.phase + "</b>" + span(hit.start, hit.end) + tileFacts(hit.tile);
      if (hit.kind === "kernel") return "<b>tile " + hit.tile + " · worker " + hit.worker + "</b>\nkernel " + escapeHtml(hit.name) + span(hit.start, hit.end);
      const who = hit.worker === undefined ? "" : " · worker " + hit.worker;
      return "<b>tile " + hit.tile + who + "</b>\nidle at cycle " + formatInt(hit.cycle) + tileFacts(hit.tile);
    }
    function placeTooltip(box, container, x, y) {
      const width = box.offsetWidth, height = box.offsetHeight;
      const left = x + 16 + width > container.clientWidth ? x - 16 - width : x + 16;
      const top = y + 16 + height > container.clientHeight ? y - 12 - height : y + 16;
      box.style.left = Math.max(0, left) + "px";
      box.style.top = Math.max(0, top) + "px";
    }

    let drag = null;
    function mousePosition(event) {
      const rect = canvas.getBoundingClientRect();
      return [event.clientX - rect.left, event.clientY - rect.top];
    }
    canvas.addEventListener("mousedown", (event) => {
      if (event.button !== 0) return;
      drag = { x: event.clientX, y: event.clientY, t0: view.t0, t1: view.t1, r0: view.r0 };
      canvas.classList.add("dragging");
      tooltip.hidden = true;
      event.preventDefault();
    });
    window.addEventListener("mousemove", (event) => {
      if (!drag) return;
      const plot = plotArea();
      const width = drag.t1 - drag.t0;
      view.t0 = drag.t0 - (event.clientX - drag.x) * width / plot.w;
      view.t1 = view.t0 + width;
      view.r0 = drag.r0 - (event.clientY - drag.y) * view.rows / plot.h;
      requestDraw();
    });
    window.addEventListener("mouseup", () => { drag = null; canvas.classList.remove("dragging"); });
    canvas.addEventListener("mousemove", (event) => {
      if (drag) return;
      const [x, y] = mousePosition(event);
      const hit = hitTest(x, y);
      if (!hit) { tooltip.hidden = true; return; }
      tooltip.innerHTML = describe(hit);
      tooltip.hidden = false;
      placeTooltip(tooltip, wrap, x, y);
    });
    canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
    canvas.addEventListener("wheel", (event) => {
      event.preventDefault();
      const plot = plotArea();
      const [x, y] = mousePosition(event);
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? plot.h : 1;
      const dx = event.deltaX * unit, dy = event.deltaY * unit;
      if (event.shiftKey || event.altKey || x < plot.x) {
        // Some browsers turn Shift+wheel into horizontal scrolling; take whichever moved.
        const factor = Math.exp((dy || dx) * 0.0015);
        const fraction = clamp((y - plot.y) / plot.h, 0, 1);
        const at = view.r0 + fraction * view.rows;
        view.rows = clamp(view.rows * factor, 1, model.tileCount);
        view.r0 = at - fraction * view.rows;
      } else if (Math.abs(dx) > Math.abs(dy)) {
        const shift = dx * (view.t1 - view.t0) / plot.w;
        view.t0 += shift; view.t1 += shift;
      } else {
        const factor = Math.exp(dy * 0.0015);
        const fraction = clamp((x - plot.x) / plot.w, 0, 1);
        const at = view.t0 + fraction * (view.t1 - view.t0);
        const width = (view.t1 - view.t0) * factor;
        view.t0 = at - fraction * width;
        view.t1 = view.t0 + width;
      }
      tooltip.hidden = true;
      requestDraw();
    }, { passive: false });
    canvas.addEventListener("dblclick", (event) => {
      const plot = plotArea();
      const [, y] = mousePosition(event);
      const tile = Math.floor(view.r0 + (y - plot.y) / (plot.h / view.rows));
      focusTile(tile, view.rows > 8 ? 8 : 1);
    });

    function focusTile(tile, count) {
      view.rows = clamp(count || 8, 1, model.tileCount);
      // A whole first tile, so the range reads "8 shown", not a sliver of a ninth.
      view.r0 = Math.floor(tile - (view.rows - 1) / 2);
      requestDraw();
    }
    function reset() {
      view.t0 = 0; view.t1 = model.endCycle; view.r0 = 0; view.rows = Math.max(1, model.tileCount);
      requestDraw();
    }
    function applyTileRange() {
      const from = Number(tileFrom.value), to = Number(tileTo.value);
      if (!Number.isFinite(from) || !Number.isFinite(to)) return;
      const low = clamp(Math.min(from, to), 0, model.tileCount - 1), high = clamp(Math.max(from, to), 0, model.tileCount - 1);
      view.r0 = low; view.rows = high - low + 1;
      tileFrom.blur(); tileTo.blur();
      requestDraw();
    }
    document.getElementById("reset-view").addEventListener("click", reset);
    document.getElementById("tile-apply").addEventListener("click", applyTileRange);
    for (const input of [tileFrom, tileTo])
      input.addEventListener("keydown", (event) => { if (event.key === "Enter") applyTileRange(); });
    const cropButton = document.getElementById("crop-view");
    if (data.cropped_cycles > 0) {
      cropButton.addEventListener("click", () => {
        view.t0 = data.startup_cycles; view.t1 = data.startup_cycles + data.cropped_cycles;
        requestDraw();
      });
    } else {
      cropButton.disabled = true;
    }
    window.addEventListener("resize", requestDraw);
    window.addEventListener("hashchange", () => { readHash(); requestDraw(); });
    // When loading the image dominates (a real model's weights over the host link), open on the
    // run itself; "Reset" shows everything.
    if (!location.hash && data.cropped_cycles > 0 && data.startup_cycles > data.cropped_cycles) {
      view.t0 = data.startup_cycles; view.t1 = data.startup_cycles + data.cropped_cycles;
    }
    readHash();
    draw();
    return { focusTile };
  }

  // Every tile's SRAM use on one strip: per pixel column, the fullest of the tiles it covers.
  function createMemoryStrip(model, timeline) {
    const canvas = document.getElementById("memory-strip");
    const wrap = document.getElementById("memory-strip-wrap");
    const tooltip = document.getElementById("memory-tooltip");
    const ctx = canvas.getContext("2d");
    const data = model.data;
    const PAD_LEFT = 78, PAD_RIGHT = 12, TOP = 8, BOTTOM = 18;
    const fraction = (tile) => data.memory_capacity[tile] ? data.memory_used[tile] / data.memory_capacity[tile] : 0;
    function geometry() {
      return { x: PAD_LEFT, y: TOP, w: Math.max(16, wrap.clientWidth - PAD_LEFT - PAD_RIGHT), h: canvas.clientHeight - TOP - BOTTOM };
    }
    function draw() {
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.round(wrap.clientWidth * ratio);
      canvas.height = Math.round(canvas.clientHeight * ratio);
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const g = geometry();
      ctx.clearRect(0, 0, wrap.clientWidth, canvas.clientHeight);
      ctx.fillStyle = "#ffffff"; ctx.fillRect(g.x, g.y, g.w, g.h);
      const count = model.tileCount;
      if (!count) return;
      const normal = new Path2D(), full = new Path2D();
      const columns = Math.min(Math.floor(g.w), count);
      const columnWidth = g.w / columns;
      for (let column = 0; column < columns; column++) {
        const from = Math.floor(column * count / columns), to = Math.max(from + 1, Math.floor((column + 1) * count / columns));
        let most = 0;
        for (let tile = from; tile < to; tile++) most = Math.max(most, fraction(tile));
        if (most <= 0) continue;
        const height = Math.max(1, most * g.h);
        (most > 0.9 ? full : normal).rect(g.x + column * columnWidth, g.y + g.h - height, Math.max(1, columnWidth - (columnWidth >= 4 ? 1 : 0)), height);
      }
      ctx.fillStyle = "#4c78a8"; ctx.fill(normal);
      ctx.fillStyle = "#e45756"; ctx.fill(full);
      ctx.strokeStyle = "#c4cad2"; ctx.strokeRect(g.x - 0.5, g.y - 0.5, g.w + 1, g.h + 1);
      ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#4a5561";
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      ctx.fillText("100%", g.x - 6, g.y + 4);
      ctx.fillText("0%", g.x - 6, g.y + g.h - 2);
      ctx.textBaseline = "top";
      ctx.textAlign = "left"; ctx.fillText("tile 0", g.x, g.y + g.h + 3);
      ctx.textAlign = "right"; ctx.fillText("tile " + (count - 1), g.x + g.w, g.y + g.h + 3);
    }
    function tileAt(x) {
      const g = geometry();
      if (x < g.x || x >= g.x + g.w) return -1;
      return clamp(Math.floor((x - g.x) / g.w * model.tileCount), 0, model.tileCount - 1);
    }
    canvas.addEventListener("mousemove", (event) => {
      const rect = canvas.getBoundingClientRect();
      const x = event.clientX - rect.left, y = event.clientY - rect.top;
      const tile = tileAt(x);
      if (tile < 0) { tooltip.hidden = true; return; }
      const used = data.memory_used[tile], capacity = data.memory_capacity[tile];
      tooltip.innerHTML = "<b>tile " + tile + "</b>\n" + formatBytes(used) + " used of " + formatBytes(capacity) +
        " (" + (capacity ? (100 * used / capacity).toFixed(1) : "0.0") + "%)\n" + formatBytes(capacity - used) + " free";
      tooltip.hidden = false;
      const width = tooltip.offsetWidth;
      tooltip.style.left = (x + 16 + width > wrap.clientWidth ? x - 16 - width : x + 16) + "px";
      tooltip.style.top = "4px";
    });
    canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
    canvas.addEventListener("click", (event) => {
      const tile = tileAt(event.clientX - canvas.getBoundingClientRect().left);
      if (tile < 0) return;
      timeline.focusTile(tile, 8);
      document.getElementById("timeline").scrollIntoView({ behavior: "smooth" });
    });
    window.addEventListener("resize", draw);
    draw();
  }

  function main() {
    const data = JSON.parse(document.getElementById("profile-data").textContent);
    const model = buildModel(data);
    const timeline = createTimeline(model);
    createMemoryStrip(model, timeline);
    for (const element of document.querySelectorAll("[data-tile]")) {
      element.addEventListener("click", () => {
        timeline.focusTile(Number(element.dataset.tile), 8);
        document.getElementById("timeline").scrollIntoView({ behavior: "smooth" });
      });
    }
  }

  try {
    const started = performance.now();
    main();
    document.body.dataset.renderMs = String(Math.round(performance.now() - started));
    if (!errorsBox.textContent) document.body.dataset.rendered = "ok";
  } catch (error) {
    reportError(error && error.stack ? String(error.stack) : String(error));
  }
})();
"##;
