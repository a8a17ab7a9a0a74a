//! Helpers shared by the fuzz targets and the seed generator (`examples/make_seeds.rs`).

use tessera_isa::asm::parse_bundle;
use tessera_isa::inst::emit::{encode, encode_bundle};
use tessera_isa::inst::{Bundle, Inst, InstDesc, OperandDesc, OperandKind, INSTRUCTIONS};

/// The SigLIP config the `safetensors` target loads checkpoints against: D 8, F 16, 2 heads,
/// 1 layer, 3 channels, 2×2 patches of a 4×4 image (4 tokens), with the pooling head.
pub const MICRO_CONFIG_JSON: &str = r#"{
  "hidden_size": 8,
  "intermediate_size": 16,
  "num_attention_heads": 2,
  "num_hidden_layers": 1,
  "num_channels": 3,
  "patch_size": 2,
  "image_size": 4,
  "layer_norm_eps": 1e-6,
  "hidden_act": "gelu_pytorch_tanh",
  "vision_use_head": true,
  "model_type": "siglip_vision_model"
}"#;

/// Base address of the code the `tile_sim` target builds (the assembler's default base).
pub const CODE_BASE: u32 = tessera_isa::asm::DEFAULT_BASE;
/// Where the `tile_sim` prologue points `$m0..$m7` (inside SRAM, away from the code).
pub const DATA_BASE: u32 = 0x6_0000;

/// Maps an arbitrary `raw` to a valid value of an operand ([`OperandDesc::fold_value`]), except
/// that code targets are folded into `code_words` words from [`CODE_BASE`] so that branches land
/// in the program.
pub fn valid_value(operand: &OperandDesc, raw: u32, code_words: u32) -> u32 {
    if operand.kind == OperandKind::Target {
        let width = operand.field.width();
        let shift = u32::from(operand.field.shift);
        let folded = CODE_BASE + 4 * (raw % code_words.max(1));
        if u64::from(folded >> shift) < (1u64 << width) {
            return folded;
        }
    }
    operand.fold_value(raw)
}

/// An instruction of `row` with operands made valid from `raws`.
pub fn make_inst(row: &InstDesc, raws: &[u32], code_words: u32) -> Inst {
    let values: Vec<u32> = row
        .operands
        .iter()
        .enumerate()
        .map(|(i, op)| valid_value(op, raws.get(i).copied().unwrap_or(0), code_words))
        .collect();
    Inst::new(row.opcode, &values)
}

/// A small xorshift stream, to spread one fuzzer word over several operands.
fn spread(seed: u32, n: usize) -> Vec<u32> {
    let mut x = seed ^ 0x9e37_79b9;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

fn word_of(text: &str) -> u32 {
    let bundle = parse_bundle(text).expect("fixed instruction text assembles");
    encode_bundle(&bundle).expect("fixed instruction encodes")[0]
}

/// Builds a code image (little-endian words, to be placed at [`CODE_BASE`]) from fuzzer bytes:
/// a prologue pointing `$m0..$m7` into SRAM, then one instruction (or main+aux bundle, 8-byte
/// aligned) per 6-byte chunk `[row lo, row hi | pair bit, raw operand bits ×4]`, then the end of
/// the program (`br $m10` for the supervisor, `exitz $mzero` for a worker).
pub fn build_program(data: &[u8], worker: bool) -> Vec<u32> {
    let nop = word_of("nop");
    let mut words: Vec<u32> = (0..8u32)
        .map(|k| word_of(&format!("setzi $m{k}, {:#x}", DATA_BASE + 0x400 * k)))
        .collect();
    let chunks: Vec<&[u8]> = data.chunks_exact(6).collect();
    // Upper bound of the program's length, so folded branch targets stay inside it.
    let code_words = (words.len() + 3 * chunks.len() + 2) as u32;
    let decode_chunk = |chunk: &[u8]| -> (Inst, bool) {
        let selector = u16::from_le_bytes([chunk[0], chunk[1]]);
        let pair = selector & 0x8000 != 0;
        let row = &INSTRUCTIONS[(selector & 0x7fff) as usize % INSTRUCTIONS.len()];
        let raw = u32::from_le_bytes([chunk[2], chunk[3], chunk[4], chunk[5]]);
        (make_inst(row, &spread(raw, 5), code_words), pair)
    };
    let mut i = 0;
    while i < chunks.len() {
        let (inst, pair) = decode_chunk(chunks[i]);
        i += 1;
        if pair && i < chunks.len() {
            let (aux, _) = decode_chunk(chunks[i]);
            let bundle = Bundle {
                main: Some(inst),
                aux: Some(aux),
            };
            if let Ok(pair_words) = encode_bundle(&bundle) {
                i += 1;
                if words.len() % 2 == 1 {
                    words.push(nop);
                }
                words.extend(pair_words);
                continue;
            }
        }
        if let Ok(word) = encode(&inst) {
            words.push(word);
        }
    }
    words.push(word_of(if worker { "exitz $mzero" } else { "br $m10" }));
    if words.len() % 2 == 1 {
        words.push(nop);
    }
    words
}

/// Little-endian bytes of words.
pub fn word_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A random graph (`tessera::random_graph`) from the bytes of the `compile_graph` and
/// `plan_lower` targets, and whether its repeats stay a loop: byte 0 picks the rows (1..=20),
/// byte 1 the columns (1..=40), byte 2 an f32 or f16 input — or, when it is 1 mod 5, a loop of
/// 2..=4 iterations of the steps as one layer (columns a multiple of 4) — and every following
/// 4 bytes one step (at most [`MAX_GRAPH_STEPS`]). `None` when the bytes make no graph.
pub fn graph_from_bytes(data: &[u8]) -> Option<(tessera::random_graph::Built, bool)> {
    use tessera::random_graph::{build, build_loop, Step};
    let [rows, cols, kind, rest @ ..] = data else {
        return None;
    };
    let steps: Vec<Step> = rest
        .chunks_exact(4)
        .take(MAX_GRAPH_STEPS)
        .map(|c| Step::from_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let rows = 1 + *rows as usize % 20;
    if kind % 5 == 1 {
        let cols = 4 * (1 + *cols as usize % 10);
        let count = 2 + u32::from(*kind / 5 % 3);
        build_loop(rows, cols, count, &steps).map(|built| (built, true))
    } else {
        let cols = 1 + *cols as usize % 40;
        build(rows, cols, kind % 5 == 0, &steps).map(|built| (built, false))
    }
}

/// Steps of a random graph beyond this are ignored (the property test draws 1..9).
pub const MAX_GRAPH_STEPS: usize = 8;
