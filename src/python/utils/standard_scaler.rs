//! Native `StandardScaler`.

use super::{native_scaler, read_vector};
use crate::utils::StandardScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

native_scaler!(
    PyStandardScaler(StandardScaler, "StandardScaler"),
    partial_fit = "Merge the statistics of one more batch.",
    inverse_transform = "`x * scale_ + mean_`.",
    {
        #[new]
        #[pyo3(signature = (*, with_mean, with_std))]
        fn new(with_mean: bool, with_std: bool) -> Self {
            Self::wrap(
                StandardScaler::new()
                    .with_mean(with_mean)
                    .with_std(with_std),
            )
        }

        /// `None` without centring or scaling, as in scikit-learn.
        #[getter]
        fn mean_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| {
                let used = m.get_with_mean() || m.get_with_std();
                m.get_mean().filter(|_| used).cloned()
            })
        }

        /// `None` unless `with_std`.
        #[getter]
        fn var_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| {
                m.get_var().filter(|_| m.get_with_std()).cloned()
            })
        }

        /// `None` unless `with_std`.
        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| {
                m.get_scale().filter(|_| m.get_with_std()).cloned()
            })
        }

        #[getter]
        fn n_samples_seen_(&self, py: Python<'_>) -> Option<usize> {
            self.inner
                .read(py, |m| m.get_n_features().map(|_| m.get_n_samples_seen()))
        }
    }
);
