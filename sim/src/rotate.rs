//! The rotate program: a whole-chip example (compute on local data with six workers, send the
//! buffer to the right neighbour through the exchange, several supersteps) with its image, input
//! and host reference. Public so that the chip tests and the chip bench run the same program.

use tessera_isa::asm::{assemble, LayoutOptions};
use tessera_isa::image::{
    Dtype, ElementOrder, HostDirection, HostPiece, HostTensor, Image, ImageBuilder, ObjectRules,
    RegionChoice, SramCategory,
};

use crate::MachineDescription;

/// Sections of the rotate program (and of the chip tests written like it) and their SRAM
/// categories.
pub fn rotate_object_rules() -> ObjectRules {
    ObjectRules::default()
        .section(".data.vertices", SramCategory::VertexState)
        .section(".data.buf", SramCategory::Tensor("buf".into()))
        .section(".data.rbuf", SramCategory::HostData)
}

/// One host tensor of `words` u32 per tile at `symbol` on every tile of `tiles`, in tile order.
pub fn per_tile_tensor(
    builder: &ImageBuilder,
    name: &str,
    direction: HostDirection,
    symbol: &str,
    tiles: &[u32],
    words: u32,
) -> HostTensor {
    let pieces = tiles
        .iter()
        .enumerate()
        .map(|(i, &tile)| HostPiece {
            tile,
            address: builder
                .symbol(tile, symbol)
                .unwrap_or_else(|| panic!("no symbol {symbol} on tile {tile}")),
            tensor_byte_offset: 4 * u64::from(words) * i as u64,
            bytes: 4 * words,
            element_order: ElementOrder::RowMajor,
        })
        .collect();
    HostTensor {
        name: name.into(),
        direction,
        dtype: Dtype::U32,
        shape: vec![tiles.len() as u64, u64::from(words)],
        pieces,
    }
}

/// `send` instructions for `words` words from `symbol` (64 words per `send`).
fn sends(symbol: &str, words: u32) -> String {
    let mut text = String::new();
    let mut done = 0;
    while done < words {
        let count = (words - done).min(64);
        // Send control 3, both fabric directions: one text serves every tile, and the next
        // tile lies either way.
        text += &format!("    send {}, {symbol} + {}, 3\n", count - 1, 4 * done);
        done += count;
    }
    text
}

/// The largest latency from a tile to its right neighbour.
fn ring_latency(machine: &MachineDescription) -> u64 {
    (0..machine.tiles)
        .map(|t| machine.exchange.latency_cycles(t, (t + 1) % machine.tiles))
        .max()
        .unwrap_or(0)
}

/// Every tile: `steps` times { workers compute buf = 3 * rbuf + tile id; sync; send buf to the
/// right neighbour's rbuf while listening to the left one; sync }. One program for all tiles: the
/// tile id and the left neighbour come from `$TILE_ID`.
pub fn rotate_program(machine: &MachineDescription, words: u32, steps: u32) -> String {
    let tiles = machine.tiles;
    let wait = ring_latency(machine) + 2;
    let mut vertices = String::new();
    let mut offset = 0;
    for worker in 0..6 {
        let count = words / 6 + u32::from(worker < words % 6);
        vertices += &format!(
            "    .int rbuf + {}, buf + {}, {}, addend\n",
            4 * offset,
            4 * offset,
            count - 1
        );
        offset += count;
    }
    format!(
        "
    .section .text.worker, \"ax\"
    .worker
    .align 8
scale_add:
    ld32 $m0, $mvertex_base, $mzero, 0
    ld32 $m1, $mvertex_base, $mzero, 1
    ld32 $m2, $mvertex_base, $mzero, 2
    ld32 $m3, $mvertex_base, $mzero, 3
    ld32 $m3, $m3, $mzero, 0
.Lloop:
    ld32step $m4, $mzero, $m0+=, 1
    mul $m4, $m4, 3
    add $m4, $m4, $m3
    st32step $m4, $mzero, $m1+=, 1
    brnzdec $m2, .Lloop
    exitz $mzero

    .section .text.supervisor, \"ax\"
    .supervisor
    .align 8
    .globl main
main:
    get $m0, $TILE_ID
    setzi $m1, addend
    st32 $m0, $m1, $mzero, 0
    cmpeq $m2, $m0, 0
    mul $m2, $m2, {tiles}
    add $m5, $m0, $m2
    setzi $m6, rbuf
    setzi $m7, {last_step}
    setzi $m8, scale_add
    setzi $m9, vertices
.Lstep:
    runall $m8, $m9, 4
    sync TEXCH_SYNCZONE_LOCAL
    sync TEXCH_SYNCZONE_INTERNAL
    put $INCOMING_SINIT, $m6
    put $INCOMING_MUX, $m5
{sends}    delay {wait}
    put $INCOMING_MUX, $mzero
    sync TEXCH_SYNCZONE_INTERNAL
    brnzdec $m7, .Lstep
    br $m10

    .section .data.vertices
    .align 4
vertices:
{vertices}addend:
    .int 0
    .section .data.buf
    // The exchanged buffers start a memory element of their own: a send from the element the
    // supervisor fetches its code from is an exchange conflict.
    .align 16384
buf:
    .space {bytes}
    .section .data.rbuf
    .align 8
rbuf:
    .space {bytes}
",
        last_step = steps - 1,
        sends = sends("buf", words),
        bytes = 4 * words,
    )
}

/// The rotate program on every tile of `machine`, with the host tensors `x` (input) and `y`
/// (output) both at `rbuf`, `words` u32 per tile.
pub fn rotate_image(machine: &MachineDescription, words: u32, steps: u32) -> Image {
    let text = rotate_program(machine, words, steps);
    let object = assemble(
        &[("rotate.S", &text)],
        &LayoutOptions::at(machine.sram.base),
    )
    .unwrap_or_else(|errors| panic!("rotate.S does not assemble:\n{errors}\n{text}"));
    let tiles: Vec<u32> = (0..machine.tiles).collect();
    let mut b = machine
        .image_builder()
        .expect("a machine that parsed has a valid SRAM layout");
    b.add_object(&tiles, &object, &rotate_object_rules())
        .expect("the rotate object fits every tile");
    for &tile in &tiles {
        b.set_entry_symbol(tile, "main", None)
            .expect("rotate.S defines `main`");
        b.alloc_worker_scratch(tile, 64, &RegionChoice::Any)
            .expect("64 bytes fit beside the rotate object");
    }
    let x = per_tile_tensor(&b, "x", HostDirection::Input, "rbuf", &tiles, words);
    let y = per_tile_tensor(&b, "y", HostDirection::Output, "rbuf", &tiles, words);
    b.add_host_tensor(x)
        .expect("`x` covers `rbuf` once per tile");
    b.add_host_tensor(y)
        .expect("`y` covers `rbuf` once per tile");
    b.finish().expect("every tile has its entry and segments")
}

/// The input `x` the rotate tests and bench feed: `words` pseudo-random u32 per tile.
pub fn rotate_input(tiles: u32, words: u32) -> Vec<u32> {
    (0..tiles * words)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995)
        .collect()
}

/// The host computation of the rotate program.
pub fn rotate_reference(input: &[u32], tiles: u32, words: u32, steps: u32) -> Vec<u32> {
    let (t, n) = (tiles as usize, words as usize);
    let mut rbuf = input.to_vec();
    for _ in 0..steps {
        let mut next = vec![0u32; t * n];
        for tile in 0..t {
            let right = (tile + 1) % t;
            for i in 0..n {
                next[right * n + i] = rbuf[tile * n + i].wrapping_mul(3).wrapping_add(tile as u32);
            }
        }
        rbuf = next;
    }
    rbuf
}
