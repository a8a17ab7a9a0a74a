//! End-to-end tests of the `tessera` binary: `asm build` / `asm disasm` round trips, assembly
//! errors with locations, clear errors for bad `asm run` arguments, `run`, `machine` and
//! `isa doc`.

use std::path::{Path, PathBuf};

use crate::cli::{fails_clearly, repo, succeeds};
use tessera::isa::asm::{assemble, LayoutOptions, Object};
use tessera::npy::NpyArray;

/// A fresh scratch directory for `test` of this module.
fn scratch_dir(test: &str) -> PathBuf {
    crate::cli::scratch_dir("cli-asm", test)
}

const KERNEL: &str = "kernels/asm/examples/f16_to_fp8.S";

/// A program touching many instruction shapes: solo main and aux instructions, bundles, a
/// `rpt` body, pace loads with packed addresses, supervisor launch/sync/delay, CSR access,
/// branches forwards and backwards, and data.
const VARIED: &str = r#"// A tour for the disassembler round trip.
    .section .text.sup, "ax", @progbits
    .globl sup
    .align 8
sup:
    setzi $m1, work
    setzi $m2, 0x100
    put $FP_ICTL, $mzero
    get $m3, $COUNT_L
    runall $m1, $m2, 2
    sync TEXCH_SYNCZONE_LOCAL
    delay 12
    ld32 $m4, $m2, $mzero, 3
    add $m4, $m4, -1
    call $m5, helper
    br $m10
helper:
    and $m6, $m4, 0xff
    brnz $m6, helper
    br $m5

    .section .text.work, "ax", @progbits
    .globl work
    .align 8
work:
    ld32 $m0, $mvertex_base, $mzero, 0
    ld32 $m1, $mvertex_base, $mzero, 1
    tapack $m2:3, $m0, $m1, $m0
    nop
    { rpt 16, 1 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4mul $a2:3, $a0:1, $a4:5 }
    { ld2x64pace $a0:1, $a4:5, $m2:3+=, $mzero, 0 ; fnop }
    setzi $m7, 3
1:  shl $m8, $m7, 2
    brnzdec $m7, 1b
    f16v2tof8 $a0, $a0
    sort4x16lo $a0, $a0, $a1
    st32step $a0, $mzero, $m1+=, 1
    exitz $mzero

    .data
    .align 8
table:
    .int 1, 2, 3, 4
"#;

/// Source text from `asm disasm` output: labels and instruction texts of the code sections,
/// each code section under a `.section` directive of the same name. Instruction lines are
/// `  ADDRESS  WORD [WORD]  TEXT`.
fn source_from_disassembly(listing: &str) -> String {
    let mut source = String::new();
    for line in listing.lines() {
        if let Some(rest) = line.strip_prefix("section ") {
            let name = rest.split_whitespace().next().unwrap();
            if rest.contains(", code)") {
                source.push_str(&format!("    .section {name}, \"ax\", @progbits\n"));
            }
        } else if let Some(label) = line.strip_suffix(':') {
            source.push_str(&format!("{label}:\n"));
        } else if line.starts_with("  ") {
            let mut fields = line.split_whitespace();
            let address = fields.next().unwrap();
            assert!(address.starts_with("0x"), "unexpected line `{line}`");
            // Skip the 8-digit hex words; the rest is the instruction text.
            let mut rest = line.trim_start()[address.len()..].trim_start();
            while rest.len() >= 8
                && rest[..8].chars().all(|c| c.is_ascii_hexdigit())
                && rest[8..].starts_with(' ')
            {
                rest = rest[8..].trim_start();
            }
            source.push_str(&format!("    {rest}\n"));
        } else {
            panic!("unexpected disassembly line `{line}`");
        }
    }
    source
}

fn read_object(path: &Path) -> Object {
    Object::from_bytes(&std::fs::read(path).expect("read the object")).expect("parse the object")
}

fn code_sections(object: &Object) -> Vec<(String, u32, Vec<u8>)> {
    object
        .sections
        .iter()
        .filter(|s| s.has_code)
        .map(|s| (s.name.clone(), s.address, s.bytes.clone()))
        .collect()
}

/// `asm build` then `asm disasm` of the object; the disassembly re-assembles (with the code
/// sections at the same addresses) to the same bytes, and re-building that text with the CLI
/// gives the same code sections.
fn check_round_trip(dir: &Path, source: &Path) {
    let object_path = dir.join("first.o");
    let built = succeeds(&[
        "asm".as_ref(),
        "build".as_ref(),
        source.as_os_str(),
        "-o".as_ref(),
        object_path.as_os_str(),
    ]);
    assert!(
        built
            .stdout
            .starts_with(&format!("wrote {}", object_path.display())),
        "{}",
        built.stdout
    );
    let original = read_object(&object_path);
    let listing = succeeds(&["asm".as_ref(), "disasm".as_ref(), object_path.as_os_str()]).stdout;
    assert!(
        !listing.contains(".int 0x"),
        "every word decodes:\n{listing}"
    );
    let text = source_from_disassembly(&listing);

    // Library assembly with every code section pinned where it was.
    let placements = code_sections(&original)
        .into_iter()
        .map(|(name, address, _)| (name, address))
        .collect();
    let options = LayoutOptions {
        base: 0x4C000,
        placements,
    };
    let again = assemble(&[("disassembly.S", text.as_str())], &options)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        code_sections(&again),
        code_sections(&original),
        "re-assembled disassembly:\n{text}"
    );

    // And through the CLI.
    let text_path = dir.join("disassembly.S");
    std::fs::write(&text_path, &text).unwrap();
    let second_path = dir.join("second.o");
    succeeds(&[
        "asm".as_ref(),
        "build".as_ref(),
        text_path.as_os_str(),
        "-o".as_ref(),
        second_path.as_os_str(),
    ]);
    let second = read_object(&second_path);
    let bytes = |o: &Object| {
        code_sections(o)
            .into_iter()
            .map(|(name, _, bytes)| (name, bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(bytes(&second), bytes(&original));
    // Labels come back too.
    for (name, symbol) in &original.symbols {
        if original.sections[symbol.section].has_code {
            assert_eq!(
                second.symbol(name).map(|s| s.address),
                Some(symbol.address),
                "label {name}"
            );
        }
    }
}

#[test]
fn build_then_disasm_round_trips_the_kernel() {
    let dir = scratch_dir("round-trip-kernel");
    check_round_trip(&dir, &repo().join(KERNEL));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn build_then_disasm_round_trips_a_varied_program() {
    let dir = scratch_dir("round-trip-varied");
    let source = dir.join("varied.S");
    std::fs::write(&source, VARIED).unwrap();
    check_round_trip(&dir, &source);
    let listing = succeeds(&["asm".as_ref(), "disasm".as_ref(), source.as_os_str()]).stdout;
    for expected in [
        "runall $m1, $m2, 2",
        "sync 2",
        "delay 12",
        "{ rpt 16, 1 ; fnop }",
        "tapack $m2:3, $m0, $m1, $m0",
        "brnzdec $m7, ",
    ] {
        assert!(
            listing.contains(expected),
            "`{expected}` not in:\n{listing}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn build_with_listing_prints_the_disassembly() {
    let dir = scratch_dir("listing");
    let object = dir.join("k.o");
    let run = succeeds(&[
        "asm".as_ref(),
        "build".as_ref(),
        KERNEL.as_ref(),
        "-o".as_ref(),
        object.as_os_str(),
        "--listing".as_ref(),
    ]);
    assert!(
        run.stdout.contains("brnzdec $m2, 0x4c030"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("(2 sections, "), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes that are neither an object nor text are named as such (it said "stream did not
/// contain valid UTF-8"); a kernel filter that matches nothing is an error, not an empty table.
#[test]
fn disasm_of_binary_garbage_and_an_empty_kernel_filter_fail_clearly() {
    let dir = scratch_dir("garbage");
    let garbage = dir.join("garbage.bin");
    std::fs::write(&garbage, [0xffu8, 0xfe, 0x00, 0x81, 0x13, 0x37, 0xc0, 0x01]).unwrap();
    fails_clearly(
        &["asm".into(), "disasm".into(), garbage.display().to_string()],
        &[
            "neither a Tessera object file",
            "nor assembly source (not UTF-8 text)",
        ],
    );
    fails_clearly(
        &["check", "kernels", "--filter", "nosuch"],
        &["--filter `nosuch` matches no kernel", "gemm_fp8"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn disasm_of_an_assembly_file_assembles_it_first() {
    let run = succeeds(&["asm", "disasm", KERNEL]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "section .text.f16_to_fp8 at 0x4c000 (80 bytes, code)"
    );
    assert_eq!(lines[1], "f16_to_fp8:");
    assert_eq!(
        lines[2],
        "  0x4c000  01d0f000           ld32 $m0, $mvertex_base, $mzero, 0"
    );
    assert!(
        run.stdout
            .contains("  0x4c020  93213013 51208009  { brz $m2, 0x4c04c ; uput $FP_NFMT, $a2 }"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(".Lloop:\n  0x4c030  0ef00101           ld32step $a0, $mzero, $m0+=, 1\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(".Ldone:\n  0x4c04c  37f00000           exitz $mzero\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("section .data at 0x4c050 (196632 bytes)"),
        "{}",
        run.stdout
    );
    // The same text as for the built object.
    let dir = scratch_dir("disasm-source");
    let object = dir.join("k.o");
    succeeds(&[
        "asm".as_ref(),
        "build".as_ref(),
        KERNEL.as_ref(),
        "-o".as_ref(),
        object.as_os_str(),
    ]);
    assert_eq!(
        succeeds(&["asm".as_ref(), "disasm".as_ref(), object.as_os_str()]).stdout,
        run.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_assembly_reports_file_line_and_column() {
    let dir = scratch_dir("malformed");
    let source = dir.join("bad.S");
    std::fs::write(
        &source,
        "    .text\nstart:\n    nop\n    ld32 $m0, $m1\n  bogus $m1\n",
    )
    .unwrap();
    let path = source.display().to_string();
    for command in ["build", "run"] {
        let mut args: Vec<String> = vec!["asm".into(), command.into(), path.clone()];
        if command == "build" {
            args.extend(["-o".into(), dir.join("bad.o").display().to_string()]);
        } else {
            args.extend(["--entry".into(), "start".into()]);
        }
        let run = fails_clearly(
            &args,
            &[
                &format!("{path}:4:5: error[E-ASM-005]"),
                &format!("{path}:5:3: error[E-ASM-004]"),
                "bogus",
            ],
        );
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    fails_clearly(
        &["asm".as_ref(), "disasm".as_ref(), source.as_os_str()],
        &[&format!("{path}:4:5")],
    );
    assert!(
        !dir.join("bad.o").exists(),
        "no object is written for bad input"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn kernel_run_args(extra: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "asm",
        "run",
        KERNEL,
        "--worker",
        "--entry",
        "f16_to_fp8",
        "--vertex",
        "f16_to_fp8_vertex",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend_from_slice(extra);
    args
}

#[test]
fn asm_run_argument_errors_are_clear() {
    let dir = scratch_dir("run-errors");
    let input = dir.join("in.npy");
    NpyArray::from_f16_bits(&[8], &[0x3c00; 8])
        .unwrap()
        .write(&input)
        .unwrap();
    let out = dir.join("out.npy");

    // An unknown symbol in --input.
    fails_clearly(
        &kernel_run_args(&[
            "--input".into(),
            format!("no_such_buffer={}", input.display()),
        ]),
        &["no symbol `no_such_buffer`"],
    );
    // An unknown symbol in --output, --set, --entry and --vertex.
    fails_clearly(
        &kernel_run_args(&[
            "--output".into(),
            format!("nowhere={}:uint8:4", out.display()),
        ]),
        &["no symbol `nowhere`"],
    );
    fails_clearly(
        &kernel_run_args(&["--set".into(), "nothing+4=1".into()]),
        &["no symbol `nothing`"],
    );
    fails_clearly(
        &["asm", "run", KERNEL, "--worker", "--entry", "no_entry"],
        &["no symbol `no_entry`"],
    );
    // A bad dtype in --output.
    fails_clearly(
        &kernel_run_args(&[
            "--output".into(),
            format!("f16_to_fp8_dst={}:float8:16", out.display()),
        ]),
        &["unknown dtype `float8`", "uint8"],
    );
    // A malformed --output and --set.
    fails_clearly(
        &kernel_run_args(&["--output".into(), "f16_to_fp8_dst=out.npy".into()]),
        &["SYMBOL=FILE.npy:DTYPE:COUNT"],
    );
    fails_clearly(
        &kernel_run_args(&[
            "--output".into(),
            format!("f16_to_fp8_dst={}:uint8:many", out.display()),
        ]),
        &["count `many`"],
    );
    fails_clearly(
        &kernel_run_args(&["--set".into(), "f16_to_fp8_vertex+8=lots".into()]),
        &["`lots` is not an integer"],
    );
    fails_clearly(
        &kernel_run_args(&["--set".into(), "f16_to_fp8_vertex".into()]),
        &["NAME=VALUE"],
    );
    // A missing .npy file.
    let missing = dir.join("missing.npy");
    fails_clearly(
        &kernel_run_args(&[
            "--input".into(),
            format!("f16_to_fp8_src={}", missing.display()),
        ]),
        &[&missing.display().to_string(), "No such file"],
    );
    // A file that is not .npy.
    let garbage = dir.join("garbage.npy");
    std::fs::write(&garbage, "not numpy at all").unwrap();
    fails_clearly(
        &kernel_run_args(&[
            "--input".into(),
            format!("f16_to_fp8_src={}", garbage.display()),
        ]),
        &[&garbage.display().to_string(), "not a .npy file"],
    );
    // An output larger than tile memory.
    fails_clearly(
        &kernel_run_args(&[
            "--output".into(),
            format!("f16_to_fp8_dst={}:uint8:99999999", out.display()),
        ]),
        &["reading output `f16_to_fp8_dst`", "outside tile memory"],
    );
    // An offset past the end of the address space (it wrapped to the word before the vertex
    // and the run succeeded), and an output whose byte count overflows.
    fails_clearly(
        &kernel_run_args(&["--set".into(), "f16_to_fp8_vertex+0xfffffffc=5".into()]),
        &[
            "f16_to_fp8_vertex+0xfffffffc",
            "past the end of the 32-bit address space",
        ],
    );
    fails_clearly(
        &kernel_run_args(&[
            "--output".into(),
            format!(
                "f16_to_fp8_dst={}:uint32:4611686018427387904",
                out.display()
            ),
        ]),
        &["output `f16_to_fp8_dst`", "do not fit"],
    );
    // A missing source file and an unknown machine.
    fails_clearly(
        &["asm", "run", "no/such/file.S", "--entry", "x"],
        &["no/such/file.S"],
    );
    fails_clearly(
        &[
            "asm",
            "run",
            KERNEL,
            "--entry",
            "f16_to_fp8",
            "--machine",
            "no_such_machine",
        ],
        &["no_such_machine"],
    );
    // A trap inside the run is reported with its site: the supervisor entered at worker code
    // reaches the worker-only `exitz`... first it runs `ld32 $a3`, an ARF load the supervisor
    // cannot do.
    let run = fails_clearly(
        &[
            "asm",
            "run",
            KERNEL,
            "--entry",
            "f16_to_fp8",
            "--vertex",
            "f16_to_fp8_vertex",
        ],
        &[
            "E-SIM-001 trap on tile 0 (supervisor) at pc 0x4c010",
            "cycle 4",
        ],
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // A cycle budget.
    fails_clearly(
        &kernel_run_args(&["--max-cycles".into(), "100".into()]),
        &["E-SIM-004 cycle budget of 100 cycles exceeded"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn asm_run_writes_outputs_and_prints_cycles() {
    let dir = scratch_dir("run-ok");
    let input = dir.join("in.npy");
    // 1.0, -2.0, 0.5, 448.0, then 1.5 and 65504 (F143 saturates above 240), -0.0, NaN.
    NpyArray::from_f16_bits(
        &[8],
        &[
            0x3c00, 0xc000, 0x3800, 0x5f00, 0x3e00, 0x7bff, 0x8000, 0x7e00,
        ],
    )
    .unwrap()
    .write(&input)
    .unwrap();
    let out = dir.join("out.npy");
    let args = kernel_run_args(&[
        "--input".into(),
        format!("f16_to_fp8_src={}", input.display()),
        "--set".into(),
        "f16_to_fp8_vertex+8=2".into(),
        "--output".into(),
        format!("f16_to_fp8_dst={}:uint8:8", out.display()),
    ]);
    let run = succeeds(&args);
    // 11 + 7·2 bundles, 6 cycles each.
    assert!(
        run.stdout
            .starts_with("cycles: 150\nbundles issued: 25 (supervisor 0, workers 25)\n"),
        "{}",
        run.stdout
    );
    assert_eq!(
        NpyArray::read(&out).unwrap().data,
        vec![0x40, 0xc8, 0x38, 0x7f, 0x44, 0x7f, 0x00, 0x80]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tessera_demo_is_bit_exact() {
    let run = succeeds(&["demo"]);
    assert!(run.stdout.contains("bit-exact"), "{}", run.stdout);
    // Every row reports zero mismatches and 6·(11 + 7·16384) cycles.
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("F143") || l.starts_with("F152"))
        .collect();
    assert_eq!(rows.len(), 3, "{}", run.stdout);
    for row in rows {
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((fields[2], fields[4]), ("688194", "0"), "{row}");
    }
    let small = succeeds(&["demo", "--machine", "small"]);
    assert!(
        small.stdout.contains("machine small: 16 tiles"),
        "{}",
        small.stdout
    );
    assert!(small.stdout.contains("bit-exact"), "{}", small.stdout);
}

#[test]
fn machine_prints_the_description() {
    let run = succeeds(&["machine", "small"]);
    assert!(
        run.stdout
            .starts_with("small (16 tiles, 624 KiB SRAM per tile at 0x4c000, 1.500 GHz)"),
        "{}",
        run.stdout
    );
    let run = succeeds(&["machine"]);
    assert!(
        run.stdout.starts_with("ipu21 (1472 tiles, "),
        "{}",
        run.stdout
    );
    fails_clearly(&["machine", "no_such_machine"], &["no_such_machine"]);
}

#[test]
fn isa_doc_writes_the_reference_pages() {
    let dir = scratch_dir("isa-doc");
    let out = dir.join("pages");
    let run = succeeds(&[
        "isa".as_ref(),
        "doc".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(
        run.stdout.contains(&out.display().to_string()),
        "{}",
        run.stdout
    );
    let pages = tessera::isa::reference::pages();
    assert!(pages.len() > 1);
    for (name, text) in &pages {
        let written =
            std::fs::read_to_string(out.join(name)).unwrap_or_else(|e| panic!("page {name}: {e}"));
        assert_eq!(&written, text, "page {name}");
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), pages.len());
    assert!(std::fs::read_to_string(out.join("control.md"))
        .unwrap()
        .contains("brnzdec"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tessera_run_compiles_and_simulates_a_checkpoint() {
    let dir = scratch_dir("run-checkpoint");
    let out = dir.join("hidden.npy");
    let report = dir.join("report.json");
    let run = succeeds(&[
        "run",
        "--machine",
        "small",
        "--model",
        "testdata/hf/vision-f32",
        "--pixels",
        "testdata/hf/vision-f32/pixel_values.npy",
        "--output",
        out.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(
        run.stdout.contains(
            "bit-exact vs the plan's reference (kernel references on the same tile program): yes"
        ),
        "{}",
        run.stdout
    );
    for needle in [
        "cropped",
        "error vs the host f32 reference, last_hidden_state",
        "pooler_output",
        "encoder span",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
    let hidden = tessera::npy::NpyArray::read(&out).unwrap();
    assert_eq!(hidden.shape, vec![2, 16, 64]);
    assert_eq!(hidden.dtype, tessera::npy::DType::Float32);
    let pooled = tessera::npy::NpyArray::read(&out.with_extension("pooler_output.npy")).unwrap();
    assert_eq!(pooled.shape, vec![2, 64]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    for key in ["total", "startup", "cropped", "encoder_span", "estimate"] {
        assert!(json["cycles"][key].is_u64(), "cycles.{key}: {json}");
    }
    assert_eq!(json["bit_exact"], serde_json::Value::Bool(true));
    assert!(json["error"]["rel_rms"].as_f64().unwrap() < 0.2);
    assert!(json["sram"]["peak_bytes_per_tile"].as_u64().unwrap() > 0);
    assert!(
        json["time"]["compile_s"].as_f64().is_some()
            && json["time"]["simulate_s"].as_f64().is_some()
    );
}

/// Every flag of the model commands is bounded before any work: a huge `--batch` is refused by
/// name at once, not by an allocation failure in making the pixels (found from outside: it used
/// to abort allocating 15 GB for `--batch 100000`).
#[test]
fn model_command_flags_are_refused_before_any_work() {
    let model = "testdata/hf/vision-f32";
    for (command, flag, value, needle) in [
        (
            "run",
            "--batch",
            "100000",
            "--batch 100000: expected 1..=64 images",
        ),
        ("run", "--batch", "0", "--batch 0: expected 1..=64"),
        ("compile", "--batch", "65", "--batch 65: expected 1..=64"),
        ("estimate", "--batch", "100000", "--batch 100000"),
        ("run", "--layers", "0", "--layers 0"),
        ("run", "--precision", "bf8", "--precision `bf8`"),
        ("run", "--beam", "0", "--beam 0"),
        ("estimate", "--grids", "1000", "--grids 1000"),
        (
            "run",
            "--force",
            "no-equals-sign",
            "--force `no-equals-sign`",
        ),
        ("estimate", "--k-parts", "1,2,2", "--k-parts `1,2,2`"),
        ("run", "--k-parts", "1,2,2,0", "expected four counts 1..=32"),
        ("compile", "--k-parts", "1,1,1,64", "--k-parts `1,1,1,64`"),
        (
            "run",
            "--key-blocks",
            "0",
            "--key-blocks 0: expected 1..=32",
        ),
        ("estimate", "--key-blocks", "33", "--key-blocks 33"),
    ] {
        // A machine file that does not exist: the bound must be refused before it is read.
        fails_clearly(
            &[
                command,
                "--model",
                model,
                "--machine",
                "no/such/machine.ron",
                flag,
                value,
            ],
            &[needle],
        );
    }
}

/// A key-block count that does not divide the model's tokens is refused with the counts that
/// do, before any compile.
#[test]
fn key_blocks_that_do_not_divide_the_tokens_are_refused_with_the_ones_that_do() {
    fails_clearly(
        &["estimate", "--key-blocks", "5"],
        &["--key-blocks 5", "64 tokens", "1, 2, 4, 8, 16, 32"],
    );
}

/// `tessera estimate --receive-puts` prints the estimate, then the total with every phase
/// scheduled for supervisor `put`s, whose change is the total's difference, and the exchange
/// steps that change (and only those): the timed receive streams shorten some.
#[test]
fn estimate_compares_the_exchange_with_supervisor_puts() {
    let run = succeeds(&[
        "estimate",
        "--machine",
        "small",
        "--model",
        "testdata/hf/vision-f32",
        "--receive-puts",
    ]);
    let number = |line: &str, after: &str| -> i64 {
        let rest = &line[line.find(after).expect(after) + after.len()..];
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-' || *c == '+')
            .collect();
        digits.parse().unwrap_or_else(|_| panic!("{line}"))
    };
    let lines: Vec<&str> = run.stdout.lines().collect();
    let estimate = lines
        .iter()
        .find(|l| l.starts_with("estimate: "))
        .map(|l| number(l, "estimate: "))
        .expect("an estimate line");
    let at = lines
        .iter()
        .position(|l| l.starts_with("with supervisor puts"))
        .unwrap_or_else(|| panic!("no projection: {}", run.stdout));
    let projected = number(lines[at], "timed streams): ");
    let change = number(lines[at], "cycles (");
    assert_eq!(projected - estimate, change, "{}", lines[at]);
    let changed: Vec<&&str> = lines[at + 1..]
        .iter()
        .take_while(|l| l.contains(" -> "))
        .collect();
    assert!(!changed.is_empty(), "{}", run.stdout);
    assert!(
        changed.iter().all(|l| l.contains("exchange: ")),
        "{changed:?}"
    );
    assert!(projected > estimate, "{}", lines[at]);
}
