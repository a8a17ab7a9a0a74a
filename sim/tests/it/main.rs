//! The simulator's integration tests, one binary: exchange rules across tiles, machine files and memory, profile output, per-instruction timing.

mod chip_exchange;
mod machine_memory;
mod profile_output;
mod tile_timing;
mod timed_receive;
