//! `residual_add_f16`: out = a + b on f16 vectors (the encoder's residual connections).

use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{split_words, worker_split};
use crate::{kernel_consts, Kernel, WORKER_LAUNCH_OVERHEAD_CYCLES};
use half::f16;
use tessera_isa::rng::Rng;

pub struct ResidualAdd;

const NAME: &str = "residual_add_f16";

/// Bit 31 of the `n` word: a, b and out are in three different memory elements (fast path).
pub const FAST: u32 = 1 << 31;

fn make_case(name: String, a: Vec<u16>, b: Vec<u16>, region: Region) -> Case {
    make_case_with(name, a, b, region, false)
}

/// `fast`: put a, b, out in three element slots and set [`FAST`].
fn make_case_with(name: String, a: Vec<u16>, b: Vec<u16>, region: Region, fast: bool) -> Case {
    let n = a.len();
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([VertexWord::Value(n as u32 | if fast { FAST } else { 0 })]);
    vertex.extend(split_words(n as u32 / 4));
    let slot = |s: u8| fast.then_some(s);
    Case {
        kernel: NAME.into(),
        name: if fast {
            format!("{name} slots fast")
        } else {
            name
        },
        buffers: vec![
            Buffer::input("a", bytes::from_u16(&a), region, slot(0)),
            Buffer::input("b", bytes::from_u16(&b), region, slot(1)),
            Buffer::output("out", n * 2, region, slot(2)),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

fn random_halves(rng: &mut Rng, n: usize, scale: f64) -> Vec<u16> {
    (0..n)
        .map(|_| f16::from_f64(rng.normal(0.0, scale)).to_bits())
        .collect()
}

impl Kernel for ResidualAdd {
    kernel_consts! {
        name: NAME,
        source: include_str!("../asm/residual_add_f16.S"),
        entry_kind: Worker,
        abi: "vertex: a, b, out, n (bit 31 FAST: a, b, out in three different memory elements -> ld2xst64pace, 1 bundle per 4 elements; else 3), split[6] (first group, groups); any region; tail n % 4 by worker 5",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(1);
        for &n in &[1usize, 2, 3, 4, 5, 7, 24, 25, 1152, 1153, 1155, 4304] {
            for region in [Region::Standard, Region::Interleaved] {
                for fast in [false, true] {
                    let a = random_halves(&mut rng, n, 4.0);
                    let b = random_halves(&mut rng, n, 4.0);
                    cases.push(make_case_with(
                        format!("n={n} {region:?} normal(0,4)"),
                        a,
                        b,
                        region,
                        fast,
                    ));
                }
            }
        }
        // Group counts 1, 2, 3 per worker on the fast path (its peeled first and last groups).
        for &n in &[24usize, 48, 50, 72, 75, 27_000] {
            let a = random_halves(&mut rng, n, 1.0);
            let b = random_halves(&mut rng, n, 1.0);
            cases.push(make_case_with(
                format!("n={n} Interleaved normal(0,1)"),
                a,
                b,
                Region::Interleaved,
                true,
            ));
        }
        // Edge values: infinities, NaN, overflow to infinity, subnormals, signed zeros.
        let specials: Vec<u16> = vec![
            0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x0001, 0x8000, 0x0000, 0x3c00,
        ];
        let partners: Vec<u16> = vec![
            0x3c00, 0x7c00, 0x3c00, 0x7bff, 0x8001, 0x8000, 0x8000, 0xbc00,
        ];
        cases.push(make_case(
            "edge values".into(),
            specials,
            partners,
            Region::Standard,
        ));
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let n = rng.range(1, 3000) as usize;
        let region = if rng.next_u32().is_multiple_of(2) {
            Region::Standard
        } else {
            Region::Interleaved
        };
        let fast = rng.next_u32().is_multiple_of(2);
        let a: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        let b: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        make_case_with(
            format!("random seed={seed} n={n} {region:?} any bits"),
            a,
            b,
            region,
            fast,
        )
    }

    /// IEEE binary16 addition, rounded to nearest even (via `half`, which adds in f32 and rounds
    /// once; exact because f32 carries more than 2×11+2 bits). NaN results are the canonical
    /// quiet NaN 0x7e00 (the project's documented NaN).
    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let a = bytes::to_u16(&case.buffer("a").bytes);
        let b = bytes::to_u16(&case.buffer("b").bytes);
        let out: Vec<u16> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| {
                let sum = f16::from_bits(x) + f16::from_bits(y);
                if sum.is_nan() {
                    0x7e00
                } else {
                    sum.to_bits()
                }
            })
            .collect();
        vec![bytes::from_u16(&out)]
    }

    /// Per worker: 14 set-up bundles; its groups at 3 bundles each (general) or 1 (fast) plus
    /// the loop ends; the tail test (worker 5 also does the n % 4 tail); the exit. The busiest
    /// worker sets the time.
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let word = case.word(3);
        let n = word & !FAST;
        let fast = word & FAST != 0;
        let t = n % 4;
        let bundles = worker_split(n / 4)
            .iter()
            .enumerate()
            .map(|(w, &(_, c))| {
                let c = c as u64;
                let body = match (c, fast) {
                    (0, _) => 0,
                    (c, false) => 3 * c + 5,
                    (1, true) => 11,
                    (c, true) => c + 12,
                };
                let tail = if w < 5 {
                    2
                } else if t == 0 {
                    4
                } else {
                    8 + if t & 2 != 0 { 4 } else { 0 } + if t & 1 != 0 { 6 } else { 0 }
                };
                14 + body + tail + 1
            })
            .max()
            .unwrap_or(0);
        WORKER_LAUNCH_OVERHEAD_CYCLES + 6 * bundles
    }
}

/// The case of a compiler call: `n` halves, any region, out may alias a or b. Data are zeros.
/// With `slots`, a, b and out in those three element slots (all different, so out aliases
/// neither) and [`FAST`] set: the one-bundle-per-group loop.
pub fn compiler_case(n: usize, slots: Option<[u8; 3]>) -> Case {
    match slots {
        None => make_case("compiled".into(), vec![0; n], vec![0; n], Region::Standard),
        Some(slots) => {
            let mut case = make_case_with(
                "compiled".into(),
                vec![0; n],
                vec![0; n],
                Region::Standard,
                true,
            );
            for (buffer, slot) in case.buffers.iter_mut().zip(slots) {
                buffer.element_slot = Some(slot);
            }
            case
        }
    }
}
