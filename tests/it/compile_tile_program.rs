//! Hand-written tile programs through the whole back end (verify → reserve → place → check →
//! exchange schedule → supervisor programs → image), run on the simulated `small` chip, with
//! every output compared bit for bit with the plan's reference executor.

use std::sync::Arc;
use tessera::target::target_of;
use tessera_codegen::emit::{self, example, Compiled};
use tessera_codegen::refexec;
use tessera_codegen::tile::Program;
use tessera_kernels::table::KernelParams;
use tessera_kernels::Role;
use tessera_sim::chip::{Chip, RunOptions, RunReport};
use tessera_sim::MachineDescription;

fn small() -> MachineDescription {
    MachineDescription::builtin("small").unwrap()
}

/// Any f16 bits, NaNs and infinities included.
fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn compile_and_run(
    machine: &MachineDescription,
    program: &Program,
    inputs: &[(String, Vec<u8>)],
) -> (Compiled, RunReport) {
    let compiled = emit::compile(&target_of(machine), program).unwrap_or_else(|e| panic!("{e}"));
    let mut chip = Chip::new(machine).unwrap();
    chip.load_image(&compiled.image).unwrap();
    let report = chip
        .run(inputs, &RunOptions::default())
        .unwrap_or_else(|e| {
            panic!(
                "{e}\n{}",
                compiled.report.sample_program.as_ref().unwrap().1
            )
        });
    (compiled, report)
}

fn assert_same(program: &Program, inputs: &[(String, Vec<u8>)], report: &RunReport) {
    let expected = refexec::execute(program, inputs).unwrap();
    assert_eq!(report.outputs.len(), expected.len());
    for ((name, got), (want_name, want)) in report.outputs.iter().zip(&expected) {
        assert_eq!(name, want_name);
        if got != want {
            let first = (0..got.len()).find(|&i| got[i] != want[i]).unwrap();
            panic!(
                "output `{name}`: byte {first} is {:#04x}, the reference says {:#04x}",
                got[first], want[first]
            );
        }
    }
}

#[test]
fn rotate_add_runs_bit_exactly() {
    let machine = small();
    for (tiles, n) in [(4u32, 1000u32), (16, 37), (16, 1153), (1, 24)] {
        let program = example::rotate_add(tiles, n);
        let bytes = (tiles * n * 2) as usize;
        let inputs = vec![
            ("x".to_string(), random_bytes(u64::from(tiles * n), bytes)),
            ("y".to_string(), random_bytes(u64::from(n) + 7, bytes)),
        ];
        let (compiled, report) = compile_and_run(&machine, &program, &inputs);
        assert_same(&program, &inputs, &report);
        assert_eq!(report.supersteps, 3, "one global sync per step");
        assert_eq!(compiled.report.running_tiles.len(), tiles as usize);
        assert!(report.cropped_cycles > 0);
    }
}

#[test]
fn aliased_output_runs_bit_exactly() {
    // `o` reuses `s`'s memory explicitly (an in-place result): same answer.
    let machine = small();
    let mut program = example::rotate_add(8, 500);
    for tile in &mut program.tiles {
        tile.buffers[4].alias_of = Some(tessera_codegen::tile::BufferId(2));
        tile.buffers[2].live = (0, 2);
    }
    let inputs = vec![
        ("x".to_string(), random_bytes(3, 8000)),
        ("y".to_string(), random_bytes(4, 8000)),
    ];
    let (compiled, report) = compile_and_run(&machine, &program, &inputs);
    assert_eq!(
        compiled.placement.addresses[0][4],
        compiled.placement.addresses[0][2]
    );
    assert_same(&program, &inputs, &report);
}

/// Typed calls of every kernel the compiler calls, with random input bytes (NaNs and infinities
/// included) for every input operand.
fn example_calls() -> Vec<example::CallWithData> {
    KernelParams::examples()
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let spec = p.spec().unwrap();
            let data = spec
                .operands
                .iter()
                .enumerate()
                .map(|(k, o)| random_bytes(100 * i as u64 + k as u64, o.bytes as usize))
                .collect();
            (Arc::new(p), data)
        })
        .collect()
}

#[test]
fn every_kernel_runs_in_a_compiled_image() {
    // One typed call per tile: worker and supervisor entries, supervisor CSRs, regions and
    // element slots, inputs and tables as contents.
    let machine = small();
    let calls = example_calls();
    let program = example::one_call_per_tile(machine.tiles, &calls).unwrap();
    let (compiled, report) = compile_and_run(&machine, &program, &Vec::<(String, Vec<u8>)>::new());
    assert_same(&program, &[] as &[(String, Vec<u8>)], &report);
    // And the reference executor gives what each call's own reference does.
    for (i, (params, data)) in calls.iter().enumerate().take(machine.tiles as usize) {
        let spec = params.spec().unwrap();
        let operands: Vec<Vec<u8>> = spec
            .operands
            .iter()
            .zip(data)
            .map(|(o, d)| match (&o.constant, o.role) {
                (Some(c), _) => c.to_vec(),
                (None, Role::Input) => d.clone(),
                (None, _) => vec![0; o.bytes as usize],
            })
            .collect();
        let want = params.reference(operands).unwrap();
        let outputs: Vec<&str> = spec
            .operands
            .iter()
            .filter(|o| o.role == Role::Output)
            .map(|o| o.name.as_str())
            .collect();
        for (name, bytes) in outputs.iter().zip(&want) {
            if bytes.is_empty() {
                continue;
            }
            let name = format!("t{i}.{name}");
            assert_eq!(
                report.output(&name),
                Some(bytes.as_slice()),
                "{} `{name}`",
                params.id().name()
            );
        }
    }
    assert!(compiled.report.kernel_code_bytes > 0);
    // Each tile loads only the kernel it calls; the others' code range is padding on it.
    let tile0 = compiled.image.tile(0).unwrap();
    let code: Vec<&str> = tile0
        .segments
        .iter()
        .filter(|s| s.category.is_code())
        .map(|s| s.name.as_str())
        .collect();
    assert!(
        code.iter().any(|n| n.contains("tessera_supervisor"))
            && !code.iter().any(|n| n.contains("gelu")),
        "{code:?}"
    );
    assert!(tile0
        .segments
        .iter()
        .any(|s| s.category == tessera_isa::image::SramCategory::Padding
            && s.name.contains("gemm_f16")));
}

#[test]
fn successive_calls_on_one_tile_run_bit_exactly() {
    // Calls that set supervisor CSRs followed by calls that need them back at zero.
    let machine = small();
    let calls = example_calls();
    let program = example::calls_in_sequence(&calls).unwrap();
    let (compiled, report) = compile_and_run(&machine, &program, &Vec::<(String, Vec<u8>)>::new());
    assert_same(&program, &[] as &[(String, Vec<u8>)], &report);
    let text = &compiled.report.sample_program.as_ref().unwrap().1;
    assert!(text.contains("reset a CSR"), "{text}");
    assert_eq!(report.supersteps, calls.len() as u64);
}

#[test]
fn an_exchange_first_starts_in_lockstep() {
    // Step 0 is an exchange (no sync before it: every tile starts at the same cycle).
    let machine = small();
    let mut program = example::rotate_add(16, 64);
    program.steps.remove(0);
    program.steps.remove(0);
    program.phases.clear();
    for tile in &mut program.tiles {
        tile.calls.drain(0..2);
        tile.buffers[2].live = (0, 0); // s: host input now
        tile.buffers[3].live = (0, 1); // r
        tile.buffers[0].live = (0, 1); // x
        tile.buffers[1].live = (0, 0); // y (unused)
        tile.buffers[4].live = (1, 1); // o
    }
    let transfers = (0..16u32)
        .map(|t| tessera_codegen::tile::SymbolicTransfer {
            sender: t,
            source: (tessera_codegen::tile::BufferId(2), 0),
            words: 32,
            deliveries: vec![((t + 5) % 16, tessera_codegen::tile::BufferId(3), 0)],
            label: format!("s{t}"),
        })
        .collect();
    program.phases.push(transfers);
    program.steps.insert(
        0,
        tessera_codegen::tile::StepKind::Exchange {
            phase: 0,
            label: "first".into(),
        },
    );
    for tile in &mut program.tiles {
        tile.calls.insert(0, Vec::new());
    }
    program.inputs[1].name = "s".into();
    for piece in &mut program.inputs[1].pieces {
        piece.buffer = tessera_codegen::tile::BufferId(2);
    }
    let inputs = vec![
        ("x".to_string(), random_bytes(5, 2048)),
        ("s".to_string(), random_bytes(6, 2048)),
    ];
    let (_, report) = compile_and_run(&machine, &program, &inputs);
    assert_same(&program, &inputs, &report);
    assert_eq!(report.supersteps, 2);
}

#[test]
fn the_supervisor_program_dump() {
    let machine = small();
    let program = example::rotate_add(2, 8);
    let compiled = emit::compile(&target_of(&machine), &program).unwrap();
    let (tile, text) = compiled.report.sample_program.unwrap();
    assert_eq!(tile, 0);
    println!("{text}");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect();
    assert!(lines.iter().any(|l| l.starts_with("runall $m0, $m1, 0")));
    assert_eq!(lines.iter().filter(|l| l.starts_with("sync 3")).count(), 3);
    assert!(lines.last().unwrap().starts_with("br $mzero"));
}
