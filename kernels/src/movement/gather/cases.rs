//! The checker's cases of `gather_elements`: transposes (f16, FP8, padded, strided), flat and
//! reversed tables, random gathers with and without zero lanes, the constructor's templates.

use super::spec::{compiler_case, validate, Element, GatherSpec, GatherWord, Lane};
use super::{make_case, Regions};
use crate::case::{Case, Region};
use tessera_isa::rng::Rng;

const S: Region = Region::Standard;
const I: Region = Region::Interleaved;

fn random_src(rng: &mut Rng, spec: &GatherSpec) -> Vec<u8> {
    (0..spec.src_extent())
        .map(|_| rng.next_u32() as u8)
        .collect()
}

fn case(rng: &mut Rng, name: &str, spec: &GatherSpec, regions: Regions) -> Case {
    validate(spec).expect("the case specs written here are valid");
    let src = random_src(rng, spec);
    make_case(name.into(), spec, src, regions, false)
}

/// The same with STRIDED.
fn strided(rng: &mut Rng, name: &str, spec: &GatherSpec, regions: Regions) -> Case {
    validate(spec).expect("the case specs written here are valid");
    let src = random_src(rng, spec);
    make_case(name.into(), spec, src, regions, true)
}

/// A random gather: `w` words per outer iteration tiling the dst row in a random order,
/// lanes from anywhere in a source window of `window` elements, a zero lane with
/// probability 1/`zero_every` (0: never).
fn random_spec(
    rng: &mut Rng,
    w: u32,
    outer: u32,
    element: Element,
    window: u32,
    zero_every: u64,
) -> GatherSpec {
    let e = element.bytes();
    let mut order: Vec<u32> = (0..w).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.range(0, i as u64) as usize);
    }
    let words = order
        .iter()
        .map(|&slot| GatherWord {
            dst: 4 * slot,
            lanes: (0..element.lanes())
                .map(|_| {
                    if zero_every > 0 && rng.next_u64().is_multiple_of(zero_every) {
                        Lane::Zero
                    } else {
                        Lane::Src(e * rng.range(0, u64::from(window - 1)) as u32)
                    }
                })
                .collect(),
        })
        .collect();
    GatherSpec {
        words,
        outer,
        src_stride: e * rng.range(0, u64::from(window)) as u32,
        dst_stride: 4 * w,
        element,
    }
}

pub(super) fn default_cases() -> Vec<Case> {
    let mut rng = Rng::new(0x6a7e);
    let r = &mut rng;
    let mut cases = Vec::new();
    // Transposes: f16 (the 32 x 80 headline first), FP8, odd shapes padded with zero lanes.
    for (rows, cols, extra, element, regions) in [
        (32u32, 80u32, 0u32, Element::Half, (S, S, S)),
        (32, 80, 0, Element::Half, (I, I, S)),
        (80, 32, 0, Element::Half, (S, I, I)),
        (72, 19, 8, Element::Half, (I, S, S)),
        (2, 2, 0, Element::Half, (S, S, S)),
        (2, 1, 0, Element::Half, (S, S, I)),
        (4, 7, 4, Element::Half, (I, I, I)),
        (6, 6, 0, Element::Half, (S, S, S)),
        (16, 64, 0, Element::Half, (S, I, S)),
        (3, 5, 2, Element::Half, (S, S, S)),
        (1, 9, 0, Element::Half, (I, S, S)),
        (33, 13, 0, Element::Half, (S, S, S)),
        (32, 80, 0, Element::Byte, (S, S, S)),
        (32, 80, 0, Element::Byte, (I, I, S)),
        (80, 32, 0, Element::Byte, (S, I, S)),
        (4, 4, 0, Element::Byte, (S, S, S)),
        (8, 3, 5, Element::Byte, (I, S, I)),
        (72, 19, 3, Element::Byte, (S, S, S)),
        (5, 7, 0, Element::Byte, (S, S, S)),
        (7, 5, 1, Element::Byte, (I, I, I)),
        (1, 12, 0, Element::Byte, (S, S, S)),
        (2, 33, 0, Element::Byte, (S, I, S)),
        (3, 2, 0, Element::Byte, (S, S, S)),
        (64, 16, 0, Element::Byte, (I, S, S)),
    ] {
        let e = element.bytes();
        let spec = GatherSpec::transpose(rows, cols, cols * e + extra, element);
        let name = format!("transpose {rows}x{cols}");
        cases.push(case(r, &name, &spec, regions));
        if spec.strided() {
            cases.push(strided(r, &name, &spec, regions));
        }
    }
    // A whole transpose as one outer iteration (W = all words), and its items spread.
    for element in [Element::Half, Element::Byte] {
        let t = GatherSpec::transpose(12, 10, 10 * element.bytes(), element);
        let words: Vec<GatherWord> = (0..t.outer)
            .flat_map(|o| {
                t.words.iter().map(move |w| GatherWord {
                    dst: w.dst + o * t.dst_stride,
                    lanes: w
                        .lanes
                        .iter()
                        .map(|&l| match l {
                            Lane::Src(s) => Lane::Src(s + o * t.src_stride),
                            Lane::Zero => Lane::Zero,
                        })
                        .collect(),
                })
            })
            .collect();
        let flat = GatherSpec {
            words,
            outer: 1,
            src_stride: 0,
            dst_stride: 0,
            element,
        };
        cases.push(case(r, "flat transpose 12x10", &flat, (S, S, I)));
        // Reversed lane order (a negative ds) as one progression.
        let lanes = element.lanes() as u32;
        let (w, e) = (9u32, element.bytes());
        let top = (lanes * w - 1) * 3 * e;
        let reversed = GatherSpec {
            words: (0..w)
                .map(|i| GatherWord {
                    dst: 4 * i,
                    lanes: (0..lanes)
                        .map(|k| Lane::Src(top - (lanes * i + k) * 3 * e))
                        .collect(),
                })
                .collect(),
            outer: 5,
            src_stride: e,
            dst_stride: 4 * w,
            element,
        };
        assert!(reversed.strided());
        cases.push(case(r, "reversed lanes", &reversed, (S, S, S)));
        cases.push(strided(r, "reversed lanes", &reversed, (I, I, S)));
    }
    // Random gathers: both sizes, with and without zero lanes, idle workers, many items.
    for (w, outer, element, window, zeros, regions) in [
        (1u32, 1u32, Element::Half, 4u32, 0u64, (S, S, S)),
        (1, 1, Element::Byte, 4, 0, (S, S, S)),
        (1, 5, Element::Half, 3, 2, (I, S, S)),
        (3, 1, Element::Byte, 9, 3, (S, I, S)),
        (5, 2, Element::Half, 40, 0, (S, S, S)),
        (7, 9, Element::Byte, 33, 0, (I, I, S)),
        (16, 4, Element::Half, 100, 5, (S, S, I)),
        (16, 4, Element::Byte, 100, 5, (S, S, S)),
        (40, 3, Element::Half, 300, 0, (I, S, S)),
        (40, 3, Element::Byte, 300, 4, (S, I, I)),
        (2, 60, Element::Half, 8, 0, (S, S, S)),
        (2, 60, Element::Byte, 8, 6, (S, S, S)),
        (11, 13, Element::Half, 50, 1, (S, S, S)),
        (11, 13, Element::Byte, 50, 1, (I, I, I)),
        (6, 1, Element::Half, 12, 0, (S, S, S)),
        (7, 1, Element::Byte, 12, 2, (S, S, S)),
        (250, 2, Element::Half, 1000, 9, (S, I, S)),
        (3, 700, Element::Byte, 16, 0, (S, S, S)),
        (9, 333, Element::Half, 20, 7, (I, S, S)),
        (128, 1, Element::Byte, 512, 0, (S, S, S)),
    ] {
        let spec = random_spec(r, w, outer, element, window, zeros);
        cases.push(case(r, "random gather", &spec, regions));
    }
    // The compiler constructor with random source data.
    for spec in [
        GatherSpec::transpose(32, 80, 160, Element::Half),
        GatherSpec::transpose(19, 72, 72, Element::Byte),
    ] {
        let mut c = compiler_case(&spec).expect("the two transposes written here are valid");
        c.buffers[0].bytes = random_src(r, &spec);
        cases.push(c);
    }
    cases
}

pub(super) fn random_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let r = &mut rng;
    let element = *r.pick(&[Element::Half, Element::Byte]);
    let name = format!("random seed={seed}");
    let regions = *r.pick(&[(S, S, S), (I, I, S), (S, I, I), (I, S, S)]);
    if r.next_u32().is_multiple_of(2) {
        let rows = r.range(1, 64) as u32;
        let cols = r.range(1, 64) as u32;
        let extra = element.bytes() * r.range(0, 3) as u32;
        let spec = GatherSpec::transpose(rows, cols, cols * element.bytes() + extra, element);
        return if spec.strided() && r.next_u32().is_multiple_of(2) {
            strided(r, &name, &spec, regions)
        } else {
            case(r, &name, &spec, regions)
        };
    }
    let w = r.range(1, 60) as u32;
    let outer = r.range(1, 40) as u32;
    let window = r.range(2, 400) as u32;
    let zeros = *r.pick(&[0u64, 0, 2, 9]);
    let spec = random_spec(r, w, outer, element, window, zeros);
    case(r, &name, &spec, regions)
}
