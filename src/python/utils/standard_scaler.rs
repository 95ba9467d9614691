//! Native `StandardScaler`.

use super::native_scaler;
use crate::utils::StandardScaler;
use pyo3::prelude::*;

native_scaler!(
    PyStandardScaler(StandardScaler, "StandardScaler"),
    partial_fit = "Merge the statistics of one more batch.",
    inverse_transform = "`x * scale_ + mean_`.",
    vectors {
        /// `None` without centring or scaling, as in scikit-learn.
        mean_ => |m| {
            let used = m.get_with_mean() || m.get_with_std();
            m.get_mean().filter(|_| used).cloned()
        },
        /// `None` unless `with_std`.
        var_ => |m| m.get_var().filter(|_| m.get_with_std()).cloned(),
        /// `None` unless `with_std`.
        scale_ => |m| m.get_scale().filter(|_| m.get_with_std()).cloned(),
    },
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

        #[getter]
        fn n_samples_seen_(&self, py: Python<'_>) -> Option<usize> {
            self.inner
                .read(py, |m| m.get_n_features().map(|_| m.get_n_samples_seen()))
        }
    }
);
