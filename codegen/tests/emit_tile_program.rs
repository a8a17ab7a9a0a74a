//! The back end on a hand-written tile program: verify → reserve → place → check → emit, the
//! reference executor, and the refusals of malformed programs and placements. (Running images
//! on the simulator is tested at the top level, `tests/it/compile_tile_program.rs`.)

use half::f16;
use tessera_codegen::emit::{self, example, EmitError};
use tessera_codegen::place::{self, PlaceError};
use tessera_codegen::refexec::{self, RefExecError};
use tessera_codegen::target::Target;
use tessera_codegen::tile::verify::{verify, TileVerifyError};
use tessera_codegen::tile::{BufferCategory, BufferDecl, BufferId, Program, RegionRequirement};
use tessera_isa::image::{HostDirection, SramCategory};

fn halves(seed: u32, n: usize) -> Vec<u16> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Finite values of moderate size: sign, exponent 10..20, any mantissa.
            ((x & 0x8000) | ((10 + (x >> 8) % 10) << 10) | (x >> 16) & 0x3ff) as u16
        })
        .collect()
}

fn to_bytes(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn add(a: u16, b: u16) -> u16 {
    (f16::from_bits(a) + f16::from_bits(b)).to_bits()
}

#[test]
fn the_example_compiles_to_a_valid_image() {
    let target = Target::test_small();
    let program = example::rotate_add(4, 1000);
    verify(&program).unwrap();
    let reserved = emit::reserve(&target, &program).unwrap();
    let compiled = emit::compile(&target, &program).unwrap();
    place::check::check(
        &target,
        &program.tiles,
        &program.phases,
        &compiled.placement,
    )
    .unwrap();
    let report = &compiled.report;
    assert_eq!(compiled.placement.reserved, reserved);
    assert_eq!(report.running_tiles, vec![0, 1, 2, 3]);
    assert_eq!(report.code_end, reserved.code_end);
    // The reserve is exact: the largest program fills it.
    let largest = report.program_bytes.iter().map(|&(_, b)| b).max().unwrap();
    assert_eq!(report.program_base + largest, reserved.code_end);
    assert_eq!(report.phase_cycles.len(), 1);
    assert!(report.phase_cycles[0] >= 500, "{:?}", report.phase_cycles);
    let (tile, text) = report.sample_program.as_ref().unwrap();
    assert_eq!(*tile, 0);
    assert_eq!(text.matches("runall $m0, $m1, 0").count(), 2, "{text}");
    assert_eq!(text.matches("sync 3").count(), 3, "{text}");
    // The receive side as the hardware drives it: timed controls, carried by a `sendpic`
    // while the tile sends, no `put` to the mux.
    assert!(
        text.contains("send ") && text.contains("sendpic ") && text.contains("delayxpic "),
        "{text}"
    );
    assert!(!text.contains("put $INCOMING_MUX"), "{text}");
    assert!(text.trim_end().ends_with("// return to the host"), "{text}");
    // Every running tile: kernel code, vertex state, program, scratch and its buffers.
    let image = &compiled.image;
    assert_eq!(image.running_tiles().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    for t in 0..4 {
        let tile = image.tile(t).unwrap();
        let categories: Vec<&SramCategory> = tile.segments.iter().map(|s| &s.category).collect();
        assert!(categories.contains(&&SramCategory::Code));
        assert!(categories.contains(&&SramCategory::VertexState));
        assert!(categories.contains(&&SramCategory::WorkerScratch));
        assert!(categories.contains(&&SramCategory::Tensor("x".into())));
        assert_eq!(tile.worker_bases.unwrap()[0], reserved.worker_scratch);
    }
    assert!(image.tile(4).is_none());
    assert_eq!(image.host_tensors_of(HostDirection::Input).count(), 2);
    assert_eq!(image.host_tensor("out").unwrap().pieces.len(), 4);
    // Identical kernel code is stored once.
    let code_blobs: std::collections::BTreeSet<_> = (0..4)
        .map(|t| image.tile(t).unwrap().segments[0].blob)
        .collect();
    assert_eq!(code_blobs.len(), 1);
}

#[test]
fn the_reference_executor_follows_the_plan() {
    let (tiles, n) = (4usize, 37usize);
    let program = example::rotate_add(tiles as u32, n as u32);
    let x = halves(1, tiles * n);
    let y = halves(2, tiles * n);
    let outputs = refexec::execute(&program, &[("x", to_bytes(&x)), ("y", to_bytes(&y))]).unwrap();
    assert_eq!(outputs.len(), 1);
    let mut expected = Vec::new();
    for t in 0..tiles {
        let p = (t + tiles - 1) % tiles;
        for i in 0..n {
            expected.push(add(add(x[p * n + i], y[p * n + i]), x[t * n + i]));
        }
    }
    assert_eq!(outputs[0], ("out".to_string(), to_bytes(&expected)));
}

#[test]
fn the_reference_executor_refuses_bad_inputs() {
    let program = example::rotate_add(2, 8);
    let x = [0u8; 32];
    assert!(
        matches!(refexec::execute(&program, &[("x", &x[..])]), Err(RefExecError::Input { name, .. }) if name == "y")
    );
    assert!(
        matches!(refexec::execute(&program, &[("x", &x[..]), ("y", &x[..16])]), Err(RefExecError::Input { name, .. }) if name == "y")
    );
    assert!(
        matches!(refexec::execute(&program, &[("x", &x[..]), ("y", &x[..]), ("z", &x[..])]), Err(RefExecError::Input { name, .. }) if name == "z")
    );
}

#[test]
fn a_transfer_into_a_dead_buffer_is_refused() {
    let mut program = example::rotate_add(4, 16);
    // `r` (buffer 3) on tile 2 now starts living only after the exchange that fills it.
    program.tiles[2].buffers[3].live = (2, 2);
    match verify(&program) {
        Err(TileVerifyError::Step { step: 1, reason }) => {
            assert!(reason.contains("is not live"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        emit::compile(&Target::test_small(), &program),
        Err(EmitError::Verify(_))
    ));
}

#[test]
fn a_binding_overrunning_its_buffer_is_refused() {
    let mut program = example::rotate_add(4, 16);
    // `s` (buffer 2) on tile 1 shrinks below the 32 bytes the first call writes.
    program.tiles[1].buffers[2].bytes = 24;
    match verify(&program) {
        Err(TileVerifyError::Tile { tile: 1, reason }) => {
            assert!(reason.contains("overruns"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        refexec::execute(&program, &[("x", vec![0u8; 128]), ("y", vec![0u8; 128])]),
        Err(RefExecError::Verify(_))
    ));
}

#[test]
fn overlapping_live_buffers_are_refused() {
    let target = Target::test_small();
    let program = example::rotate_add(4, 16);
    let compiled = emit::compile(&target, &program).unwrap();
    let mut placement = compiled.placement.clone();
    // `x` and `s` (buffers 0 and 2) are both live in step 0 (`x` moves onto `s`, which an
    // exchange fills, so is placed past the program's fetch elements).
    placement.addresses[3][0] = placement.addresses[3][2] + 8;
    match place::check::check(&target, &program.tiles, &program.phases, &placement) {
        Err(PlaceError::Check { tile: 3, reason }) => {
            assert!(reason.contains("overlap"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        emit::emit(&target, &program, &placement),
        Err(EmitError::Place(_))
    ));
}

/// An exchanged buffer placed in the memory element the supervisor program is fetched from
/// (a send from it traps on the hardware with `TEXCPT_CONFLICT`) is refused by the placement
/// checker; the placer itself keeps every exchanged buffer past the program's elements.
#[test]
fn an_exchanged_buffer_in_the_programs_fetch_element_is_refused() {
    let target = Target::test_small();
    let program = example::rotate_add(4, 16);
    let compiled = emit::compile(&target, &program).unwrap();
    let region = target.region(false).unwrap();
    let fetch_end = compiled.placement.reserved.fetch_end(region).unwrap();
    let exchanged = place::exchanged(&program.tiles, &program.phases);
    let mut moved = None;
    for (tile, flags) in exchanged.iter().enumerate() {
        for (buffer, &flag) in flags.iter().enumerate() {
            let at = compiled.placement.addresses[tile][buffer];
            if flag && at >= region.start && at < region.end() {
                assert!(at >= fetch_end, "tile {tile} buffer {buffer} at {at:#x}");
                moved.get_or_insert((tile, buffer));
            }
        }
    }
    let (tile, buffer) = moved.expect("an exchanged buffer in the standard region");
    let mut placement = compiled.placement.clone();
    placement.addresses[tile][buffer] = fetch_end - 64;
    match place::check::check(&target, &program.tiles, &program.phases, &placement) {
        Err(PlaceError::Check { reason, .. }) => {
            assert!(reason.contains("supervisor program's fetch"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_call_with_missing_operands_is_refused() {
    // Kernels are named by a typed id (an unknown kernel cannot be written); what can still be
    // wrong is the binding of operands, which the tile verifier refuses before any stage.
    let mut program = example::rotate_add(2, 8);
    program.tiles[1].calls[2][0].bindings.pop();
    match emit::reserve(&Target::test_small(), &program) {
        Err(EmitError::Verify(e)) => {
            assert!(e.to_string().contains("2 bindings for 3 operands"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        refexec::execute(&program, &[("x", vec![0u8; 32]), ("y", vec![0u8; 32])]),
        Err(RefExecError::Verify(_))
    ));
}

fn decl(name: &str, live: (usize, usize), contents: Option<Vec<u8>>) -> BufferDecl {
    BufferDecl {
        name: name.into(),
        bytes: 64,
        align: 8,
        region: RegionRequirement::Any,
        slot: None,
        category: BufferCategory::Tensor(name.into()),
        live,
        alias_of: None,
        alias_offset: 0,
        contents: contents.map(std::sync::Arc::new),
    }
}

#[test]
fn initial_data_in_memory_reused_earlier_is_refused() {
    let target = Target::test_small();
    let mut program = Program::new(1);
    let a = program.tiles[0].add_buffer(decl("a", (0, 0), None));
    let b = program.tiles[0].add_buffer(decl("b", (1, 1), Some(vec![7; 64])));
    program.compute_step("first");
    program.compute_step("second");
    let reserved = emit::reserve(&target, &program).unwrap();
    let at = (reserved.worker_scratch + 6 * reserved.worker_scratch_bytes).div_ceil(64) * 64;
    let mut placement = place::Placement {
        addresses: vec![vec![at, at]],
        reserved,
    };
    // Disjoint lives may share memory, but `b`'s contents would be gone by step 1.
    place::check::check(&target, &program.tiles, &program.phases, &placement).unwrap();
    match emit::emit(&target, &program, &placement) {
        Err(EmitError::Memory {
            tile: 0, buffer, ..
        }) => assert_eq!(buffer, "b"),
        other => panic!("{other:?}"),
    }
    // Apart, they are fine; `b`'s contents are in the image.
    placement.addresses[0][b.0 as usize] = at + 64;
    let emitted = emit::emit(&target, &program, &placement).unwrap();
    let segment = emitted
        .image
        .tile(0)
        .unwrap()
        .segments
        .iter()
        .find(|s| s.address == at + 64)
        .unwrap();
    assert_eq!(emitted.image.segment_bytes(segment), Some(&[7u8; 64][..]));
    let _ = a;
}

#[test]
fn buffers_sharing_memory_write_only_their_contents() {
    let target = Target::test_small();
    let mut program = Program::new(1);
    program.tiles[0].add_buffer(decl("early", (0, 0), Some(vec![1; 64])));
    let late = program.tiles[0].add_buffer(decl("late", (1, 1), None));
    program.tiles[0].add_buffer(BufferDecl {
        alias_of: Some(late),
        alias_offset: 0,
        bytes: 32,
        ..decl("alias", (1, 1), None)
    });
    program.compute_step("first");
    program.compute_step("second");
    let reserved = emit::reserve(&target, &program).unwrap();
    let at = (reserved.worker_scratch + 6 * reserved.worker_scratch_bytes).div_ceil(64) * 64;
    let placement = place::Placement {
        addresses: vec![vec![at, at + 32, at + 32]],
        reserved,
    };
    let emitted = emit::emit(&target, &program, &placement).unwrap();
    let segments = &emitted.image.tile(0).unwrap().segments;
    let at_address = |address: u32| segments.iter().find(|s| s.address == address).unwrap();
    // The group's range is covered; the host writes `early`'s contents and nothing else.
    let contents = at_address(at);
    assert_eq!((contents.size, contents.name.as_str()), (64, "early"));
    assert_eq!(emitted.image.segment_bytes(contents), Some(&[1u8; 64][..]));
    let rest = at_address(at + 64);
    assert_eq!((rest.size, rest.name.as_str()), (32, "early | late"));
    assert_eq!(emitted.image.segment_bytes(rest), None);
    assert_eq!(program.tiles[0].buffer(BufferId(2)).alias_of, Some(late));
}
