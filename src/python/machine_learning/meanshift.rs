//! Native `MeanShift` and `estimate_bandwidth`.

use crate::machine_learning::{meanshift, MeanShift};
use crate::python::model::native_estimator;
use crate::python::{f64_array, to_py_err};
use ndarray::Ix2;
use pyo3::prelude::*;

native_estimator! {
    PyMeanShift(MeanShift, "MeanShift");
    new(
        bandwidth: Option<f64>,
        seeds: Option<&Bound<'_, PyAny>>,
        bin_seeding: bool,
        min_bin_freq: usize,
        cluster_all: bool,
        max_iter: usize,
    ) {
        let seeds = match seeds {
            Some(s) if !s.is_none() => Some(f64_array::<Ix2>(s, "seeds")?.view().to_owned()),
            _ => None,
        };
        let mut model = MeanShift::builder(bandwidth)
            .with_seeds(seeds)
            .with_bin_seeding(bin_seeding)
            .with_min_bin_freq(min_bin_freq)
            .with_cluster_all(cluster_all);
        model.max_iter = max_iter;
        Ok(model)
    }
    fit(x) => |m, x| m.fit_checked(&x).map(|_| ());
    read predict => |m, x| m.predict_checked(&x);
    fitted cluster_centers_ => |m| m.cluster_centers().cloned();
    fitted labels_ => |m| m.labels().map(|l| l.mapv(|v| v as i64));
    fitted n_iter_ => |m| m.n_iter();
    fitted bandwidth_ => |m| m.fitted_bandwidth();
}

/// scikit-learn's `estimate_bandwidth` on all samples.
#[pyfunction]
#[pyo3(signature = (x, quantile = 0.3))]
pub(crate) fn estimate_bandwidth(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    quantile: f64,
) -> PyResult<f64> {
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    crate::python::parallel::detach(py, || meanshift::estimate_bandwidth_all(&xv, quantile))
        .map_err(to_py_err)
}
