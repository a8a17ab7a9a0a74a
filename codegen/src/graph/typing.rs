//! The type rules of every op, written once: [`infer`] computes the type of the value an op
//! defines from its operands' types, or says exactly what is wrong. The builder calls it before
//! appending a node; the verifier calls it again on every node of a finished (or rewritten)
//! graph and compares with the stored type.

use std::fmt;

use super::op::{Graph, Op, RegionHandle, ValueHandle};
use super::types::{DType, Shape, TensorType, FP8_SCALE_MAX, FP8_SCALE_MIN};

/// Where an error happened: the op and its label, shown as ``matmul `fc1` ``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub op: &'static str,
    pub label: String,
}

impl Site {
    pub fn new(op: &'static str, label: impl Into<String>) -> Site {
        Site {
            op,
            label: label.into(),
        }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.label.is_empty() {
            f.write_str(self.op)
        } else {
            write!(f, "{} `{}`", self.op, self.label)
        }
    }
}

/// Which two shapes must agree, for [`GraphError::ShapeMismatch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeRule {
    /// add: a and b have the same shape.
    SameShape,
    /// batched matmul: a and b have the same batch dimension.
    BatchDimension,
    /// bias add: the bias length is x's last dimension.
    BiasLength,
    /// layernorm: gamma's length is x's last dimension.
    GammaLength,
    /// layernorm: beta's length is x's last dimension.
    BetaLength,
    /// attention combine: stats are `[..., C, 2]` with parts' leading dimensions and C.
    CombineStats,
}

/// The most key blocks an [`Op::AttentionCombine`](super::Op::AttentionCombine) row may have
/// (its kernel keeps one factor per block in a worker's scratch).
pub const ATTENTION_COMBINE_MAX_BLOCKS: usize =
    tessera_kernels::elementwise::attention_combine::MAX_BLOCKS;

/// The most parts an [`Op::SumParts`](super::Op::SumParts) row may have (the kernel's case
/// bound).
pub const SUM_PARTS_MAX: usize = tessera_kernels::elementwise::sum_parts::MAX_PARTS;

impl ShapeRule {
    /// What differs, for the message.
    pub fn what(self) -> &'static str {
        match self {
            ShapeRule::SameShape => "shapes",
            ShapeRule::BatchDimension => "batch dimensions",
            ShapeRule::BiasLength | ShapeRule::GammaLength | ShapeRule::BetaLength => {
                "the last dimensions"
            }
            ShapeRule::CombineStats => {
                "the leading dimensions, blocks and rows (parts [..., C, R, D], stats [..., R, C, 2])"
            }
        }
    }

    /// The two operands compared.
    pub fn operands(self) -> (&'static str, &'static str) {
        match self {
            ShapeRule::SameShape | ShapeRule::BatchDimension => ("a", "b"),
            ShapeRule::BiasLength => ("x", "bias"),
            ShapeRule::GammaLength => ("x", "gamma"),
            ShapeRule::BetaLength => ("x", "beta"),
            ShapeRule::CombineStats => ("parts", "stats"),
        }
    }
}

/// An op that cannot be built: bad operands, shapes, dtypes or attributes. Every message names
/// the op (and its label), the operand, and the shapes or dtypes involved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GraphError {
    #[error("E-GRAPH-001: {site}: operand {operand} is value {handle:?}, which is not defined in this graph (it has {len} values)")]
    UnknownValue {
        site: Site,
        operand: &'static str,
        handle: ValueHandle,
        len: usize,
    },

    #[error("E-GRAPH-002: {site}: operand {operand} must have rank {expected}, but it is {shape}")]
    Rank {
        site: Site,
        operand: &'static str,
        expected: &'static str,
        shape: Shape,
    },

    #[error("E-GRAPH-003: {site}: inner dimensions differ: a is {a}, b is {b}")]
    InnerDimensions { site: Site, a: Shape, b: Shape },

    #[error("E-GRAPH-004: {site}: {} differ: {} is {a}, {} is {b}", .rule.what(), .rule.operands().0, .rule.operands().1)]
    ShapeMismatch {
        site: Site,
        rule: ShapeRule,
        a: Shape,
        b: Shape,
    },

    #[error("E-GRAPH-005: {site}: operand {operand} is {dtype}, expected {expected}")]
    DType {
        site: Site,
        operand: &'static str,
        dtype: DType,
        expected: &'static str,
    },

    #[error("E-GRAPH-006: {site}: operand dtypes do not combine: {a_name} is {a}, {b_name} is {b} ({rule})")]
    DTypeCombination {
        site: Site,
        a_name: &'static str,
        a: DType,
        b_name: &'static str,
        b: DType,
        rule: &'static str,
    },

    #[error("E-GRAPH-007: {site}: the {kind} name `{name}` is already used by {previous:?}")]
    DuplicateName {
        site: Site,
        kind: &'static str,
        name: String,
        previous: ValueHandle,
    },

    #[error("E-GRAPH-008: {site}: {attribute} = {value} is invalid: {reason}")]
    Attribute {
        site: Site,
        attribute: &'static str,
        value: String,
        reason: String,
    },

    #[error("E-GRAPH-009: {site}: shape {shape} is invalid: {reason}")]
    InvalidShape {
        site: Site,
        shape: Shape,
        reason: &'static str,
    },

    #[error("E-GRAPH-010: {site}: operand {operand} is output `{name}` ({handle:?}); an output cannot be an operand")]
    OutputOperand {
        site: Site,
        operand: &'static str,
        name: String,
        handle: ValueHandle,
    },

    #[error("E-GRAPH-011: {site}: reshape changes the element count: x is {from} ({from_count} elements), the new shape {to} has {to_count}")]
    ElementCount {
        site: Site,
        from: Shape,
        from_count: usize,
        to: Shape,
        to_count: usize,
    },

    #[error("E-GRAPH-012: {site}: region {region:?}: {reason}")]
    Region {
        site: Site,
        region: RegionHandle,
        reason: String,
    },
}

fn attr(
    site: &Site,
    attribute: &'static str,
    value: impl fmt::Display,
    reason: impl Into<String>,
) -> GraphError {
    GraphError::Attribute {
        site: site.clone(),
        attribute,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Checks the declared type of an input or weight (and a cast's target): rank ≥ 1, no zero
/// dimension, FP8 scale in range.
pub fn check_declared_type(site: &Site, ty: &TensorType) -> Result<(), GraphError> {
    check_shape(site, &ty.shape)?;
    check_dtype(site, "dtype", ty.dtype)
}

fn check_shape(site: &Site, shape: &Shape) -> Result<(), GraphError> {
    if shape.rank() == 0 {
        return Err(GraphError::InvalidShape {
            site: site.clone(),
            shape: shape.clone(),
            reason: "rank 0 (the graph has no scalars)",
        });
    }
    if shape.has_zero_dim() {
        return Err(GraphError::InvalidShape {
            site: site.clone(),
            shape: shape.clone(),
            reason: "a dimension is 0 (the graph has no empty tensors)",
        });
    }
    Ok(())
}

fn check_dtype(site: &Site, attribute: &'static str, dtype: DType) -> Result<(), GraphError> {
    if let DType::Fp8 { scale, .. } = dtype {
        if !(FP8_SCALE_MIN..=FP8_SCALE_MAX).contains(&scale) {
            return Err(attr(
                site,
                attribute,
                dtype,
                format!("FP8 scales must be in {FP8_SCALE_MIN}..={FP8_SCALE_MAX}"),
            ));
        }
    }
    Ok(())
}

/// A name of an input, weight, output or region must be non-empty.
pub fn check_name(site: &Site, name: &str) -> Result<(), GraphError> {
    if name.is_empty() {
        return Err(attr(site, "name", "\"\"", "names must not be empty"));
    }
    Ok(())
}

/// The type of the value `op` defines, given the graph that holds its operands (every operand
/// must already be a node of `graph`). `Input` and `Weight` have declared types and are not
/// handled here (they return an `Attribute` error); see [`check_declared_type`].
pub fn infer(graph: &Graph, op: &Op, label: &str) -> Result<TensorType, GraphError> {
    let site = Site::new(op.mnemonic(), label);
    // Operands: in range, and not outputs.
    for (operand, h) in op.operands() {
        match graph.node(h) {
            None => {
                return Err(GraphError::UnknownValue {
                    site,
                    operand,
                    handle: h,
                    len: graph.nodes.len(),
                })
            }
            Some(node) => {
                if let Op::Output { name, .. } = &node.op {
                    return Err(GraphError::OutputOperand {
                        site,
                        operand,
                        name: name.clone(),
                        handle: h,
                    });
                }
            }
        }
    }
    let ty = |h: ValueHandle| graph.nodes[h].ty.clone();
    match op {
        Op::Input { .. } | Op::Weight { .. } => Err(attr(
            &site,
            "type",
            "(none)",
            "inputs and weights have declared types, not inferred ones",
        )),
        Op::MatMul { a, b } => {
            let (ta, tb) = (ty(*a), ty(*b));
            rank(&site, "a", &ta.shape, 2)?;
            rank(&site, "b", &tb.shape, 2)?;
            let dtype = matmul_dtype(&site, ta.dtype, tb.dtype)?;
            if ta.shape.0[1] != tb.shape.0[0] {
                return Err(GraphError::InnerDimensions {
                    site,
                    a: ta.shape,
                    b: tb.shape,
                });
            }
            Ok(TensorType::new(dtype, [ta.shape.0[0], tb.shape.0[1]]))
        }
        Op::BatchedMatMul { a, b } => {
            let (ta, tb) = (ty(*a), ty(*b));
            rank(&site, "a", &ta.shape, 3)?;
            rank(&site, "b", &tb.shape, 3)?;
            let dtype = matmul_dtype(&site, ta.dtype, tb.dtype)?;
            let (da, db) = (&ta.shape.0, &tb.shape.0);
            if da[0] != db[0] {
                return Err(GraphError::ShapeMismatch {
                    site,
                    rule: ShapeRule::BatchDimension,
                    a: ta.shape,
                    b: tb.shape,
                });
            }
            if da[2] != db[1] {
                return Err(GraphError::InnerDimensions {
                    site,
                    a: ta.shape,
                    b: tb.shape,
                });
            }
            Ok(TensorType::new(dtype, [da[0], da[1], db[2]]))
        }
        Op::Add { a, b } => {
            let (ta, tb) = (ty(*a), ty(*b));
            if !ta.dtype.is_wide_float() || ta.dtype != tb.dtype {
                return Err(GraphError::DTypeCombination {
                    site,
                    a_name: "a",
                    a: ta.dtype,
                    b_name: "b",
                    b: tb.dtype,
                    rule: "add takes two f16 or two f32 operands",
                });
            }
            if ta.shape != tb.shape {
                return Err(GraphError::ShapeMismatch {
                    site,
                    rule: ShapeRule::SameShape,
                    a: ta.shape,
                    b: tb.shape,
                });
            }
            Ok(ta)
        }
        Op::BiasAdd { x, bias } => {
            let (tx, tb) = (ty(*x), ty(*bias));
            wide_float(&site, "x", tx.dtype)?;
            wide_float(&site, "bias", tb.dtype)?;
            rank(&site, "bias", &tb.shape, 1)?;
            if tx.shape.last() != tb.shape.last() {
                return Err(GraphError::ShapeMismatch {
                    site,
                    rule: ShapeRule::BiasLength,
                    a: tx.shape,
                    b: tb.shape,
                });
            }
            Ok(tx)
        }
        Op::LayerNorm {
            x,
            gamma,
            beta,
            eps,
        } => {
            let tx = ty(*x);
            wide_float(&site, "x", tx.dtype)?;
            for (name, h, rule) in [
                ("gamma", gamma, ShapeRule::GammaLength),
                ("beta", beta, ShapeRule::BetaLength),
            ] {
                let t = ty(*h);
                wide_float(&site, name, t.dtype)?;
                rank(&site, name, &t.shape, 1)?;
                if t.shape.last() != tx.shape.last() {
                    return Err(GraphError::ShapeMismatch {
                        site,
                        rule,
                        a: tx.shape,
                        b: t.shape,
                    });
                }
            }
            if !(eps.is_finite() && *eps >= 0.0) {
                return Err(attr(&site, "eps", eps, "must be finite and ≥ 0"));
            }
            Ok(tx)
        }
        Op::Gelu { x } => {
            let tx = ty(*x);
            wide_float(&site, "x", tx.dtype)?;
            Ok(tx)
        }
        Op::Softmax { x, scale } => {
            let tx = ty(*x);
            wide_float(&site, "x", tx.dtype)?;
            if !scale.is_finite() {
                return Err(attr(&site, "scale", scale, "must be finite"));
            }
            Ok(tx)
        }
        Op::SoftmaxPart { x, scale } => {
            let tx = ty(*x);
            f16_only(&site, "x", tx.dtype)?;
            if !(scale.is_finite() && *scale > 0.0) {
                return Err(attr(&site, "scale", scale, "must be finite and > 0"));
            }
            let mut dims = tx.shape.dims().to_vec();
            if let Some(last) = dims.last_mut() {
                *last = super::op::softmax_part_width(*last);
            }
            Ok(TensorType::new(DType::F16, Shape::new(dims)))
        }
        Op::AttentionCombine { parts, stats } => {
            let (tp, ts) = (ty(*parts), ty(*stats));
            for (operand, t) in [("parts", &tp), ("stats", &ts)] {
                f16_only(&site, operand, t.dtype)?;
                if t.shape.rank() < 3 {
                    return Err(GraphError::Rank {
                        site,
                        operand,
                        expected: "≥ 3 ([..., C, R, D], [..., C, R, 2])",
                        shape: t.shape.clone(),
                    });
                }
            }
            let (p, s) = (tp.shape.dims(), ts.shape.dims());
            let rank = p.len();
            // parts [..., C, R, D], stats [..., C, R, 2].
            if s.len() != rank || s[..rank - 1] != p[..rank - 1] || s[rank - 1] != 2 {
                return Err(GraphError::ShapeMismatch {
                    site,
                    rule: ShapeRule::CombineStats,
                    a: tp.shape,
                    b: ts.shape,
                });
            }
            let blocks = p[rank - 3];
            if blocks > ATTENTION_COMBINE_MAX_BLOCKS {
                return Err(attr(
                    &site,
                    "parts",
                    tp.shape,
                    format!("{blocks} key blocks: at most {ATTENTION_COMBINE_MAX_BLOCKS}"),
                ));
            }
            let mut dims = p[..rank - 3].to_vec();
            dims.extend_from_slice(&p[rank - 2..]);
            Ok(TensorType::new(DType::F16, Shape::new(dims)))
        }
        Op::SumParts { x } => {
            let tx = ty(*x);
            f16_only(&site, "x", tx.dtype)?;
            let p = tx.shape.dims();
            let rank = p.len();
            if rank < 2 {
                return Err(GraphError::Rank {
                    site,
                    operand: "x",
                    expected: "≥ 2 ([..., C, D])",
                    shape: tx.shape.clone(),
                });
            }
            let parts = p[rank - 2];
            if parts > SUM_PARTS_MAX {
                return Err(attr(
                    &site,
                    "x",
                    tx.shape.clone(),
                    format!("{parts} parts: at most {SUM_PARTS_MAX}"),
                ));
            }
            let mut dims = p[..rank - 2].to_vec();
            dims.push(p[rank - 1]);
            Ok(TensorType::new(DType::F16, Shape::new(dims)))
        }
        Op::Cast { x, to } => {
            let tx = ty(*x);
            check_dtype(&site, "to", *to)?;
            if tx.dtype == *to {
                return Err(attr(
                    &site,
                    "to",
                    to,
                    format!("x is already {to} (a cast must change the dtype)"),
                ));
            }
            Ok(TensorType::new(*to, tx.shape))
        }
        Op::Reshape { x, shape } => {
            let tx = ty(*x);
            check_shape(&site, shape)?;
            if tx.shape.numel() != shape.numel() {
                return Err(GraphError::ElementCount {
                    site,
                    from_count: tx.shape.numel(),
                    from: tx.shape,
                    to_count: shape.numel(),
                    to: shape.clone(),
                });
            }
            Ok(TensorType::new(tx.dtype, shape.clone()))
        }
        Op::Transpose { x, perm } => {
            let tx = ty(*x);
            let r = tx.shape.rank();
            let mut seen = vec![false; r];
            let valid = perm.len() == r
                && perm
                    .iter()
                    .all(|&p| p < r && !std::mem::replace(&mut seen[p], true));
            if !valid {
                return Err(attr(
                    &site,
                    "perm",
                    format!("{perm:?}"),
                    format!(
                        "not a permutation of the {r} dimensions of x ({})",
                        tx.shape
                    ),
                ));
            }
            let dims: Vec<usize> = perm.iter().map(|&p| tx.shape.0[p]).collect();
            Ok(TensorType::new(tx.dtype, dims))
        }
        Op::Slice {
            x,
            axis,
            start,
            end,
        } => {
            let tx = ty(*x);
            let Some(len) = tx.shape.dim(*axis) else {
                return Err(attr(
                    &site,
                    "axis",
                    axis,
                    format!("x ({}) has rank {}", tx.shape, tx.shape.rank()),
                ));
            };
            if !(start < end && *end <= len) {
                return Err(attr(
                    &site,
                    "range",
                    format!("{start}..{end}"),
                    format!(
                        "not a non-empty range within dimension {axis} of x ({}, length {len})",
                        tx.shape
                    ),
                ));
            }
            let mut dims = tx.shape.0.clone();
            dims[*axis] = end - start;
            Ok(TensorType::new(tx.dtype, dims))
        }
        Op::Pad { x, axis, len } => {
            let tx = ty(*x);
            let Some(n) = tx.shape.dim(*axis) else {
                return Err(attr(
                    &site,
                    "axis",
                    axis,
                    format!("x ({}) has rank {}", tx.shape, tx.shape.rank()),
                ));
            };
            if *len < n {
                return Err(attr(
                    &site,
                    "len",
                    len,
                    format!(
                        "shorter than dimension {axis} of x ({}, length {n})",
                        tx.shape
                    ),
                ));
            }
            let mut dims = tx.shape.0.clone();
            dims[*axis] = *len;
            Ok(TensorType::new(tx.dtype, dims))
        }
        Op::SplitHeads { x, heads, batch } => {
            let tx = ty(*x);
            rank(&site, "x", &tx.shape, 2)?;
            let (rows, cols) = (tx.shape.0[0], tx.shape.0[1]);
            if *heads == 0 || cols % heads != 0 {
                return Err(attr(
                    &site,
                    "heads",
                    heads,
                    format!(
                        "the last dimension of x ({}) must be a positive multiple of it",
                        tx.shape
                    ),
                ));
            }
            if *batch == 0 || rows % batch != 0 {
                return Err(attr(
                    &site,
                    "batch",
                    batch,
                    format!(
                        "the first dimension of x ({}) must be a positive multiple of it",
                        tx.shape
                    ),
                ));
            }
            Ok(TensorType::new(
                tx.dtype,
                [batch * heads, rows / batch, cols / heads],
            ))
        }
        Op::MergeHeads { x, heads } => {
            let tx = ty(*x);
            rank(&site, "x", &tx.shape, 3)?;
            let d = &tx.shape.0;
            if *heads == 0 || d[0] % heads != 0 {
                return Err(attr(
                    &site,
                    "heads",
                    heads,
                    format!(
                        "the first dimension of x ({}) must be a positive multiple of it",
                        tx.shape
                    ),
                ));
            }
            Ok(TensorType::new(
                tx.dtype,
                [d[0] / heads * d[1], heads * d[2]],
            ))
        }
        Op::Broadcast { x, shape } => {
            let tx = ty(*x);
            check_shape(&site, shape)?;
            let (from, to) = (&tx.shape.0, &shape.0);
            let fits = to.len() >= from.len()
                && from
                    .iter()
                    .zip(&to[to.len() - from.len()..])
                    .all(|(&f, &t)| f == 1 || f == t);
            if !fits {
                return Err(attr(
                    &site,
                    "shape",
                    shape,
                    format!("x ({}) does not broadcast to it (each dimension must be 1 or equal, right-aligned)", tx.shape),
                ));
            }
            Ok(TensorType::new(tx.dtype, shape.clone()))
        }
        Op::Repeat {
            region,
            count,
            args,
            ..
        } => {
            let Some(r) = graph.regions.get(*region) else {
                return Err(GraphError::Region {
                    site,
                    region: *region,
                    reason: format!(
                        "not defined in this graph (it has {} regions)",
                        graph.regions.len()
                    ),
                });
            };
            let reg_err = |reason: String| GraphError::Region {
                site: site.clone(),
                region: *region,
                reason,
            };
            if *count == 0 {
                return Err(attr(&site, "count", count, "must be ≥ 1"));
            }
            let params: Vec<&TensorType> =
                r.body.inputs().map(|(h, _)| &r.body.nodes[h].ty).collect();
            let outputs: Vec<&TensorType> =
                r.body.outputs().map(|(h, _)| &r.body.nodes[h].ty).collect();
            if params.is_empty() {
                return Err(reg_err(format!(
                    "`{}` has no parameters (the first is the carried value)",
                    r.name
                )));
            }
            if outputs.len() != 1 {
                return Err(reg_err(format!(
                    "`{}` has {} outputs, expected exactly 1",
                    r.name,
                    outputs.len()
                )));
            }
            if outputs[0] != params[0] {
                return Err(reg_err(format!(
                    "`{}`: the output is {} but the carried parameter is {}",
                    r.name, outputs[0], params[0]
                )));
            }
            if args.len() != params.len() {
                return Err(reg_err(format!(
                    "`{}` takes {} arguments, {} given",
                    r.name,
                    params.len(),
                    args.len()
                )));
            }
            for (i, (a, p)) in args.iter().zip(&params).enumerate() {
                let ta = ty(*a);
                if &ta != *p {
                    return Err(reg_err(format!(
                        "`{}`: argument {i} is {ta} but parameter {i} is {p}",
                        r.name
                    )));
                }
            }
            Ok(params[0].clone())
        }
        Op::Output { x, name } => {
            check_name(&site, name)?;
            Ok(ty(*x))
        }
    }
}

fn rank(
    site: &Site,
    operand: &'static str,
    shape: &Shape,
    expected: usize,
) -> Result<(), GraphError> {
    if shape.rank() != expected {
        return Err(GraphError::Rank {
            site: site.clone(),
            operand,
            expected: ["0", "1", "2", "3"][expected],
            shape: shape.clone(),
        });
    }
    Ok(())
}

/// An operand the op's kernels read as f16 only.
fn f16_only(site: &Site, operand: &'static str, dtype: DType) -> Result<(), GraphError> {
    if dtype != DType::F16 {
        return Err(GraphError::DType {
            site: site.clone(),
            operand,
            dtype,
            expected: "f16",
        });
    }
    Ok(())
}

fn wide_float(site: &Site, operand: &'static str, dtype: DType) -> Result<(), GraphError> {
    if !dtype.is_wide_float() {
        return Err(GraphError::DType {
            site: site.clone(),
            operand,
            dtype,
            expected: "f16 or f32",
        });
    }
    Ok(())
}

/// f32 × f32 → f32; f16 × f16 → f16; FP8 × FP8 (any formats and scales) → f16.
fn matmul_dtype(site: &Site, a: DType, b: DType) -> Result<DType, GraphError> {
    match (a, b) {
        (DType::F32, DType::F32) => Ok(DType::F32),
        (DType::F16, DType::F16) | (DType::Fp8 { .. }, DType::Fp8 { .. }) => Ok(DType::F16),
        _ => Err(GraphError::DTypeCombination {
            site: site.clone(),
            a_name: "a",
            a,
            b_name: "b",
            b,
            rule: "matmuls take f32×f32, f16×f16 or FP8×FP8",
        }),
    }
}
