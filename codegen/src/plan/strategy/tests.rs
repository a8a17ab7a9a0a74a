//! Tests of `strategy`.

use super::*;
use crate::graph::GraphBuilder;

/// A batched product with long rows and many column blocks (a head's scores `q kᵀ`) is
/// offered grids split over rows *and* columns per batch entry, each tile of which streams
/// more rows through a `$CWEI` load than the row-blocks-only grids give.
#[test]
fn batched_products_are_offered_row_by_column_grids() {
    let mut b = GraphBuilder::new();
    let q = b.input("q", DType::F16, [4, 729, 72]).unwrap();
    let kt = b.input("kt", DType::F16, [4, 72, 729]).unwrap();
    let s = b.batched_matmul("scores", q, kt).unwrap();
    b.output("y", s).unwrap();
    let graph = b.finish().unwrap();
    let forms = crate::plan::forms::forms(&graph).unwrap();
    let ctx = Ctx {
        graph: &graph,
        forms: &forms,
        tiles: 1472,
        granules: Vec::new(),
        row_granules: Vec::new(),
        grids_per_product: 4,
        sram_saving: false,
        softmax_part_panels: true,
        products_read_rows: true,
        stored_bases: Vec::new(),
    };
    let list = strategies(&ctx, s, &|_| None).unwrap();
    let rows_per_tile = |st: &Strategy| {
        st.out
            .dist
            .all_tiles()
            .next()
            .map(|t| st.out.dist.block_box(st.out.dist.block_on(t).unwrap())[1].len())
            .unwrap()
    };
    let grids: Vec<&Strategy> = list
        .iter()
        .filter(|st| st.kind == StrategyKind::Grid)
        .collect();
    let two_d = grids
        .iter()
        .filter(|st| {
            let d = &st.out.dist;
            let block = d.block_box(0);
            block[1].len() < 729 && block[2].len() < 729
        })
        .max_by_key(|st| rows_per_tile(st))
        .expect("a grid split over rows and columns");
    let rows_only = grids
        .iter()
        .filter(|st| st.out.dist.block_box(0)[2].len() == 729)
        .map(|st| rows_per_tile(st))
        .max()
        .unwrap();
    assert!(
        rows_per_tile(two_d) > rows_only,
        "{}: {} rows per tile, row blocks only: {rows_only}",
        two_d.label,
        rows_per_tile(two_d)
    );
}
