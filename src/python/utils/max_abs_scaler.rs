//! Native `MaxAbsScaler`.

use super::native_scaler;
use crate::utils::MaxAbsScaler;
use pyo3::prelude::*;

native_scaler!(
    PyMaxAbsScaler(MaxAbsScaler, "MaxAbsScaler"),
    partial_fit = "Raise the fitted maxima with one more batch.",
    inverse_transform = "`x * scale_`.",
    vectors {
        max_abs_ => |m| m.get_max_abs().cloned(),
        scale_ => |m| m.get_scale().cloned(),
    },
    {
        #[new]
        fn new() -> Self {
            Self::wrap(MaxAbsScaler::new())
        }

        #[getter]
        fn n_samples_seen_(&self, py: Python<'_>) -> Option<usize> {
            self.inner
                .read(py, |m| m.get_n_features().map(|_| m.get_n_samples_seen()))
        }
    }
);
