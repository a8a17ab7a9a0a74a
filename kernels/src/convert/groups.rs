//! The loop skeleton both flat casts share (`kernels/asm/cast_f32_f16.S`,
//! `kernels/asm/cast_f16_fp8.S`): groups of 16 source bytes → 8 destination bytes split among the
//! workers, a general loop (3 bundles per group) or a FAST one (`ld2xst64pace`, 1 bundle), and
//! the tail of worker 5; placements, vertex words and the bundle counts of the estimates.

use crate::case::{Buffer, Case, Region, VertexWord};
use crate::elementwise::common::worker_cycles;
use crate::split::{split_words, WORKERS};

/// Bit 31 of the `n` word: the FAST loop (see [`Placement::Paced`]).
pub const FAST: u32 = 1 << 31;

/// Where a cast's two buffers go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Any region, no element constraint: the general loop (3 bundles per group).
    Anywhere { input: Region, output: Region },
    /// `in` in the interleaved region and `out` in another memory element (element slots 0 and
    /// 1): the FAST loop, one `ld2xst64pace` per group.
    Paced { output: Region },
}

impl Placement {
    pub fn fast(self) -> bool {
        match self {
            Placement::Anywhere { .. } => false,
            Placement::Paced { .. } => true,
        }
    }

    /// The input and output buffers of a case with this placement.
    pub fn buffers(self, input: Vec<u8>, output_bytes: usize) -> Vec<Buffer> {
        let (ri, ro, slots) = match self {
            Placement::Anywhere { input, output } => (input, output, (None, None)),
            Placement::Paced { output } => (Region::Interleaved, output, (Some(0), Some(1))),
        };
        vec![
            Buffer::input("in", input, ri, slots.0),
            Buffer::output("out", output_bytes, ro, slots.1),
        ]
    }

    pub fn describe(self) -> String {
        match self {
            Placement::Anywhere { input, output } => {
                format!("{}{}", input.letter(), output.letter())
            }
            Placement::Paced { output } => format!("I{} fast", output.letter()),
        }
    }
}

/// Every placement the cases use.
pub const PLACEMENTS: [Placement; 5] = [
    Placement::Anywhere {
        input: Region::Standard,
        output: Region::Standard,
    },
    Placement::Anywhere {
        input: Region::Interleaved,
        output: Region::Interleaved,
    },
    Placement::Anywhere {
        input: Region::Standard,
        output: Region::Interleaved,
    },
    Placement::Paced {
        output: Region::Standard,
    },
    Placement::Paced {
        output: Region::Interleaved,
    },
];

/// Vertex words: in, out, the `n` word (with [`FAST`]), `extra` words, then the split of the
/// complete groups.
pub fn vertex(n: u32, group: u32, fast: bool, extra: &[u32]) -> Vec<VertexWord> {
    let mut words = VertexWord::buffer_starts(2);
    words.extend([VertexWord::Value(n | if fast { FAST } else { 0 })]);
    words.extend(extra.iter().map(|&v| VertexWord::Value(v)));
    words.extend(split_words(n / group));
    words
}

/// The bundle counts of one kernel (from its assembly).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    /// Bundles up to and including the `brz groups` test.
    pub setup: u64,
    /// Bundles of worker 5's tail from `.Ltail_rest` for `t` leftover values (exit included).
    pub tail: fn(u64) -> u64,
}

/// Estimated cycles for `n` values in groups of `group` with the split read from `split`
/// (first, count per worker).
pub fn cycles(costs: Costs, n: u32, group: u32, fast: bool, split: &[(u32, u32); WORKERS]) -> u64 {
    let t = u64::from(n % group);
    let mut bundles = [0u64; WORKERS];
    for (w, (b, &(_, c))) in bundles.iter_mut().zip(split).enumerate() {
        let c = u64::from(c);
        // Through the loops to `.Ltail` / `.Lfast_done` (the two tests of the worker id included).
        let body = match (c, fast) {
            (0, _) => costs.setup + 2,
            (c, false) => costs.setup + 1 + 4 + 3 * (c - 1) + 2 + 2,
            (1, true) => costs.setup + 1 + 6 + 3 + 2,
            (c, true) => costs.setup + 1 + 6 + 2 + (c - 2) + 2 + 2,
        };
        let tail = if w + 1 < WORKERS {
            1
        } else {
            let fix = if c > 0 && fast { 5 } else { 0 };
            fix + (costs.tail)(t)
        };
        *b = body + tail;
    }
    worker_cycles(&bundles)
}

/// [`cycles`] for a case of a cast whose vertex (laid out by [`vertex`]) has its `n` word at
/// `v_n` and its split from `v_split`.
pub fn case_cycles(costs: Costs, group: u32, case: &Case, v_n: usize, v_split: usize) -> u64 {
    let word = case.word(v_n);
    let split: [(u32, u32); WORKERS] =
        std::array::from_fn(|w| (case.word(v_split + 2 * w), case.word(v_split + 2 * w + 1)));
    cycles(costs, word & !FAST, group, word & FAST != 0, &split)
}
