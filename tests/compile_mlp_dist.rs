//! The MLP block through the graph and distributed levels: layouts, rewrites, verifier, dump.

use tessera_codegen::dist::{dump::dump, from_graph::distribute, rewrite, verify::verify, Grid};
use tessera_models::siglip::{config::SiglipVisionConfig, graph::mlp_block};

#[test]
fn mlp_block_distributes_and_rewrites() {
    let config = SiglipVisionConfig::tiny();
    let graph = mlp_block(&config, 16, 1).unwrap();
    let mut program = distribute(&graph, Grid::new(2, 4, 16)).unwrap();
    verify(&program).unwrap();
    let fused = rewrite::fuse_fp8_casts(&mut program);
    rewrite::prune(&mut program);
    verify(&program).unwrap();
    assert_eq!(fused.applied.len(), 2, "{fused:?}");
    println!("{}", dump(&program));
}
