//! Image builder, validation and file format: placement, deduplication, the SRAM refusal, round
//! trips, and every rejection with its message.

use super::*;
use crate::asm::assemble_str;

fn small() -> MachineFingerprint {
    MachineFingerprint {
        name: "small".into(),
        tiles: 16,
        sram_base: 0x4C000,
        sram_size: 0x9C000,
    }
}

fn regions() -> Vec<(String, u32, u32)> {
    vec![
        ("standard".into(), 0x4C000, 0x34000),
        ("interleaved".into(), 0x80000, 0x68000),
    ]
}

fn builder() -> ImageBuilder {
    ImageBuilder::new(small(), regions()).unwrap()
}

const PROGRAM: &str = "
    .section .text
    .supervisor
    .globl main
main:
    br $m10
    .section .data
    .align 4
buf: .int 1, 2, 3, 4
";

fn sample() -> Image {
    let object = assemble_str(PROGRAM).unwrap();
    let mut b = builder();
    let tiles: Vec<u32> = (0..4).collect();
    b.add_object(
        &tiles,
        &object,
        &ObjectRules::default().section(".data", SramCategory::HostData),
    )
    .unwrap();
    for tile in 0..4 {
        b.set_entry_symbol(tile, "main", None).unwrap();
        b.alloc_worker_scratch(tile, 64, &RegionChoice::Any)
            .unwrap();
    }
    let buf = b.symbol(0, "buf").unwrap();
    let pieces = (0..4)
        .map(|tile| HostPiece {
            tile,
            address: buf,
            tensor_byte_offset: 16 * u64::from(tile),
            bytes: 16,
            element_order: ElementOrder::RowMajor,
        })
        .collect();
    b.add_host_tensor(HostTensor {
        name: "x".into(),
        direction: HostDirection::Output,
        dtype: Dtype::U32,
        shape: vec![4, 4],
        pieces,
    })
    .unwrap();
    b.finish().unwrap()
}

#[test]
fn objects_share_blobs_and_symbol_tables() {
    let image = sample();
    assert_eq!(image.tiles.len(), 4);
    assert_eq!(
        image.blobs.len(),
        2,
        "code and data stored once for four tiles"
    );
    assert_eq!(image.symbol_tables.len(), 1);
    let tile = image.tile(3).unwrap();
    assert_eq!(
        tile.segments
            .iter()
            .filter(|s| s.category == SramCategory::Code)
            .count(),
        1
    );
    assert!(tile
        .segments
        .iter()
        .any(|s| s.category == SramCategory::WorkerScratch));
    assert_eq!(image.symbol(2, "main"), Some(0x4C000));
    assert_eq!(
        tile.entry,
        Some(TileEntry {
            supervisor: 0x4C000,
            vertex_base: 0
        })
    );
    assert_eq!(image.load_bytes(), 4 * (image.blobs[0].len() as u64 + 16));
    assert_eq!(image.running_tiles().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
}

#[test]
fn category_names_round_trip() {
    for category in [
        SramCategory::Code,
        SramCategory::VertexState,
        SramCategory::Tensor("w".into()),
        SramCategory::ExchangeProgram,
        SramCategory::WorkerScratch,
        SramCategory::HostData,
        SramCategory::Constants,
        SramCategory::Padding,
    ] {
        assert_eq!(
            SramCategory::from_name(&category.name()),
            Some(category.clone())
        );
    }
    assert_eq!(SramCategory::HostData.name(), "host-data");
    assert_eq!(Dtype::from_name("float16"), Some(Dtype::F16));
    assert_eq!(Dtype::from_name("i32"), Some(Dtype::I32));
}

#[test]
fn alloc_is_first_fit_aligned_and_refuses_with_the_numbers() {
    let mut b = builder();
    let a = b
        .alloc(
            1,
            SramCategory::Tensor("a".into()),
            "a",
            10,
            8,
            &RegionChoice::standard(),
        )
        .unwrap();
    let c = b
        .alloc(
            1,
            SramCategory::Tensor("c".into()),
            "c",
            16,
            64,
            &RegionChoice::standard(),
        )
        .unwrap();
    assert_eq!(a, 0x4C000);
    assert_eq!(c, 0x4C040);
    let i = b
        .alloc(
            1,
            SramCategory::VertexState,
            "v",
            16,
            16,
            &RegionChoice::interleaved(),
        )
        .unwrap();
    assert_eq!(i, 0x80000);
    let free = 0x34000 - 10 - 16;
    let err = b
        .alloc(
            1,
            SramCategory::HostData,
            "big",
            0x40000,
            8,
            &RegionChoice::standard(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "E-IMG-010: insufficient tile SRAM for 262144 host-data bytes on tile 1 ({free} free)"
        )
    );
    assert!(err
        .to_string()
        .contains("insufficient tile SRAM for 262144 host-data bytes on tile 1"));
    // Fragmented: enough bytes in total, no range large enough.
    let err = b
        .alloc(
            1,
            SramCategory::HostData,
            "frag",
            0x33FD0,
            8,
            &RegionChoice::standard(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("largest free range"), "{err}");
    assert!(matches!(
        b.alloc(1, SramCategory::Padding, "p", 8, 3, &RegionChoice::Any),
        Err(ImageError::BadAlignment { align: 3 })
    ));
    assert!(matches!(
        b.alloc(
            1,
            SramCategory::Padding,
            "p",
            8,
            8,
            &RegionChoice::Named("nope".into())
        ),
        Err(ImageError::NoSuchRegion { .. })
    ));
    assert!(matches!(
        b.alloc(16, SramCategory::Padding, "p", 8, 8, &RegionChoice::Any),
        Err(ImageError::TileOutOfRange { tile: 16, .. })
    ));
}

#[test]
fn place_checks_bounds_and_overlap() {
    let mut b = builder();
    b.place(0, 0x4C100, 0x100, SramCategory::Constants, "one")
        .unwrap();
    let err = b
        .place(0, 0x4C180, 0x10, SramCategory::Constants, "two")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-IMG-009: on tile 0, segment `two` at 0x4c180 overlaps segment `one` (0x4c100..0x4c200)"
    );
    let err = b
        .place(0, 0xE7FF0, 0x20, SramCategory::Constants, "tail")
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("E-IMG-008: segment `tail` on tile 0"),
        "{err}"
    );
    assert!(matches!(
        b.place(0, 0x4B000, 4, SramCategory::Constants, "low"),
        Err(ImageError::SegmentOutsideSram { .. })
    ));
    b.place(1, 0x4C180, 0x10, SramCategory::Constants, "two")
        .unwrap();
}

#[test]
fn files_round_trip() {
    let image = sample();
    let bytes = image.to_bytes().unwrap();
    assert_eq!(&bytes[..8], IMAGE_MAGIC);
    assert_eq!(Image::from_bytes(&bytes).unwrap(), image);
    for cut in [0, 5, 9, 13, 20, bytes.len() / 2, bytes.len() - 1] {
        assert!(Image::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn malformed_files_are_rejected_with_their_ids() {
    let image = sample();
    let bytes = image.to_bytes().unwrap();
    let err = Image::from_bytes(b"NOTANIMAGE AT ALL").unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-IMG-001: not a Tessera image (bad magic; expected \"TSRIMAGE\")"
    );
    let mut other = bytes.clone();
    other[8] = 9;
    assert_eq!(
        Image::from_bytes(&other).unwrap_err().to_string(),
        "E-IMG-002: image format version 9 is not supported (this build reads version 1)"
    );
    let mut garbled = bytes.clone();
    garbled[20] = b'#';
    assert!(Image::from_bytes(&garbled)
        .unwrap_err()
        .to_string()
        .starts_with("E-IMG-003: image manifest is malformed"));
    let truncated = &bytes[..bytes.len() - 3];
    assert!(matches!(
        Image::from_bytes(truncated),
        Err(ImageError::PayloadTruncated {
            blob: 1,
            claimed: 16,
            available: 13
        })
    ));
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert_eq!(
        Image::from_bytes(&trailing).unwrap_err().to_string(),
        "E-IMG-005: image payload has 1 bytes after the last blob"
    );
}

#[test]
fn inconsistent_images_are_rejected() {
    let good = sample();
    let mut image = good.clone();
    image.host_tensors[0].pieces[1].address = 0xE8000 - 8;
    assert_eq!(
        image.validate().unwrap_err().to_string(),
        "E-IMG-014: piece 1 of x on tile 1 (0xe7ff8, 16 bytes) lies outside the tile's SRAM"
    );
    let mut image = good.clone();
    image.host_tensors[0].pieces[1].address = 0x90000;
    assert!(matches!(
        image.validate(),
        Err(ImageError::PieceOutsideSegment {
            piece: 1,
            tile: 1,
            ..
        })
    ));
    let mut image = good.clone();
    image.host_tensors[0].pieces.pop();
    assert_eq!(
        image.validate().unwrap_err().to_string(),
        "E-IMG-017: output x: tensor bytes 48..64 are in no piece"
    );
    let mut image = good.clone();
    image.host_tensors[0].pieces[3].tensor_byte_offset = 32;
    assert!(image
        .validate()
        .unwrap_err()
        .to_string()
        .contains("is written by two pieces"));
    let mut image = good.clone();
    image.tiles[0].entry = Some(TileEntry {
        supervisor: 0x4C100,
        vertex_base: 0,
    });
    assert!(matches!(
        image.validate(),
        Err(ImageError::EntryNotCode {
            tile: 0,
            entry: 0x4C100
        })
    ));
    let mut image = good.clone();
    image.tiles[0].segments[1].size += 4;
    assert!(image
        .validate()
        .unwrap_err()
        .to_string()
        .contains("but its blob has 16 bytes"));
    let mut image = good.clone();
    image.tiles[2].tile = 20;
    assert!(matches!(
        image.validate(),
        Err(ImageError::TileOutOfRange { tile: 20, .. })
    ));
    let mut image = good;
    image.tiles[0].segments[1].address = image.tiles[0].segments[0].address;
    assert!(matches!(
        image.validate(),
        Err(ImageError::SegmentOverlap { .. })
    ));
}

#[test]
fn machine_mismatch_names_both_machines() {
    let image = sample();
    let ipu21 = MachineFingerprint {
        name: "ipu21".into(),
        tiles: 1472,
        sram_base: 0x4C000,
        sram_size: 0x9C000,
    };
    let err = image.check_machine(&ipu21).unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-IMG-006: image built for small (16 tiles), machine is ipu21 (1472 tiles)"
    );
    let mut resized = small();
    resized.sram_size = 0x10000;
    assert!(image
        .check_machine(&resized)
        .unwrap_err()
        .to_string()
        .contains("SRAM 0x4c000+0x9c000"));
    image.check_machine(&small()).unwrap();
}

#[test]
fn regions_must_lie_in_sram() {
    let err = ImageBuilder::new(small(), vec![("x".into(), 0x4C000, 0x100000)]).unwrap_err();
    assert!(err.to_string().starts_with("E-IMG-022"), "{err}");
    let whole = ImageBuilder::new(small(), Vec::new()).unwrap();
    assert_eq!(whole.regions()[0].size, 0x9C000);
}
