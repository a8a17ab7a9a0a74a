//! Why a distributed-level program is malformed: [`MidFailure`], one variant per rule of
//! [`super::verify`], and the error that names the node.

/// What is malformed, one variant per rule; its code (`E-MID-0nn`) is its discriminant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum MidFailure {
    /// An operand is defined after its user.
    OperandOrder = 1,
    /// The layout is for another shape than the value's.
    LayoutShape = 2,
    /// A layout has no shard map.
    ShardMap = 3,
    /// A value other than an output or a loop's carry is never read.
    Unused = 4,
    /// An input's or weight's view does not produce the value's shape.
    ViewShape = 10,
    /// A redistribution's view does not map its operand to its result.
    RedistributeView = 11,
    /// A redistribution changes the element type.
    RedistributeConverts = 12,
    /// An output's view does not read its operand's shape.
    OutputView = 13,
    /// A product's operands and result differ in rank or have rank < 2.
    MatMulRank = 20,
    /// A product's shapes do not chain.
    MatMulShapes = 21,
    /// A product's element types are not its precision's.
    MatMulTypes = 22,
    /// A product's operands or result are not in the orders the AMP kernels read and write.
    MatMulOrders = 23,
    /// A product's A is not blocked as its result's rows need.
    MatMulA = 24,
    /// A product's B is not blocked as its result's columns need.
    MatMulB = 25,
    /// A product's padded blocks disagree.
    MatMulPadding = 26,
    /// A bias add's x has not the result's layout.
    BiasAddLayout = 30,
    /// A bias is not f16.
    BiasType = 31,
    /// A bias add's x is not row-major.
    BiasXOrder = 32,
    /// A bias add's rows are not of whole 4s, or the bias not of the row length.
    BiasRows = 33,
    /// A bias is not blocked as the result's columns.
    BiasCover = 34,
    /// A bias shard is not as long as the rows it adds to.
    BiasShard = 35,
    /// A fused add's a has not the result's layout.
    AddBiasA = 36,
    /// A fused add's b has not the result's layout.
    AddBiasB = 37,
    /// A fused add works on other than f16.
    AddBiasTypes = 38,
    /// A bias add works on other than f16.
    BiasAddTypes = 39,
    /// An add's a has not the result's layout.
    AddA = 40,
    /// An add's b has not the result's layout.
    AddB = 41,
    /// An add works on other than f16.
    AddTypes = 42,
    /// A GELU's x has not the result's layout.
    GeluLayout = 50,
    /// A GELU's types are not f16 in, f16 or FP8 out.
    GeluTypes = 51,
    /// A softmax's scale is not finite and positive.
    SoftmaxScale = 60,
    /// A softmax changes the distribution or splits rows.
    SoftmaxRows = 61,
    /// A softmax's x is not row-major.
    SoftmaxXOrder = 62,
    /// A softmax's rows or types are not the kernel's.
    SoftmaxTypes = 63,
    /// A partial softmax's scale is not finite and positive.
    SoftmaxPartScale = 64,
    /// A partial softmax's result is not as wide as its exponentials, or splits rows.
    SoftmaxPartWidth = 65,
    /// A partial softmax's x is not row-major.
    SoftmaxPartXOrder = 66,
    /// A partial softmax's rows or types are not the kernel's.
    SoftmaxPartTypes = 67,
    /// An attention combine's parts and statistics do not fit its result.
    CombineShapes = 68,
    /// An attention combine's parts or statistics are not blocked as its result.
    CombineLayout = 69,
    /// A whole-row LayerNorm's x has not the result's layout.
    LayerNormLayout = 70,
    /// A LayerNorm's x is not in whole dense rows.
    LayerNormRows = 71,
    /// A LayerNorm's types are not f16 in, f16 or FP8 out.
    LayerNormTypes = 72,
    /// A LayerNorm's gamma or beta is not a dense vector of the row length the kernel reads.
    LayerNormParams = 73,
    /// A LayerNorm's gamma or beta is not blocked as the result's columns.
    LayerNormParamCover = 74,
    /// An attention combine's orders or types are not the kernel's.
    CombineOrders = 75,
    /// A sum of parts does not take [.., C, D] to [.., D].
    SumPartsShapes = 76,
    /// A sum's parts are not blocked as its result, with all parts.
    SumPartsLayout = 77,
    /// A sum of parts reads or writes other than f16 rows of 8s.
    SumPartsOrders = 78,
    /// A LayerNorm over column blocks breaks the rules of its kernel.
    LayerNormBlocks = 79,
    /// A cast's x has not the result's layout.
    CastLayout = 80,
    /// No kernel casts between the types.
    CastTypes = 81,
    /// A column-block LayerNorm's gamma or beta holds more than the block's columns.
    LayerNormBlockParams = 82,
    /// A loop's body, carry or readers are malformed.
    Loop = 90,
}

impl MidFailure {
    /// Every failure, in code order.
    pub const ALL: [MidFailure; 54] = [
        MidFailure::OperandOrder,
        MidFailure::LayoutShape,
        MidFailure::ShardMap,
        MidFailure::Unused,
        MidFailure::ViewShape,
        MidFailure::RedistributeView,
        MidFailure::RedistributeConverts,
        MidFailure::OutputView,
        MidFailure::MatMulRank,
        MidFailure::MatMulShapes,
        MidFailure::MatMulTypes,
        MidFailure::MatMulOrders,
        MidFailure::MatMulA,
        MidFailure::MatMulB,
        MidFailure::MatMulPadding,
        MidFailure::BiasAddLayout,
        MidFailure::BiasType,
        MidFailure::BiasXOrder,
        MidFailure::BiasRows,
        MidFailure::BiasCover,
        MidFailure::BiasShard,
        MidFailure::AddBiasA,
        MidFailure::AddBiasB,
        MidFailure::AddBiasTypes,
        MidFailure::BiasAddTypes,
        MidFailure::AddA,
        MidFailure::AddB,
        MidFailure::AddTypes,
        MidFailure::GeluLayout,
        MidFailure::GeluTypes,
        MidFailure::SoftmaxScale,
        MidFailure::SoftmaxRows,
        MidFailure::SoftmaxXOrder,
        MidFailure::SoftmaxTypes,
        MidFailure::SoftmaxPartScale,
        MidFailure::SoftmaxPartWidth,
        MidFailure::SoftmaxPartXOrder,
        MidFailure::SoftmaxPartTypes,
        MidFailure::CombineShapes,
        MidFailure::CombineLayout,
        MidFailure::LayerNormLayout,
        MidFailure::LayerNormRows,
        MidFailure::LayerNormTypes,
        MidFailure::LayerNormParams,
        MidFailure::LayerNormParamCover,
        MidFailure::CombineOrders,
        MidFailure::SumPartsShapes,
        MidFailure::SumPartsLayout,
        MidFailure::SumPartsOrders,
        MidFailure::LayerNormBlocks,
        MidFailure::CastLayout,
        MidFailure::CastTypes,
        MidFailure::LayerNormBlockParams,
        MidFailure::Loop,
    ];

    /// The code printed as `E-MID-0nn`.
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// Why a distributed-level program is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-MID-{:03} %{node} {op} `{label}`: {reason}", failure.code())]
pub struct MidVerifyError {
    pub failure: MidFailure,
    pub node: usize,
    pub op: &'static str,
    pub label: String,
    pub reason: String,
}

impl MidVerifyError {
    /// The failure's code (`E-MID-0nn`).
    pub fn code(&self) -> u32 {
        self.failure.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_have_distinct_codes_in_order_and_print_them() {
        let codes: Vec<u32> = MidFailure::ALL.iter().map(|f| f.code()).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        let e = MidVerifyError {
            failure: MidFailure::SumPartsOrders,
            node: 12,
            op: "sum_parts",
            label: "head.fc2.sum".into(),
            reason: "sum_parts reads and writes f16 in rows of 8s".into(),
        };
        assert_eq!(e.code(), 78);
        assert_eq!(
            e.to_string(),
            "E-MID-078 %12 sum_parts `head.fc2.sum`: sum_parts reads and writes f16 in rows of 8s"
        );
    }
}
