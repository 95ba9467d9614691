//! `rustyml._native.utils`: the scalers, label encoders and preprocessing functions. The
//! scikit-learn conventions (keyword hyper-parameters, get_params/set_params, fitted `_`
//! attributes, pickling) live in the Python wrappers of `rustyml.utils`.

use crate::python::labels::maybe_detach;
use crate::python::{f64_array, to_py_err};
use ndarray::{Array2, ArrayView2, Ix2};
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyModule;

mod functions;
mod label_encoder;
mod max_abs_scaler;
mod min_max_scaler;
mod normalizer;
mod robust_scaler;
mod standard_scaler;

/// Run a fit on a 2-D float array (GIL released for large inputs).
pub(crate) fn fit_2d(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    fit: impl FnOnce(ArrayView2<f64>) -> crate::Result<()> + Send,
) -> PyResult<()> {
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    maybe_detach(py, xv.len(), || fit(xv)).map_err(to_py_err)
}

/// Run a map of a 2-D float array into a new array handed to NumPy without a copy.
pub(crate) fn map_2d<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    map: impl FnOnce(ArrayView2<f64>) -> crate::Result<Array2<f64>> + Send,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    Ok(maybe_detach(py, xv.len(), || map(xv))
        .map_err(to_py_err)?
        .into_pyarray(py))
}

/// A fitted vector, borrowed or computed, on its way to NumPy.
pub(crate) trait FittedVector {
    fn into_array(self) -> ndarray::Array1<f64>;
}

impl FittedVector for &ndarray::Array1<f64> {
    fn into_array(self) -> ndarray::Array1<f64> {
        self.clone()
    }
}

impl FittedVector for ndarray::Array1<f64> {
    fn into_array(self) -> ndarray::Array1<f64> {
        self
    }
}

/// An optional fitted vector as a NumPy array.
pub(crate) fn opt_array<'py>(
    py: Python<'py>,
    v: Option<impl FittedVector>,
) -> Option<Bound<'py, numpy::PyArray1<f64>>> {
    v.map(|a| a.into_array().into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<standard_scaler::PyStandardScaler>()?;
    m.add_class::<min_max_scaler::PyMinMaxScaler>()?;
    m.add_class::<max_abs_scaler::PyMaxAbsScaler>()?;
    m.add_class::<robust_scaler::PyRobustScaler>()?;
    m.add_class::<normalizer::PyNormalizer>()?;
    label_encoder::register(m)?;
    functions::register(m)?;
    Ok(())
}
