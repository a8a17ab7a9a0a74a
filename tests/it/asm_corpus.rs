//! The assembler's macro corpus (`isa/tests/corpus/*.S`: macros, conditionals, `.rept`/`.irp`,
//! register aliases, in PopLibs style) assembled and run on one tile, every output word
//! compared with a reference written here.

use tessera::isa::asm::{assemble, LayoutOptions};
use tessera::npy::DType;
use tessera::tile_program::{run_program, OutputSpec, RunRequest};
use tessera_sim::MachineDescription;

const POLY: &str = include_str!("../../isa/tests/corpus/poly_macros.S");

#[test]
fn poly_macros_runs_and_matches_the_reference() {
    let machine = MachineDescription::builtin("small").expect("the small machine");
    let object = assemble(&[("poly_macros.S", POLY)], &LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let request = RunRequest {
        entry: "poly".to_string(),
        worker: true,
        vertex: None,
        inputs: Vec::new(),
        words: Vec::new(),
        outputs: vec![OutputSpec {
            symbol: "y_out".to_string(),
            dtype: DType::Int32,
            count: 10,
        }],
        max_cycles: 100_000,
    };
    let result = run_program(&machine, &object, &request).unwrap_or_else(|e| panic!("{e:#}"));
    let got: Vec<i32> = result.outputs[0]
        .data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("a word")))
        .collect();
    // The corpus's coefficients: A = 3, B = -2, C = 7 (its later `.set A, 5` comes after the code).
    let want: Vec<i32> = (-3..7).map(|x: i32| (3 * x - 2) * x + 7).collect();
    assert_eq!(got, want);
    assert!(result.cycles > 0);
}
