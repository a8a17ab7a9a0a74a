//! The assembler's macro corpus (`isa/tests/corpus/*.S`: macros, conditionals, `.rept`/`.irp`,
//! register aliases, in PopLibs style) assembled and run on one tile, every output word
//! compared with a reference written here.

use tessera::isa::asm::{assemble, LayoutOptions};
use tessera::npy::DType;
use tessera::tile_program::{run_program, OutputSpec, RunRequest};
use tessera_sim::MachineDescription;

const POLY: &str = include_str!("../../isa/tests/corpus/poly_macros.S");
const CLAMP_SELECT: &str = include_str!("../../isa/tests/corpus/clamp_select.S");

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

/// The rows PopLibs needed (issue 10) in one program: `ldconst`, a broadcast compare,
/// `f32v2clamp`, the 64-bit select, `movnz` and `roll8r`, against the definition.
#[test]
fn clamp_select_runs_and_matches_the_reference() {
    let machine = MachineDescription::builtin("small").expect("the small machine");
    let object = assemble(
        &[("clamp_select.S", CLAMP_SELECT)],
        &LayoutOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let request = RunRequest {
        entry: "select".to_string(),
        worker: true,
        vertex: None,
        inputs: Vec::new(),
        words: Vec::new(),
        outputs: vec![
            OutputSpec {
                symbol: "y_out".to_string(),
                dtype: DType::Float32,
                count: 8,
            },
            OutputSpec {
                symbol: "flags_out".to_string(),
                dtype: DType::UInt8,
                count: 8,
            },
        ],
        max_cycles: 100_000,
    };
    let result = run_program(&machine, &object, &request).unwrap_or_else(|e| panic!("{e:#}"));
    let got: Vec<f32> = result.outputs[0]
        .data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("a word")))
        .collect();
    let x = [1.0f32, -3.0, 0.25, 5.0, -0.5, 0.75, 3.0, -1.5];
    let want: Vec<f32> = x
        .iter()
        .map(|&v| if v > 0.5 { v.clamp(-2.0, 2.0) } else { -v })
        .collect();
    assert_eq!(got, want);
    let flags: Vec<u8> = x
        .iter()
        .map(|&v| if v > 0.5 { 0xaa } else { 0x55 })
        .collect();
    assert_eq!(result.outputs[1].data, flags);
}

/// `asm run` with two files: a macro file's `.globl` entry called from a second file, the
/// `.warning` on stderr; then a label another file does not export is refused, naming that file.
#[test]
fn asm_run_links_several_files_and_prints_warnings() {
    let dir = crate::cli::scratch_dir("asm-corpus", "link");
    let lib = dir.join("lib.S");
    let main = dir.join("main.S");
    std::fs::write(
        &lib,
        ".macro ret\n  .warning \"returning through \\@\"\n  br $lr\n.endm\n    .globl helper\n    .align 8\nhelper:\n    add $m1, $m1, 1\n    ret\nhidden:\n    nop\n",
    )
    .unwrap();
    std::fs::write(
        &main,
        "    .extern helper\n    .globl start\n    .align 8\nstart:\n    setzi $m1, 41\n    call $m10, helper\n    exitz $mzero\n",
    )
    .unwrap();
    let (lib, main) = (lib.display().to_string(), main.display().to_string());
    let run = crate::cli::succeeds(&["asm", "run", &lib, &main, "--entry", "start", "--worker"]);
    assert!(
        run.stderr.contains("warning: returning through 0"),
        "{}",
        run.stderr
    );
    std::fs::write(dir.join("bad.S"), "    call $m10, hidden\n").unwrap();
    std::fs::write(dir.join("other.S"), "hidden:\n    nop\n").unwrap();
    let bad = dir.join("bad.S").display().to_string();
    let other = dir.join("other.S").display().to_string();
    crate::cli::fails_clearly(
        &[
            "asm",
            "build",
            &other,
            &bad,
            "-o",
            &dir.join("x.tobj").display().to_string(),
        ],
        &[
            "error[E-ASM-008]",
            "undefined symbol `hidden`",
            "defines it, but not as `.globl`",
        ],
    );
}
