//! `model.safetensors.index.json`: the map from tensor name to shard file that transformers
//! writes beside a sharded checkpoint (`{"metadata": {...}, "weight_map": {name: file}}`).
//!
//! Only `weight_map` is read. Shard names must be plain file names in the checkpoint's
//! directory (no path separators, not `.` or `..`), so an index cannot make the loader read
//! files elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::checkpoint::CheckpointError;

/// Index files larger than this are refused before reading (real ones are well under 1 MiB).
const MAX_INDEX_BYTES: u64 = 64 << 20;

/// A parsed index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShardIndex {
    pub path: PathBuf,
    /// Tensor name → shard file name.
    pub weight_map: BTreeMap<String, String>,
}

impl ShardIndex {
    /// Reads and checks `path`.
    pub fn read(path: &Path) -> Result<ShardIndex, CheckpointError> {
        let bad = |message: String| CheckpointError::Index {
            path: path.display().to_string(),
            message,
        };
        let io = |e: std::io::Error| CheckpointError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len > MAX_INDEX_BYTES {
            return Err(bad(format!(
                "{len} bytes is larger than an index can sensibly be ({MAX_INDEX_BYTES})"
            )));
        }
        let text = std::fs::read(path).map_err(io)?;
        let value: Value =
            serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let map = match value.get("weight_map") {
            Some(Value::Object(m)) => m,
            Some(_) => return Err(bad("`weight_map` is not a JSON object".into())),
            None if value.is_object() => return Err(bad("no `weight_map`".into())),
            None => return Err(bad("not a JSON object".into())),
        };
        let mut weight_map = BTreeMap::new();
        for (name, shard) in map {
            let Value::String(shard) = shard else {
                return Err(bad(format!(
                    "the shard of {name} is {shard}, not a file name string"
                )));
            };
            if !is_plain_file_name(shard) {
                return Err(bad(format!(
                    "the shard of {name} is {shard:?}, not a file name in the checkpoint's directory"
                )));
            }
            weight_map.insert(name.clone(), shard.clone());
        }
        Ok(ShardIndex {
            path: path.to_path_buf(),
            weight_map,
        })
    }
}

fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !Path::new(name).is_absolute()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ShardIndex, CheckpointError> {
        let dir = std::env::temp_dir().join(format!(
            "tessera-models-index-{}-{:x}",
            std::process::id(),
            text.len() * 31 + text.bytes().map(|b| b as usize).sum::<usize>()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("model.safetensors.index.json");
        std::fs::write(&path, text).unwrap();
        let r = ShardIndex::read(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    fn err(text: &str) -> String {
        let e = read(text).unwrap_err().to_string();
        let (_, tail) = e.split_once("model.safetensors.index.json").unwrap();
        tail.to_string()
    }

    #[test]
    fn reads_the_weight_map() {
        let i = read(r#"{"metadata": {"total_size": 8}, "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}"#).unwrap();
        assert_eq!(i.weight_map.len(), 2);
        assert_eq!(i.weight_map["b"], "s2.safetensors");
    }

    #[test]
    fn errors() {
        assert!(err("{oops").starts_with(" is not a valid safetensors index: not valid JSON: "));
        assert_eq!(
            err(r#"{"metadata": {}}"#),
            " is not a valid safetensors index: no `weight_map`"
        );
        assert_eq!(
            err("[1]"),
            " is not a valid safetensors index: not a JSON object"
        );
        assert_eq!(
            err(r#"{"weight_map": [1]}"#),
            " is not a valid safetensors index: `weight_map` is not a JSON object"
        );
        assert_eq!(
            err(r#"{"weight_map": {"a": 3}}"#),
            " is not a valid safetensors index: the shard of a is 3, not a file name string"
        );
        assert_eq!(
            err(r#"{"weight_map": {"a": "../x.safetensors"}}"#),
            " is not a valid safetensors index: the shard of a is \"../x.safetensors\", not a file name in the checkpoint's directory"
        );
        assert!(err(r#"{"weight_map": {"a": "/etc/passwd"}}"#).contains("not a file name"));
        assert!(err(r#"{"weight_map": {"a": ""}}"#).contains("not a file name"));
    }
}
