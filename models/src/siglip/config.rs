//! [`SiglipVisionConfig`]: the vision tower's hyper-parameters, from a Hugging Face
//! `config.json` or a built-in preset.
//!
//! Accepted forms: a `SiglipVisionConfig` (`"model_type": "siglip_vision_model"`, fields at
//! the top level) or a full `SiglipConfig` whose `vision_config` object holds them. Required:
//! `hidden_size`, `intermediate_size`, `num_attention_heads`, `num_hidden_layers`,
//! `patch_size`, `image_size`. Optional, with the Hugging Face defaults (the published
//! So400m `config.json` omits them): `layer_norm_eps` (1e-6), `hidden_act`
//! (`gelu_pytorch_tanh`), `num_channels` (3), `vision_use_head` (true). Unknown fields are
//! ignored.
//!
//! [`SiglipVisionConfig::validate`] (run by every parser) also checks that every size derived
//! from the fields — tokens, patch length, `3·D`, each weight's element and byte count, one
//! image's pixel count — fits in `usize`, so the size helpers ([`num_patches`] and the rest)
//! never overflow on a config that passed it; on one that did not they saturate instead of
//! panicking.
//!
//! [`num_patches`]: SiglipVisionConfig::num_patches

use std::path::Path;

use serde_json::Value;

/// The activation of the MLP. Only the tanh approximation of GELU is supported (the graph's
/// `Gelu` op); Hugging Face calls it `gelu_pytorch_tanh` (SigLIP) or `gelu_new`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum HiddenAct {
    #[serde(rename = "gelu_pytorch_tanh")]
    GeluTanh,
}

/// Hyper-parameters of a SigLIP vision tower.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SiglipVisionConfig {
    /// Width of the residual stream, D (1152 for So400m).
    pub hidden_size: usize,
    /// Width of the MLP, F (4304 for So400m).
    pub intermediate_size: usize,
    /// Attention heads, H (16); `hidden_size` must be a multiple.
    pub num_attention_heads: usize,
    /// Encoder layers (27).
    pub num_hidden_layers: usize,
    /// Image channels (3).
    pub num_channels: usize,
    /// Side of a square patch in pixels (14).
    pub patch_size: usize,
    /// Side of the square input image in pixels (378 or 384).
    pub image_size: usize,
    /// LayerNorm epsilon (1e-6).
    pub layer_norm_eps: f32,
    pub hidden_act: HiddenAct,
    /// Whether the tower has the attention-pooling head (`SiglipMultiheadAttentionPoolingHead`,
    /// giving `pooler_output`). Hugging Face default: true.
    pub vision_use_head: bool,
}

/// Why a config was rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("E-CONFIG-001: config.json is not valid JSON: {message}")]
    Json { message: String },

    #[error("E-CONFIG-002: config.json: missing field `{field}`")]
    Missing { field: &'static str },

    #[error("E-CONFIG-003: config.json: field `{field}` is {found}, expected {expected}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
        found: String,
    },

    #[error("E-CONFIG-004: config.json: `{field}` = {value} is invalid: {reason}")]
    Invalid {
        field: &'static str,
        value: String,
        reason: String,
    },

    #[error("E-CONFIG-005: config.json: hidden_act `{value}` is not supported (only the tanh GELU: gelu_pytorch_tanh or gelu_new)")]
    UnsupportedActivation { value: String },

    #[error("E-CONFIG-006: cannot read {path}: {message}")]
    Io { path: String, message: String },
}

impl SiglipVisionConfig {
    /// SigLIP So400m/14 at 378×378: D 1152, F 4304, 16 heads of 72, 27 layers, 729 tokens.
    pub fn so400m_patch14_378() -> SiglipVisionConfig {
        SiglipVisionConfig {
            hidden_size: 1152,
            intermediate_size: 4304,
            num_attention_heads: 16,
            num_hidden_layers: 27,
            num_channels: 3,
            patch_size: 14,
            image_size: 378,
            layer_norm_eps: 1e-6,
            hidden_act: HiddenAct::GeluTanh,
            vision_use_head: true,
        }
    }

    /// The published checkpoint's config (`google/siglip-so400m-patch14-384`): as
    /// [`so400m_patch14_378`](Self::so400m_patch14_378) but 384×384 pixels (still 729 tokens:
    /// the last 6 pixel rows and columns are not covered by a patch).
    pub fn so400m_patch14_384() -> SiglipVisionConfig {
        SiglipVisionConfig {
            image_size: 384,
            ..Self::so400m_patch14_378()
        }
    }

    /// A small SigLIP-shaped model for tests: D 64, F 128, 4 heads of 16, 2 layers, 56×56
    /// pixels in patches of 14 → 16 tokens.
    pub fn tiny() -> SiglipVisionConfig {
        SiglipVisionConfig {
            hidden_size: 64,
            intermediate_size: 128,
            num_attention_heads: 4,
            num_hidden_layers: 2,
            num_channels: 3,
            patch_size: 14,
            image_size: 56,
            layer_norm_eps: 1e-6,
            hidden_act: HiddenAct::GeluTanh,
            vision_use_head: true,
        }
    }

    /// `hidden_size / num_attention_heads` (0 if there are no heads).
    pub fn head_dim(&self) -> usize {
        self.hidden_size
            .checked_div(self.num_attention_heads)
            .unwrap_or(0)
    }

    /// Patches per side: `image_size / patch_size`, rounded down (a stride-`patch_size`
    /// "valid" convolution); 0 if `patch_size` is 0.
    pub fn patches_per_side(&self) -> usize {
        self.image_size.checked_div(self.patch_size).unwrap_or(0)
    }

    /// Tokens per image (no class token): `patches_per_side²` (saturating; exact for a config
    /// that passed [`validate`](Self::validate)).
    pub fn num_patches(&self) -> usize {
        self.patches_per_side()
            .saturating_mul(self.patches_per_side())
    }

    /// Length of one flattened patch: `num_channels · patch_size²` (saturating; exact for a
    /// config that passed [`validate`](Self::validate)).
    pub fn patch_dim(&self) -> usize {
        self.num_channels
            .saturating_mul(self.patch_size)
            .saturating_mul(self.patch_size)
    }

    /// Values in one image: `num_channels · image_size²` (saturating; exact for a config that
    /// passed [`validate`](Self::validate)).
    pub fn pixels_per_image(&self) -> usize {
        self.num_channels
            .saturating_mul(self.image_size)
            .saturating_mul(self.image_size)
    }

    /// Parses a `config.json` text.
    pub fn from_json_str(text: &str) -> Result<SiglipVisionConfig, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
            message: e.to_string(),
        })?;
        Self::from_json_value(&value)
    }

    /// Reads and parses a `config.json` file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<SiglipVisionConfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_json_str(&text)
    }

    /// Reads the fields from a parsed `config.json` (top level or `vision_config`).
    pub fn from_json_value(value: &Value) -> Result<SiglipVisionConfig, ConfigError> {
        let root = value.as_object().ok_or_else(|| ConfigError::WrongType {
            field: "(root)",
            expected: "a JSON object",
            found: describe(value),
        })?;
        let obj = match root.get("vision_config") {
            Some(Value::Object(v)) => v,
            Some(other) => {
                return Err(ConfigError::WrongType {
                    field: "vision_config",
                    expected: "a JSON object",
                    found: describe(other),
                })
            }
            None => root,
        };
        let int = |field: &'static str| -> Result<Option<usize>, ConfigError> {
            match obj.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => match v.as_u64() {
                    Some(n) => usize::try_from(n)
                        .map(Some)
                        .map_err(|_| ConfigError::Invalid {
                            field,
                            value: n.to_string(),
                            reason: "too large".into(),
                        }),
                    None => Err(ConfigError::WrongType {
                        field,
                        expected: "a non-negative integer",
                        found: describe(v),
                    }),
                },
            }
        };
        let required = |field: &'static str| int(field)?.ok_or(ConfigError::Missing { field });
        let layer_norm_eps = match obj.get("layer_norm_eps") {
            None | Some(Value::Null) => 1e-6,
            Some(v) => v.as_f64().ok_or_else(|| ConfigError::WrongType {
                field: "layer_norm_eps",
                expected: "a number",
                found: describe(v),
            })? as f32,
        };
        let hidden_act = match obj.get("hidden_act") {
            None | Some(Value::Null) => HiddenAct::GeluTanh,
            Some(Value::String(s)) => match s.as_str() {
                "gelu_pytorch_tanh" | "gelu_new" => HiddenAct::GeluTanh,
                _ => return Err(ConfigError::UnsupportedActivation { value: s.clone() }),
            },
            Some(v) => {
                return Err(ConfigError::WrongType {
                    field: "hidden_act",
                    expected: "a string",
                    found: describe(v),
                })
            }
        };
        let vision_use_head = match obj.get("vision_use_head") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(ConfigError::WrongType {
                    field: "vision_use_head",
                    expected: "a boolean",
                    found: describe(v),
                })
            }
        };
        let config = SiglipVisionConfig {
            hidden_size: required("hidden_size")?,
            intermediate_size: required("intermediate_size")?,
            num_attention_heads: required("num_attention_heads")?,
            num_hidden_layers: required("num_hidden_layers")?,
            num_channels: int("num_channels")?.unwrap_or(3),
            patch_size: required("patch_size")?,
            image_size: required("image_size")?,
            layer_norm_eps,
            hidden_act,
            vision_use_head,
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks the values: sizes positive, heads divide the width, the image holds at least
    /// one patch, eps finite and positive.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field: &'static str, value: String, reason: &str| ConfigError::Invalid {
            field,
            value,
            reason: reason.to_string(),
        };
        for (field, v) in [
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_attention_heads", self.num_attention_heads),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_channels", self.num_channels),
            ("patch_size", self.patch_size),
            ("image_size", self.image_size),
        ] {
            if v == 0 {
                return Err(invalid(field, "0".into(), "must be positive"));
            }
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return Err(invalid(
                "num_attention_heads",
                self.num_attention_heads.to_string(),
                &format!("hidden_size {} is not a multiple of it", self.hidden_size),
            ));
        }
        if self.image_size < self.patch_size {
            return Err(invalid(
                "image_size",
                self.image_size.to_string(),
                &format!("smaller than patch_size {}", self.patch_size),
            ));
        }
        if !(self.layer_norm_eps.is_finite() && self.layer_norm_eps > 0.0) {
            return Err(invalid(
                "layer_norm_eps",
                format!("{:?}", self.layer_norm_eps),
                "must be finite and > 0",
            ));
        }
        self.check_sizes()
    }

    /// Every size derived from the fields fits in `usize`, as elements and as f32 bytes.
    fn check_sizes(&self) -> Result<(), ConfigError> {
        let (d, f, c, p, s) = (
            self.hidden_size,
            self.intermediate_size,
            self.num_channels,
            self.patch_size,
            self.image_size,
        );
        let side = s / p;
        // (the field blamed, the factors of one derived size)
        // Checked in this order so that the field blamed is the one that is too large.
        let sizes: [(&'static str, usize, &[usize]); 5] = [
            ("hidden_size", d, &[3, d, d, 4]),
            ("intermediate_size", f, &[d, f, 4]),
            ("patch_size", p, &[c, p, p, d, 4]),
            ("image_size", s, &[c, s, s, 4]),
            ("image_size", s, &[side, side, 3, d, 4]),
        ];
        for (field, value, factors) in sizes {
            if factors
                .iter()
                .try_fold(1usize, |acc, &x| acc.checked_mul(x))
                .is_none()
            {
                return Err(ConfigError::Invalid {
                    field,
                    value: value.to_string(),
                    reason: "too large: a tensor of this model would not fit in memory".into(),
                });
            }
        }
        Ok(())
    }
}

/// A short description of a JSON value for error messages: `the string "abc"`, `the number 1.5`.
fn describe(v: &Value) -> String {
    let mut s = v.to_string();
    if s.chars().count() > 40 {
        s = s.chars().take(37).collect();
        s.push_str("...");
    }
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "the boolean",
        Value::Number(_) => "the number",
        Value::String(_) => "the string",
        Value::Array(_) => "the array",
        Value::Object(_) => "the object",
    };
    if matches!(v, Value::Null) {
        kind.to_string()
    } else {
        format!("{kind} {s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vision part of the published `google/siglip-so400m-patch14-384` config.json (full
    /// SigLIP form; eps and activation omitted, as published).
    const SO400M_FULL: &str = r#"{
        "architectures": ["SiglipModel"],
        "initializer_factor": 1.0,
        "model_type": "siglip",
        "text_config": {"hidden_size": 1152, "intermediate_size": 4304, "model_type": "siglip_text_model",
                        "num_attention_heads": 16, "num_hidden_layers": 27},
        "torch_dtype": "float32",
        "vision_config": {
            "hidden_size": 1152, "image_size": 384, "intermediate_size": 4304,
            "model_type": "siglip_vision_model", "num_attention_heads": 16,
            "num_hidden_layers": 27, "patch_size": 14
        }
    }"#;

    #[test]
    fn presets() {
        let c = SiglipVisionConfig::so400m_patch14_378();
        assert_eq!(
            (c.head_dim(), c.num_patches(), c.patch_dim()),
            (72, 729, 588)
        );
        assert_eq!(SiglipVisionConfig::so400m_patch14_384().num_patches(), 729);
        let t = SiglipVisionConfig::tiny();
        assert_eq!(
            (t.head_dim(), t.num_patches(), t.patch_dim()),
            (16, 16, 588)
        );
        c.validate().unwrap();
        t.validate().unwrap();
    }

    #[test]
    fn parses_the_nested_published_form() {
        let c = SiglipVisionConfig::from_json_str(SO400M_FULL).unwrap();
        assert_eq!(c, SiglipVisionConfig::so400m_patch14_384());
    }

    #[test]
    fn parses_the_flat_form_with_every_field() {
        let text = r#"{"model_type": "siglip_vision_model", "hidden_size": 64, "intermediate_size": 128,
            "num_attention_heads": 4, "num_hidden_layers": 2, "num_channels": 3, "patch_size": 14,
            "image_size": 56, "layer_norm_eps": 1e-6, "hidden_act": "gelu_pytorch_tanh",
            "attention_dropout": 0.0}"#;
        assert_eq!(
            SiglipVisionConfig::from_json_str(text).unwrap(),
            SiglipVisionConfig::tiny()
        );
        // Round trip through the serialised form.
        let json = serde_json::to_string(&SiglipVisionConfig::tiny()).unwrap();
        assert_eq!(
            SiglipVisionConfig::from_json_str(&json).unwrap(),
            SiglipVisionConfig::tiny()
        );
    }

    fn err(text: &str) -> String {
        SiglipVisionConfig::from_json_str(text)
            .unwrap_err()
            .to_string()
    }

    const BASE: &str = r#""intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14, "image_size": 56"#;

    #[test]
    fn errors() {
        assert!(err("{not json").starts_with("E-CONFIG-001: config.json is not valid JSON: "));
        assert_eq!(
            err(&format!("{{{BASE}}}")),
            "E-CONFIG-002: config.json: missing field `hidden_size`"
        );
        assert_eq!(
            err(&format!("{{\"hidden_size\": \"64\", {BASE}}}")),
            "E-CONFIG-003: config.json: field `hidden_size` is the string \"64\", expected a non-negative integer"
        );
        assert_eq!(
            err(&format!("{{\"hidden_size\": 64.5, {BASE}}}")),
            "E-CONFIG-003: config.json: field `hidden_size` is the number 64.5, expected a non-negative integer"
        );
        assert_eq!(
            err("[1, 2]"),
            "E-CONFIG-003: config.json: field `(root)` is the array [1,2], expected a JSON object"
        );
        assert_eq!(
            err(r#"{"vision_config": 3}"#),
            "E-CONFIG-003: config.json: field `vision_config` is the number 3, expected a JSON object"
        );
        assert_eq!(
            err(&format!("{{\"hidden_size\": 66, {BASE}}}")),
            "E-CONFIG-004: config.json: `num_attention_heads` = 4 is invalid: hidden_size 66 is not a multiple of it"
        );
        assert_eq!(
            err(&format!("{{\"hidden_size\": 0, {BASE}}}")),
            "E-CONFIG-004: config.json: `hidden_size` = 0 is invalid: must be positive"
        );
        assert_eq!(
            err(&format!(
                "{{\"hidden_size\": 64, \"layer_norm_eps\": -1, {BASE}}}"
            )),
            "E-CONFIG-004: config.json: `layer_norm_eps` = -1.0 is invalid: must be finite and > 0"
        );
        assert_eq!(
            err(
                r#"{"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14, "image_size": 10}"#
            ),
            "E-CONFIG-004: config.json: `image_size` = 10 is invalid: smaller than patch_size 14"
        );
        assert_eq!(
            err(&format!("{{\"hidden_size\": 64, \"hidden_act\": \"gelu\", {BASE}}}")),
            "E-CONFIG-005: config.json: hidden_act `gelu` is not supported (only the tanh GELU: gelu_pytorch_tanh or gelu_new)"
        );
        assert_eq!(
            err(&format!(
                "{{\"hidden_size\": 64, \"hidden_act\": 1, {BASE}}}"
            )),
            "E-CONFIG-003: config.json: field `hidden_act` is the number 1, expected a string"
        );
        assert_eq!(
            err(&format!(
                "{{\"hidden_size\": 64, \"vision_use_head\": \"yes\", {BASE}}}"
            )),
            "E-CONFIG-003: config.json: field `vision_use_head` is the string \"yes\", expected a boolean"
        );
        let e = SiglipVisionConfig::from_file("/nonexistent/config.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("E-CONFIG-006: cannot read /nonexistent/config.json: "),
            "{e}"
        );
    }

    /// A long non-ASCII value used to be cut at a byte index inside a character (a panic).
    #[test]
    fn describe_cuts_long_non_ascii_values_at_character_boundaries() {
        for text in [
            "é".repeat(60),
            "日本語のテキスト".repeat(10),
            format!("a{}", "🦀".repeat(50)),
        ] {
            let e = err(&format!("{{\"hidden_size\": \"{text}\", {BASE}}}"));
            assert!(
                e.starts_with("E-CONFIG-003: config.json: field `hidden_size` is the string \""),
                "{e}"
            );
            assert!(e.contains("...,"), "{e}");
        }
        let e = err(&format!(
            "{{\"hidden_size\": \"{}\", {BASE}}}",
            "é".repeat(60)
        ));
        let quoted = format!("\"{}...", "é".repeat(36));
        assert!(e.contains(&quoted), "{e}");
    }

    #[test]
    fn vision_use_head() {
        let with = |v: &str| {
            SiglipVisionConfig::from_json_str(&format!("{{\"hidden_size\": 64, {v} {BASE}}}"))
                .unwrap()
                .vision_use_head
        };
        assert!(with(""));
        assert!(with("\"vision_use_head\": true,"));
        assert!(!with("\"vision_use_head\": false,"));
        assert!(with("\"vision_use_head\": null,"));
    }

    /// Sizes whose products overflow are refused by the parser, and the helpers saturate
    /// instead of panicking on a config built by hand.
    #[test]
    fn huge_sizes_are_refused_without_overflow() {
        let big = u64::MAX / 2;
        for (field, json) in [
            ("hidden_size", format!("{{\"hidden_size\": {big}, \"intermediate_size\": 1, \"num_attention_heads\": 1, \"num_hidden_layers\": 1, \"patch_size\": 1, \"image_size\": 1}}")),
            ("image_size", format!("{{\"hidden_size\": 4, \"intermediate_size\": 1, \"num_attention_heads\": 1, \"num_hidden_layers\": 1, \"patch_size\": 1, \"image_size\": {big}}}")),
            ("patch_size", format!("{{\"hidden_size\": 4, \"intermediate_size\": 1, \"num_attention_heads\": 1, \"num_hidden_layers\": 1, \"patch_size\": {big}, \"image_size\": {big}}}")),
            ("intermediate_size", format!("{{\"hidden_size\": 4, \"intermediate_size\": {big}, \"num_attention_heads\": 1, \"num_hidden_layers\": 1, \"patch_size\": 1, \"image_size\": 1}}")),
        ] {
            let e = err(&json);
            assert!(
                e.starts_with(&format!("E-CONFIG-004: config.json: `{field}` = ")) && e.ends_with("too large: a tensor of this model would not fit in memory"),
                "{field}: {e}"
            );
        }
        // Many layers alone are not a size problem (the loader checks them against the tensors).
        let many = SiglipVisionConfig::from_json_str(
            r#"{"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 4000000, "patch_size": 14, "image_size": 56}"#,
        )
        .unwrap();
        assert_eq!(many.num_hidden_layers, 4_000_000);
        let c = SiglipVisionConfig {
            image_size: usize::MAX,
            patch_size: 1,
            num_channels: usize::MAX,
            num_attention_heads: 0,
            ..SiglipVisionConfig::tiny()
        };
        assert_eq!(
            (
                c.num_patches(),
                c.patch_dim(),
                c.pixels_per_image(),
                c.head_dim()
            ),
            (usize::MAX, usize::MAX, usize::MAX, 0)
        );
        assert!(c.validate().is_err());
    }
}
