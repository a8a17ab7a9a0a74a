//! `panelize_fp8`: FP8 rows to AMP-left panels, so rows received over the exchange (row-major)
//! can feed the FP8 GEMM (which reads panels).

use crate::case::{Buffer, Case, Region, VertexWord};
use crate::layout::{panel_offset, PANEL_ROW_BYTES};
use crate::split::worker_split;
use crate::{kernel_consts, Kernel, WORKER_LAUNCH_OVERHEAD_CYCLES};
use tessera_isa::rng::Rng;

pub struct Panelize;

pub static PANELIZE_FP8: Panelize = Panelize;

const NAME: &str = "panelize_fp8";
/// Bundles per 32-byte chunk in the loop (13, one more on a column wrap).
const BUNDLES_PER_CHUNK: u64 = 13;

/// The shape of one invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PanelizeSpec {
    pub rows: usize,
    /// Source row stride in bytes (multiple of 8).
    pub stride: usize,
    /// 32-byte column blocks per row.
    pub kbs: usize,
}

impl PanelizeSpec {
    pub fn source_bytes(&self) -> usize {
        (self.rows - 1) * self.stride + self.kbs * PANEL_ROW_BYTES
    }

    pub fn panel_bytes(&self) -> usize {
        self.rows * self.kbs * PANEL_ROW_BYTES
    }
}

/// A case with the given source contents (buffer 0 = src, 1 = dst).
pub fn make_case(name: String, spec: PanelizeSpec, source: Vec<u8>, region: Region) -> Case {
    let mut vertex = VertexWord::buffer_starts(2);
    vertex.extend([
        VertexWord::Value(spec.rows as u32),
        VertexWord::Value(spec.stride as u32),
        VertexWord::Value(spec.kbs as u32),
    ]);
    let chunks = (spec.rows * spec.kbs) as u32;
    for (first, count) in worker_split(chunks) {
        let (kb, m) = (first as usize / spec.rows, first as usize % spec.rows);
        vertex.push(VertexWord::Value(count));
        vertex.push(VertexWord::Value(first * PANEL_ROW_BYTES as u32));
        vertex.push(VertexWord::Value(
            (m * spec.stride + kb * PANEL_ROW_BYTES) as u32,
        ));
        vertex.push(VertexWord::Value(m as u32));
    }
    Case {
        kernel: NAME.into(),
        name,
        buffers: vec![
            Buffer::input("src", source, region, None),
            Buffer::output("dst", spec.panel_bytes(), region, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

fn spec_of(case: &Case) -> PanelizeSpec {
    PanelizeSpec {
        rows: case.word(2) as usize,
        stride: case.word(3) as usize,
        kbs: case.word(4) as usize,
    }
}

impl Kernel for Panelize {
    kernel_consts! {
        name: NAME,
        source: include_str!("../asm/panelize_fp8.S"),
        entry_kind: Worker,
        abi: "vertex: src, dst, M, stride, kbs, per worker (chunks, dst offset, src offset, row); any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(7);
        let mut cases = Vec::new();
        for &(rows, kbs, extra) in &[
            (1, 1, 0),
            (1, 36, 0),
            (2, 1, 8),
            (5, 3, 0),
            (7, 2, 16),
            (12, 36, 0),
            (23, 3, 8),
            (32, 36, 0),
            (38, 4, 0),
            (6, 1, 0),
            (13, 5, 24),
        ] {
            for region in [Region::Standard, Region::Interleaved] {
                let spec = PanelizeSpec {
                    rows,
                    stride: kbs * 32 + extra,
                    kbs,
                };
                let source: Vec<u8> = (0..spec.source_bytes())
                    .map(|_| rng.next_u32() as u8)
                    .collect();
                cases.push(make_case(
                    format!("{rows}x{} stride {} {region:?}", kbs * 32, spec.stride),
                    spec,
                    source,
                    region,
                ));
            }
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = rng.range(1, 40) as usize;
        let kbs = rng.range(1, 12) as usize;
        let spec = PanelizeSpec {
            rows,
            stride: kbs * 32 + 8 * rng.range(0, 4) as usize,
            kbs,
        };
        let source: Vec<u8> = (0..spec.source_bytes())
            .map(|_| rng.next_u32() as u8)
            .collect();
        make_case(
            format!("random seed={seed} {rows}x{kbs} blocks"),
            spec,
            source,
            Region::Standard,
        )
    }

    /// A byte permutation: chunk (kb, m) of the panels is bytes `[m·stride + 32·kb, +32)` of the rows.
    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let spec = spec_of(case);
        let src = &case.buffer("src").bytes;
        let mut out = vec![0u8; spec.panel_bytes()];
        for kb in 0..spec.kbs {
            for m in 0..spec.rows {
                let from = m * spec.stride + kb * PANEL_ROW_BYTES;
                let to = panel_offset(kb, m, spec.rows);
                out[to..to + PANEL_ROW_BYTES].copy_from_slice(&src[from..from + PANEL_ROW_BYTES]);
            }
        }
        vec![out]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let spec = spec_of(case);
        let busiest = worker_split((spec.rows * spec.kbs) as u32)
            .iter()
            .map(|&(_, c)| c)
            .max()
            .unwrap_or(0) as u64;
        WORKER_LAUNCH_OVERHEAD_CYCLES + 6 * (20 + BUNDLES_PER_CHUNK * busiest)
    }
}
