//! Architectural state of one context: registers, the CSRs it owns, `rpt` state and (for workers)
//! the accumulators and AMP pipeline.

use crate::csr::index;

/// Number of accumulator registers `$AACC` (two AMP sets of 16). [C]
pub const AACC_COUNT: usize = 32;
/// Output channels of the v4 AMP instructions (both sets). [I]
pub const AMP_CHANNELS: usize = 16;

/// Supervisor or worker n.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContextKind {
    Supervisor,
    Worker(u8),
}

impl ContextKind {
    pub fn is_supervisor(self) -> bool {
        matches!(self, ContextKind::Supervisor)
    }

    pub fn name(self) -> &'static str {
        match self {
            ContextKind::Supervisor => "supervisor",
            ContextKind::Worker(0) => "worker 0",
            ContextKind::Worker(1) => "worker 1",
            ContextKind::Worker(2) => "worker 2",
            ContextKind::Worker(3) => "worker 3",
            ContextKind::Worker(4) => "worker 4",
            ContextKind::Worker(5) => "worker 5",
            ContextKind::Worker(_) => "worker",
        }
    }
}

/// The AMP pipeline of one worker (the model is a project assumption, see `semantics::amp`).
///
/// Calls stream partials in (`pending`), accumulate the current group (`accumulating`), and
/// stream the previous group's results out (`finished`). Values are f32 (f16 partials widen exactly).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AmpState {
    pub pending: [f32; AMP_CHANNELS],
    pub accumulating: [f32; AMP_CHANNELS],
    pub finished: [f32; AMP_CHANNELS],
}

impl Default for AmpState {
    fn default() -> Self {
        AmpState {
            pending: [0.0; AMP_CHANNELS],
            accumulating: [0.0; AMP_CHANNELS],
            finished: [0.0; AMP_CHANNELS],
        }
    }
}

/// An active `rpt` loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RepeatState {
    pub active: bool,
    /// Iterations left including the current one.
    pub remaining: u32,
    pub first: u32,
    pub end: u32,
}

/// Registers and context-owned CSRs of one context.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextState {
    pub kind: ContextKind,
    pub pc: u32,
    /// `$m0..$m15`; `$m12`/`$m13` hold worker base / vertex base; `$m14`/`$m15` read 0.
    pub m: [u32; 16],
    /// `$a0..$a15`; `$a14`/`$a15` read 0.
    pub a: [u32; 16],
    /// Lower-space CSRs this context owns, by index.
    pub csr: [u32; 256],
    /// Upper-space (worker FP) CSRs, by offset.
    pub ucsr: [u32; 16],
    pub repeat: RepeatState,
    /// `$AACC[0..31]` as f32.
    pub aacc: [f32; AACC_COUNT],
    pub amp: AmpState,
}

impl ContextState {
    pub fn new(kind: ContextKind) -> ContextState {
        let mut state = ContextState {
            kind,
            pc: 0,
            m: [0; 16],
            a: [0; 16],
            csr: [0; 256],
            ucsr: [0; 16],
            repeat: RepeatState::default(),
            aacc: [0.0; AACC_COUNT],
            amp: AmpState::default(),
        };
        if let ContextKind::Worker(id) = kind {
            state.csr[index::WSR as usize] = id as u32;
        }
        state
    }

    /// Prepares a worker for a launch: PC, vertex base, scratch base and `$FP_CTL` from `$FP_ICTL`.
    /// `$FP_STS` is reset; PRNG, `$REPEAT_COUNT` and `$WSR` are retained. [C]
    /// The `$m` and `$a` registers other than the two bases are retained too \[HW\]:
    /// osmarks/ipu-stack's F16 GEMM (`device/gemm_f16_amp.S`), numerically checked on a C600,
    /// launches later blocks into entries that read only the registers the previous launch left
    /// ("Workers retain their activation and output state between invocations"); Tessera's GEMM
    /// kernels do the same (`kernels/asm/gemm_amp_body.S`). The AMP's accumulators and pipeline
    /// are kept as well \[A\] (no kernel relies on that: each launch clears them).
    pub fn launch(&mut self, entry: u32, vertex_base: u32, worker_base: u32, fp_ictl: u32) {
        self.pc = entry;
        self.m[crate::registers::M_VERTEX_BASE as usize] = vertex_base;
        self.m[crate::registers::M_WORKER_BASE as usize] = worker_base;
        self.csr[index::VERTEX_BASE as usize] = vertex_base;
        self.csr[index::WORKER_BASE as usize] = worker_base;
        self.ucsr[index::FP_CTL as usize] = fp_ictl;
        self.ucsr[index::FP_STS as usize] = 0;
        self.repeat = RepeatState::default();
    }

    #[inline]
    pub fn read_m(&self, r: usize) -> u32 {
        if r >= 14 {
            0
        } else {
            self.m[r]
        }
    }

    #[inline]
    pub fn read_a(&self, r: usize) -> u32 {
        if r >= 14 {
            0
        } else {
            self.a[r]
        }
    }

    /// 64-bit pair read, low register in the low half.
    #[inline]
    pub fn read_a64(&self, r: usize) -> u64 {
        self.read_a(r) as u64 | (self.read_a(r + 1) as u64) << 32
    }

    #[inline]
    pub fn write_a(&mut self, r: usize, value: u32) {
        if r < 14 {
            self.a[r] = value;
        }
    }

    #[inline]
    pub fn write_a64(&mut self, r: usize, value: u64) {
        self.write_a(r, value as u32);
        self.write_a(r + 1, (value >> 32) as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch sets the PC, the two bases, `$FP_CTL` and `$FP_STS` and leaves every other
    /// register as the previous run left it (the GEMM kernels' later launches rely on it).
    #[test]
    fn a_launch_keeps_the_workers_registers() {
        let mut state = ContextState::new(ContextKind::Worker(3));
        for r in 0..12 {
            state.m[r] = 0x1000 + r as u32;
        }
        for r in 0..14 {
            state.a[r] = 0x3c00_0000 + r as u32;
        }
        state.launch(0x4_c000, 0x5_0000, 0x6_0000, 7);
        for r in 0..12 {
            assert_eq!(state.read_m(r), 0x1000 + r as u32, "$m{r}");
        }
        for r in 0..14 {
            assert_eq!(state.read_a(r), 0x3c00_0000 + r as u32, "$a{r}");
        }
        assert_eq!(state.pc, 0x4_c000);
        assert_eq!(
            state.read_m(crate::registers::M_VERTEX_BASE as usize),
            0x5_0000
        );
        assert_eq!(
            state.read_m(crate::registers::M_WORKER_BASE as usize),
            0x6_0000
        );
        assert_eq!(state.csr[index::WSR as usize], 3);
    }
}
