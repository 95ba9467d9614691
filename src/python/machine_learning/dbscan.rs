//! Native `DBSCAN`.

use crate::machine_learning::dbscan::Points;
use crate::machine_learning::DBSCAN;
use crate::math::distance::Metric;
use crate::python::convert::GraphParts;
use crate::python::model::{index_array, native_estimator};
use crate::python::{f64_array, to_py_err};
use ndarray::{Ix1, Ix2};
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
    {
        /// scikit-learn's `fit`: `X` the features, or with `precomputed` an `n x n` distance
        /// matrix; `sample_weight` (one finite weight per sample) makes a point core when its
        /// neighbourhood's weights sum to at least `min_samples`.
        #[pyo3(signature = (x, *, precomputed, sample_weight = None))]
        fn fit_with<'py>(
            &self,
            py: Python<'py>,
            x: &Bound<'py, PyAny>,
            precomputed: bool,
            sample_weight: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<()> {
            let x = f64_array::<Ix2>(x, "X")?;
            let w = sample_weight
                .map(|w| f64_array::<Ix1>(w, "sample_weight"))
                .transpose()?;
            let points = if precomputed { Points::Distances } else { Points::Features };
            let (xv, wv) = (x.view(), w.as_ref().map(|w| w.view()));
            self.inner
                .write(py, |m| m.fit_with(&xv, points, wv).map(|_| ()))
                .map_err(to_py_err)
        }

        /// scikit-learn's `fit` on a sparse distance graph in CSR form (`data`, column
        /// `indices`, row pointer `indptr`): a point's neighbours are its row's stored entries
        /// at most `eps`, one per entry (an entry not stored is no neighbour). Sets labels and
        /// core samples; the core points' rows (`components_`) are the caller's to take.
        #[pyo3(signature = (data, indices, indptr, *, sample_weight = None))]
        fn fit_graph<'py>(
            &self,
            py: Python<'py>,
            data: &Bound<'py, PyAny>,
            indices: numpy::PyReadonlyArray1<'py, i64>,
            indptr: numpy::PyReadonlyArray1<'py, i64>,
            sample_weight: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<()> {
            let parts = GraphParts::from_py(data, &indices, &indptr)?;
            let w = sample_weight
                .map(|w| f64_array::<Ix1>(w, "sample_weight"))
                .transpose()?;
            let wv = w.as_ref().map(|w| w.view());
            self.inner
                .write(py, |m| m.fit_graph(&parts.graph()?, wv).map(|_| ()))
                .map_err(to_py_err)
        }

        /// `fit_with` on features at `eps` and at `inner_eps` (`0 <= inner_eps <= eps`) from
        /// one neighbourhood search; keeps the fit at `eps` and returns whether the fit at
        /// `inner_eps` has the same core samples and labels.
        #[pyo3(signature = (x, *, inner_eps, sample_weight = None))]
        fn fit_band<'py>(
            &self,
            py: Python<'py>,
            x: &Bound<'py, PyAny>,
            inner_eps: f64,
            sample_weight: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<bool> {
            let x = f64_array::<Ix2>(x, "X")?;
            let w = sample_weight
                .map(|w| f64_array::<Ix1>(w, "sample_weight"))
                .transpose()?;
            let (xv, wv) = (x.view(), w.as_ref().map(|w| w.view()));
            self.inner
                .write(py, |m| m.fit_band(&xv, inner_eps, wv))
                .map_err(to_py_err)
        }
    }
}
