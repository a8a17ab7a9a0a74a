//! The distributed-level verifier refuses each broken rule with its own typed failure: a
//! planned program is broken one way at a time and the refusal's kind and text are checked.

use tessera::target::target_of;
use tessera_codegen::graph::{DType, Graph, GraphBuilder};
use tessera_codegen::layout::Order;
use tessera_codegen::mid::verify::{verify, MidFailure};
use tessera_codegen::mid::{MidId, MidOp, MidProgram};
use tessera_codegen::plan::PlanOptions;
use tessera_sim::MachineDescription;

/// `y = gelu(x · w + b)` on the small machine, planned and built (verified).
fn planned() -> MidProgram {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [64, 64]).unwrap();
    let w = b.weight("w", DType::F16, [64, 64]).unwrap();
    let bias = b.weight("b", DType::F32, [64]).unwrap();
    let y = b.matmul("mm", x, w).unwrap();
    let y = b.bias_add("mm.bias", y, bias).unwrap();
    let y = b.gelu("act", y).unwrap();
    b.output("y", y).unwrap();
    let graph: Graph = b.finish().unwrap();
    let machine = MachineDescription::builtin("small").unwrap();
    let target = target_of(&machine);
    let planned =
        tessera_codegen::plan::plan(&graph, &target, &PlanOptions::for_target(&target)).unwrap();
    let (mid, _) = tessera_codegen::plan::build::build(&planned, 0).unwrap();
    verify(&mid).unwrap();
    mid
}

fn first(mid: &MidProgram, pick: impl Fn(&MidOp) -> bool) -> MidId {
    mid.nodes
        .iter()
        .find(|(_, n)| pick(&n.op))
        .expect("the planned program has the op")
        .0
}

#[test]
fn each_broken_rule_is_refused_with_its_own_failure() {
    let mid = planned();
    let matmul = first(&mid, |op| matches!(op, MidOp::MatMul { .. }));
    let gelu = first(&mid, |op| matches!(op, MidOp::Gelu { .. }));

    // The product's result in another order than the AMP kernels write.
    let mut broken = mid.clone();
    broken.nodes[matmul].layout.order = Order::Cwei;
    let e = verify(&broken).unwrap_err();
    assert_eq!(e.failure, MidFailure::MatMulOrders, "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("E-MID-023 %{} matmul", matmul.index())),
        "{e}"
    );

    // GELU reading a value defined after it.
    let mut broken = mid.clone();
    let last = mid.nodes.iter().next_back().unwrap().0;
    if let MidOp::Gelu { x } = &mut broken.nodes[gelu].op {
        *x = last;
    }
    let e = verify(&broken).unwrap_err();
    assert_eq!(e.failure, MidFailure::OperandOrder, "{e}");
    assert_eq!(e.code(), 1);

    // GELU to f32, which no kernel writes.
    let mut broken = mid.clone();
    broken.nodes[gelu].layout.dtype = DType::F32;
    let e = verify(&broken).unwrap_err();
    assert_eq!(e.failure, MidFailure::GeluTypes, "{e}");
    assert!(
        e.to_string()
            .ends_with("gelu takes f16 and gives f16 or FP8"),
        "{e}"
    );
}

/// A sum written as AMP weights (`add_cwei_f16`): planned (forced) it verifies with dense-row
/// operands; an operand in another order, or a result whose blocks are not 16 columns, is
/// refused as the add's operand rule.
#[test]
fn a_sum_into_cwei_order_takes_dense_rows_of_one_channel_block() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [64, 32]).unwrap();
    let y = b.input("y", DType::F16, [64, 32]).unwrap();
    let s = b.add("sum", x, y).unwrap();
    b.output("s", s).unwrap();
    let graph: Graph = b.finish().unwrap();
    let machine = MachineDescription::builtin("small").unwrap();
    let target = target_of(&machine);
    let mut options = PlanOptions::for_target(&target);
    options.force = vec![("sum".into(), "blocks 4x2 on 8 cwei".into())];
    let planned =
        tessera_codegen::plan::plan(&graph, &target, &options).unwrap_or_else(|e| panic!("{e}"));
    let (mid, _) = tessera_codegen::plan::build::build(&planned, 0).unwrap();
    verify(&mid).unwrap();
    let add = first(&mid, |op| matches!(op, MidOp::Add { .. }));
    assert_eq!(mid.nodes[add].layout.order, Order::Cwei);
    let MidOp::Add { a, .. } = mid.nodes[add].op else {
        unreachable!()
    };

    let mut broken = mid.clone();
    broken.nodes[a].layout.order = Order::RowMajor { align: 32 };
    let e = verify(&broken).unwrap_err();
    assert_eq!(e.failure, MidFailure::AddA, "{e}");
    assert!(e.to_string().contains("sum into $CWEI order"), "{e}");
}
