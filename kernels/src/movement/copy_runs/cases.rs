//! The checker's cases of `copy_runs`: rows → panels, heads → rows, column slices, padding,
//! zero fills, long runs, progressions, random reorders, and the constructor's own templates.

use super::constructor::compiler_case;
use super::table::{CopyRunsSpec, Granule, Run, Table};
use super::{make_case, Place, PACE, STRIDED, UNIFORM, W8};
use crate::case::{Case, Region};
use tessera_isa::rng::Rng;

const SS: (Region, Region) = (Region::Standard, Region::Standard);
const II: (Region, Region) = (Region::Interleaved, Region::Interleaved);
const SI: (Region, Region) = (Region::Standard, Region::Interleaved);
const IS: (Region, Region) = (Region::Interleaved, Region::Standard);

fn place(regions: (Region, Region), table: Region, distinct: bool) -> Place {
    Place {
        src: regions.0,
        dst: regions.1,
        table,
        distinct,
    }
}

fn random_bytes(rng: &mut Rng, n: u64) -> Vec<u8> {
    (0..n).map(|_| rng.next_u32() as u8).collect()
}

/// A case with random source bytes; the flags are the given granule and PACE as asked,
/// plus UNIFORM when the table is uniform and `uniform` allows it.
fn case(rng: &mut Rng, name: &str, mut table: Table, place: Place, uniform: bool) -> Case {
    if uniform && Table::uniform(&table.runs) {
        table.flags |= UNIFORM;
    }
    assert!(
        table.flags & PACE == 0 || place.distinct,
        "PACE needs element slots"
    );
    let src = random_bytes(rng, table.src_extent());
    make_case(name.into(), &table, src, place)
}

/// The same table with STRIDED (it must be a progression, with PACE within the fields).
fn strided(rng: &mut Rng, name: &str, mut table: Table, place: Place) -> Case {
    let (ds, dd) = Table::progression(&table.runs)
        .expect("the tables passed to `strided` are written as progressions");
    assert!(table.flags & PACE == 0 || Table::pace_strides_fit(ds, dd));
    table.flags |= STRIDED | UNIFORM;
    case(rng, name, table, place, true)
}

/// FP8 rows (row stride `stride`) to AMP-left panels: run kb of row m goes to (kb·M + m)·32.
fn panels(rows: u32, kbs: u32, stride: u32, flags: u32) -> Table {
    Table {
        runs: Run::rows_to_panels(rows, kbs),
        outer: rows,
        src_stride: stride,
        dst_stride: 32,
        flags,
    }
}

/// [H][T][D] (element bytes e) to [T][H·D]: O = T, R = H.
fn heads_to_rows(h: u32, t: u32, d_bytes: u32, flags: u32) -> Table {
    Table {
        runs: (0..h)
            .map(|i| Run::copy(i * t * d_bytes, i * d_bytes, d_bytes))
            .collect(),
        outer: t,
        src_stride: d_bytes,
        dst_stride: h * d_bytes,
        flags,
    }
}

/// A column slice: `width` bytes at `col` of every row.
fn slice(rows: u32, stride: u32, col: u32, width: u32, flags: u32) -> Table {
    Table {
        runs: vec![Run::copy(col, 0, width)],
        outer: rows,
        src_stride: stride,
        dst_stride: width,
        flags,
    }
}

/// Rows of `width` bytes padded to `padded` (zeros before and after the data).
fn padded(rows: u32, width: u32, before: u32, padded: u32, flags: u32) -> Table {
    let mut runs = Vec::new();
    if before > 0 {
        runs.push(Run::zeros(0, before));
    }
    runs.push(Run::copy(0, before, width));
    if padded > before + width {
        runs.push(Run::zeros(before + width, padded - before - width));
    }
    Table {
        runs,
        outer: rows,
        src_stride: width,
        dst_stride: padded,
        flags,
    }
}

/// A random table: each outer iteration's dst is `R` runs of random lengths (in granules,
/// `1..=max_granules`) tiling `dst_stride` bytes in a random order; a run is a zero run with
/// probability 1/`zero_every` (0: never); src offsets anywhere in a window of the source.
fn random_table(
    rng: &mut Rng,
    r: u32,
    outer: u32,
    g: u32,
    max_granules: u64,
    zero_every: u64,
    flags: u32,
) -> Table {
    let lengths: Vec<u32> = (0..r)
        .map(|_| g * rng.range(1, max_granules) as u32)
        .collect();
    let total: u32 = lengths.iter().sum();
    let mut order: Vec<usize> = (0..r as usize).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.range(0, i as u64) as usize);
    }
    let mut dst = vec![0u32; r as usize];
    let mut at = 0;
    for &i in &order {
        dst[i] = at;
        at += lengths[i];
    }
    let window = total + g * rng.range(0, 16) as u32;
    let runs = (0..r as usize)
        .map(|i| {
            if zero_every > 0 && rng.next_u64().is_multiple_of(zero_every) {
                Run::zeros(dst[i], lengths[i])
            } else {
                let start = g * rng.range(0, u64::from((window - lengths[i]) / g)) as u32;
                Run::copy(start, dst[i], lengths[i])
            }
        })
        .collect();
    Table {
        runs,
        outer,
        src_stride: g * rng.range(0, u64::from(window / g) + 2) as u32,
        dst_stride: total,
        flags,
    }
}

pub(super) fn default_cases() -> Vec<Case> {
    let mut rng = Rng::new(0xc0b1);
    let mut cases = Vec::new();
    let r = &mut rng;
    // Rows -> panels, the headline shape first (46 rows x 1152 bytes, 36 runs of 32).
    for (rows, kbs, extra, regions, flags, distinct) in [
        (46u32, 36u32, 0u32, SS, W8, false),
        (46, 36, 0, SI, W8 | PACE, true),
        (46, 36, 0, II, W8 | PACE, true),
        (1, 1, 0, SS, W8, false),
        (5, 3, 8, II, W8, false),
        (7, 2, 16, IS, W8 | PACE, true),
        (38, 4, 0, SS, W8 | PACE, true),
        (13, 5, 24, SI, W8, false),
        (2, 36, 0, II, W8, false),
        (6, 1, 0, SS, W8 | PACE, true),
    ] {
        let t = panels(rows, kbs, kbs * 32 + extra, flags);
        cases.push(case(
            r,
            "panels",
            t.clone(),
            place(regions, Region::Standard, distinct),
            true,
        ));
        if kbs >= 2 {
            cases.push(strided(
                r,
                "panels",
                t.clone(),
                place(regions, Region::Standard, distinct),
            ));
        }
        if rows * kbs < 100 {
            // The same table without the UNIFORM promise: the general loops.
            cases.push(case(
                r,
                "panels",
                t,
                place(regions, Region::Interleaved, distinct),
                false,
            ));
        }
    }
    // Head-major -> row-major (f16 heads of 72, FP8 heads of 72, small heads).
    for (h, t, d, regions, flags, distinct) in [
        (16u32, 5u32, 144u32, SS, W8, false),
        (16, 5, 144, II, W8 | PACE, true),
        (16, 3, 72, IS, W8, false),
        (3, 7, 8, SS, W8 | PACE, true),
        (4, 9, 12, SI, 0, false),
        (2, 1, 4, SS, 0, false),
    ] {
        let tab = heads_to_rows(h, t, d, flags);
        cases.push(case(
            r,
            "heads to rows",
            tab.clone(),
            place(regions, Region::Standard, distinct),
            true,
        ));
        cases.push(case(
            r,
            "heads to rows",
            tab.clone(),
            place(regions, Region::Standard, distinct),
            false,
        ));
        cases.push(strided(
            r,
            "heads to rows",
            tab,
            place(regions, Region::Standard, distinct),
        ));
    }
    // Progressions: reversed (negative strides), broadcast (ds = 0), strides beyond the
    // PACE fields (plain only), 4-byte granules, segments of one run.
    // dst_stride 0: the outer iterations follow each other in dst.
    for (rr, outer, s0, ds, d0, dd, bytes, src_stride, dst_stride, flags, regions) in [
        (
            8u32,
            3u32,
            7 * 48,
            -48i64,
            0u32,
            48i64,
            48u32,
            400u32,
            0u32,
            W8 | PACE,
            SI,
        ),
        (8, 3, 7 * 48, -48, 0, 48, 48, 400, 0, W8, SS),
        (5, 4, 16, 0, 4 * 24, -24, 24, 24, 0, W8 | PACE, II),
        (5, 4, 16, 0, 4 * 24, -24, 24, 24, 0, 0, SS),
        (6, 2, 0, 8192, 0, 16, 16, 8, 0, W8, SS),
        (6, 2, 0, 4088, 0, 16, 16, 8, 0, W8 | PACE, IS),
        (12, 7, 4, 20, 0, 12, 12, 300, 0, 0, II),
        (3, 30, 0, 8, 0, 240, 8, 24, 8, W8 | PACE, SI),
        (3, 30, 0, 8, 0, 240, 8, 24, 8, W8, II),
        (2, 9, 0, 64, 0, 64, 64, 128, 0, W8, SS),
        (40, 2, 0, 8, 0, 16, 8, 320, 8, W8 | PACE, SI),
        (40, 2, 0, 8, 0, 16, 8, 320, 8, 0, SS),
    ] {
        let runs = (0..rr as i64)
            .map(|i| {
                Run::copy(
                    (i64::from(s0) + i * ds) as u32,
                    (i64::from(d0) + i * dd) as u32,
                    bytes,
                )
            })
            .collect();
        // dst of outer iteration o starts after the runs of o - 1.
        let span = (0..rr as i64)
            .map(|i| i64::from(d0) + i * dd + i64::from(bytes))
            .max()
            .unwrap_or(0) as u32;
        let tab = Table {
            runs,
            outer,
            src_stride,
            dst_stride: if dst_stride == 0 { span } else { dst_stride },
            flags,
        };
        let distinct = flags & PACE != 0;
        cases.push(strided(
            r,
            "progression",
            tab.clone(),
            place(regions, Region::Standard, distinct),
        ));
        cases.push(case(
            r,
            "progression",
            tab,
            place(regions, Region::Interleaved, distinct),
            true,
        ));
    }
    // Column slices (R = 1): the single-entry loops, and the general ones.
    for (rows, stride, col, width, regions, flags, distinct) in [
        (19u32, 2304u32, 1152u32, 144u32, SS, W8, false),
        (19, 2304, 1152, 144, SI, W8 | PACE, true),
        (1, 64, 8, 8, SS, W8, false),
        (1, 64, 8, 8, II, W8 | PACE, true),
        (7, 100, 12, 36, SS, 0, false),
        (7, 100, 4, 4, IS, 0, false),
        (29, 1152, 0, 1152, II, W8 | PACE, true),
        (3, 48, 16, 24, SS, W8, false),
        (12, 20, 4, 16, SI, 0, false),
    ] {
        let tab = slice(rows, stride, col, width, flags);
        cases.push(case(
            r,
            "column slice",
            tab.clone(),
            place(regions, Region::Standard, distinct),
            true,
        ));
        cases.push(case(
            r,
            "column slice",
            tab,
            place(regions, Region::Standard, distinct),
            false,
        ));
    }
    // Padding: zero runs before and after the data.
    for (rows, width, before, pad, regions, flags, distinct) in [
        (9u32, 144u32, 0u32, 160u32, SS, W8, false),
        (9, 144, 16, 160, II, W8 | PACE, true),
        (5, 80, 8, 96, SI, W8, false),
        (5, 36, 4, 48, SS, 0, false),
        (1, 8, 8, 24, IS, W8 | PACE, true),
        (14, 12, 0, 16, SS, 0, false),
    ] {
        let tab = padded(rows, width, before, pad, flags);
        cases.push(case(
            r,
            "padding",
            tab,
            place(regions, Region::Standard, distinct),
            true,
        ));
    }
    // Pure zero fill.
    for (flags, regions) in [(W8, SS), (0, II), (W8 | PACE, SI)] {
        let tab = Table {
            runs: vec![Run::zeros(0, 40), Run::zeros(40, 8)],
            outer: 11,
            src_stride: 0,
            dst_stride: 48,
            flags,
        };
        let distinct = flags & PACE != 0;
        cases.push(case(
            r,
            "zero fill",
            tab,
            place(regions, Region::Standard, distinct),
            true,
        ));
    }
    // Long runs (one run per item, items fewer than workers, idle workers).
    for (bytes, outer, flags, regions, distinct) in [
        (8192u32, 3u32, W8, SS, false),
        (8192, 3, W8 | PACE, SI, true),
        (4096, 5, 0, II, false),
        (24, 1, W8, SS, false),
        (4, 1, 0, SS, false),
        (8, 2, W8 | PACE, II, true),
    ] {
        let tab = Table {
            runs: vec![Run::copy(0, 0, bytes)],
            outer,
            src_stride: bytes,
            dst_stride: bytes,
            flags,
        };
        cases.push(case(
            r,
            "long runs",
            tab.clone(),
            place(regions, Region::Standard, distinct),
            true,
        ));
        cases.push(case(
            r,
            "long runs",
            tab,
            place(regions, Region::Standard, distinct),
            false,
        ));
    }
    // Random reorders: every mode, with and without zero runs, short and long runs.
    for (i, (rr, outer, g, max_g, zeros, regions, pace)) in [
        (1u32, 17u32, 8u32, 6u64, 0u64, SS, false),
        (5, 1, 8, 3, 3, SS, false),
        (7, 4, 4, 9, 4, II, false),
        (12, 3, 8, 20, 5, SI, true),
        (30, 2, 8, 2, 0, II, true),
        (3, 40, 4, 2, 0, SS, false),
        (9, 9, 8, 40, 3, IS, true),
        (25, 1, 4, 5, 6, SS, false),
        (6, 13, 8, 1, 0, SS, false),
        (6, 13, 8, 1, 0, SI, true),
        (2, 31, 4, 7, 2, II, false),
        (17, 5, 8, 12, 0, II, true),
        (40, 6, 4, 3, 5, SS, false),
        (7, 600, 4, 1, 0, SS, false),
        (1000, 2, 8, 1, 7, SI, true),
    ]
    .into_iter()
    .enumerate()
    {
        let flags = (if g == 8 { W8 } else { 0 }) | if pace { PACE } else { 0 };
        let tab = random_table(r, rr, outer, g, max_g, zeros, flags);
        let table_region = if i % 2 == 0 {
            Region::Standard
        } else {
            Region::Interleaved
        };
        cases.push(case(
            r,
            "random reorder",
            tab.clone(),
            place(regions, table_region, pace),
            true,
        ));
        if Table::uniform(&tab.runs) {
            cases.push(case(
                r,
                "random reorder",
                tab,
                place(regions, table_region, pace),
                false,
            ));
        }
    }
    // Compiler cases (coalescing, balancing, the flag choice) with random source data.
    for spec in compiler_specs() {
        let mut c = compiler_case(&spec).expect("compiler_specs are all valid");
        let n = c.buffers[0].len() as u64;
        c.buffers[0].bytes = random_bytes(r, n);
        c.name = format!("{} {}", c.name, spec_label(&spec));
        cases.push(c);
    }
    cases
}

fn spec_label(spec: &CopyRunsSpec) -> String {
    format!(
        "(spec R={} O={}{})",
        spec.runs.len(),
        spec.outer,
        if spec.distinct { " distinct" } else { "" }
    )
}

/// Specs as the compiler writes them.
pub(super) fn compiler_specs() -> Vec<CopyRunsSpec> {
    let to_spec = |t: Table, granule, distinct| CopyRunsSpec {
        runs: t.runs,
        outer: t.outer,
        src_stride: t.src_stride,
        dst_stride: t.dst_stride,
        granule,
        distinct,
    };
    vec![
        to_spec(panels(46, 36, 1152, W8), Granule::Word8, true),
        to_spec(panels(46, 36, 1152, W8), Granule::Word8, false),
        // A contiguous copy written as 36 adjacent runs: coalesced into one, then cut.
        to_spec(
            Table {
                runs: (0..36).map(|i| Run::copy(32 * i, 32 * i, 32)).collect(),
                outer: 1,
                src_stride: 0,
                dst_stride: 0,
                flags: 0,
            },
            Granule::Word8,
            true,
        ),
        to_spec(slice(19, 2304, 1152, 144, W8), Granule::Word8, true),
        to_spec(heads_to_rows(16, 6, 144, W8), Granule::Word8, false),
        to_spec(padded(9, 36, 4, 48, 0), Granule::Word4, false),
        CopyRunsSpec {
            runs: vec![Run::copy(0, 0, 20_000)],
            outer: 1,
            src_stride: 0,
            dst_stride: 0,
            granule: Granule::Word4,
            distinct: false,
        },
    ]
}

pub(super) fn random_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let r = &mut rng;
    let g = if r.next_u32().is_multiple_of(2) { 8 } else { 4 };
    let pace = g == 8 && r.next_u32().is_multiple_of(2);
    let flags = (if g == 8 { W8 } else { 0 }) | if pace { PACE } else { 0 };
    let rr = r.range(1, 40) as u32;
    let max_g = *r.pick(&[1u64, 2, 4, 16, 64]);
    // At most ~48 KB of dst (and as much src), whatever the shape.
    let max_outer = (48_000 / (u64::from(rr) * max_g * u64::from(g))).clamp(1, 30);
    let outer = r.range(1, max_outer) as u32;
    let zeros = *r.pick(&[0u64, 0, 3, 8]);
    let regions = *r.pick(&[SS, II, SI, IS]);
    if rr >= 2 && r.next_u32().is_multiple_of(3) {
        // A progression: runs of one length L, src stride ds (any sign, or 0), dst either
        // interleaved across the outer iterations (dd = O L) or consecutive (dd = L).
        let bytes = g * r.range(1, max_g) as u32;
        let interleave = r.next_u32().is_multiple_of(2);
        let (dd, dst_stride) = if interleave {
            (outer * bytes, bytes)
        } else {
            (bytes, rr * bytes)
        };
        let ds = i64::from(g) * (r.range(0, 40) as i64 - 20);
        let s0 = if ds < 0 { (-ds) as u32 * (rr - 1) } else { 0 };
        let runs = (0..rr)
            .map(|i| Run::copy((i64::from(s0) + i64::from(i) * ds) as u32, i * dd, bytes))
            .collect();
        let tab = Table {
            runs,
            outer,
            src_stride: g * r.range(0, 64) as u32,
            dst_stride,
            flags,
        };
        let name = format!("random seed={seed} progression");
        let p = place(regions, Region::Standard, pace);
        return if pace && !Table::pace_strides_fit(ds, i64::from(dd)) {
            case(r, &name, tab, p, true)
        } else {
            strided(r, &name, tab, p)
        };
    }
    let tab = random_table(r, rr, outer, g, max_g, zeros, flags);
    let uniform = r.next_u32().is_multiple_of(2);
    case(
        r,
        &format!("random seed={seed}"),
        tab,
        place(regions, Region::Standard, pace),
        uniform,
    )
}
