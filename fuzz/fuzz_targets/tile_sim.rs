//! Fuzzes one simulated tile: fuzzer bytes become a program of valid instructions and bundles
//! (every table row reachable, operands made valid, branch targets folded into the program;
//! `tessera_fuzz::build_program`) run on tile 0 of the built-in `small` machine through
//! `tessera::tile_program::run_program`, as the supervisor or as worker 0 (first byte), with a
//! 20 000-cycle budget. Checks: the run ends — completion, a trap, or the E-SIM-004 cycle-budget
//! error — and never panics or hangs (libFuzzer's `-timeout` catches a hang).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use tessera::tile_program::{run_program, RunRequest};
use tessera_fuzz::{build_program, word_bytes, CODE_BASE};
use tessera_isa::asm::{CodeContext, Object, Section, Symbol, SymbolKind};
use tessera_sim::MachineDescription;

fn small() -> &'static MachineDescription {
    static SMALL: OnceLock<MachineDescription> = OnceLock::new();
    SMALL.get_or_init(|| MachineDescription::builtin("small").expect("built-in machine"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let worker = mode & 1 == 1;
    let words = build_program(rest, worker);
    let context = if worker {
        CodeContext::Worker
    } else {
        CodeContext::Supervisor
    };
    let object = Object {
        sections: vec![Section {
            name: ".text".into(),
            address: CODE_BASE,
            bytes: word_bytes(&words),
            has_code: true,
            context: Some(context),
            align: 8,
        }],
        symbols: BTreeMap::from([(
            "entry".to_string(),
            Symbol {
                address: CODE_BASE,
                section: 0,
                global: true,
                kind: SymbolKind::Function,
                size: None,
                context: Some(context),
            },
        )]),
        listing: Vec::new(),
    };
    let request = RunRequest {
        entry: "entry".into(),
        worker,
        vertex: None,
        inputs: Vec::new(),
        words: Vec::new(),
        outputs: Vec::new(),
        max_cycles: 20_000,
    };
    match run_program(small(), &object, &request) {
        Ok(result) => {
            let _ = result.cycles;
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
