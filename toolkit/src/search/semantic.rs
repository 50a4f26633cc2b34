//! [`Embeddings`]: a static embedding model (one vector per word piece of a tokenizer, in
//! model2vec's layout), for ranking tools by meaning where their words and the query's differ
//! ("save this text" and `write_file`). A text's vector is the mean of its pieces' vectors,
//! scaled to unit length: no neural network runs at search time, so embedding a query costs
//! about as much as tokenizing it.

use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};
use tokenizers::Tokenizer;

/// Why an embedding model could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddingsError {
    /// A file of the model could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `tokenizer.json` is not a tokenizer Hugging Face's `tokenizers` can read.
    #[error("the tokenizer cannot be read: {0}")]
    Tokenizer(String),
    /// `model.safetensors` has no usable `embeddings` table.
    #[error("the embedding table cannot be used: {0}")]
    Table(String),
}

/// A static embedding model: a tokenizer and one vector per token of its vocabulary, in the
/// layout model2vec writes (`tokenizer.json`, and `model.safetensors` with an `embeddings`
/// table of float32 or float16 rows; `config.json`'s `normalize`, default true). Any model2vec
/// model loads (e.g. `minishlab/potion-base-8M`); the tests use one distilled from
/// `all-MiniLM-L6-v2` (`tests/search/distill.py`).
///
/// Given to a [`ToolIndex`](super::ToolIndex) with
/// [`with_embeddings`](super::ToolIndex::with_embeddings), or to a toolkit with
/// [`ToolkitBuilder::search_embeddings`](crate::toolkit::ToolkitBuilder::search_embeddings): tools are
/// then ranked by BM25 and by meaning, the two rankings fused.
pub struct Embeddings {
    tokenizer: Tokenizer,
    /// Row-major, `vocabulary × dimensions`.
    table: Vec<f32>,
    dimensions: usize,
    normalize: bool,
}

impl std::fmt::Debug for Embeddings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embeddings")
            .field("vocabulary", &(self.table.len() / self.dimensions.max(1)))
            .field("dimensions", &self.dimensions)
            .finish()
    }
}

/// A text's pieces beyond this many are not read (a tool's description is summed up well
/// before).
const MAX_PIECES: usize = 512;

impl Embeddings {
    /// Load a model from a directory holding `tokenizer.json`, `model.safetensors` and
    /// (optionally) `config.json`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self, EmbeddingsError> {
        let dir = dir.as_ref();
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| EmbeddingsError::Read { path, source })
        };
        let normalize = match read("config.json") {
            Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|c| c.get("normalize").and_then(serde_json::Value::as_bool))
                .unwrap_or(true),
            Err(_) => true,
        };
        Self::from_bytes(
            &read("tokenizer.json")?,
            &read("model.safetensors")?,
            normalize,
        )
    }

    /// A model from the bytes of its `tokenizer.json` and `model.safetensors`; `normalize`:
    /// whether a text's vector is scaled to unit length (cosine similarity).
    pub fn from_bytes(
        tokenizer_json: &[u8],
        safetensors: &[u8],
        normalize: bool,
    ) -> Result<Self, EmbeddingsError> {
        let mut tokenizer = Tokenizer::from_bytes(tokenizer_json)
            .map_err(|e| EmbeddingsError::Tokenizer(e.to_string()))?;
        // A sentence model's tokenizer pads and truncates to its window: not wanted here.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| EmbeddingsError::Tokenizer(e.to_string()))?;
        let tensors = SafeTensors::deserialize(safetensors)
            .map_err(|e| EmbeddingsError::Table(e.to_string()))?;
        let view = tensors
            .tensor("embeddings")
            .map_err(|e| EmbeddingsError::Table(format!("no `embeddings` tensor ({e})")))?;
        let [rows, dimensions] = *view.shape() else {
            return Err(EmbeddingsError::Table(format!(
                "`embeddings` has shape {:?}, not [vocabulary, dimensions]",
                view.shape()
            )));
        };
        let data = view.data();
        let table: Vec<f32> = match view.dtype() {
            Dtype::F32 => data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => data
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            other => {
                return Err(EmbeddingsError::Table(format!(
                    "`embeddings` holds {other:?}; float32 and float16 are read"
                )));
            }
        };
        let vocabulary = tokenizer.get_vocab_size(true);
        if dimensions == 0 || rows < vocabulary {
            return Err(EmbeddingsError::Table(format!(
                "`embeddings` has {rows} rows of {dimensions} for a vocabulary of {vocabulary}"
            )));
        }
        Ok(Embeddings {
            tokenizer,
            table,
            dimensions,
            normalize,
        })
    }

    /// How many numbers a vector has.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The vector of `text`: the mean of its pieces' vectors (unit length when the model
    /// normalizes), all zeros for a text with no known piece.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut out = vec![0f32; self.dimensions];
        self.embed_into(text, &mut out);
        out
    }

    /// [`embed`](Self::embed) into `out` (of [`dimensions`](Self::dimensions) numbers).
    pub(super) fn embed_into(&self, text: &str, out: &mut [f32]) {
        out.fill(0.0);
        let Ok(encoding) = self.tokenizer.encode_fast(text, false) else {
            return;
        };
        let ids = encoding.get_ids();
        let ids = &ids[..ids.len().min(MAX_PIECES)];
        for &id in ids {
            let start = id as usize * self.dimensions;
            if let Some(row) = self.table.get(start..start + self.dimensions) {
                out.iter_mut().zip(row).for_each(|(o, r)| *o += r);
            }
        }
        let scale = if self.normalize {
            let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 { 1.0 / norm } else { 0.0 }
        } else if ids.is_empty() {
            0.0
        } else {
            1.0 / ids.len() as f32
        };
        out.iter_mut().for_each(|x| *x *= scale);
    }
}

/// IEEE 754 half precision to single (subnormals, infinities and NaN included).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exponent = u32::from((h >> 10) & 0x1f);
    let mantissa = u32::from(h & 0x3ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: value = m · 2^-24.
            let value = m as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -value } else { value };
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_reads_as_ieee_says() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn bad_files_are_typed_errors() {
        let missing = Embeddings::from_dir("/nonexistent/model");
        assert!(
            matches!(missing, Err(EmbeddingsError::Read { .. })),
            "{missing:?}"
        );
        let tokenizer = Embeddings::from_bytes(b"{not json", b"", true);
        assert!(matches!(tokenizer, Err(EmbeddingsError::Tokenizer(_))));
    }
}
