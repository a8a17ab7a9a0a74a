//! The machine description as the compiler sees it: [`target_of`] hands the simulator's
//! parameters to `tessera-codegen` as plain numbers (the compiler never links the simulator).

use tessera_codegen::target::{Target, TargetRegion};
use tessera_sim::MachineDescription;

/// The compiler's [`Target`] for `machine`.
pub fn target_of(machine: &MachineDescription) -> Target {
    Target {
        name: machine.name.clone(),
        tiles: machine.tiles,
        clock_hz: machine.clock_hz,
        sram_base: machine.sram.base,
        regions: machine
            .sram
            .regions
            .iter()
            .map(|r| TargetRegion {
                name: r.name.clone(),
                start: r.start,
                size: r.size,
                element_bytes: r.element_bytes,
                interleave: r.interleave,
            })
            .collect(),
        csr_write_stall: machine.stalls.csr_write,
        taken_branch_stall: machine.stalls.taken_branch,
        launch_stall: machine.stalls.run,
        sync_stall: machine.stalls.sync,
        exchange_bytes_per_cycle: machine.exchange.bytes_per_cycle_per_tile,
        tiles_per_column: machine.exchange.tiles_per_column,
        exchange_base_latency: machine.exchange.base_latency_cycles,
        exchange_cycles_per_column_hop: machine.exchange.cycles_per_column_hop,
        global_sync_latency: machine.sync.global_sync_latency_cycles,
        host_load_bytes_per_second: machine.host.host_load_bytes_per_second,
        fabric: machine.exchange.fabric,
        paired_exchange: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_machine_is_the_compilers_test_target() {
        let machine = MachineDescription::builtin("small").unwrap();
        assert_eq!(target_of(&machine), Target::test_small());
        let ipu21 = target_of(&MachineDescription::builtin("ipu21").unwrap());
        assert_eq!((ipu21.tiles, ipu21.sram_size()), (1472, 624 * 1024));
    }
}
