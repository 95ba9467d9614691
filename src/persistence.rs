//! Save/load for every model: a compact binary encoding (postcard) of the serde form, with a
//! format tag so a file of another model type is refused with a clear error.

use crate::error::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"RUSTYML1";

/// Blanket save/load for serde models. `MODEL_NAME` guards against loading the wrong type.
pub trait Persist: Serialize + DeserializeOwned {
    /// Type tag written into every encoding.
    const MODEL_NAME: &'static str;

    /// Whether a decoded model's fitted state is consistent (shapes, indices, finiteness); a
    /// model whose damaged state could fail later (or panic) in predict overrides this, and
    /// [`Persist::from_bytes`] refuses what it rejects.
    fn validate_loaded(&self) -> Result<()> {
        Ok(())
    }

    /// Encode to bytes (also the pickle payload on the Python side).
    fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = MAGIC.to_vec();
        out.extend(postcard::to_allocvec(&(Self::MODEL_NAME, self))?);
        Ok(out)
    }

    /// Decode bytes written by [`Persist::to_bytes`].
    fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let body = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| Error::format("not a rustyml model file (bad header)"))?;
        let (name, model): (String, Self) = postcard::from_bytes(body).map_err(|e| {
            Error::format(format!(
                "could not decode a {} from this data: {e}",
                Self::MODEL_NAME
            ))
        })?;
        if name != Self::MODEL_NAME {
            return Err(Error::format(format!(
                "this file holds a {name}, not a {}",
                Self::MODEL_NAME
            )));
        }
        model.validate_loaded()?;
        Ok(model)
    }

    /// Write the model to `path`.
    fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        std::fs::write(path, self.to_bytes()?)?;
        Ok(())
    }

    /// Read a model written by [`Persist::save`].
    fn load(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_bytes(&std::fs::read(path)?)
    }
}
