//! The emitter: from a verified tile [`Program`] and its [`Placement`] to an executable
//! [`Image`] — kernel code, vertex state, one supervisor program per tile (kernel calls, timed
//! exchange code, a global sync after every step), buffer segments, worker scratch and the host
//! I/O map.
//!
//! # Tile memory
//!
//! ```text
//! sram_base     kernel code      every kernel a call uses, each assembled once and packed in
//!                                library order at one address for the whole chip (one blob
//!                                per kernel); a tile loads the kernels it calls, the rest of
//!                                the area is `padding` on it
//! vertex_base   vertex state     this tile's vertex records: one per call, 8-aligned, in step
//!                                and call order; the area is as large as the largest tile's
//! program_base  supervisor       this tile's program (see below)
//! code_end      worker scratch   6 × 256 bytes (`$WORKER0_BASE`..`$WORKER5_BASE`)
//!               buffers          wherever `place` put them (after the reserved area)
//! ```
//!
//! Vertex state is allocated here, not by `place`: vertex words are data the emitter writes, so
//! the tile program needs no `VertexState` buffers (it may still declare some; they are placed
//! and accounted like any buffer).
//!
//! # Which tiles run
//!
//! A tile runs (has an entry and joins every global sync) iff it has a buffer or a kernel call;
//! transfers and host pieces name buffers, so every tile that takes part in anything runs. Tiles
//! with nothing get no image entry at all: they do not run and take no part in syncs.
//!
//! # Supervisor programs
//!
//! Every running tile runs every step (bulk-synchronous), then `sync TEXCH_SYNCZONE_INTERNAL`:
//!
//! * compute step, per call in order: the case's supervisor CSRs (`setzi $m0, v` + `put`; a CSR
//!   an earlier call on the tile set and this one does not is reset to 0, its start value, so
//!   every call sees the CSRs its case lists and zeros elsewhere, as in the kernel checker), then
//!   a worker kernel: `setzi $m0, ENTRY; setzi $m1, VERTEX;
//!   runall $m0, $m1, 0; sync TEXCH_SYNCZONE_LOCAL`; a supervisor kernel:
//!   `setzi $mvertex_base, VERTEX; call $m10, ENTRY` (it returns with `br $m10`);
//! * exchange step: the phase's code from [`crate::exchange::emit`] (transfers resolved with the
//!   placement, scheduled by [`crate::exchange::schedule`], checked by
//!   [`crate::exchange::check`] before use); it starts right after
//!   the previous sync's release (or at program start), which is cycle 0 of the schedule on
//!   every tile;
//! * the program ends with `br $mzero` (address 0 returns to the host).
//!
//! Programs are generated tile by tile in parallel and encoded directly into the object the
//! assembler would make of their text (`.section .text.tessera_supervisor`, `.supervisor`,
//! `.align 8`, the global label `tessera_supervisor`); a unit test holds the two equal. Tiles
//! whose programs are equal as text (comments included) share one object. The report's sample
//! program is the text of the lowest running tile.
//!
//! # Sizing the reserved area before placement
//!
//! A program's length does not depend on buffer addresses: every instruction is 4 bytes,
//! addresses always fit the 20-bit `setzi` (one instruction), and the exchange schedule depends
//! only on tiles, word counts and latencies. So [`reserve`] generates every program with
//! placeholder addresses and counts instructions; [`emit`] regenerates them with the real
//! addresses and refuses (E-EMIT-007) a program that outgrew the reserve. [`compile`] runs the
//! whole back end (reserve → place → check → emit) and, should that refusal ever happen,
//! enlarges the reserve to what was needed and repeats once.
//!
//! # Buffers
//!
//! Buffers are grouped by alias root; roots whose address ranges overlap (buffers with disjoint
//! lives sharing memory) become one segment per distinct address range, named after its
//! buffers, with the category of its largest buffer (`Tensor`/`Weights` → `tensor:NAME`,
//! `VertexState` → vertex state, `Scratch` → worker scratch). A segment has a blob iff one of
//! its buffers has `contents`. Initial data (contents and host-input pieces) must not share
//! memory with a buffer live before it, and host outputs not with one live after them
//! (E-EMIT-011): the simulator would see them overwritten while the plan does not.

pub mod example;
mod kernels;
mod memory;
mod supervisor;
mod vertex;

use crate::exchange::schedule::{list_improved, schedule_for_emission, PhaseSchedule};
use crate::exchange::{ExchangeError, ExchangePhase};
use crate::place::{self, PlaceError, Placement, Reserved};
use crate::target::Target;
use crate::tile::verify::{verify, TileVerifyError};
use crate::tile::{BufferCategory, Program, StepKind};
use kernels::KernelCode;
use rayon::prelude::*;
use std::collections::HashMap;
use tessera_isa::image::{
    Image, ImageBuilder, ImageError, MachineFingerprint, ObjectRules, SramCategory, WORKER_CONTEXTS,
};
use vertex::VertexLayout;

/// Scratch bytes per worker context (as in the kernel checker).
pub const WORKER_SCRATCH_BYTES: u32 = 256;

/// Why a program could not be emitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("E-EMIT-001 the tile program is malformed: {0}")]
    Verify(#[from] TileVerifyError),
    #[error("E-EMIT-002 placement: {0}")]
    Place(#[from] PlaceError),
    #[error("E-EMIT-003 tile {tile} step {step}: no kernel `{kernel}` in the library")]
    UnknownKernel {
        tile: u32,
        step: usize,
        kernel: String,
    },
    #[error("E-EMIT-004 assembling {what}:\n{message}")]
    Assemble { what: String, message: String },
    #[error("E-EMIT-005 exchange step {step} (phase {phase}): {error}")]
    Exchange {
        step: usize,
        phase: usize,
        error: ExchangeError,
    },
    #[error("E-EMIT-006 code, vertex state and worker scratch end at {end:#x}, past the standard region's end {region_end:#x} by {over} bytes: kernel code ends at {kernel_end:#x}, vertex state at {vertex_end:#x}, then the largest supervisor program ({program_bytes} bytes, tile {program_tile}) and {scratch_bytes} bytes of worker scratch", over = end.saturating_sub(*region_end as u64))]
    DoesNotFit {
        end: u64,
        region_end: u32,
        kernel_end: u32,
        vertex_end: u32,
        program_bytes: u32,
        program_tile: u32,
        scratch_bytes: u32,
    },
    #[error("E-EMIT-007 tile {tile}: the supervisor program needs {needed} bytes but {reserved} are reserved")]
    ReserveTooSmall {
        tile: u32,
        needed: u32,
        reserved: u32,
    },
    #[error("E-EMIT-008 image: {0}")]
    Image(#[from] ImageError),
    #[error("E-EMIT-009 the placement does not fit the program: {reason}")]
    BadPlacement { reason: String },
    #[error("E-EMIT-010 tile {tile} step {step} `{kernel}` vertex word {word}: {reason}")]
    Vertex {
        tile: u32,
        step: usize,
        kernel: String,
        word: usize,
        reason: String,
    },
    #[error("E-EMIT-011 tile {tile} buffer `{buffer}`: {reason}")]
    Memory {
        tile: u32,
        buffer: String,
        reason: String,
    },
    #[error("E-EMIT-012 host tensor `{name}`: {reason}")]
    HostTensor { name: String, reason: String },
}

/// What the emitter made, for reports, dumps and snapshots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitReport {
    /// Tiles with an entry, in order.
    pub running_tiles: Vec<u32>,
    pub kernel_code_bytes: u32,
    pub vertex_base: u32,
    pub program_base: u32,
    /// End of the supervisor program area (the placement's `code_end`).
    pub code_end: u32,
    /// `(tile, bytes)` of every running tile's supervisor program.
    pub program_bytes: Vec<(u32, u32)>,
    /// `(tile, bytes)` of every running tile's vertex state.
    pub vertex_bytes: Vec<(u32, u32)>,
    /// Distinct supervisor programs (identical ones share one blob).
    pub distinct_programs: usize,
    /// Schedule length in cycles of every exchange phase, in phase order.
    pub phase_cycles: Vec<u32>,
    /// Transfers of every exchange phase that go as paired 64-bit items
    /// ([`crate::exchange::schedule::Width::Paired`]), in phase order.
    pub phase_paired: Vec<usize>,
    /// The supervisor program text of the lowest running tile (tile 0 when it runs).
    pub sample_program: Option<(u32, String)>,
    /// Per tile, per call in step and call order: its vertex record `[start, end)` (a worker
    /// launched with `$mvertex_base` in it ran for that call; see `KernelSpan::vertex`).
    pub call_vertices: Vec<Vec<(u32, u32)>>,
}

/// An image and its report.
#[derive(Clone, Debug)]
pub struct Emitted {
    pub image: Image,
    pub report: EmitReport,
}

/// The result of the whole back end.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub placement: Placement,
    /// Shared, so a simulator can load it without a copy (it holds every weight byte).
    pub image: std::sync::Arc<Image>,
    pub report: EmitReport,
}

/// Everything about a program that does not depend on buffer addresses.
struct Frame {
    kernels: KernelCode,
    vertex: VertexLayout,
    schedules: Vec<PhaseSchedule>,
    running: Vec<bool>,
    program_base: u32,
    /// The largest program, in bytes, generated with placeholder addresses.
    program_bytes: u32,
    /// The tile whose program that is.
    program_tile: u32,
}

impl Frame {
    fn new(target: &Target, program: &Program) -> Result<Frame, EmitError> {
        verify(program)?;
        if let Some((index, tile)) = program
            .tiles
            .iter()
            .enumerate()
            .find(|(i, t)| t.tile as usize != *i)
        {
            return Err(TileVerifyError::Tile {
                tile: tile.tile,
                reason: format!(
                    "is at index {index} of the program's tiles (tile ids must be their indices)"
                ),
            }
            .into());
        }
        if program.tiles.len() > target.tiles as usize {
            return Err(EmitError::BadPlacement {
                reason: format!(
                    "{} tile programs for a {}-tile target",
                    program.tiles.len(),
                    target.tiles
                ),
            });
        }
        let kernels = kernels::assemble_used(target, program)?;
        let vertex = VertexLayout::new(program, kernels.end.div_ceil(8) * 8);
        // The phases in their given order: a finalist that does not place costs no list
        // scheduling ([`Frame::listed_if_it_fits`] improves them once it places).
        let schedules = schedule_phases(target, program, None)?;
        let running = program
            .tiles
            .iter()
            .map(|t| !t.buffers.is_empty() || t.calls.iter().any(|c| !c.is_empty()))
            .collect();
        let program_base = vertex.end().div_ceil(8) * 8;
        let mut frame = Frame {
            kernels,
            vertex,
            schedules,
            running,
            program_base,
            program_bytes: 0,
            program_tile: 0,
        };
        frame.measure_programs(target, program)?;
        Ok(frame)
    }

    /// The largest supervisor program and its tile, generated with placeholder addresses.
    fn measure_programs(&mut self, target: &Target, program: &Program) -> Result<(), EmitError> {
        let placeholder: Vec<Vec<u32>> = program
            .tiles
            .iter()
            .map(|t| vec![target.sram_base; t.buffers.len()])
            .collect();
        let (counts, _) = supervisor::generate(
            target,
            program,
            self,
            &placeholder,
            false,
            supervisor::Counter::default,
        )?;
        (self.program_bytes, self.program_tile) = (0, 0);
        if let Some((tile, counter)) = counts
            .iter()
            .max_by_key(|(tile, c)| (c.count, u32::MAX - *tile))
        {
            self.program_bytes = counter.count * 4;
            self.program_tile = *tile;
        }
        Ok(())
    }

    /// Swaps in every phase list-scheduled where that is shorter
    /// ([`crate::exchange::schedule::list_improved`]) and measures the programs again;
    /// returns the given-order schedules and measure, for [`Frame::restore`].
    fn list(
        &mut self,
        target: &Target,
        program: &Program,
    ) -> Result<(Vec<PhaseSchedule>, (u32, u32)), EmitError> {
        let listed = schedule_phases(target, program, Some(&self.schedules))?;
        let given = std::mem::replace(&mut self.schedules, listed);
        let measured = (self.program_bytes, self.program_tile);
        self.measure_programs(target, program)?;
        Ok((given, measured))
    }

    /// Puts back what [`Frame::list`] replaced.
    fn restore(&mut self, (given, measured): (Vec<PhaseSchedule>, (u32, u32))) {
        self.schedules = given;
        (self.program_bytes, self.program_tile) = measured;
    }

    /// Whether the supervisor programs end inside `reserved`'s code area.
    fn programs_fit(&self, reserved: &Reserved) -> bool {
        self.program_base + self.program_bytes <= reserved.code_end
    }

    /// This frame list-scheduled ([`Frame::list`]) and the placement for it: `placement` if
    /// the programs still end inside its reserve, else a placement with the reserve they need;
    /// this frame and `placement` as they were if that does not place.
    fn listed(
        mut self,
        target: &Target,
        program: &Program,
        placement: Placement,
    ) -> Result<(Frame, Placement), EmitError> {
        let given = self.list(target, program)?;
        if self.programs_fit(&placement.reserved) {
            return Ok((self, placement));
        }
        let again = self.reserved(target).and_then(|r| {
            place::place(target, &program.tiles, &program.phases, r).map_err(EmitError::from)
        });
        match again {
            Ok(listed) => Ok((self, listed)),
            Err(_) => {
                self.restore(given);
                Ok((self, placement))
            }
        }
    }

    /// This frame list-scheduled ([`Frame::list`]) if its programs still end inside
    /// `reserved`'s code area; else this frame as it was.
    fn listed_if_it_fits(
        mut self,
        target: &Target,
        program: &Program,
        reserved: &Reserved,
    ) -> Result<Frame, EmitError> {
        let given = self.list(target, program)?;
        if !self.programs_fit(reserved) {
            self.restore(given);
        }
        Ok(self)
    }

    /// The tiles with work (buffers or calls), in tile order.
    fn running_tiles(&self, program: &Program) -> Vec<u32> {
        program
            .tiles
            .iter()
            .filter(|t| self.running[t.tile as usize])
            .map(|t| t.tile)
            .collect()
    }

    fn reserved(&self, target: &Target) -> Result<Reserved, EmitError> {
        self.reserve(target, self.program_bytes, self.program_tile)
    }

    /// The reserved area for supervisor programs of `program_bytes` (the largest, on
    /// `program_tile`), checked to fit the standard region.
    fn reserve(
        &self,
        target: &Target,
        program_bytes: u32,
        program_tile: u32,
    ) -> Result<Reserved, EmitError> {
        let code_end = self.program_base + program_bytes;
        let reserved = Reserved {
            program_start: self.program_base,
            code_end,
            worker_scratch: code_end.div_ceil(16) * 16,
            worker_scratch_bytes: WORKER_SCRATCH_BYTES,
        };
        self.fits(target, &reserved, program_tile)?;
        Ok(reserved)
    }

    /// Whether `reserved` (kernel code, vertex state, supervisor programs, worker scratch)
    /// ends inside the standard region; if not, what takes it.
    fn fits(
        &self,
        target: &Target,
        reserved: &Reserved,
        program_tile: u32,
    ) -> Result<(), EmitError> {
        let scratch_bytes = WORKER_CONTEXTS as u32 * reserved.worker_scratch_bytes;
        let end = reserved.worker_scratch as u64 + scratch_bytes as u64;
        let region_end = target
            .region(false)
            .map(|r| r.end())
            .unwrap_or(target.sram_base);
        if end > region_end as u64 {
            return Err(EmitError::DoesNotFit {
                end,
                region_end,
                kernel_end: self.kernels.end,
                vertex_end: self.vertex.end(),
                program_bytes: reserved.code_end.saturating_sub(self.program_base),
                program_tile,
                scratch_bytes,
            });
        }
        Ok(())
    }
}

/// Schedules every phase (addresses play no part in a schedule).
/// Every phase in its given order (`given` None), or list-scheduled and kept where shorter than
/// `given`'s schedule of it ([`crate::exchange::schedule::Order::List`]).
fn schedule_phases(
    target: &Target,
    program: &Program,
    given: Option<&[PhaseSchedule]>,
) -> Result<Vec<PhaseSchedule>, EmitError> {
    let placeholder: Vec<Vec<u32>> = program
        .tiles
        .iter()
        .map(|t| vec![target.sram_base; t.buffers.len()])
        .collect();
    // Phases schedule independently: in parallel, each the same for any thread count.
    let exchanges: Vec<(usize, usize)> = program
        .steps
        .iter()
        .enumerate()
        .filter_map(|(step, kind)| {
            let StepKind::Exchange { phase, .. } = kind else {
                return None;
            };
            Some((step, *phase))
        })
        .collect();
    // Collected in step order, so the first failing step is the one reported.
    let scheduled: Vec<Result<(usize, PhaseSchedule), EmitError>> = exchanges
        .par_iter()
        .map(|&(step, phase)| {
            let resolved = ExchangePhase {
                transfers: program.resolve_phase(phase, &placeholder),
            };
            let scheduled = match given {
                None => schedule_for_emission(target, &resolved),
                Some(given) => list_improved(target, &resolved, &given[phase]),
            };
            scheduled
                .map(|s| (phase, s))
                .map_err(|error| EmitError::Exchange { step, phase, error })
        })
        .collect();
    let mut schedules = vec![
        PhaseSchedule {
            starts: Vec::new(),
            runs: Vec::new(),
            length: 0,
            controls: crate::exchange::schedule::ReceiveControls::SupervisorPuts,
            widths: Vec::new(),
        };
        program.phases.len()
    ];
    for result in scheduled {
        let (phase, s) = result?;
        schedules[phase] = s;
    }
    Ok(schedules)
}

/// The fixed areas every tile needs before its buffers (code, vertex state, supervisor program,
/// worker scratch), for [`place::place`].
pub fn reserve(target: &Target, program: &Program) -> Result<Reserved, EmitError> {
    Frame::new(target, program)?.reserved(target)
}

/// The image of a verified program placed by `placement` (checked again here).
pub fn emit(
    target: &Target,
    program: &Program,
    placement: &Placement,
) -> Result<Emitted, EmitError> {
    let frame =
        Frame::new(target, program)?.listed_if_it_fits(target, program, &placement.reserved)?;
    emit_with(target, program, &frame, placement)
}

/// Verify, reserve, place, check the placement and emit (enlarging the reserve once if a
/// program outgrew it).
pub fn compile(target: &Target, program: &Program) -> Result<Compiled, EmitError> {
    let frame = Frame::new(target, program)?;
    let reserved = frame.reserved(target)?;
    let placement = place::place(target, &program.tiles, &program.phases, reserved)?;
    // It places: now list-schedule the phases. Where their supervisor programs outgrow the
    // reserve, place again with the reserve they need, or keep the given order if that does
    // not place.
    let (frame, placement) = frame.listed(target, program, placement)?;
    match emit_with(target, program, &frame, &placement) {
        Ok(Emitted { image, report }) => Ok(Compiled {
            placement,
            image: image.into(),
            report,
        }),
        Err(EmitError::ReserveTooSmall { tile, needed, .. }) => {
            let reserved = frame.reserve(target, needed, tile)?;
            let placement = place::place(target, &program.tiles, &program.phases, reserved)?;
            let Emitted { image, report } = emit_with(target, program, &frame, &placement)?;
            Ok(Compiled {
                placement,
                image: image.into(),
                report,
            })
        }
        Err(error) => Err(error),
    }
}

fn check_placement(
    target: &Target,
    program: &Program,
    frame: &Frame,
    placement: &Placement,
) -> Result<(), EmitError> {
    let bad = |reason: String| EmitError::BadPlacement { reason };
    if placement.addresses.len() != program.tiles.len() {
        return Err(bad(format!(
            "{} tiles placed, the program has {}",
            placement.addresses.len(),
            program.tiles.len()
        )));
    }
    for (tile, addresses) in program.tiles.iter().zip(&placement.addresses) {
        if addresses.len() != tile.buffers.len() {
            return Err(bad(format!(
                "tile {}: {} addresses for {} buffers",
                tile.tile,
                addresses.len(),
                tile.buffers.len()
            )));
        }
    }
    let reserved = placement.reserved;
    if reserved.code_end < frame.program_base
        || reserved.worker_scratch < reserved.code_end
        || !reserved.worker_scratch.is_multiple_of(8)
    {
        return Err(bad(format!(
            "reserved area {reserved:?} does not hold kernel code and vertex state (they end at {:#x})",
            frame.program_base
        )));
    }
    frame.fits(target, &reserved, frame.program_tile)?;
    place::check::check(target, &program.tiles, &program.phases, placement)?;
    Ok(())
}

fn emit_with(
    target: &Target,
    program: &Program,
    frame: &Frame,
    placement: &Placement,
) -> Result<Emitted, EmitError> {
    check_placement(target, program, frame, placement)?;
    let addresses = &placement.addresses;
    let (programs, exchange) = supervisor::generate(
        target,
        program,
        frame,
        addresses,
        true,
        supervisor::Encoded::default,
    )?;
    let fingerprint = MachineFingerprint {
        name: target.name.clone(),
        tiles: target.tiles,
        sram_base: target.sram_base,
        sram_size: target.sram_size(),
    };
    let mut builder = ImageBuilder::new(
        fingerprint,
        target
            .regions
            .iter()
            .map(|r| (r.name.clone(), r.start, r.size))
            .collect(),
    )?;
    let running = frame.running_tiles(program);
    for (id, object, (start, end)) in &frame.kernels.objects {
        let name = id.name();
        let (users, others): (Vec<u32>, Vec<u32>) = running.iter().partition(|&&t| {
            program.tiles[t as usize]
                .calls
                .iter()
                .flatten()
                .any(|c| c.kernel() == *id)
        });
        builder.add_object(&users, object, &ObjectRules::default())?;
        if end > start {
            for tile in others {
                builder.place(
                    tile,
                    *start,
                    end - start,
                    SramCategory::Padding,
                    &format!("unused kernel code `{name}`"),
                )?;
            }
        }
    }
    // Supervisor programs: one object per distinct program (as text: comments and notes count).
    let room = placement.reserved.code_end - frame.program_base;
    let mut groups: HashMap<&supervisor::Encoded, Vec<u32>> = HashMap::new();
    for (tile, encoded) in &programs {
        groups.entry(encoded).or_default().push(*tile);
    }
    let mut ordered: Vec<(&supervisor::Encoded, Vec<u32>)> = groups.into_iter().collect();
    ordered.sort_by_key(|(_, tiles)| tiles[0]);
    let objects: Vec<Result<(tessera_isa::asm::object::Object, u32), EmitError>> = ordered
        .par_iter()
        .map(|(encoded, tiles)| {
            let object =
                encoded
                    .object(frame.program_base)
                    .map_err(|message| EmitError::Assemble {
                        what: format!("the supervisor program of tile {}", tiles[0]),
                        message,
                    })?;
            Ok((object, encoded.bytes()))
        })
        .collect();
    let objects = objects.into_iter().collect::<Result<Vec<_>, _>>()?;
    if let Some(((_, needed), (_, tiles))) = objects
        .iter()
        .zip(&ordered)
        .filter(|((_, bytes), _)| *bytes > room)
        .max_by_key(|((_, bytes), _)| *bytes)
    {
        return Err(EmitError::ReserveTooSmall {
            tile: tiles[0],
            needed: *needed,
            reserved: room,
        });
    }
    let mut program_bytes = Vec::with_capacity(running.len());
    for ((object, bytes), (_, tiles)) in objects.iter().zip(&ordered) {
        builder.add_object(tiles, object, &ObjectRules::default())?;
        for &tile in tiles {
            program_bytes.push((tile, *bytes));
            builder.set_entry(tile, frame.program_base, 0)?;
        }
    }
    program_bytes.sort();
    let reserved = placement.reserved;
    let mut vertex_bytes = Vec::with_capacity(running.len());
    for &tile in &running {
        let bytes = frame
            .vertex
            .bytes(program, tile, &addresses[tile as usize])?;
        vertex_bytes.push((tile, bytes.len() as u32));
        if !bytes.is_empty() {
            builder.place_bytes(
                tile,
                frame.vertex.base,
                &bytes,
                SramCategory::VertexState,
                "vertex state",
            )?;
        }
        let scratch = WORKER_CONTEXTS as u32 * reserved.worker_scratch_bytes;
        if scratch > 0 {
            builder.place(
                tile,
                reserved.worker_scratch,
                scratch,
                SramCategory::WorkerScratch,
                "worker scratch",
            )?;
        }
        builder.set_worker_bases(
            tile,
            std::array::from_fn(|w| {
                reserved.worker_scratch + w as u32 * reserved.worker_scratch_bytes
            }),
        )?;
    }
    memory::add_buffers(&mut builder, program, addresses)?;
    memory::add_host_tensors(&mut builder, program, addresses)?;
    let image = builder.finish()?;
    let sample_program = running.first().map(|&tile| {
        let mut text = supervisor::Text::new();
        // The same generation as above with another sink: it cannot fail now.
        let _ = supervisor::generate_tile(program, frame, &exchange, tile, &mut text);
        (tile, text.text)
    });
    let call_vertices: Vec<Vec<(u32, u32)>> = program
        .tiles
        .iter()
        .map(|t| {
            t.calls
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, call)| {
                    let start = frame.vertex.record(t.tile, i);
                    (start, start + 4 * call.spec.vertex.len() as u32)
                })
                .collect()
        })
        .collect();
    let report = EmitReport {
        call_vertices,
        running_tiles: running,
        kernel_code_bytes: frame.kernels.end - target.sram_base,
        vertex_base: frame.vertex.base,
        program_base: frame.program_base,
        code_end: placement.reserved.code_end,
        program_bytes,
        vertex_bytes,
        distinct_programs: ordered.len(),
        phase_cycles: frame.schedules.iter().map(|s| s.length).collect(),
        phase_paired: frame
            .schedules
            .iter()
            .map(|s| {
                s.widths
                    .iter()
                    .filter(|&&w| w == crate::exchange::schedule::Width::Paired)
                    .count()
            })
            .collect(),
        sample_program,
    };
    Ok(Emitted { image, report })
}

/// The image category of a buffer category.
pub fn sram_category(category: &BufferCategory) -> SramCategory {
    match category {
        BufferCategory::Tensor(name) => SramCategory::Tensor(name.clone()),
        BufferCategory::Weights(name) => SramCategory::Tensor(format!("weights/{name}")),
        BufferCategory::Exchange(name) => SramCategory::Tensor(format!("exchange/{name}")),
        BufferCategory::VertexState => SramCategory::VertexState,
        BufferCategory::Scratch => SramCategory::WorkerScratch,
        BufferCategory::Constants => SramCategory::Constants,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use tessera_isa::asm::{assemble, LayoutOptions};

    /// Every tile's directly encoded program is the object assembling its text makes (sections
    /// and symbols), and two tiles share an encoded program exactly when they share the text.
    fn encoded_programs_match_their_text(target: &Target, program: &Program) {
        let compiled = compile(target, program).unwrap();
        let frame = Frame::new(target, program).unwrap();
        let addresses = &compiled.placement.addresses;
        let (programs, exchange) = supervisor::generate(
            target,
            program,
            &frame,
            addresses,
            true,
            supervisor::Encoded::default,
        )
        .unwrap();
        assert!(!programs.is_empty());
        let mut by_text: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut by_encoded: HashMap<&supervisor::Encoded, Vec<u32>> = HashMap::new();
        for (tile, encoded) in &programs {
            let mut text = supervisor::Text::new();
            assert!(
                supervisor::generate_tile(program, &frame, &exchange, *tile, &mut text).is_ok()
            );
            let assembled = assemble(
                &[(format!("tile{tile}.S"), text.text.as_str())],
                &LayoutOptions::at(frame.program_base),
            )
            .unwrap();
            let direct = encoded.object(frame.program_base).unwrap();
            assert_eq!(direct.sections, assembled.sections, "tile {tile}");
            assert_eq!(direct.symbols, assembled.symbols, "tile {tile}");
            by_text.entry(text.text).or_default().push(*tile);
            by_encoded.entry(encoded).or_default().push(*tile);
        }
        let mut a: Vec<Vec<u32>> = by_text.into_values().collect();
        let mut b: Vec<Vec<u32>> = by_encoded.into_values().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert_eq!(compiled.report.distinct_programs, a.len());
    }

    #[test]
    fn encoded_programs_are_their_assembled_text() {
        let target = Target::test_small();
        encoded_programs_match_their_text(&target, &example::rotate_add(4, 1000));
        encoded_programs_match_their_text(&target, &example::rotate_add(16, 64));
        encoded_programs_match_their_text(&target, &example::rotate_add(1, 64));
    }

    #[test]
    fn a_looped_program_is_its_assembled_text() {
        // The loop's counter, the vertex words it steps and its backward branch assemble from
        // the printed text to the same object.
        let target = Target::test_small();
        let mut program = example::rotate_add(4, 64);
        let last = program.steps.len() - 1;
        program.looped = Some(crate::tile::StepLoop {
            first: 0,
            last,
            count: 3,
            layered: Vec::new(),
        });
        encoded_programs_match_their_text(&target, &program);
        let calls: Vec<example::CallWithData> = tessera_kernels::table::KernelParams::examples()
            .into_iter()
            .map(|p| (std::sync::Arc::new(p), Vec::new()))
            .collect();
        let mut program = example::calls_in_sequence(&calls).unwrap();
        let steps = program.steps.len();
        program.looped = Some(crate::tile::StepLoop {
            first: 0,
            last: steps - 1,
            count: 2,
            layered: Vec::new(),
        });
        verify(&program).unwrap();
        encoded_programs_match_their_text(&target, &program);
    }

    #[test]
    fn encoded_calls_are_their_assembled_text() {
        // CSRs set and reset, worker and supervisor entries, tiles with different calls.
        let target = Target::test_small();
        let calls: Vec<example::CallWithData> = tessera_kernels::table::KernelParams::examples()
            .into_iter()
            .map(|p| (std::sync::Arc::new(p), Vec::new()))
            .collect();
        encoded_programs_match_their_text(&target, &example::calls_in_sequence(&calls).unwrap());
        let mut per_tile = calls.clone();
        per_tile.extend(calls.iter().cloned());
        encoded_programs_match_their_text(
            &target,
            &example::one_call_per_tile(target.tiles, &per_tile).unwrap(),
        );
    }
}
