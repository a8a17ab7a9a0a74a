//! Element types ([`DType`]), shapes ([`Shape`]) and the type of a value ([`TensorType`]).

use std::fmt;

use tessera_isa::numerics::Fp8Format;

/// Smallest FP8 tensor scale the graph accepts (PopLibs `QUARTER_METADATA` limit: −31..31, so
/// that both `scale` and `−scale` fit the 6-bit `$FP_SCL` field).
pub const FP8_SCALE_MIN: i8 = -31;
/// Largest FP8 tensor scale the graph accepts.
pub const FP8_SCALE_MAX: i8 = 31;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// FP8 codes in `format` with a per-tensor power-of-two scale: the real value of an element
    /// is `code value × 2^scale` (the Poplar `QUARTER_METADATA` convention). So a cast *to* this
    /// type divides by `2^scale` before rounding (on the tile: `$FP_SCL = −scale`), and a cast
    /// *from* it multiplies by `2^scale`. Valid scales are [`FP8_SCALE_MIN`]..=[`FP8_SCALE_MAX`].
    ///
    /// Example: `Fp8 { format: F143, scale: -4 }` holds reals up to 240 × 2⁻⁴ = 15 with a
    /// smallest subnormal of 2⁻¹⁰ × 2⁻⁴.
    Fp8 { format: Fp8Format, scale: i8 },
}

impl DType {
    /// F143 with the given scale.
    pub const fn f143(scale: i8) -> DType {
        DType::Fp8 {
            format: Fp8Format::F143,
            scale,
        }
    }

    /// F152 with the given scale.
    pub const fn f152(scale: i8) -> DType {
        DType::Fp8 {
            format: Fp8Format::F152,
            scale,
        }
    }

    /// Bytes per element: 4, 2 or 1.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 => 2,
            DType::Fp8 { .. } => 1,
        }
    }

    pub fn is_fp8(self) -> bool {
        matches!(self, DType::Fp8 { .. })
    }

    /// F16 or F32: the types element-wise ops (add, layernorm, gelu, softmax, …) work in.
    pub fn is_wide_float(self) -> bool {
        matches!(self, DType::F16 | DType::F32)
    }

    /// The largest finite real value the type holds (for FP8: `max_finite × 2^scale`).
    pub fn max_finite(self) -> f64 {
        match self {
            DType::F32 => f32::MAX as f64,
            DType::F16 => 65504.0,
            DType::Fp8 { format, scale } => format.max_finite() as f64 * (scale as f64).exp2(),
        }
    }
}

impl fmt::Display for DType {
    /// `f32`, `f16`, or `f143<-4>` / `f152<3>` (format, then the scale).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::F32 => f.write_str("f32"),
            DType::F16 => f.write_str("f16"),
            DType::Fp8 {
                format: Fp8Format::F143,
                scale,
            } => write!(f, "f143<{scale}>"),
            DType::Fp8 {
                format: Fp8Format::F152,
                scale,
            } => write!(f, "f152<{scale}>"),
        }
    }
}

/// The per-tensor scale that maps the largest magnitude of a tensor close to the top of an FP8
/// format: the smallest `s` with `max_abs × 2^−s ≤ format.max_finite()`, clamped to
/// [`FP8_SCALE_MIN`]..=[`FP8_SCALE_MAX`]. Casting with this scale never saturates (unless the
/// clamp bites), and the largest element uses at least half of the format's range.
/// A tensor of zeros (or a non-finite `max_abs`) gets scale 0.
pub fn fp8_scale_for_max_abs(max_abs: f32, format: Fp8Format) -> i8 {
    if !max_abs.is_finite() || max_abs <= 0.0 {
        return 0;
    }
    let ratio = max_abs as f64 / format.max_finite() as f64;
    // Smallest integer s with ratio ≤ 2^s, i.e. ceil(log2(ratio)), found exactly with integer
    // steps on powers of two (no platform log2).
    let mut s: i32 = 0;
    while (s as f64).exp2() < ratio && s < FP8_SCALE_MAX as i32 {
        s += 1;
    }
    while s > FP8_SCALE_MIN as i32 && ((s - 1) as f64).exp2() >= ratio {
        s -= 1;
    }
    s as i8
}

/// A tensor shape: dimensions, outermost first. Every dimension of a graph value is ≥ 1 and the
/// rank is ≥ 1 (the graph has no scalars and no empty tensors).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Shape(pub Vec<usize>);

impl Shape {
    pub fn new(dims: impl Into<Vec<usize>>) -> Shape {
        Shape(dims.into())
    }

    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Number of elements (1 for rank 0).
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }

    /// The innermost dimension, if any.
    pub fn last(&self) -> Option<usize> {
        self.0.last().copied()
    }

    /// Dimension `i` (outermost is 0), if the rank allows.
    pub fn dim(&self, i: usize) -> Option<usize> {
        self.0.get(i).copied()
    }

    /// True if any dimension is 0.
    pub fn has_zero_dim(&self) -> bool {
        self.0.contains(&0)
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        let mut strides = vec![1; self.0.len()];
        for i in (0..self.0.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * self.0[i + 1];
        }
        strides
    }
}

impl fmt::Display for Shape {
    /// `[729, 1152]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl From<Vec<usize>> for Shape {
    fn from(v: Vec<usize>) -> Shape {
        Shape(v)
    }
}

impl From<&[usize]> for Shape {
    fn from(v: &[usize]) -> Shape {
        Shape(v.to_vec())
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(v: [usize; N]) -> Shape {
        Shape(v.to_vec())
    }
}

/// The type of a graph value: element type and shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Shape,
}

impl TensorType {
    pub fn new(dtype: DType, shape: impl Into<Shape>) -> TensorType {
        TensorType {
            dtype,
            shape: shape.into(),
        }
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.shape.numel() * self.dtype.size_bytes()
    }
}

impl fmt::Display for TensorType {
    /// `f16[729, 1152]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, self.shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_display_and_sizes() {
        assert_eq!(DType::F32.to_string(), "f32");
        assert_eq!(DType::F16.to_string(), "f16");
        assert_eq!(DType::f143(-4).to_string(), "f143<-4>");
        assert_eq!(DType::f152(3).to_string(), "f152<3>");
        assert_eq!(DType::f143(0).size_bytes(), 1);
        assert_eq!(DType::F16.size_bytes(), 2);
        assert_eq!(DType::f143(-4).max_finite(), 15.0);
    }

    #[test]
    fn shape_helpers() {
        let s = Shape::from([2, 3, 4]);
        assert_eq!(s.to_string(), "[2, 3, 4]");
        assert_eq!(s.numel(), 24);
        assert_eq!(s.rank(), 3);
        assert_eq!(s.last(), Some(4));
        assert_eq!(s.strides(), vec![12, 4, 1]);
        assert!(!s.has_zero_dim());
        assert!(Shape::from([3, 0]).has_zero_dim());
        assert_eq!(
            TensorType::new(DType::F16, [729, 1152]).to_string(),
            "f16[729, 1152]"
        );
        assert_eq!(
            TensorType::new(DType::F16, [729, 1152]).size_bytes(),
            729 * 1152 * 2
        );
    }

    #[test]
    fn fp8_scale_choice() {
        // 0.1 / 240 = 2^-11.2 → the smallest s with 0.1 ≤ 240·2^s is −11.
        assert_eq!(fp8_scale_for_max_abs(0.1, Fp8Format::F143), -11);
        // Exactly the format max → scale 0; just above → 1.
        assert_eq!(fp8_scale_for_max_abs(240.0, Fp8Format::F143), 0);
        assert_eq!(fp8_scale_for_max_abs(240.5, Fp8Format::F143), 1);
        assert_eq!(fp8_scale_for_max_abs(120.0, Fp8Format::F143), -1);
        assert_eq!(fp8_scale_for_max_abs(0.0, Fp8Format::F143), 0);
        assert_eq!(fp8_scale_for_max_abs(f32::NAN, Fp8Format::F143), 0);
        assert_eq!(fp8_scale_for_max_abs(1e-30, Fp8Format::F143), FP8_SCALE_MIN);
        assert_eq!(fp8_scale_for_max_abs(1e30, Fp8Format::F152), FP8_SCALE_MAX);
        // Property: max_abs·2^-s ≤ max and > max/2 away from the clamps.
        for &m in &[0.013f32, 0.5, 1.0, 3.7, 15.0, 1000.0] {
            for format in [Fp8Format::F143, Fp8Format::F152] {
                let s = fp8_scale_for_max_abs(m, format) as f64;
                let scaled = m as f64 * (-s).exp2();
                assert!(scaled <= format.max_finite() as f64, "{m} {format:?}");
                assert!(scaled > format.max_finite() as f64 / 2.0, "{m} {format:?}");
            }
        }
    }
}
