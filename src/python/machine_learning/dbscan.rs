//! Native `DBSCAN`.

use crate::machine_learning::DBSCAN;
use crate::math::distance::Metric;
use crate::python::model::{index_array, native_estimator};
use crate::python::to_py_err;
use pyo3::prelude::*;

native_estimator! {
    PyDBSCAN(DBSCAN, "DBSCAN");
    /// `metric`: `"euclidean"`, `"manhattan"` (`"cityblock"`, `"l1"`), `"minkowski"` with `p`
    /// (None is 2) or `"sqeuclidean"`; an unknown name is a `ValueError` here, before any work.
    new(eps: f64, min_samples: usize, metric: &str, p: Option<f64>) {
        let metric = Metric::parse(metric, p.unwrap_or(2.0)).map_err(to_py_err)?;
        Ok(DBSCAN::builder(eps, min_samples).with_engine_metric(metric))
    }
    fit(x) => |m, x| m.fit_checked(&x).map(|_| ());
    fitted labels_ => |m| m.labels().map(|l| l.mapv(|v| v as i64));
    fitted core_sample_indices_ => |m| m.core_sample_indices().map(index_array);
    fitted components_ => |m| m.components().cloned();
}
