//! `rustyml._native.utils`: the scalers, label encoders and preprocessing functions. The
//! scikit-learn conventions (keyword hyper-parameters, get_params/set_params, fitted `_`
//! attributes, pickling) live in the Python wrappers of `rustyml.utils`.

use crate::python::labels::maybe_detach;
use crate::python::model::SharedModel;
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

/// Run a fit of `model` on a 2-D float array (alone on the model).
pub(crate) fn fit_2d<M: Send + Sync>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    model: &SharedModel<M>,
    fit: impl FnOnce(&mut M, ArrayView2<f64>) -> crate::Result<()> + Send,
) -> PyResult<()> {
    model.write_x(py, x, fit).map(|_| ())
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

/// A fitted vector copied out of the model under its shared lock (so NumPy takes it after
/// the lock is released), `None` where scikit-learn has no such attribute.
pub(crate) fn read_vector<'py, M: Send + Sync>(
    py: Python<'py>,
    model: &SharedModel<M>,
    get: impl FnOnce(&M) -> Option<ndarray::Array1<f64>> + Send,
) -> Option<Bound<'py, numpy::PyArray1<f64>>> {
    model.read(py, get).map(|a| a.into_pyarray(py))
}

/// A native scaler class: the `frozen` pyclass holding the model in a
/// [`SharedModel`] (reads share the lock, fits take it alone, GIL released), and
/// `#[pymethods]` with the methods every scaler shares (`fit`, `transform`, `fit_transform`,
/// `n_features_in_`, `to_bytes`, `from_bytes`), `partial_fit` and `inverse_transform` when
/// given a doc line, a getter per fitted vector (`name => |m| the vector of model m`, copied
/// out by [`read_vector`]), plus the class's own items (constructor, other getters).
macro_rules! native_scaler {
    (
        $py_name:ident($model:ty, $name:literal),
        $(partial_fit = $pf_doc:literal,)?
        $(inverse_transform = $inv_doc:literal,)?
        $(vectors { $($(#[$vector_doc:meta])* $vector:ident => |$m:ident| $get:expr),* $(,)? },)?
        { $($own:tt)* }
    ) => {
        #[pyclass(name = $name, module = "rustyml._native.utils", frozen)]
        pub(crate) struct $py_name {
            inner: $crate::python::model::SharedModel<$model>,
        }

        #[pymethods]
        impl $py_name {
            $($own)*

            $($(
                $(#[$vector_doc])*
                #[getter]
                fn $vector<'py>(
                    &self,
                    py: Python<'py>,
                ) -> Option<Bound<'py, numpy::PyArray1<f64>>> {
                    $crate::python::utils::read_vector(py, &self.inner, |$m| $get)
                }
            )*)?

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
                ) -> PyResult<Bound<'py, PyAny>> {
                    self.map_fitted_width(py, x, |m, xv| m.inverse_transform(&xv))
                }
            )?

            fn fit(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
                $crate::python::utils::fit_2d(py, x, &self.inner, |m, xv| m.fit(&xv).map(|_| ()))
            }

            fn transform<'py>(
                &self,
                py: Python<'py>,
                x: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.map_fitted_width(py, x, |m, xv| m.transform(&xv))
            }

            fn fit_transform<'py>(
                &self,
                py: Python<'py>,
                x: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.inner.write_x(py, x, |m, xv| m.fit_transform(&xv))
            }

            #[getter]
            fn n_features_in_(&self, py: Python<'_>) -> Option<usize> {
                self.inner.read(py, |m| m.get_n_features())
            }

            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                self.inner.to_bytes(py)
            }

            /// Call `f()` holding the model's shared lock (tests of concurrent reads).
            fn _call_while_reading<'py>(
                &self,
                f: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.inner.call_while_reading(f)
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

            /// `map` on a batch under the shared lock, once its width is the fitted one
            /// (`transform` and its inverse).
            fn map_fitted_width<'py>(
                &self,
                py: Python<'py>,
                x: &Bound<'py, PyAny>,
                map: impl FnOnce(
                        &$model,
                        ndarray::ArrayView2<'_, f64>,
                    ) -> $crate::Result<ndarray::Array2<f64>>
                    + Send,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.inner.read_x(py, x, |m, xv| {
                    $crate::python::utils::check_width(m.get_n_features(), &xv, Self::NAME)?;
                    map(m, xv)
                })
            }

            fn wrap(model: $model) -> Self {
                Self {
                    inner: $crate::python::model::SharedModel::new(model),
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
