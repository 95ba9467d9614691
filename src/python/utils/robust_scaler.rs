//! Native `RobustScaler`.

use super::native_scaler;
use crate::python::to_py_err;
use crate::utils::RobustScaler;
use pyo3::prelude::*;

native_scaler!(
    PyRobustScaler(RobustScaler, "RobustScaler"),
    inverse_transform = "`x * scale_ + center_`.",
    vectors {
        /// `None` without centring, as in scikit-learn.
        center_ => |m| m.get_center().filter(|_| m.get_with_centering()).cloned(),
        /// `None` without scaling, as in scikit-learn.
        scale_ => |m| m.get_scale().filter(|_| m.get_with_scaling()).cloned(),
    },
    {
        /// scikit-learn's quantile rule (`0 <= q_min <= q_max <= 100`, equal bounds allowed).
        #[new]
        #[pyo3(signature = (*, with_centering, with_scaling, quantile_range))]
        fn new(
            with_centering: bool,
            with_scaling: bool,
            quantile_range: (f64, f64),
        ) -> PyResult<Self> {
            let (q_min, q_max) = quantile_range;
            let model = RobustScaler::new()
                .with_centering(with_centering)
                .with_scaling(with_scaling)
                .with_quantile_range_inclusive(q_min, q_max)
                .map_err(to_py_err)?;
            Ok(Self::wrap(model))
        }
    }
);
