//! Machine descriptions: every parameter of the simulated chip, loaded from RON and validated.
//!
//! Nothing about the machine is hard-coded in the simulator; it reads it from a
//! [`MachineDescription`]. Two descriptions are built in and embedded at compile time from
//! `machines/`: `ipu21` (the headline Mk2-with-FP8 chip of the C600 card) and `small` (the same
//! tile on 16 tiles, for fast tests). Any other description is read from a RON file with
//! [`MachineDescription::load`]. Every struct rejects unknown fields, and every description is
//! validated after parsing ([`MachineDescription::validate`]) with a [`MachineError`] that names
//! the offending field, e.g. `sram.regions[1].start`.
//!
//! # Basis of the `ipu21` values
//!
//! Tags as in `docs/reference/`: **\[C\]** confirmed by a cited public source, **\[I\]** inferred
//! (our deduction or a chosen value consistent with public figures), **\[S\]** secondary (a third
//! party's summary). "isa" is `reference/isa.md`, "system" is `reference/system.md`.
//!
//! | field | value | basis |
//! |---|---|---|
//! | `tiles` | 1472 | \[C\] system §A1 |
//! | `clock_hz` | 1.5 GHz; only converts cycles to seconds | \[I\] system §A3 (560 TFLOPS FP8 / (1472 × 256) = 1.486 GHz) |
//! | `sram.base` | 0x4C000 (`TMEM_REGION0_BASE_ADDR`) | \[C\] isa §5 |
//! | SRAM size | 624 KiB, ends at 0xE8000 | \[I\] isa §5 (900 MB / 1472 tiles) |
//! | region `standard` | 0x4C000..0x80000, 208 KiB, interleave 1 | \[I\] isa §5 "Mk2 layout" |
//! | region `interleaved` | 0x80000..0xE8000, 416 KiB, interleave 2, 32 KiB pairs | \[I\] isa §5 "Mk2 layout" |
//! | `element_bytes` | 16 KiB in both regions | interleaved: \[I\] (half a 32 KiB pair; Mk1 `TMEM_ELEMSIZE` is 16 KiB \[C-ipu1\]); standard: **\[I\] project assumption**, chosen equal so that 208 KiB = 13 elements |
//! | `sram.executable_end` | 0x80000: code runs only in the standard region | \[S\] osmarks/ipu-stack, run on a C600 (docs/reference/hardware-ipu-stack.md §2: "executable region < 0x80000 only") |
//! | `interleave_granule_bytes` | 8 (addresses differing in bit 3 are different elements) | \[C\] isa §5 parallel-access rule; `TMEM_ATOMSIZE` 64 bits \[C-ipu1\] |
//! | `contexts.workers`, `contexts.issue_slots` | 6, 6 | \[C\] isa §1 (VPG §4.2.1) |
//! | `stalls.*` | 6 cycles each: taken branch, CSR write, `run`/`runall`, `sync`, result-use | \[C\] isa §6 (PopLibs `PerformanceEstimation.hpp` cost models); result-use for ALU results and post-increments as for loads \[I\]: PopLibs' supervisors keep an ALU result six instructions from its reader with nops ("keep nop for 6 instructions pipeline", `conv_partial_1x1_supervisor.S`) and `EncodeOneHot.S` counts 6 cycles for a reader of an `and` result and of a post-incremented pointer |
//! | `worker.divide_rounds` | 3 (an `f32div` bundle keeps its worker three issue rounds) | \[C\] PopLibs: `f32div` "takes 1 or 3 cycles depending on input" and the cycle estimators charge 3 (`popopsCycleEstimators.cpp`, `vectorInnerDivCoreCycles_*`; `vectorInnerDiv_half.S`); which inputs take 1 is not public, so always 3 \[A\] |
//! | `worker.repeat_rounds` | 1 (an executed `rpt` costs its own issue round and nothing more: the body's first bundle issues the next round) | \[S\] PopLibs: the pooling estimates (`lib/popnn/PerformanceEstimation.hpp`) match the `rpt` loops of `lib/popnn/codelets/asm/Pooling.S` bundle for bundle with the `rpt` bundle as one cycle (max-pool forward `4 + 3n`: 3 bundles up to and with the `rpt`, a 3-bundle body run `n` times, 1 after; max-pool backward `7 + 5n`; sum-pool `5 + 3n`), and `popnnCycleEstimators.cpp` (`ReduceMaxClassSparse`) itemises `1 // rpt` beside `(numActs - 1) * 3` for a 3-bundle body run `numActs - 1` times; ASM-DOC `rpt.md` calls it a zero-overhead loop. Against: `popopsCycleEstimators.cpp` `vectorInnerAddCoreCycles_float` / `vectorInnerMulCoreCycles_float` (commented "exact") charge `2 * blockCount` for a 2-bundle body their codelet runs `blockCount - 1` times, yet also count the decrement before the loop and the last add-and-store after it, which do the left-out iteration's work: that iteration is counted twice, so the 2 is not read as a set-up cost. Other estimators of that file disagree with one another (`vectorInnerAddCoreCycles_half_multiple_of_8` +2, `_multiple_of_4` +1, `aXPlusbYMixedCoreCycleEstimate` one 5-bundle iteration fewer than its codelet runs). \[A\] until measured |
//! | `amp.sets`, `amp.channels_per_set` | 2, 8 (16 conv units: 64 FP16 / 128 FP8 MAC per instruction) | sets \[C\] isa §2.3; 8 AMP units per set \[C-ipu1\] isa §2.3; MAC rates \[I\] isa §6, system §A1 |
//! | `amp.phases` | 4 (f16/f8 pipeline depth) | \[C\] isa §6 |
//! | `exchange.bytes_per_cycle_per_tile` | 4 | \[I\] system §A2 (PopLibs planners' `getExchangeBytesPerCycle`, consistent with ~8 TB/s) |
//! | `exchange.supertile_size` | 2 | \[C\] system §A2 (supertiles share an exchange bus) |
//! | `exchange.fabric` | `Ipu21` | \[S\] osmarks/ipu-stack's `topology.rs` (docs/reference/hardware-ipu-stack.md appendix A): the snake numbering, each `send`'s direction bits, and the timing: a word lands T(s, d) + 53 + 2·row(d) cycles after it is sent (19 to 165) and a receiver's timed mux selection (XPIC) leads it by 52 + 2·row(d) (`latency_cycles`, `mux_lead_cycles`); `Uniform` (the default) for machines of other sizes |
//! | `exchange.tiles_per_column` | 64 | **\[I\] chosen**: the reference says tiles sit in columns around the exchange and proximity matters (\[C\] patent, \[S\] Citadel) but gives no column size; 64 divides both 1216 (Mk1) and 1472 tiles |
//! | `exchange.base_latency_cycles` | 24 | **\[I\] chosen**, used only on a `Uniform` fabric (`small`): the ipu21's latency is its route function's |
//! | `exchange.cycles_per_column_hop` | 1 | **\[I\] chosen**, as above, `Uniform` only |
//! | `sync.global_sync_latency_cycles` | 90 | \[I\] from a PopLibs heuristic (the CTC planner charges ~90 cycles per sync, system §A2; a heuristic, not a measurement) |
//! | `sync.local_sync_cycles` | 0 | \[I\] PopLibs cost models charge a local `sync` only its 6-cycle supervisor stall (`stalls.sync`) |
//! | `host.host_load_bytes_per_second` | 3.9 GB/s (whole chip; ≈ 2.6 B per 1.5 GHz cycle) | \[S\] measured by osmarks/ipu-stack on a C600: 453,752,832 B of weights uploaded in about 116 ms in 76 parallel batches (docs/reference/hardware-ipu-stack.md §1.7). It was 16 B/cycle (≈ 24 GB/s, PCIe Gen4 x16 assumed), six times faster \[I\]; `small` keeps that |
//!
//! `small` uses the same tile (SRAM layout, contexts, stalls, AMP) so that kernels behave
//! identically, with 16 tiles in 4 columns of 4.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// RON text of the built-in `ipu21` machine.
const IPU21_RON: &str = include_str!("../../machines/ipu21.ron");
/// RON text of the built-in `small` test machine.
const SMALL_RON: &str = include_str!("../../machines/small.ron");

/// Names accepted by [`MachineDescription::builtin`].
pub const BUILTIN_MACHINES: &[&str] = &["ipu21", "small"];

/// Accesses are at most this wide (`ld128`), so region boundaries and element sizes are kept
/// multiples of it: a naturally aligned access then never straddles two regions or elements.
pub const MAX_ACCESS_BYTES: u32 = 16;

/// `MemoryLayout` keeps one byte per address chunk naming its region; a real tile has two.
pub const MAX_REGIONS: usize = 256;

/// Why a machine description could not be loaded or is not a valid machine.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("unknown built-in machine `{name}` (built-ins: {})", BUILTIN_MACHINES.join(", "))]
    UnknownBuiltin { name: String },
    #[error("cannot read machine description {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("machine description {origin}: {source}")]
    Parse {
        origin: String,
        #[source]
        source: ron::error::SpannedError,
    },
    #[error("{field} must not be empty")]
    Empty { field: String },
    #[error("{field} must be greater than zero")]
    Zero { field: String },
    #[error("{field} = {value} is invalid: {reason}")]
    InvalidValue {
        field: String,
        value: u64,
        reason: &'static str,
    },
    #[error("{field} = {value:#x} must be a multiple of {multiple:#x} ({what})")]
    NotMultiple {
        field: String,
        value: u64,
        multiple: u64,
        what: &'static str,
    },
    #[error("{field} = {value} must not exceed {limit_field} = {limit}")]
    Exceeds {
        field: String,
        value: u64,
        limit_field: String,
        limit: u64,
    },
    #[error("sram.regions has {count} regions; at most {MAX_REGIONS} are supported")]
    TooManyRegions { count: usize },
    #[error("{field} = {start:#x} leaves a gap: the previous region (or sram.base) ends at {expected:#x}; regions must be contiguous")]
    RegionGap {
        field: String,
        start: u32,
        expected: u32,
    },
    #[error("{field} = {start:#x} overlaps the previous region (or precedes sram.base), which ends at {expected:#x}")]
    RegionOverlap {
        field: String,
        start: u32,
        expected: u32,
    },
    #[error("{field}: region ending at {end:#x} runs past the 32-bit address space")]
    RegionOverflow { field: String, end: u64 },
    #[error("{field}: region name `{name}` is used by an earlier region")]
    DuplicateRegionName { field: String, name: String },
}

/// Everything the simulator needs to know about one machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineDescription {
    /// Name shown in reports, e.g. `ipu21`.
    pub name: String,
    /// Number of tiles on the chip.
    pub tiles: u32,
    /// Clock frequency; used only to convert cycle counts to seconds.
    pub clock_hz: u64,
    /// The tile's SRAM layout (identical on every tile).
    pub sram: SramDescription,
    /// Hardware thread contexts and issue slots of one tile.
    pub contexts: ContextDescription,
    /// Supervisor issue stalls by instruction class.
    pub stalls: SupervisorStalls,
    /// Worker instructions that take more than one issue round.
    pub worker: WorkerTiming,
    /// The accumulating matrix product (AMP) unit.
    pub amp: AmpDescription,
    /// The inter-tile exchange fabric.
    pub exchange: ExchangeDescription,
    /// Barrier synchronisation costs.
    pub sync: SyncDescription,
    /// Host link, used to model start-up loading.
    pub host: HostDescription,
}

/// Tile SRAM: a base address followed by contiguous regions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SramDescription {
    /// First SRAM address (`TMEM_REGION0_BASE_ADDR`); the first region starts here.
    pub base: u32,
    /// In an interleaved region, consecutive runs of this many bytes alternate between the
    /// elements of a pair. A power of two, at least 8 (one 64-bit atom).
    pub interleave_granule_bytes: u32,
    /// Regions in address order, contiguous and non-overlapping.
    pub regions: Vec<RegionDescription>,
    /// Instructions are fetched only below this address: code loaded past it is refused. `None`
    /// (when absent): anywhere in SRAM.
    #[serde(default)]
    pub executable_end: Option<u32>,
}

/// One SRAM region: a run of memory elements, linear or interleaved in pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionDescription {
    /// Unique name, e.g. `standard` or `interleaved`.
    pub name: String,
    /// First address of the region.
    pub start: u32,
    /// Size in bytes; a multiple of `element_bytes * interleave`.
    pub size: u32,
    /// Size of one memory element (one access per element per cycle).
    pub element_bytes: u32,
    /// 1 = linear (each element covers `element_bytes` consecutive bytes); 2 = a pair of
    /// elements covers `2 * element_bytes` bytes, alternating every `interleave_granule_bytes`.
    pub interleave: u32,
}

/// Thread contexts of one tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextDescription {
    /// Worker contexts (besides the one supervisor context).
    pub workers: u32,
    /// Round-robin issue slots of the barrel; each running worker occupies one.
    pub issue_slots: u32,
}

/// Worker issue: a worker's next bundle normally issues one round (`contexts.issue_slots`
/// cycles) after its last; after a bundle of one of these classes it waits this many rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerTiming {
    /// A bundle with `f32div` (timing class `Divide`).
    pub divide_rounds: u32,
    /// An executed `rpt` bundle (timing class `Repeat`), whatever its count: the rounds before
    /// the first body bundle (or, with a count of 0, the bundle after the body) issues. 1 is no
    /// set-up cost beyond the bundle's own issue.
    pub repeat_rounds: u32,
}

/// Supervisor stalls: after issuing an instruction of one of these classes, the supervisor's
/// next issue comes this many cycles after that issue (1 would mean no stall).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupervisorStalls {
    /// A taken branch (e.g. `brnzdec` looping).
    pub taken_branch: u32,
    /// A CSR write (e.g. `put $CCCSLOAD`).
    pub csr_write: u32,
    /// `run` or `runall`.
    pub run: u32,
    /// `sync`.
    pub sync: u32,
    /// An instruction that reads an MRF register a supervisor instruction wrote (a load, an ALU
    /// result, a post-increment) issues at least this many cycles after the writer.
    pub result_use: u32,
}

/// The AMP unit of one tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmpDescription {
    /// Independent AMP sets.
    pub sets: u32,
    /// Output channels (conv units) per set.
    pub channels_per_set: u32,
    /// Pipeline depth in AMP instructions for f16/f8 (results emerge `phases` calls later).
    pub phases: u32,
}

/// The exchange fabric. On a `Uniform` fabric tile `t` sits in column `t / tiles_per_column`
/// and a word sent from one tile arrives `base_latency_cycles + cycles_per_column_hop *
/// |column distance|` cycles later; the ipu21's fabric has its own route timing
/// ([`ExchangeDescription::latency_cycles`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeDescription {
    /// Bytes a tile can send (and receive) per cycle.
    pub bytes_per_cycle_per_tile: u32,
    /// Tiles per exchange column; divides `tiles`.
    pub tiles_per_column: u32,
    /// Latency between two tiles of the same column.
    pub base_latency_cycles: u32,
    /// Extra latency per column between sender and receiver.
    pub cycles_per_column_hop: u32,
    /// Consecutive tiles sharing one exchange bus (receive rate doubles for shared data);
    /// divides `tiles_per_column`.
    pub supertile_size: u32,
    /// The fabric's geometry, which decides the direction bits a `send` needs to reach a tile
    /// (`tessera_isa::fabric`); `Uniform` when absent.
    #[serde(default)]
    pub fabric: tessera_isa::fabric::Fabric,
}

/// Barrier synchronisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncDescription {
    /// Cycles from the last tile joining a global sync until all tiles are released.
    pub global_sync_latency_cycles: u32,
    /// Cycles from the last worker exiting until a waiting local `sync` completes, on top of
    /// the supervisor's `stalls.sync`.
    pub local_sync_cycles: u32,
}

/// The host link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostDescription {
    /// Bytes per second the host can write into the whole chip while loading code and data.
    pub host_load_bytes_per_second: u64,
}

impl MachineDescription {
    /// One of the built-in machines ([`BUILTIN_MACHINES`]).
    pub fn builtin(name: &str) -> Result<Self, MachineError> {
        let text = match name {
            "ipu21" => IPU21_RON,
            "small" => SMALL_RON,
            _ => {
                return Err(MachineError::UnknownBuiltin {
                    name: name.to_owned(),
                })
            }
        };
        Self::parse(text, || format!("built-in `{name}`"))
    }

    /// Parses and validates a description given as RON text.
    pub fn from_ron_str(text: &str) -> Result<Self, MachineError> {
        Self::parse(text, || "(RON text)".to_owned())
    }

    /// A built-in machine if `name_or_path` names one, otherwise the RON file at that path.
    /// Built-in names win over files of the same name in the working directory.
    pub fn load(name_or_path: &str) -> Result<Self, MachineError> {
        if BUILTIN_MACHINES.contains(&name_or_path) {
            Self::builtin(name_or_path)
        } else {
            Self::from_path(name_or_path)
        }
    }

    /// Reads, parses and validates the RON file at `path`.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, MachineError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| MachineError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, || path.display().to_string())
    }

    fn parse(text: &str, origin: impl FnOnce() -> String) -> Result<Self, MachineError> {
        let machine: Self = ron::from_str(text).map_err(|source| MachineError::Parse {
            origin: origin(),
            source,
        })?;
        machine.validate()?;
        Ok(machine)
    }

    /// Checks every invariant the simulator relies on; the error names the first bad field.
    pub fn validate(&self) -> Result<(), MachineError> {
        if self.name.is_empty() {
            return Err(MachineError::Empty {
                field: "name".into(),
            });
        }
        nonzero("tiles", self.tiles)?;
        if self.clock_hz == 0 {
            return Err(MachineError::Zero {
                field: "clock_hz".into(),
            });
        }
        self.sram.validate()?;
        self.contexts.validate()?;
        self.stalls.validate()?;
        nonzero("worker.divide_rounds", self.worker.divide_rounds)?;
        nonzero("worker.repeat_rounds", self.worker.repeat_rounds)?;
        self.amp.validate()?;
        self.exchange.validate(self.tiles)?;
        if self.host.host_load_bytes_per_second == 0 {
            return Err(MachineError::Zero {
                field: "host.host_load_bytes_per_second".into(),
            });
        }
        Ok(())
    }

    /// Cycles the host link takes to load `bytes` into the chip, rounded up.
    pub fn host_load_cycles(&self, bytes: u64) -> u64 {
        let rate = u128::from(self.host.host_load_bytes_per_second.max(1));
        let cycles = (u128::from(bytes) * u128::from(self.clock_hz)).div_ceil(rate);
        u64::try_from(cycles).unwrap_or(u64::MAX)
    }

    /// Converts a cycle count to seconds at `clock_hz`.
    pub fn cycles_to_seconds(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_hz as f64
    }

    /// Bytes of SRAM per tile.
    pub fn sram_size(&self) -> u32 {
        self.sram.size()
    }

    /// One past the last SRAM address.
    pub fn sram_end(&self) -> u32 {
        self.sram.end()
    }

    /// What an image records about the machine it was built for.
    pub fn fingerprint(&self) -> tessera_isa::image::MachineFingerprint {
        tessera_isa::image::MachineFingerprint {
            name: self.name.clone(),
            tiles: self.tiles,
            sram_base: self.sram.base,
            sram_size: self.sram_size(),
        }
    }

    /// The SRAM regions as `(name, start, size)`, the form `ImageBuilder::new` takes.
    pub fn sram_regions(&self) -> Vec<(String, u32, u32)> {
        self.sram
            .regions
            .iter()
            .map(|r| (r.name.clone(), r.start, r.size))
            .collect()
    }

    /// An image builder for this machine.
    pub fn image_builder(
        &self,
    ) -> Result<tessera_isa::image::ImageBuilder, tessera_isa::image::ImageError> {
        tessera_isa::image::ImageBuilder::new(self.fingerprint(), self.sram_regions())
    }
}

impl fmt::Display for MachineDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} tiles, {} KiB SRAM per tile at {:#x}, {:.3} GHz)",
            self.name,
            self.tiles,
            self.sram_size() / 1024,
            self.sram.base,
            self.clock_hz as f64 / 1e9
        )
    }
}

impl SramDescription {
    /// Sum of the region sizes. Saturates on an invalid (overflowing) description.
    pub fn size(&self) -> u32 {
        self.regions
            .iter()
            .fold(0u32, |total, region| total.saturating_add(region.size))
    }

    /// One past the last SRAM address. Saturates on an invalid (overflowing) description.
    pub fn end(&self) -> u32 {
        self.base.saturating_add(self.size())
    }

    /// Checks the SRAM layout on its own (also used by `MemoryLayout`).
    pub fn validate(&self) -> Result<(), MachineError> {
        if !self.base.is_multiple_of(MAX_ACCESS_BYTES) {
            return Err(MachineError::NotMultiple {
                field: "sram.base".into(),
                value: self.base.into(),
                multiple: MAX_ACCESS_BYTES.into(),
                what: "the widest access, so aligned accesses never straddle regions",
            });
        }
        let granule = self.interleave_granule_bytes;
        if granule < 8 || !granule.is_power_of_two() {
            return Err(MachineError::InvalidValue {
                field: "sram.interleave_granule_bytes".into(),
                value: granule.into(),
                reason: "must be a power of two of at least 8 (one 64-bit atom)",
            });
        }
        if self.regions.is_empty() {
            return Err(MachineError::Empty {
                field: "sram.regions".into(),
            });
        }
        if self.regions.len() > MAX_REGIONS {
            return Err(MachineError::TooManyRegions {
                count: self.regions.len(),
            });
        }
        let mut expected_start = self.base;
        for (index, region) in self.regions.iter().enumerate() {
            let field = |name: &str| format!("sram.regions[{index}].{name}");
            if region.name.is_empty() {
                return Err(MachineError::Empty {
                    field: field("name"),
                });
            }
            if self.regions[..index].iter().any(|r| r.name == region.name) {
                return Err(MachineError::DuplicateRegionName {
                    field: field("name"),
                    name: region.name.clone(),
                });
            }
            if region.interleave != 1 && region.interleave != 2 {
                return Err(MachineError::InvalidValue {
                    field: field("interleave"),
                    value: region.interleave.into(),
                    reason: "must be 1 (linear) or 2 (pairs of elements)",
                });
            }
            nonzero(&field("element_bytes"), region.element_bytes)?;
            for (multiple, what) in [
                (MAX_ACCESS_BYTES, "the widest access"),
                (granule, "sram.interleave_granule_bytes"),
            ] {
                if !region.element_bytes.is_multiple_of(multiple) {
                    return Err(MachineError::NotMultiple {
                        field: field("element_bytes"),
                        value: region.element_bytes.into(),
                        multiple: multiple.into(),
                        what,
                    });
                }
            }
            nonzero(&field("size"), region.size)?;
            // Both factors are validated small enough above that this cannot overflow u64.
            let unit = u64::from(region.element_bytes) * u64::from(region.interleave);
            if !u64::from(region.size).is_multiple_of(unit) {
                return Err(MachineError::NotMultiple {
                    field: field("size"),
                    value: region.size.into(),
                    multiple: unit,
                    what: "element_bytes × interleave",
                });
            }
            if region.start > expected_start {
                return Err(MachineError::RegionGap {
                    field: field("start"),
                    start: region.start,
                    expected: expected_start,
                });
            }
            if region.start < expected_start {
                return Err(MachineError::RegionOverlap {
                    field: field("start"),
                    start: region.start,
                    expected: expected_start,
                });
            }
            let end = u64::from(region.start) + u64::from(region.size);
            expected_start = u32::try_from(end).map_err(|_| MachineError::RegionOverflow {
                field: field("size"),
                end,
            })?;
        }
        if let Some(end) = self.executable_end {
            if end <= self.base || end > expected_start {
                return Err(MachineError::InvalidValue {
                    field: "sram.executable_end".into(),
                    value: end.into(),
                    reason: "must lie after sram.base and no later than the end of the last region",
                });
            }
        }
        Ok(())
    }

    /// One past the last address instructions are fetched from.
    pub fn executable_end(&self) -> u32 {
        self.executable_end.unwrap_or_else(|| self.end())
    }
}

impl ContextDescription {
    fn validate(&self) -> Result<(), MachineError> {
        nonzero("contexts.workers", self.workers)?;
        nonzero("contexts.issue_slots", self.issue_slots)?;
        if self.workers > self.issue_slots {
            return Err(MachineError::Exceeds {
                field: "contexts.workers".into(),
                value: self.workers.into(),
                limit_field: "contexts.issue_slots".into(),
                limit: self.issue_slots.into(),
            });
        }
        Ok(())
    }
}

impl SupervisorStalls {
    fn validate(&self) -> Result<(), MachineError> {
        // A stall of 0 would let the supervisor issue twice in one cycle.
        nonzero("stalls.taken_branch", self.taken_branch)?;
        nonzero("stalls.csr_write", self.csr_write)?;
        nonzero("stalls.run", self.run)?;
        nonzero("stalls.sync", self.sync)?;
        nonzero("stalls.result_use", self.result_use)
    }
}

impl AmpDescription {
    fn validate(&self) -> Result<(), MachineError> {
        nonzero("amp.sets", self.sets)?;
        nonzero("amp.channels_per_set", self.channels_per_set)?;
        nonzero("amp.phases", self.phases)
    }

    /// Output channels of all sets together.
    pub fn channels(&self) -> u32 {
        self.sets.saturating_mul(self.channels_per_set)
    }
}

impl ExchangeDescription {
    fn validate(&self, tiles: u32) -> Result<(), MachineError> {
        nonzero(
            "exchange.bytes_per_cycle_per_tile",
            self.bytes_per_cycle_per_tile,
        )?;
        nonzero("exchange.tiles_per_column", self.tiles_per_column)?;
        nonzero("exchange.supertile_size", self.supertile_size)?;
        // Zero latency would deliver a word in the cycle it is sent, before any mux could see it.
        nonzero("exchange.base_latency_cycles", self.base_latency_cycles)?;
        if !tiles.is_multiple_of(self.tiles_per_column) {
            return Err(MachineError::NotMultiple {
                field: "tiles".into(),
                value: tiles.into(),
                multiple: self.tiles_per_column.into(),
                what: "exchange.tiles_per_column: columns are whole",
            });
        }
        if !self.tiles_per_column.is_multiple_of(self.supertile_size) {
            return Err(MachineError::NotMultiple {
                field: "exchange.tiles_per_column".into(),
                value: self.tiles_per_column.into(),
                multiple: self.supertile_size.into(),
                what: "exchange.supertile_size: supertiles do not straddle columns",
            });
        }
        match self.fabric {
            tessera_isa::fabric::Fabric::Uniform => {}
            tessera_isa::fabric::Fabric::Ipu21 => {
                if tiles != tessera_isa::fabric::IPU21_TILES {
                    return Err(MachineError::InvalidValue {
                        field: "tiles".into(),
                        value: tiles.into(),
                        reason: "exchange.fabric `Ipu21` is the geometry of 1472 tiles",
                    });
                }
            }
        }
        Ok(())
    }

    /// The exchange column of `tile`.
    pub fn column_of(&self, tile: u32) -> u32 {
        tile.checked_div(self.tiles_per_column).unwrap_or(0)
    }

    /// The supertile (shared exchange bus) of `tile`.
    pub fn supertile_of(&self, tile: u32) -> u32 {
        tile.checked_div(self.supertile_size).unwrap_or(0)
    }

    /// Cycles from `sender` putting a word on the exchange until it reaches `receiver`: the
    /// route function's on the ipu21 ([`tessera_isa::fabric::route_latency`]), else the base
    /// latency plus a cost per column of distance.
    pub fn latency_cycles(&self, sender: u32, receiver: u32) -> u64 {
        if let Some(latency) = self.fabric.latency(sender, receiver) {
            return u64::from(latency);
        }
        let hops = self.column_of(sender).abs_diff(self.column_of(receiver));
        u64::from(self.base_latency_cycles)
            + u64::from(self.cycles_per_column_hop) * u64::from(hops)
    }

    /// Cycles from a 64-bit item on `sender`'s wires to its write on `receiver`, one of a
    /// receiving pair: [`tessera_isa::fabric::paired_latency`] on the ipu21; on a uniform
    /// fabric the later of the pair's two 32-bit latencies plus one \[A\].
    pub fn paired_latency_cycles(&self, sender: u32, receiver: u32) -> u64 {
        if let Some(latency) = self.fabric.paired_latency(sender, receiver) {
            return u64::from(latency);
        }
        let partner = self.fabric.partner(receiver);
        self.latency_cycles(sender, receiver)
            .max(self.latency_cycles(sender, partner))
            + 1
    }

    /// Cycles by which `receiver`'s timed mux selection leads the words it takes
    /// ([`tessera_isa::fabric::mux_lead`] on the ipu21; 0 on a uniform fabric).
    pub fn mux_lead_cycles(&self, receiver: u32) -> u64 {
        u64::from(self.fabric.mux_lead(receiver))
    }
}

fn nonzero(field: &str, value: u32) -> Result<(), MachineError> {
    if value == 0 {
        Err(MachineError::Zero {
            field: field.to_owned(),
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipu21_matches_the_reference_layout() {
        let machine = MachineDescription::builtin("ipu21").unwrap();
        assert_eq!(machine.tiles, 1472);
        assert_eq!(machine.sram.base, 0x4C000);
        assert_eq!(machine.sram_size(), 624 * 1024);
        assert_eq!(machine.sram_end(), 0xE8000);
        assert_eq!(machine.sram.regions[0].size, 208 * 1024);
        assert_eq!(machine.sram.regions[1].start, 0x80000);
        assert_eq!(machine.amp.channels(), 16);
    }

    #[test]
    fn small_has_the_same_tile_as_ipu21() {
        let big = MachineDescription::builtin("ipu21").unwrap();
        let small = MachineDescription::builtin("small").unwrap();
        assert_eq!(small.tiles, 16);
        assert_eq!(small.sram, big.sram);
        assert_eq!(small.contexts, big.contexts);
        assert_eq!(small.stalls, big.stalls);
        assert_eq!(small.amp, big.amp);
    }

    #[test]
    fn cycles_convert_at_the_clock() {
        let machine = MachineDescription::builtin("ipu21").unwrap();
        assert!((machine.cycles_to_seconds(1_500_000_000) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn latency_grows_with_column_distance() {
        let exchange = MachineDescription::builtin("small").unwrap().exchange;
        let same = exchange.latency_cycles(0, 3);
        assert_eq!(same, u64::from(exchange.base_latency_cycles));
        assert_eq!(
            exchange.latency_cycles(0, 15),
            same + 3 * u64::from(exchange.cycles_per_column_hop)
        );
        assert_eq!(
            exchange.latency_cycles(15, 0),
            exchange.latency_cycles(0, 15)
        );
    }

    #[test]
    fn workers_cannot_exceed_issue_slots() {
        let mut machine = MachineDescription::builtin("small").unwrap();
        machine.contexts.workers = 7;
        let err = machine.validate().unwrap_err();
        assert!(err.to_string().contains("contexts.workers"), "{err}");
    }

    #[test]
    fn unknown_builtin_lists_the_builtins() {
        let err = MachineDescription::builtin("ipu99").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown built-in machine `ipu99` (built-ins: ipu21, small)"
        );
    }
}
