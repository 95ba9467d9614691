//! Native `Normalizer`.

use super::native_scaler;
use crate::utils::{NormalizationOrder, Normalizer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

native_scaler!(PyNormalizer(Normalizer, "Normalizer"), {
    /// scikit-learn's norms only: 'l1', 'l2' or 'max'.
    #[new]
    #[pyo3(signature = (*, norm))]
    fn new(norm: &str) -> PyResult<Self> {
        let order = match norm {
            "l1" => NormalizationOrder::L1,
            "l2" => NormalizationOrder::L2,
            "max" => NormalizationOrder::Max,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown norm {other:?}: expected 'l1', 'l2' or 'max'"
                )))
            }
        };
        Ok(Self::wrap(
            Normalizer::new(order).expect("l1, l2 and max need no check"),
        ))
    }
});
