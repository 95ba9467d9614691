//! Native `Normalizer`.

use super::native_scaler;
use crate::python::to_py_err;
use crate::utils::{Norm, Normalizer};
use pyo3::prelude::*;

#[pyclass(name = "Normalizer", module = "rustyml._native.utils")]
pub(crate) struct PyNormalizer {
    inner: Normalizer,
}

native_scaler!(PyNormalizer, Normalizer, {
    #[new]
    #[pyo3(signature = (norm = "l2"))]
    fn new(norm: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Normalizer::new(Norm::parse(norm).map_err(to_py_err)?),
        })
    }
});
