//! Native `MinMaxScaler`.

use super::native_scaler;
use crate::python::to_py_err;
use crate::utils::MinMaxScaler;
use pyo3::prelude::*;

native_scaler!(
    PyMinMaxScaler(MinMaxScaler, "MinMaxScaler"),
    partial_fit = "Widen the fitted minima and maxima with one more batch.",
    inverse_transform = "Undo `transform` (without clipping).",
    vectors {
        data_min_ => |m| m.get_data_min().cloned(),
        data_max_ => |m| m.get_data_max().cloned(),
        data_range_ => |m| m.get_data_range(),
        scale_ => |m| m.get_scale().cloned(),
        min_ => |m| m.get_min().cloned(),
    },
    {
        #[new]
        #[pyo3(signature = (*, feature_range, clip))]
        fn new(feature_range: (f64, f64), clip: bool) -> PyResult<Self> {
            let (lo, hi) = feature_range;
            let model = MinMaxScaler::new()
                .with_feature_range(lo, hi)
                .map_err(to_py_err)?
                .with_clip(clip);
            Ok(Self::wrap(model))
        }

        #[getter]
        fn n_samples_seen_(&self, py: Python<'_>) -> Option<usize> {
            self.inner
                .read(py, |m| m.get_n_features().map(|_| m.get_n_samples_seen()))
        }
    }
);
