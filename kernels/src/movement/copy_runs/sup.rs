//! `copy_runs_sup`: a `copy_runs` table run by the supervisor alone, for copies too small to
//! pay for starting six workers (`kernels/asm/copy_runs_sup.S`). The compiler states the copy
//! as a [`CopyRunsSpec`] either way; [`prefers_supervisor`] picks the kernel by the two
//! estimates.

use super::constructor::{coalesce, compiler_estimate, validate};
use super::table::{CopyRunsSpec, Granule, Run, RunSource};
use super::ZERO_RUN;
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::error::ParamError;
use crate::{kernel_consts, Kernel};
use tessera_isa::rng::Rng;

pub struct CopyRunsSup;

const NAME: &str = "copy_runs_sup";

/// Entries above which the supervisor kernel is not considered (its table is one entry per
/// item, and beyond this the workers' copy is faster anyway).
const MAX_ENTRIES: u64 = 256;

/// One entry of the flattened table: (src offset or [`ZERO_RUN`], dst offset, words).
type Entry = (u32, u32, u32);

/// Every item (o, r) of the spec's coalesced runs as one entry, in the kernel's order.
fn entries(spec: &CopyRunsSpec) -> Result<Vec<Entry>, ParamError> {
    let g = validate(spec)?;
    let runs = coalesce(&spec.runs, g);
    Ok((0..spec.outer)
        .flat_map(|o| {
            runs.iter().map(move |run| {
                let src = match run.src {
                    RunSource::Offset(offset) => offset + o * spec.src_stride,
                    RunSource::Zeros => ZERO_RUN,
                };
                (src, run.dst + o * spec.dst_stride, run.bytes / 4)
            })
        })
        .collect())
}

fn extents(entries: &[Entry]) -> (u64, u64) {
    entries.iter().fold((0, 0), |(s, d), &(src, dst, words)| {
        let end = |at: u32| u64::from(at) + 4 * u64::from(words);
        (
            if src == ZERO_RUN { s } else { s.max(end(src)) },
            d.max(end(dst)),
        )
    })
}

fn make_case(name: String, entries: &[Entry], src: Vec<u8>, dst_len: usize) -> Case {
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.push(VertexWord::Value(entries.len() as u32));
    let table: Vec<u32> = entries.iter().flat_map(|&(s, d, w)| [s, d, w]).collect();
    let words: u32 = entries.iter().map(|e| e.2).sum();
    Case {
        kernel: NAME.into(),
        name: format!("{name} E={} words={words}", entries.len()),
        buffers: vec![
            Buffer::input("src", src, Region::Standard, None),
            Buffer::output("dst", dst_len, Region::Standard, None),
            Buffer::input("table", bytes::from_u32(&table), Region::Standard, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

/// The case of a compiler call (a template: src holds zeros).
pub fn compiler_case(spec: &CopyRunsSpec) -> Result<Case, ParamError> {
    let entries = entries(spec)?;
    let (src, dst) = extents(&entries);
    Ok(make_case(
        "compiled".into(),
        &entries,
        vec![0; src.max(4) as usize],
        dst as usize,
    ))
}

/// The supervisor's cycles from entry to its return, by the kernel's control flow and the
/// ipu21's supervisor timing: one instruction a cycle, a taken branch 6 cycles to the next
/// instruction, a register written by any instruction (a load, an ALU result, a post-increment)
/// usable 6 cycles after it (machines/ipu21.ron, `stalls.result_use`). Each line names the
/// registers the instruction reads and writes.
fn estimate_entries(entries: &[Entry]) -> u64 {
    let mut c = Clock::default();
    for dst in 1..4 {
        c.op(&[], &[dst]); // ld32 dst, table, E
    }
    c.op(&[3], &[3]); // E - 1
    for (i, &(src, _, words)) in entries.iter().enumerate() {
        c.op(&[2], &[6]); // ld32 words
        c.op(&[2], &[4]); // ld32 src offset
        c.op(&[2], &[5]); // ld32 dst offset
        c.op(&[], &[0]); // ld32 src
        c.op(&[2], &[2]); // table += 12
        c.op(&[6], &[7]); // shr: passes
        c.op(&[6], &[6]); // and: the words after them
        c.op(&[5, 1], &[5]); // dst address
        let zeros = src == ZERO_RUN;
        c.branch(&[4], zeros);
        let passes = u64::from(words / 4);
        let left = u64::from(words % 4);
        if !zeros {
            c.op(&[4, 0], &[4]); // src address
        }
        c.branch(&[7], passes == 0);
        if passes > 0 {
            c.op(&[7], &[7]); // passes - 1
            for pass in 0..passes {
                if zeros {
                    for _ in 0..4 {
                        c.op(&[5], &[]); // st32 $mzero
                    }
                } else {
                    for r in [8, 9, 11, 0] {
                        c.op(&[4], &[r]); // ld32
                    }
                    c.op(&[4], &[4]); // src += 16
                    for r in [8, 9, 11, 0] {
                        c.op(&[r, 5], &[]); // st32
                    }
                }
                c.op(&[5], &[5]); // dst += 16
                c.branch_writing(&[7], &[7], pass + 1 < passes); // brnzdec
            }
        }
        c.branch(&[6], left == 0);
        if left > 0 {
            c.op(&[6], &[6]); // words - 1
            for word in 0..left {
                if zeros {
                    c.op(&[5], &[]); // st32 $mzero
                } else {
                    c.op(&[4], &[8]); // ld32
                    c.op(&[4], &[4]); // src += 4
                    c.op(&[8, 5], &[]); // st32
                }
                c.op(&[5], &[5]); // dst += 4
                c.branch_writing(&[6], &[6], word + 1 < left); // brnzdec
            }
            if zeros {
                c.branch(&[], true); // bri .Lnext
            }
        }
        c.branch_writing(&[3], &[3], i + 1 < entries.len()); // brnzdec: the next entry
    }
    // `br $m10` ends the call: the run ends with its issue.
    c.op(&[10], &[]);
    c.t
}

/// The issue clock of the estimate: the next free cycle and when each `$m` register is ready.
#[derive(Default)]
struct Clock {
    t: u64,
    ready: [u64; 16],
}

const TAKEN_BRANCH: u64 = 6;
const RESULT_USE: u64 = 6;

impl Clock {
    /// One instruction: it issues once what it `reads` is ready; what it `writes` is ready
    /// `RESULT_USE` cycles later.
    fn op(&mut self, reads: &[usize], writes: &[usize]) -> u64 {
        let at = reads.iter().map(|&r| self.ready[r]).fold(self.t, u64::max);
        self.t = at + 1;
        for &w in writes {
            self.ready[w] = at + RESULT_USE;
        }
        at
    }

    fn branch(&mut self, reads: &[usize], taken: bool) {
        self.branch_writing(reads, &[], taken);
    }

    /// A branch that also writes registers (`brnzdec` decrements its counter).
    fn branch_writing(&mut self, reads: &[usize], writes: &[usize], taken: bool) {
        let at = self.op(reads, writes);
        if taken {
            self.t = at + TAKEN_BRANCH;
        }
    }
}

/// The estimate of [`compiler_case`]'s call.
pub fn compiler_estimate_sup(spec: &CopyRunsSpec) -> Result<u64, ParamError> {
    Ok(estimate_entries(&entries(spec)?))
}

/// Whether the supervisor copies `spec` faster than the workers would (the two estimates),
/// for tables of at most [`MAX_ENTRIES`] items.
pub fn prefers_supervisor(spec: &CopyRunsSpec) -> bool {
    let items = u64::from(spec.outer) * spec.runs.len() as u64;
    if items > MAX_ENTRIES {
        return false;
    }
    match (compiler_estimate_sup(spec), compiler_estimate(spec)) {
        (Ok(sup), Ok(workers)) => sup < workers,
        _ => false,
    }
}

fn entries_of(case: &Case) -> Vec<Entry> {
    bytes::to_u32(&case.buffer("table").bytes)
        .chunks_exact(3)
        .map(|w| (w[0], w[1], w[2]))
        .collect()
}

/// The specification: dst after the copy (bytes no entry writes are 0).
fn reference(entries: &[Entry], src: &[u8], dst_len: usize) -> Vec<u8> {
    let mut out = vec![0u8; dst_len];
    for &(from, to, words) in entries {
        let (to, n) = (to as usize, 4 * words as usize);
        if from == ZERO_RUN {
            out[to..to + n].fill(0);
        } else {
            let from = from as usize;
            out[to..to + n].copy_from_slice(&src[from..from + n]);
        }
    }
    out
}

/// A case from a spec with random source bytes.
fn spec_case(rng: &mut Rng, name: &str, spec: &CopyRunsSpec) -> Case {
    let entries = entries(spec).expect("a valid spec");
    let (src, dst) = extents(&entries);
    let src = (0..src.max(4)).map(|_| rng.next_u32() as u8).collect();
    make_case(name.into(), &entries, src, dst as usize)
}

fn spec(runs: Vec<Run>, outer: u32, src_stride: u32, dst_stride: u32) -> CopyRunsSpec {
    CopyRunsSpec {
        runs,
        outer,
        src_stride,
        dst_stride,
        granule: Granule::Word4,
        distinct: false,
    }
}

impl Kernel for CopyRunsSup {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../../asm/copy_runs_sup.S"),
        entry_kind: Supervisor,
        abi: "vertex: src, dst, table (E x {src offset | 0xFFFFFFFF = zeros, dst offset, words >= 1}, \
              byte offsets, multiples of 4), E >= 1; supervisor only, no workers; any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(0x5c0b);
        let r = &mut rng;
        // Every path: 0..3 single words after 0..4 passes of four, copies and zeros.
        let mut cases: Vec<Case> = (1..=18)
            .map(|words| {
                let s = spec(vec![Run::copy(0, 0, 4 * words)], 1, 0, 0);
                spec_case(r, &format!("one run of {words}"), &s)
            })
            .collect();
        cases.extend((1..=9).map(|words| {
            let s = spec(vec![Run::zeros(0, 4 * words)], 1, 0, 0);
            spec_case(r, &format!("zeros of {words}"), &s)
        }));
        cases.push(spec_case(
            r,
            "zeros and copies",
            &spec(
                vec![
                    Run::copy(8, 0, 12),
                    Run::zeros(12, 20),
                    Run::copy(0, 32, 4),
                    Run::zeros(36, 4),
                ],
                3,
                24,
                40,
            ),
        ));
        cases.push(spec_case(
            r,
            "a transpose of 2 x 9 words",
            &spec(
                (0..9).map(|j| Run::copy(4 * j, 8 * j, 4)).collect(),
                2,
                36,
                4,
            ),
        ));
        cases.extend((0..12).map(|seed| self.random_case(0x5c0b_0000 + seed)));
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let r = &mut rng;
        let runs = r.range(1, 6) as u32;
        let outer = r.range(1, 4) as u32;
        let mut at = 0;
        let mut list = Vec::new();
        for _ in 0..runs {
            let words = r.range(1, 12) as u32;
            let run = if r.next_u32().is_multiple_of(4) {
                Run::zeros(at, 4 * words)
            } else {
                Run::copy(4 * r.range(0, 16) as u32, at, 4 * words)
            };
            // Runs cover dst without gaps (the reference leaves unwritten bytes 0).
            at += 4 * words;
            list.push(run);
        }
        let s = spec(list, outer, 4 * r.range(0, 24) as u32, at);
        spec_case(r, &format!("random {seed}"), &s)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        vec![reference(
            &entries_of(case),
            &case.buffer("src").bytes,
            case.buffer("dst").len(),
        )]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        estimate_entries(&entries_of(case))
    }
}
