//! The planner on one So400m/14 layer (378×378 pixels, 729 tokens, hidden 1152, 16 heads) with
//! the attention-pooling head, batch 1, FP8, on ipu21: the beam search with its sampled costs,
//! as `tessera compile` runs it before lowering (`time.compile_s` in a run report is this plus
//! lowering and emission). Seeded weights (`Model::synthetic`); the plan does not depend on
//! their values beyond the FP8 scales.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use tessera::pipeline::{tower_graph, Model, RunSpec};
use tessera::sim::MachineDescription;
use tessera::target::target_of;
use tessera_codegen::plan::{plan, PlanOptions};
use tessera_models::siglip::config::SiglipVisionConfig;

fn plan_so400m(c: &mut Criterion) {
    let mut config = SiglipVisionConfig::so400m_patch14_378();
    config.num_hidden_layers = 1;
    config.vision_use_head = true;
    let model = Model::synthetic(config, 1);
    let spec = RunSpec {
        batch: 1,
        layers: 1,
        head: true,
        fp8: true,
        k_parts: None,
        key_blocks: None,
        values_transposed: None,
    };
    let graph = tower_graph(&model, &spec).expect("the So400m layer's graph");
    let machine = MachineDescription::builtin("ipu21").expect("ipu21");
    let target = target_of(&machine);
    let options = PlanOptions::for_target(&target);
    let planned = plan(&graph, &target, &options).expect("it plans");
    println!(
        "plan_so400m_b1: {}",
        planned.report.finalists.first().map_or(0, |c| *c)
    );
    let mut group = c.benchmark_group("plan_so400m_b1");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(120));
    group.bench_function("plan", |b| {
        b.iter(|| plan(&graph, &target, &options).expect("it plans"))
    });
    group.finish();
}

criterion_group!(benches, plan_so400m);
criterion_main!(benches);
