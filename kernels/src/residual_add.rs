//! `residual_add_f16`: out = a + b on f16 vectors (the encoder's residual connections).

use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::rng::Rng;
use crate::split::{busiest, split_words};
use crate::{EntryKind, Kernel, WORKER_LAUNCH_OVERHEAD_CYCLES};
use half::f16;

pub struct ResidualAdd;

const NAME: &str = "residual_add_f16";

fn make_case(name: String, a: Vec<u16>, b: Vec<u16>, region: Region) -> Case {
    let n = a.len();
    let mut vertex = vec![
        VertexWord::Address { buffer: 0, offset: 0 },
        VertexWord::Address { buffer: 1, offset: 0 },
        VertexWord::Address { buffer: 2, offset: 0 },
        VertexWord::Value(n as u32),
    ];
    vertex.extend(split_words(n as u32 / 4));
    Case {
        kernel: NAME.into(),
        name,
        buffers: vec![
            Buffer::input("a", bytes::from_u16(&a), region, None),
            Buffer::input("b", bytes::from_u16(&b), region, None),
            Buffer::output("out", n * 2, region, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

fn random_halves(rng: &mut Rng, n: usize, scale: f64) -> Vec<u16> {
    (0..n).map(|_| f16::from_f64(rng.normal(0.0, scale)).to_bits()).collect()
}

impl Kernel for ResidualAdd {
    fn name(&self) -> &'static str {
        NAME
    }

    fn source(&self) -> &'static str {
        include_str!("../asm/residual_add_f16.S")
    }

    fn entry(&self) -> &'static str {
        NAME
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Worker
    }

    fn abi(&self) -> &'static str {
        "vertex: a, b, out, n, split[6] (first group, groups); any region; tail n % 4 by worker 5"
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(1);
        for &n in &[1usize, 2, 3, 4, 5, 7, 24, 25, 1152, 1153, 1155, 4304] {
            for region in [Region::Standard, Region::Interleaved] {
                let a = random_halves(&mut rng, n, 4.0);
                let b = random_halves(&mut rng, n, 4.0);
                cases.push(make_case(format!("n={n} {region:?} normal(0,4)"), a, b, region));
            }
        }
        // Edge values: infinities, NaN, overflow to infinity, subnormals, signed zeros.
        let specials: Vec<u16> = vec![0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x0001, 0x8000, 0x0000, 0x3c00];
        let partners: Vec<u16> = vec![0x3c00, 0x7c00, 0x3c00, 0x7bff, 0x8001, 0x8000, 0x8000, 0xbc00];
        cases.push(make_case("edge values".into(), specials, partners, Region::Standard));
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let n = rng.range(1, 3000) as usize;
        let region = if rng.next_u32() % 2 == 0 { Region::Standard } else { Region::Interleaved };
        let a: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        let b: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        make_case(format!("random seed={seed} n={n} {region:?} any bits"), a, b, region)
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

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let n = case.word(3);
        let groups = busiest(n / 4) as u64;
        let setup = 15;
        let tail = if n % 4 != 0 { 16 } else { 2 };
        WORKER_LAUNCH_OVERHEAD_CYCLES + 6 * (setup + 5 * groups + tail + 1)
    }
}
