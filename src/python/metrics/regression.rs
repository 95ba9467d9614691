//! Native regression metrics: two 1-D float arrays in, a float out.

use crate::metrics::checked::regression;
use crate::python::labels::maybe_detach;
use crate::python::{f64_array, to_py_err};
use ndarray::{ArrayView1, Ix1};
use pyo3::prelude::*;
use pyo3::types::PyModule;

fn pair(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_pred: &Bound<'_, PyAny>,
    metric: fn(ArrayView1<f64>, ArrayView1<f64>) -> crate::Result<f64>,
) -> PyResult<f64> {
    let t = f64_array::<Ix1>(y_true, "y_true")?;
    let p = f64_array::<Ix1>(y_pred, "y_pred")?;
    let (t, p) = (t.view(), p.view());
    maybe_detach(py, t.len(), || metric(t, p)).map_err(to_py_err)
}

macro_rules! regression_metrics {
    ($($name:ident),* $(,)?) => {
        $(
            #[pyfunction]
            fn $name(py: Python<'_>, y_true: &Bound<'_, PyAny>, y_pred: &Bound<'_, PyAny>) -> PyResult<f64> {
                pair(py, y_true, y_pred, regression::$name)
            }
        )*
        pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

regression_metrics!(
    mean_squared_error,
    root_mean_squared_error,
    mean_absolute_error,
    r2_score,
    explained_variance_score,
    median_absolute_error,
    mean_absolute_percentage_error,
);
