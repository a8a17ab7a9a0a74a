//! The graph IR: the compiler's first level — ops on whole logical tensors, with no tiles, no
//! layouts and no kernels.
//!
//! `models` builds graphs with [`GraphBuilder`]; the planner lowers them to the distributed
//! level. This page is the specification of the IR: what a graph is, what every op takes,
//! produces and means. The type rules are implemented once, in [`typing::infer`]; the
//! builder applies them as ops are added and the verifier ([`verify()`]) re-applies them to a finished
//! or rewritten graph. [`eval::evaluate`] executes the semantics on the host.
//!
//! # Graphs, values and handles
//!
//! A [`Graph`] is an [`Arena`] of [`Node`]s plus an arena of [`Region`]s. Every node holds one
//! [`Op`] and defines exactly one value (SSA), named by its [`ValueHandle`] and printed `%n`.
//! Operands refer to values defined *earlier* in the same graph, so the node order is a valid
//! execution order and the graph is acyclic. A node also stores its value's [`TensorType`] and a
//! label (the tensor name for inputs, weights and outputs; free text like `fc1` otherwise,
//! used in dumps and error messages).
//!
//! Invariants of a valid graph (checked by [`verify()`]):
//!
//! * every operand handle is in range and precedes its user;
//! * every node's stored type equals the one the type rules give for its operands;
//! * input names, weight names and output names are each unique (three name spaces), and with
//!   repeat prefixes applied no two weight nodes read the same store tensor;
//! * there is at least one output, every value is used by some output (no dead values), an
//!   output is never an operand;
//! * every region is used by a repeat and is itself a valid graph.
//!
//! # Types
//!
//! A value's type is a [`DType`] and a [`Shape`]. Shapes have rank ≥ 1 and no zero dimension.
//! Dtypes:
//!
//! | dtype | printed | meaning |
//! |---|---|---|
//! | [`DType::F32`] | `f32` | IEEE binary32 |
//! | [`DType::F16`] | `f16` | IEEE binary16 |
//! | [`DType::Fp8`] `{ format, scale }` | `f143<-4>`, `f152<2>` | FP8 codes ([`Fp8Format`] F143 or F152, the `isa::numerics` definitions); real value = code value × 2^scale; scale in −31..=31 |
//!
//! "Wide float" below means f16 or f32. Element-wise arithmetic is defined on real values: the
//! result is the exact mathematical result rounded once to the result dtype (f32/f16: to
//! nearest, ties to even, overflow to ±inf). Dot products and reductions (matmul, layernorm
//! statistics, softmax sums) are exact up to the accumulation precision, which the graph does
//! not fix: the lowering chooses it (the FP8 and f16 AMP accumulate in f32 and round to f16).
//!
//! # Ops
//!
//! Operand names in the table are the ones error messages use.
//!
//! | op | operands → result | dtypes | semantics |
//! |---|---|---|---|
//! | [`Input`](Op::Input) `{name}` | → declared | any | a value fed by the host. In a region body: a parameter |
//! | [`Weight`](Op::Weight) `{name}` | → declared | any | the store tensor `name` (f32 host data in a [`WeightStore`]) rounded to the declared dtype (FP8: see `Cast`) |
//! | [`MatMul`](Op::MatMul) `{a, b}` | a `[M, K]`, b `[K, N]` → `[M, N]` | f32×f32 → f32; f16×f16 → f16; FP8×FP8 → f16 (formats and scales may differ) | `Σ_k a[m,k]·b[k,n]` on real values. `b` is usually a weight in `[in, out]` layout |
//! | [`BatchedMatMul`](Op::BatchedMatMul) `{a, b}` | a `[B, M, K]`, b `[B, K, N]` → `[B, M, N]` | as MatMul | B independent matmuls (attention: scores and context) |
//! | [`Add`](Op::Add) `{a, b}` | same shape → same | two f16 or two f32 | `a + b` element-wise (residuals) |
//! | [`BiasAdd`](Op::BiasAdd) `{x, bias}` | x `[..., N]`, bias `[N]` → x's | wide floats (may differ); result is x's | `x[..., n] + bias[n]` |
//! | [`LayerNorm`](Op::LayerNorm) `{x, gamma, beta, eps}` | x `[..., N]`, gamma `[N]`, beta `[N]` → x's | wide floats; result is x's | per row over the last dim: `(x − mean) / sqrt(var + eps) · gamma + beta`, `var` the biased (population) variance; `eps` finite, ≥ 0 |
//! | [`Gelu`](Op::Gelu) `{x}` | → x's | wide float | `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))` (tanh approximation, PyTorch `gelu(approximate="tanh")`) |
//! | [`Softmax`](Op::Softmax) `{x, scale}` | → x's | wide float | per row over the last dim: `exp(scale·x − max) / Σ exp(scale·x − max)`; `scale` finite |
//! | [`SoftmaxPart`](Op::SoftmaxPart) `{x, scale}` | x `[..., K]` → `[..., E + 4]`, E = K rounded up to a multiple of 16 ([`softmax_part_width`](op::softmax_part_width)) | f16 → f16 | one key block of a softmax split along the keys, per row: `out[c]` = `exp(scale·x_c − m)` for c < K, 0 for K ≤ c < E (whole AMP K-blocks), `out[E]` = m = `scale·max x` (rounded), `out[E + 1]` = `Σ_c exp(scale·x_c − m)`, `out[E + 2]` = `out[E + 3]` = 0; `scale` finite, > 0 |
//! | [`AttentionCombine`](Op::AttentionCombine) `{parts, stats}` | parts `[..., C, R, D]`, stats `[..., C, R, 2]` → `[..., R, D]` | f16 → f16 | per row, with `(m_j, l_j)` = stats of block j and M = max m_j: `Σ_j exp(m_j − M)·parts[j] / Σ_j exp(m_j − M)·l_j` (the softmax-weighted sum over all C blocks' keys); C ≤ 32 |
//! | [`SumParts`](Op::SumParts) `{x}` | `[..., C, D]` → `[..., D]` | f16 → f16 | `Σ_j x[..., j, d]` in f32 in order (each addition rounded), rounded once to f16: the K-chunks of a product split along K; C ≤ 64 |
//! | [`Cast`](Op::Cast) `{x, to}` | → x's shape | any → any other dtype | to f32/f16: round to nearest even. To FP8 `{f, s}`: round to f16 first (exact from f16), then `value × 2^−s` to nearest even in `f`, saturating to ±max on overflow (`FP_CTL.NANOO` = 0), NaN → the FP8 NaN. From FP8: `code × 2^s`, then rounded to the target. A cast must change the dtype |
//! | [`Reshape`](Op::Reshape) `{x, shape}` | → `shape` | any, kept | same elements in the same row-major order; element counts must match |
//! | [`Transpose`](Op::Transpose) `{x, perm}` | → dims `x.dims[perm[i]]` | any, kept | `out[i₀, i₁, …] = x[j]` with `j[perm[k]] = i_k`; `perm` a permutation of `0..rank` |
//! | [`Slice`](Op::Slice) `{x, axis, start, end}` | → x's dims with dimension `axis` = `end − start` | any, kept | the elements whose index along `axis` is in `start..end` (non-empty, within the dimension) |
//! | [`Pad`](Op::Pad) `{x, axis, len}` | → x's dims with dimension `axis` = `len` (≥ x's) | any, kept | x's elements, then zeros along `axis` from x's length to `len` |
//! | [`SplitHeads`](Op::SplitHeads) `{x, heads: H, batch: B}` | x `[B·T, H·D]` → `[B·H, T, D]` | any, kept | `out[b·H + h, t, d] = x[b·T + t, h·D + d]`: rows of B sequences of T tokens, columns of H heads |
//! | [`MergeHeads`](Op::MergeHeads) `{x, heads: H}` | x `[B·H, T, D]` → `[B·T, H·D]` | any, kept | the inverse of SplitHeads |
//! | [`Broadcast`](Op::Broadcast) `{x, shape}` | → `shape` | any, kept | numpy broadcasting, right-aligned: `out[i] = x[j]` with `j_d = 0` where x's dimension is 1, else the matching index of `i` |
//! | [`Repeat`](Op::Repeat) `{region, count, args, weight_prefix}` | args match the region's parameters → the carried parameter's type | any | see below |
//! | [`Output`](Op::Output) `{x, name}` | → x's | any | the graph result `name`; its value is `x`. Never an operand |
//!
//! # Regions and `Repeat`
//!
//! A [`Region`] is a named sub-graph held by the graph that uses it. Its `Input`s, in node
//! order, are its parameters; the first is the *carried* value and the others are passed
//! unchanged to every iteration. It has exactly one `Output`, of the carried parameter's type.
//! `Repeat { region, count ≥ 1, args, weight_prefix }` runs the body `count` times: iteration 0
//! gets `args`, iteration `i + 1` gets the previous output as the carried value; the repeat's
//! value is the last output. In iteration `i`, a body weight `name` reads the store tensor
//! `weight_prefix` with `{i}` replaced by `i`, followed by `name` — e.g. prefix
//! `vision_model.encoder.layers.{i}.` and weight `mlp.fc1.weight`. A prefix without `{i}`
//! shares one tensor across iterations. Because one body node stands for a tensor per
//! iteration, a body weight has one dtype for all of them (for FP8, one scale:
//! [`fit_fp8_weight_scales`] takes the largest magnitude over iterations).
//!
//! # Weights
//!
//! Weight data lives outside the graph in a [`WeightStore`]: name → f32 host tensor in the
//! layout the graph uses. [`check_weights`] checks a graph against a store;
//! [`fit_fp8_weight_scales`] sets every FP8 weight's scale from its data.
//!
//! # Text form
//!
//! [`dump()`] (and `Display` on [`Graph`]) prints one value per line, regions first:
//!
//! ```text
//! %3: f16[729, 4304] = matmul %1, %2  // fc1
//! ```
//!
//! # Errors
//!
//! Builder errors are [`GraphError`] (`E-GRAPH-0xx`), verifier errors [`VerifyError`]
//! (`E-VERIFY-0xx`), weight-store errors [`WeightStoreError`] (`E-WSTORE-0xx`), interpreter
//! errors [`EvalError`] (`E-EVAL-0xx`). Nothing in this module panics on bad input.
//!
//! [`Fp8Format`]: tessera_isa::numerics::Fp8Format

pub mod arena;
pub mod builder;
pub mod dump;
pub mod eval;
pub mod inline;
pub mod op;
pub mod split_k;
pub mod types;
pub mod typing;
pub mod verify;
pub mod weights;

pub use arena::{Arena, Handle};
pub use builder::GraphBuilder;
pub use dump::dump;
pub use eval::{evaluate, EvalError};
pub use inline::inline_repeats;
pub use op::{repeat_weight_name, Graph, Node, Op, Region, RegionHandle, ValueHandle};
pub use types::{fp8_scale_for_max_abs, DType, Shape, TensorType, FP8_SCALE_MAX, FP8_SCALE_MIN};
pub use typing::{GraphError, Site, ATTENTION_COMBINE_MAX_BLOCKS};
pub use verify::{verify, VerifyError};
pub use weights::{
    check_weights, fit_fp8_weight_scales, HostTensor, ScaleChoice, WeightStore, WeightStoreError,
};
