//! Native `RobustScaler`.

use super::{native_scaler, opt_array};
use crate::utils::RobustScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

#[pyclass(name = "RobustScaler", module = "rustyml._native.utils")]
pub(crate) struct PyRobustScaler {
    inner: RobustScaler,
}

native_scaler!(
    PyRobustScaler,
    RobustScaler,
    inverse_transform = "`x * scale_ + center_`.",
    {
        #[new]
        #[pyo3(signature = (with_centering = true, with_scaling = true, quantile_range = (25.0, 75.0)))]
        fn new(with_centering: bool, with_scaling: bool, quantile_range: (f64, f64)) -> Self {
            Self {
                inner: RobustScaler::new(with_centering, with_scaling, quantile_range),
            }
        }

        #[getter]
        fn center_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.center())
        }

        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.scale())
        }
    }
);
