//! The machine as the compiler sees it: the same parameters the simulator runs, handed over as
//! plain numbers (the compiler never links the simulator; the top-level package converts the
//! machine description into a [`Target`]).

use serde::{Deserialize, Serialize};

/// One SRAM region of a tile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetRegion {
    pub name: String,
    pub start: u32,
    pub size: u32,
    pub element_bytes: u32,
    /// 1 = linear; 2 = two elements alternating every 8 bytes.
    pub interleave: u32,
}

impl TargetRegion {
    pub fn end(&self) -> u32 {
        self.start + self.size
    }

    /// Bytes of one element (pair, when interleaved): buffers in different element slots start
    /// in different segments of this size.
    pub fn segment_bytes(&self) -> u32 {
        self.element_bytes * self.interleave
    }
}

/// Everything the compiler needs to know about the machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    pub tiles: u32,
    pub clock_hz: u64,
    pub sram_base: u32,
    pub regions: Vec<TargetRegion>,
    /// Supervisor stall of a CSR write (`put`), a taken branch, `run`/`runall`, a released `sync`.
    pub csr_write_stall: u32,
    pub taken_branch_stall: u32,
    pub launch_stall: u32,
    pub sync_stall: u32,
    pub exchange_bytes_per_cycle: u32,
    pub tiles_per_column: u32,
    pub exchange_base_latency: u32,
    pub exchange_cycles_per_column_hop: u32,
    pub global_sync_latency: u32,
    /// Bytes per second the host link loads into the whole chip.
    pub host_load_bytes_per_second: u64,
    /// The exchange fabric's geometry: the direction bits each `send` needs.
    #[serde(default)]
    pub fabric: tessera_isa::fabric::Fabric,
    /// A compile choice carried with the machine: whether exchange transfers may go as paired
    /// 64-bit items where they allow it (`crate::exchange::schedule::Width::Paired`; on by
    /// default, off to compare).
    #[serde(default = "yes")]
    pub paired_exchange: bool,
}

fn yes() -> bool {
    true
}

impl Target {
    pub fn sram_end(&self) -> u32 {
        self.regions
            .iter()
            .map(|r| r.end())
            .max()
            .unwrap_or(self.sram_base)
    }

    pub fn sram_size(&self) -> u32 {
        self.sram_end() - self.sram_base
    }

    /// Cycles from a word leaving `sender` to it arriving at `receiver` (the simulator's model:
    /// the ipu21's route function, `tessera_isa::fabric::route_latency`; on a uniform fabric a
    /// base latency plus a cost per column of distance).
    pub fn latency(&self, sender: u32, receiver: u32) -> u32 {
        if let Some(latency) = self.fabric.latency(sender, receiver) {
            return latency;
        }
        let column = |tile: u32| tile / self.tiles_per_column.max(1);
        self.exchange_base_latency
            + self.exchange_cycles_per_column_hop * column(sender).abs_diff(column(receiver))
    }

    /// A bound on [`Target::latency`] between two of the machine's tiles, for cost models: the
    /// longest on the ipu21; on a uniform fabric, the base plus one hop per column.
    pub fn max_latency(&self) -> u32 {
        match self.fabric {
            tessera_isa::fabric::Fabric::Ipu21 => tessera_isa::fabric::IPU21_MAX_LATENCY,
            tessera_isa::fabric::Fabric::Uniform => {
                self.exchange_base_latency
                    + self.exchange_cycles_per_column_hop
                        * self.tiles.div_ceil(self.tiles_per_column.max(1))
            }
        }
    }

    /// Cycles from a 64-bit item leaving `sender` to its write on `receiver`, one of a pair of
    /// partners (`tessera_isa::fabric::paired_latency`): `None` where the compiler does not
    /// send paired items (a uniform fabric, whose pair timing is no hardware's).
    pub fn paired_latency(&self, sender: u32, receiver: u32) -> Option<u32> {
        self.fabric.paired_latency(sender, receiver)
    }

    /// Cycles by which `receiver`'s timed mux selection (XPIC) must lead the first word it
    /// takes (`tessera_isa::fabric::mux_lead`; 0 on a uniform fabric).
    pub fn mux_lead(&self, receiver: u32) -> u32 {
        self.fabric.mux_lead(receiver)
    }

    pub fn region(&self, interleaved: bool) -> Option<&TargetRegion> {
        self.regions
            .iter()
            .find(|r| (r.interleave > 1) == interleaved)
    }

    /// A small target for unit tests: 16 tiles of the ipu21 tile, the numbers of
    /// `machines/small.ron`.
    ///
    /// Why they are written out again here: the machine file's format and parser belong to
    /// the simulator (`tessera_sim::MachineDescription`), which this crate must not link, not
    /// even in tests; reading the file here would mean a second parser of the simulator's
    /// format, more code than the numbers. So the top-level package's test
    /// (`the_small_machine_is_the_compilers_test_target` in `src/target.rs`) pins this equal to
    /// the file as the simulator reads it; change both together.
    pub fn test_small() -> Target {
        Target {
            name: "small".into(),
            tiles: 16,
            clock_hz: 1_500_000_000,
            sram_base: 0x4C000,
            regions: vec![
                TargetRegion {
                    name: "standard".into(),
                    start: 0x4C000,
                    size: 0x34000,
                    element_bytes: 0x4000,
                    interleave: 1,
                },
                TargetRegion {
                    name: "interleaved".into(),
                    start: 0x80000,
                    size: 0x68000,
                    element_bytes: 0x4000,
                    interleave: 2,
                },
            ],
            csr_write_stall: 6,
            taken_branch_stall: 6,
            launch_stall: 6,
            sync_stall: 6,
            exchange_bytes_per_cycle: 4,
            tiles_per_column: 4,
            exchange_base_latency: 24,
            exchange_cycles_per_column_hop: 1,
            global_sync_latency: 90,
            host_load_bytes_per_second: 24_000_000_000,
            fabric: tessera_isa::fabric::Fabric::Uniform,
            paired_exchange: true,
        }
    }

    /// The ipu21 as the compiler's tests see it: [`Target::test_small`]'s tile on 1472 tiles
    /// with the ipu21's fabric (its route timing and mux lead).
    #[cfg(test)]
    pub(crate) fn test_ipu21() -> Target {
        Target {
            name: "ipu21".into(),
            tiles: tessera_isa::fabric::IPU21_TILES,
            tiles_per_column: 64,
            fabric: tessera_isa::fabric::Fabric::Ipu21,
            ..Target::test_small()
        }
    }
}
