#!/usr/bin/env python3
"""Regenerates every oracle file under testdata/ with code that is not this project's.

    python3 -m venv /tmp/td && /tmp/td/bin/pip install -r scripts/testdata-requirements.txt
    /tmp/td/bin/python scripts/make_testdata.py [--out testdata] [--only fp8|hf]

What it writes (testdata/README.md says what each file means):

- fp8/: the FP8 tables, from NumPy and ml_dtypes (`float8_e4m3fnuz` is F143, `float8_e5m2fnuz`
  is F152);
- hf/: two tiny SigLIP checkpoints written by transformers' own `save_pretrained` (a float32
  `SiglipVisionModel`, and a bfloat16 `SiglipModel` sharded in five files), transformers'
  float32 activations for a batch of two images, a test-pattern PNG and the `pixel_values`
  `SiglipImageProcessor` makes of it;
- MANIFEST.json: size and SHA-256 of every file, and the versions of the packages that made
  them. `tests/it/testdata_manifest.rs` checks the committed files against it.

Everything is seeded and runs on CPU, so a run with the pinned versions
(scripts/testdata-requirements.txt) reproduces the committed bytes.
"""

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
FP8_SCALES = (-4, 0, 4)


def save_npy(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.ascontiguousarray(array))


# ---------------------------------------------------------------------------------------------
# FP8 tables
# ---------------------------------------------------------------------------------------------


def fp8_tables(out: Path) -> None:
    import ml_dtypes

    formats = {"f143": ml_dtypes.float8_e4m3fnuz, "f152": ml_dtypes.float8_e5m2fnuz}
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    for name, fp8 in formats.items():
        codes = np.arange(256, dtype=np.uint8)
        save_npy(out / f"{name}_decode.npy", codes.view(fp8).astype(np.float32))
        largest = float(ml_dtypes.finfo(fp8).max)
        for scale in FP8_SCALES:
            # f16 × 2^S is exact in float32 (an f16 has 11 significant bits, and 2^±4 keeps
            # every product inside float32's range), so the cast below rounds exactly once.
            with np.errstate(invalid="ignore"):
                scaled = halves.astype(np.float32) * np.float32(2.0**scale)
            special = ~np.isfinite(scaled)
            for nanoo in (0, 1):
                values = scaled.copy()
                if nanoo == 0:
                    # Saturate: values past ±max become ±max before rounding (a value that
                    # rounds down to max is max either way).
                    values = np.clip(values, -largest, largest)
                values[special] = np.nan
                codes = values.astype(fp8).view(np.uint8)
                # A NaN of either sign is the format's one NaN, 0x80.
                codes = np.where(np.isnan(values), np.uint8(0x80), codes)
                save_npy(out / f"f16_to_{name}_fpscl{scale}_nanoo{nanoo}.npy", codes)


# ---------------------------------------------------------------------------------------------
# SigLIP checkpoints, activations, an image
# ---------------------------------------------------------------------------------------------

VISION = dict(
    hidden_size=64,
    intermediate_size=256,
    num_attention_heads=4,
    num_hidden_layers=2,
    image_size=56,
    patch_size=14,
    num_channels=3,
    hidden_act="gelu_pytorch_tanh",
    layer_norm_eps=1e-6,
    attention_dropout=0.0,
    vision_use_head=True,
)
TEXT = dict(
    hidden_size=32,
    intermediate_size=64,
    num_attention_heads=2,
    num_hidden_layers=1,
    max_position_embeddings=16,
    vocab_size=64,
    projection_size=32,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)
ACTIVATIONS = ("embeddings", "layer0_out", "layer1_out", "last_hidden_state", "pooler_output")


def perturb(model, seed: int) -> None:
    """Random weights, with every bias and LayerNorm parameter moved off its initial value so
    that every parameter matters to the output."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in sorted(model.named_parameters()):
            noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float32)
            if name.endswith("layer_norm1.weight") or name.endswith("layer_norm2.weight") or (
                "layernorm" in name and name.endswith(".weight")
            ):
                parameter.copy_(1.0 + 0.2 * noise)
            elif parameter.dim() <= 1:
                parameter.copy_(0.1 * noise)
            else:
                fan_in = parameter[0].numel()
                parameter.copy_(noise / fan_in**0.5)


def test_pattern(width: int = 120, height: int = 90):
    """An RGB pattern with gradients, edges and a diagonal, so that resizing has work to do."""
    from PIL import Image

    y, x = np.mgrid[0:height, 0:width]
    red = (255 * x / (width - 1)).astype(np.uint8)
    green = (255 * y / (height - 1)).astype(np.uint8)
    blue = np.where(((x // 10) + (y // 10)) % 2 == 0, 230, 25).astype(np.uint8)
    blue = np.where(np.abs(x - y * width / height) < 3, 255, blue).astype(np.uint8)
    return Image.fromarray(np.stack([red, green, blue], axis=-1), mode="RGB")


def pixels(seed: int):
    import torch

    generator = torch.Generator().manual_seed(seed)
    return torch.rand((2, 3, 56, 56), generator=generator) * 2.0 - 1.0


def vision_activations(vision, pixel_values) -> dict:
    import torch

    with torch.no_grad():
        output = vision(pixel_values=pixel_values, output_hidden_states=True)
    hidden = output.hidden_states
    return {
        "embeddings": hidden[0],
        "layer0_out": hidden[1],
        "layer1_out": hidden[2],
        "last_hidden_state": output.last_hidden_state,
        "pooler_output": output.pooler_output,
    }


def write_case(directory: Path, pixel_values, activations: dict) -> None:
    save_npy(directory / "pixel_values.npy", pixel_values.numpy().astype(np.float32))
    for name in ACTIVATIONS:
        save_npy(directory / "expected" / f"{name}.npy", activations[name].numpy().astype(np.float32))


def hf_data(out: Path) -> dict:
    import torch
    from transformers import (
        SiglipConfig,
        SiglipImageProcessor,
        SiglipModel,
        SiglipVisionConfig,
        SiglipVisionModel,
    )

    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    # vision-f32: SiglipVisionModel, float32, one file, keys without `vision_model.`.
    config = SiglipVisionConfig(**VISION)
    torch.manual_seed(1)
    vision = SiglipVisionModel(config).eval()
    perturb(vision, seed=2)
    directory = out / "vision-f32"
    vision.save_pretrained(directory, safe_serialization=True)
    pixel_values = pixels(seed=3)
    write_case(directory, pixel_values, vision_activations(vision, pixel_values))

    # siglip-bf16-sharded: the whole SiglipModel in bfloat16, sharded; the activations are
    # those of the bfloat16 weights converted back to float32 and run in float32.
    config = SiglipConfig(text_config=TEXT, vision_config=VISION)
    torch.manual_seed(4)
    model = SiglipModel(config).eval()
    perturb(model, seed=5)
    model = model.to(torch.bfloat16)
    directory = out / "siglip-bf16-sharded"
    model.save_pretrained(directory, safe_serialization=True, max_shard_size="100KB")
    model = model.to(torch.float32)
    pixel_values = pixels(seed=6)
    write_case(directory, pixel_values, vision_activations(model.vision_model, pixel_values))

    # The image and what the image processor makes of it, at the tiny and the So400m size.
    image = test_pattern()
    (out / "image").mkdir(parents=True, exist_ok=True)
    image.save(out / "image" / "pattern-120x90.png", optimize=False)
    for size in (56, 378):
        processor = SiglipImageProcessor(size={"height": size, "width": size})
        values = processor(images=image, return_tensors="np")["pixel_values"]
        save_npy(out / "image" / f"pixel_values-{size}.npy", values.astype(np.float32))

    return {
        "cases": {"vision-f32": list(ACTIVATIONS), "siglip-bf16-sharded": list(ACTIVATIONS)},
        "image": {
            "file": "pattern-120x90.png",
            "processor": "SiglipImageProcessor(size={height: S, width: S}) defaults",
            "outputs": ["pixel_values-56.npy", "pixel_values-378.npy"],
        },
    }


# ---------------------------------------------------------------------------------------------
# The manifest
# ---------------------------------------------------------------------------------------------


def versions() -> dict:
    from importlib import metadata

    found = {"python": sys.version.split()[0]}
    for package in ("numpy", "ml_dtypes", "torch", "transformers", "safetensors", "pillow"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return found


def manifest(out: Path, hf: dict) -> None:
    files = {}
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.name in ("MANIFEST.json", "README.md"):
            continue
        data = path.read_bytes()
        files[path.relative_to(out).as_posix()] = {
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    document = {"made_by": "scripts/make_testdata.py", "versions": versions(), "hf": hf, "files": files}
    (out / "MANIFEST.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "testdata")
    parser.add_argument("--only", choices=("fp8", "hf"))
    args = parser.parse_args()
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    hf = {}
    if args.only in (None, "fp8"):
        fp8_tables(args.out / "fp8")
    if args.only in (None, "hf"):
        hf = hf_data(args.out / "hf")
    elif (args.out / "MANIFEST.json").exists():
        hf = json.loads((args.out / "MANIFEST.json").read_text()).get("hf", {})
    manifest(args.out, hf)


if __name__ == "__main__":
    main()
