//! The `tessera` package's end-to-end tests, one binary (a binary per file would link the whole workspace again): the CLI, the compiler on small graphs and the tower, the kernels through the checker, `.npy`, the profile page in a browser, and the tidy checks.

mod asm_corpus;
mod calibration_harness;
mod checker;
mod cli;
mod cli_asm;
mod cli_sim;
mod compile_graphs;
mod compile_tile_program;
mod fp8_cast_kernel;
mod kernels_elementwise;
mod kernels_gemm;
mod kernels_movement;
mod kernels_norm;
mod layer_loop;
mod mid_verify;
mod npy_roundtrip;
mod profile_browser;
mod testdata_manifest;
mod tidy;
mod tower;
