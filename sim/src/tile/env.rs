//! The tile's implementation of the ISA's execution environment: memory with faults, shared
//! weights, the supervisor CSRs workers read, the cycle counter, and the output-write watch.

use super::watch::WriteWatch;
use crate::memory::TileMemory;
use tessera_isa::csr::{index, CWEI_COUNT};
use tessera_isa::semantics::{CweiLanes, ExecEnv, Trap};

/// The tile's `$CWEI` and the AMP's decoded copy of it, kept together so that every write
/// (through [`TileEnv`]'s `cwei_mut`) invalidates the copy (the contract of [`CweiLanes`]).
#[derive(Clone, Debug)]
pub struct AmpWeights {
    cwei: [u64; CWEI_COUNT],
    lanes: CweiLanes,
}

impl Default for AmpWeights {
    fn default() -> Self {
        AmpWeights {
            cwei: [0; CWEI_COUNT],
            lanes: CweiLanes::default(),
        }
    }
}

impl AmpWeights {
    pub fn cwei(&self) -> &[u64; CWEI_COUNT] {
        &self.cwei
    }
}

pub struct TileEnv<'a> {
    tile: u32,
    cycle: u64,
    memory: &'a mut TileMemory,
    weights: &'a mut AmpWeights,
    fp_infmt: u32,
    fp_iscl: u32,
    watch: &'a mut WriteWatch,
    /// Whether the AMP may keep its decoded lanes (`cwei_lanes`); off, it decodes per bundle.
    amp_lanes: bool,
}

impl<'a> TileEnv<'a> {
    /// `fp_infmt` and `fp_iscl`: the supervisor's `$FP_INFMT` and `$FP_ISCL` (the only supervisor
    /// CSRs a worker reads), passed by value so no register file is copied per bundle.
    #[inline]
    pub fn new(
        tile: u32,
        cycle: u64,
        memory: &'a mut TileMemory,
        weights: &'a mut AmpWeights,
        fp_infmt: u32,
        fp_iscl: u32,
        watch: &'a mut WriteWatch,
    ) -> Self {
        TileEnv {
            tile,
            cycle,
            memory,
            weights,
            fp_infmt,
            fp_iscl,
            watch,
            amp_lanes: true,
        }
    }

    /// This environment with the AMP's kept lanes offered (`true`, the default) or not.
    #[inline]
    pub fn with_amp_lanes(mut self, amp_lanes: bool) -> Self {
        self.amp_lanes = amp_lanes;
        self
    }
}

impl ExecEnv for TileEnv<'_> {
    #[inline]
    fn load(&mut self, addr: u32, out: &mut [u8]) -> Result<(), Trap> {
        let bytes = self
            .memory
            .read(addr, out.len() as u32)
            .map_err(|e| Trap::memory(e.to_string()))?;
        out.copy_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn store(&mut self, addr: u32, data: &[u8]) -> Result<(), Trap> {
        self.memory
            .write(addr, data)
            .map_err(|e| Trap::memory(e.to_string()))?;
        self.watch.note(addr, data.len(), self.cycle);
        Ok(())
    }

    #[inline]
    fn check_parallel_accesses(&mut self, accesses: &[(u32, u32)]) -> Result<(), Trap> {
        self.memory
            .check_element_clash(accesses)
            .map_err(|e| Trap::memory(e.to_string()))
    }

    fn cwei(&self) -> &[u64; CWEI_COUNT] {
        &self.weights.cwei
    }

    /// Every write of `$CWEI` comes through here, so the decoded lanes are forgotten here
    /// (the contract of [`CweiLanes`]).
    fn cwei_mut(&mut self) -> &mut [u64; CWEI_COUNT] {
        self.weights.lanes.invalidate();
        &mut self.weights.cwei
    }

    fn cwei_lanes(&mut self) -> Option<&mut CweiLanes> {
        self.amp_lanes.then_some(&mut self.weights.lanes)
    }

    /// Workers read only `$FP_INFMT` and `$FP_ISCL` (the AMP's FP8 configuration); their values
    /// are given when the environment is made, so the supervisor's registers are not borrowed.
    fn supervisor_csr(&self, csr: u8) -> u32 {
        match csr {
            index::FP_INFMT => self.fp_infmt,
            index::FP_ISCL => self.fp_iscl,
            _ => 0,
        }
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn tile_id(&self) -> u32 {
        self.tile
    }
}
