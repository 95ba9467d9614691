//! `rustyml._native.utils`: the scalers, label encoders and preprocessing functions. The
//! scikit-learn conventions (keyword hyper-parameters, get_params/set_params, fitted `_`
//! attributes, pickling) live in the Python wrappers of `rustyml.utils`.

use crate::python::labels::maybe_detach;
use crate::python::{f64_array, to_py_err};
use ndarray::{Array2, ArrayView2, Ix2};
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use std::sync::{Mutex, MutexGuard, PoisonError};

mod functions;
mod label_encoder;
mod max_abs_scaler;
mod min_max_scaler;
mod normalizer;
mod robust_scaler;
mod standard_scaler;

/// Lock a model shared between Python threads. A poisoned lock still holds a consistent model:
/// every method builds its result first and assigns it only on success.
pub(crate) fn lock<M>(model: &Mutex<M>) -> MutexGuard<'_, M> {
    model.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Run `f` on the model with the GIL released and the lock taken inside, so concurrent calls
/// from several Python threads queue on the lock instead of failing (a `&mut self` pyclass
/// method raises "Already mutably borrowed"), and no thread waits for the lock while holding
/// the GIL. The lock is taken before the call moves into the worker pool
/// (`crate::parallel::install`), so no pool thread ever waits for it.
pub(crate) fn with_model<M: Send, R: Send>(
    py: Python<'_>,
    model: &Mutex<M>,
    f: impl FnOnce(&mut M) -> R + Send,
) -> R {
    py.detach(|| {
        let mut guard = lock(model);
        let model: &mut M = &mut guard;
        crate::parallel::install(|| f(model))
    })
}

/// Run a fit of `model` on a 2-D float array.
pub(crate) fn fit_2d<M: Send>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    model: &Mutex<M>,
    fit: impl FnOnce(&mut M, ArrayView2<f64>) -> crate::Result<()> + Send,
) -> PyResult<()> {
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    with_model(py, model, |m| fit(m, xv)).map_err(to_py_err)
}

/// Map a 2-D float array through `model` into a new array handed to NumPy without a copy.
pub(crate) fn map_2d<'py, M: Send>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    model: &Mutex<M>,
    map: impl FnOnce(&mut M, ArrayView2<f64>) -> crate::Result<Array2<f64>> + Send,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    Ok(with_model(py, model, |m| map(m, xv))
        .map_err(to_py_err)?
        .into_pyarray(py))
}

/// Map a 2-D float array with a stateless function (GIL released for large inputs).
pub(crate) fn map_2d_free<'py>(
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

/// scikit-learn's wording for a batch whose width differs from the fit's ("X has 3 features,
/// but StandardScaler is expecting 6 features as input").
pub(crate) fn check_width(
    fitted: Option<usize>,
    x: &ArrayView2<f64>,
    model: &str,
) -> crate::Result<()> {
    match fitted {
        Some(d) if x.nrows() > 0 && x.ncols() != d => {
            Err(crate::error::Error::invalid_input(format!(
                "X has {} features, but {model} is expecting {d} features as input",
                x.ncols()
            )))
        }
        _ => Ok(()),
    }
}

/// A fitted vector copied out of the locked model (so NumPy takes it after the lock is
/// released), `None` where scikit-learn has no such attribute.
pub(crate) fn read_vector<'py, M: Send>(
    py: Python<'py>,
    model: &Mutex<M>,
    get: impl FnOnce(&M) -> Option<ndarray::Array1<f64>> + Send,
) -> Option<Bound<'py, numpy::PyArray1<f64>>> {
    with_model(py, model, |m| get(m)).map(|a| a.into_pyarray(py))
}

/// A native scaler class: `#[pymethods]` with the methods every scaler shares (`fit`,
/// `transform`, `fit_transform`, `n_features_in_`, `to_bytes`, `from_bytes`), `partial_fit`
/// and `inverse_transform` when given a doc line, plus the class's own items (constructor,
/// fitted getters). The model sits behind a mutex taken with the GIL released, so one scaler
/// can be used from several Python threads.
macro_rules! native_scaler {
    (
        $py_name:ident,
        $model:ty,
        $(partial_fit = $pf_doc:literal,)?
        $(inverse_transform = $inv_doc:literal,)?
        { $($own:tt)* }
    ) => {
        #[pymethods]
        impl $py_name {
            $($own)*

            $(
                #[doc = $pf_doc]
                fn partial_fit(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
                    $crate::python::utils::fit_2d(py, x, &self.inner, |m, xv| {
                        $crate::python::utils::check_width(m.get_n_features(), &xv, Self::NAME)?;
                        m.partial_fit(&xv).map(|_| ())
                    })
                }
            )?

            $(
                #[doc = $inv_doc]
                fn inverse_transform<'py>(
                    &self,
                    py: Python<'py>,
                    x: &Bound<'py, PyAny>,
                ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
                    $crate::python::utils::map_2d(py, x, &self.inner, |m, xv| {
                        $crate::python::utils::check_width(m.get_n_features(), &xv, Self::NAME)?;
                        m.inverse_transform(&xv)
                    })
                }
            )?

            fn fit(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
                $crate::python::utils::fit_2d(py, x, &self.inner, |m, xv| m.fit(&xv).map(|_| ()))
            }

            fn transform<'py>(
                &self,
                py: Python<'py>,
                x: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
                $crate::python::utils::map_2d(py, x, &self.inner, |m, xv| {
                    $crate::python::utils::check_width(m.get_n_features(), &xv, Self::NAME)?;
                    m.transform(&xv)
                })
            }

            fn fit_transform<'py>(
                &self,
                py: Python<'py>,
                x: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
                $crate::python::utils::map_2d(py, x, &self.inner, |m, xv| m.fit_transform(&xv))
            }

            #[getter]
            fn n_features_in_(&self, py: Python<'_>) -> Option<usize> {
                $crate::python::utils::with_model(py, &self.inner, |m| m.get_n_features())
            }

            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                use $crate::persistence::Persist;
                let bytes = $crate::python::utils::with_model(py, &self.inner, |m| m.to_bytes())
                    .map_err($crate::python::to_py_err)?;
                Ok(pyo3::types::PyBytes::new(py, &bytes))
            }

            /// Decode a model written by `to_bytes`; an inconsistent fitted state is refused.
            #[staticmethod]
            fn from_bytes(data: &[u8]) -> PyResult<Self> {
                use $crate::utils::scaling::CheckedPersist;
                let inner = <$model>::from_bytes_checked(data).map_err($crate::python::to_py_err)?;
                Ok(Self::wrap(inner))
            }
        }

        impl $py_name {
            const NAME: &'static str = <$model as $crate::persistence::Persist>::MODEL_NAME;

            fn wrap(model: $model) -> Self {
                Self {
                    inner: std::sync::Mutex::new(model),
                }
            }
        }
    };
}

pub(crate) use native_scaler;

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
