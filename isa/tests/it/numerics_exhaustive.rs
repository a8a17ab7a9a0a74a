//! Exhaustive and property checks of `tessera_isa::numerics` against independent references: the ml_dtypes oracle tables and brute-force nearest-value search.
//!
//! The references here never call the module's rounding code. They enumerate the representable
//! values of the target format (from the format definition, cross-checked against the oracle
//! decode tables), pick the nearest one to the exact input by search, break ties towards the
//! code with an even last bit, and treat "nearest is the next power of two beyond max" as
//! overflow. That is the IEEE rule stated directly, so agreement is real evidence.

use proptest::prelude::*;
use tessera_isa::numerics::*;

const FORMATS: [Fp8Format; 2] = [Fp8Format::F143, Fp8Format::F152];

/// The FP8 oracle data lives in the repository's `testdata/fp8` (scripts/make_testdata.py).
const FP8_TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/fp8");

// ---------------------------------------------------------------------------------------------
// .npy reading (no dependency: the header is a small Python-dict literal)

/// Reads a C-order .npy file and returns (dtype descr, raw little-endian payload).
fn read_npy(name: &str) -> (String, Vec<u8>) {
    let path = format!("{FP8_TESTDATA}/{name}");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{path} is not an .npy file");
    let (header_len, header_start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
    };
    let header = std::str::from_utf8(&bytes[header_start..header_start + header_len]).unwrap();
    assert!(
        header.contains("'fortran_order': False"),
        "{path}: {header}"
    );
    let descr = header
        .split("'descr':")
        .nth(1)
        .and_then(|rest| rest.split('\'').nth(1))
        .expect("descr")
        .to_string();
    (descr, bytes[header_start + header_len..].to_vec())
}

fn oracle_decode(format: Fp8Format) -> Vec<f32> {
    let (descr, data) = read_npy(&format!("{}_decode.npy", format.name().to_lowercase()));
    assert_eq!(descr, "<f4");
    let table: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(table.len(), 256);
    table
}

fn oracle_conversion(format: Fp8Format, scale: i32, nanoo: bool) -> Vec<u8> {
    let name = format!(
        "f16_to_{}_fpscl{scale}_nanoo{}.npy",
        format.name().to_lowercase(),
        nanoo as u8
    );
    let (descr, data) = read_npy(&name);
    assert_eq!(descr, "|u1", "{name}");
    assert_eq!(data.len(), 65536, "{name}");
    data
}

// ---------------------------------------------------------------------------------------------
// Independent references

/// The value of an f16 pattern, via the `half` crate (independent of the module).
fn f16_value(h: u16) -> f64 {
    half::f16::from_bits(h).to_f64()
}

/// The non-negative values of a binary format in code order, plus one "virtual" value: the
/// next grid point beyond max (a power of two, whose code would have an even mantissa).
/// Rounding to the virtual value means overflow.
struct Grid {
    magnitudes: Vec<f64>,
}

impl Grid {
    /// From the FP8 format definition: sign | E exponent bits (bias b) | M mantissa bits; all
    /// exponent fields finite (FNUZ), subnormals at exponent field 0.
    fn fp8(format: Fp8Format) -> Grid {
        let (e_bits, m_bits, bias) = match format {
            Fp8Format::F143 => (4, 3, 8),
            Fp8Format::F152 => (5, 2, 16),
        };
        let mut magnitudes = Vec::new();
        for code in 0..128u32 {
            let e = (code >> m_bits) as i32;
            let m = (code & ((1 << m_bits) - 1)) as f64;
            let v = if e == 0 {
                m * 2f64.powi(1 - bias - m_bits)
            } else {
                (1.0 + m / (1 << m_bits) as f64) * 2f64.powi(e - bias)
            };
            magnitudes.push(v);
        }
        let max_exponent = (1 << e_bits) - 1 - bias;
        magnitudes.push(2f64.powi(max_exponent + 1));
        Grid { magnitudes }
    }

    /// f16: codes 0x0000..=0x7bff, then the virtual 2^16 (which IEEE calls infinity).
    fn f16() -> Grid {
        let mut magnitudes: Vec<f64> = (0..=0x7bffu16).map(f16_value).collect();
        magnitudes.push(65536.0);
        Grid { magnitudes }
    }

    /// Nearest code to a finite magnitude `a ≥ 0`, ties to the even code; `None` = overflow.
    fn nearest(&self, a: f64) -> Option<usize> {
        let virtual_code = self.magnitudes.len() - 1;
        let above = self.magnitudes.partition_point(|&m| m <= a);
        let chosen = if above == 0 {
            unreachable!("magnitudes start at 0")
        } else if above > virtual_code {
            virtual_code
        } else {
            let below = above - 1;
            let d_below = a - self.magnitudes[below];
            let d_above = self.magnitudes[above] - a;
            if d_below < d_above || (d_below == d_above && below % 2 == 0) {
                below
            } else {
                above
            }
        };
        (chosen != virtual_code).then_some(chosen)
    }
}

/// Reference f16 → FP8 for the exact finite value `v` (NaN/inf inputs are the caller's):
/// the code, or `None` on overflow.
fn reference_fp8(grid: &Grid, v: f64) -> Option<u8> {
    grid.nearest(v.abs()).map(|code| match code {
        0 => 0x00,
        c if v < 0.0 => 0x80 | c as u8,
        c => c as u8,
    })
}

/// Reference rounding of an exact f64 value to f16 bits (IEEE RNE, overflow → inf, NaN → the
/// canonical NaN, zero keeps the sign of `v`).
fn reference_f16(grid: &Grid, v: f64) -> u16 {
    if v.is_nan() {
        return F16_CANONICAL_NAN;
    }
    let sign = if v.is_sign_negative() { 0x8000 } else { 0 };
    if v.is_infinite() {
        return sign | 0x7c00;
    }
    match grid.nearest(v.abs()) {
        Some(code) => sign | code as u16,
        None => sign | 0x7c00,
    }
}

// ---------------------------------------------------------------------------------------------
// (a) the oracle tables, bit for bit

#[test]
fn grid_matches_the_oracle_decode_tables() {
    for format in FORMATS {
        let grid = Grid::fp8(format);
        let oracle = oracle_decode(format);
        for code in 0..128usize {
            assert_eq!(
                grid.magnitudes[code], oracle[code] as f64,
                "{format:?} {code:#x}"
            );
            if code != 0 {
                assert_eq!(-grid.magnitudes[code], oracle[code | 0x80] as f64);
            }
        }
        assert!(oracle[0x80].is_nan());
    }
}

#[test]
fn every_code_decodes_to_the_oracle_value() {
    for format in FORMATS {
        let table = oracle_decode(format);
        for code in 0..=255u8 {
            let ours = fp8_decode(code, format);
            let oracle = table[code as usize];
            if oracle.is_nan() {
                assert_eq!(code, FP8_NAN, "{format:?}");
                assert!(ours.is_nan(), "{format:?} code {code:#04x}");
            } else {
                assert_eq!(
                    ours.to_bits(),
                    oracle.to_bits(),
                    "{format:?} code {code:#04x}: {ours} vs oracle {oracle}"
                );
            }
        }
    }
}

#[test]
fn f16_to_fp8_matches_all_oracle_tables() {
    for format in FORMATS {
        for scale in [-4, 0, 4] {
            for nanoo in [false, true] {
                let oracle = oracle_conversion(format, scale, nanoo);
                let mismatches: Vec<String> = (0..=u16::MAX)
                    .filter_map(|h| {
                        let ours = f16_to_fp8(h, format, scale, nanoo);
                        let expected = oracle[h as usize];
                        (ours != expected).then(|| {
                            format!(
                                "h={h:#06x} ({}) ours={ours:#04x} oracle={expected:#04x}",
                                f16_value(h)
                            )
                        })
                    })
                    .collect();
                assert!(
                    mismatches.is_empty(),
                    "{format:?} scale {scale} nanoo {nanoo}: {} mismatches, first: {:?}",
                    mismatches.len(),
                    &mismatches[..mismatches.len().min(5)]
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (b) every scale, both formats, both NANOO settings, every f16 pattern, vs brute force

#[test]
fn f16_to_fp8_matches_brute_force_for_every_scale() {
    // Independent (format, scale) cases run on their own threads to keep the wall time low.
    let cases: Vec<(Fp8Format, i32)> = FORMATS
        .iter()
        .flat_map(|&f| (-32..=31).map(move |s| (f, s)))
        .collect();
    let workers = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .min(16);
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(workers))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for &(format, scale) in chunk {
                        let grid = Grid::fp8(format);
                        let max_code_signed = |v: f64| if v < 0.0 { 0xffu8 } else { 0x7f };
                        for h in 0..=u16::MAX {
                            let x = f16_value(h);
                            // f16 × 2^scale is exact in f64 (11 bits, exponent within ±60).
                            let v = x * 2f64.powi(scale);
                            let (expected_nan, expected_sat) = if !x.is_finite() {
                                (FP8_NAN, FP8_NAN)
                            } else {
                                match reference_fp8(&grid, v) {
                                    Some(code) => (code, code),
                                    None => (FP8_NAN, max_code_signed(v)),
                                }
                            };
                            for (nanoo, expected) in [(true, expected_nan), (false, expected_sat)] {
                                let ours = f16_to_fp8(h, format, scale, nanoo);
                                if ours != expected && failures.len() < 10 {
                                    failures.push(format!(
                                        "{format:?} scale {scale} nanoo {nanoo} h={h:#06x} ({x}): ours {ours:#04x}, reference {expected:#04x}"
                                    ));
                                }
                            }
                        }
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// (c) FP8 → f16 for all codes and scales, from the oracle decode table

#[test]
fn fp8_to_f16_matches_reference_for_every_code_and_scale() {
    let grid = Grid::f16();
    for format in FORMATS {
        let decode = oracle_decode(format);
        for scale in -32..=31 {
            for code in 0..=255u8 {
                let value = decode[code as usize] as f64 * 2f64.powi(scale);
                let expected = reference_f16(&grid, value);
                let ours = fp8_to_f16(code, format, scale);
                assert_eq!(
                    ours, expected,
                    "{format:?} code {code:#04x} scale {scale}: value {value}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (d) properties: f16 ops vs a single-rounding f64 reference; AMP vs exact sums

fn f16_grid() -> &'static Grid {
    static GRID: std::sync::OnceLock<Grid> = std::sync::OnceLock::new();
    GRID.get_or_init(Grid::f16)
}

/// Mixes uniformly random patterns with "interesting" ones (specials, extremes, near-ties).
fn f16_bits() -> impl Strategy<Value = u16> {
    prop_oneof![
        6 => any::<u16>(),
        1 => prop::sample::select(vec![
            0x0000u16, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x1000,
            0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe00,
        ]),
        // Operands with nearby exponents exercise rounding of sums at full precision.
        2 => (0x3000u16..0x4c00, any::<bool>()).prop_map(|(h, neg)| h | ((neg as u16) << 15)),
    ]
}

/// The module's f16 binary op result must be the exact result rounded once to f16.
fn check_f16_binary(a: u16, b: u16, ours: u16, exact: f64) -> Result<(), TestCaseError> {
    let expected = reference_f16(f16_grid(), exact);
    prop_assert_eq!(ours, expected, "a={:#06x} b={:#06x} exact={}", a, b, exact);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn f16_arithmetic_is_correctly_rounded(a in f16_bits(), b in f16_bits()) {
        let (x, y) = (f16_value(a), f16_value(b));
        // f16 sums and products are exact in f64 (≤ 41 and 22 significant bits).
        check_f16_binary(a, b, f16_add(a, b), x + y)?;
        check_f16_binary(a, b, f16_sub(a, b), x - y)?;
        check_f16_binary(a, b, f16_mul(a, b), x * y)?;
    }

    #[test]
    fn f16_max_min_and_compares(a in f16_bits(), b in f16_bits()) {
        let (x, y) = (f16_value(a), f16_value(b));
        let mask = |c: bool| if c { 0xffffu16 } else { 0 };
        prop_assert_eq!(f16_cmpeq(a, b), mask(x == y));
        prop_assert_eq!(f16_cmpne(a, b), mask(x != y));
        prop_assert_eq!(f16_cmplt(a, b), mask(x < y));
        prop_assert_eq!(f16_cmple(a, b), mask(x <= y));
        prop_assert_eq!(f16_cmpgt(a, b), mask(x > y));
        prop_assert_eq!(f16_cmpge(a, b), mask(x >= y));
        if x.is_nan() || y.is_nan() {
            prop_assert_eq!(f16_max(a, b), F16_CANONICAL_NAN);
            prop_assert_eq!(f16_min(a, b), F16_CANONICAL_NAN);
        } else {
            // Compare as values, with −0 < +0 (bits decide for ±0).
            let key = |h: u16, v: f64| (v, h & 0x8000 == 0);
            let (ka, kb) = (key(a, x), key(b, y));
            let (max, min) = if ka.partial_cmp(&kb) == Some(std::cmp::Ordering::Less) {
                (b, a)
            } else {
                (a, b)
            };
            prop_assert_eq!(f16_max(a, b), max);
            prop_assert_eq!(f16_min(a, b), min);
        }
    }

    #[test]
    fn f32_to_f16_is_correctly_rounded(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assert_eq!(f32_to_f16(x), reference_f16(f16_grid(), x as f64), "{:e}", x);
    }

    #[test]
    fn f64_to_f16_is_correctly_rounded(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assert_eq!(f64_to_f16(x), reference_f16(f16_grid(), x), "{:e}", x);
    }
}

/// Codes whose value is an integer of magnitude ≤ 64, so products (≤ 4096) scaled by ≤ 2^2 and
/// summed over 8 lanes stay far below 2^24: the f32 accumulation is exact.
fn small_integer_codes(format: Fp8Format) -> Vec<u8> {
    let grid = Grid::fp8(format);
    (0..=255u8)
        .filter(|&c| c != FP8_NAN)
        .filter(|&c| {
            let v = grid.magnitudes[(c & 0x7f) as usize];
            v.fract() == 0.0 && v <= 64.0
        })
        .collect()
}

fn fp8_format() -> impl Strategy<Value = Fp8Format> {
    prop::sample::select(FORMATS.to_vec())
}

fn small_integer_lanes(format: Fp8Format) -> impl Strategy<Value = [u8; 8]> {
    prop::array::uniform8(prop::sample::select(small_integer_codes(format)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

    #[test]
    fn amp_fp8_phase_is_exact_on_small_integers(
        (x_format, x, w_format, w) in (fp8_format(), fp8_format()).prop_flat_map(|(xf, wf)| {
            (Just(xf), small_integer_lanes(xf), Just(wf), small_integer_lanes(wf))
        }),
        acc in -100_000i32..100_000,
        scale in 0i32..=2,
    ) {
        let value = |c: u8, f: Fp8Format| {
            let v = Grid::fp8(f).magnitudes[(c & 0x7f) as usize];
            if c & 0x80 != 0 { -v } else { v }
        };
        let exact = acc as f64
            + (0..8).map(|i| value(x[i], x_format) * value(w[i], w_format)).sum::<f64>()
                * 2f64.powi(scale);
        let ours = amp_phase_fp8(acc as f32, x, w, x_format, w_format, scale);
        prop_assert_eq!(ours as f64, exact);
    }

    #[test]
    fn amp_fp8_phase_rounds_once_per_lane(
        x in prop::array::uniform8(any::<u8>()),
        w in prop::array::uniform8(any::<u8>()),
        x_format in fp8_format(),
        w_format in fp8_format(),
        acc in any::<f32>().prop_filter("finite", |a| a.is_finite()),
        scale in -64i32..=62,
    ) {
        let ours = amp_phase_fp8(acc, x, w, x_format, w_format, scale);
        let decode = |c: u8, f: Fp8Format| -> Option<f64> {
            (c != FP8_NAN).then(|| {
                let v = Grid::fp8(f).magnitudes[(c & 0x7f) as usize];
                if c & 0x80 != 0 { -v } else { v }
            })
        };
        // The documented definition: exact product, then one f32 rounding per addition.
        let mut reference = Some(acc);
        for i in 0..8 {
            reference = match (reference, decode(x[i], x_format), decode(w[i], w_format)) {
                (Some(a), Some(xv), Some(wv)) => {
                    let sum = a as f64 + xv * wv * 2f64.powi(scale);
                    // p is an f32 value (≤ 8 bits, exponent well inside f32 range), so
                    // f32 + f32 computed in f64 and rounded to f32 is the single f32
                    // rounding (53 ≥ 2·24 + 2).
                    Some(sum as f32)
                }
                _ => None,
            };
        }
        match reference {
            None => prop_assert_eq!(ours.to_bits(), F32_CANONICAL_NAN),
            Some(r) if r.is_nan() => prop_assert_eq!(ours.to_bits(), F32_CANONICAL_NAN),
            Some(r) => prop_assert_eq!(ours.to_bits(), r.to_bits()),
        }
    }

    #[test]
    fn amp_f16_phase_is_exact_on_small_integers(
        x in prop::array::uniform4(-64i32..=64),
        w in prop::array::uniform4(-64i32..=64),
        acc in -100_000i32..100_000,
    ) {
        let to_f16 = |v: i32| half::f16::from_f32(v as f32).to_bits();
        let exact = acc as f64 + (0..4).map(|i| (x[i] * w[i]) as f64).sum::<f64>();
        let ours = amp_phase_f16(acc as f32, x.map(to_f16), w.map(to_f16));
        prop_assert_eq!(ours as f64, exact);
    }
}

/// Not run by default: checks the "f32 then f16" double-rounding argument for *every* pair of
/// f16 operands (4.3 billion pairs per op). Run with
/// `cargo test --release -p tessera-isa --test numerics_exhaustive -- --ignored`.
#[test]
#[ignore]
fn f16_add_and_mul_exhaustive() {
    let grid = f16_grid();
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    std::thread::scope(|scope| {
        for worker in 0..workers {
            scope.spawn(move || {
                let mut a = worker as u32;
                while a <= u16::MAX as u32 {
                    let a16 = a as u16;
                    let x = f16_value(a16);
                    for b16 in 0..=u16::MAX {
                        let y = f16_value(b16);
                        assert_eq!(
                            f16_add(a16, b16),
                            reference_f16(grid, x + y),
                            "{a16:#06x}+{b16:#06x}"
                        );
                        assert_eq!(
                            f16_mul(a16, b16),
                            reference_f16(grid, x * y),
                            "{a16:#06x}*{b16:#06x}"
                        );
                    }
                    a += workers as u32;
                }
            });
        }
    });
}
