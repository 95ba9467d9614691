//! Native clustering metrics.

use crate::metrics::checked::clustering::{self as clu, AverageMethod, SilhouetteMetric};
use crate::python::labels::{label_pair, maybe_detach, with_label_pair, with_labels};
use crate::python::{f64_array, to_py_err};
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyModule;

pair_scores!(clu(labels_true, labels_pred): adjusted_rand_score, mutual_info_score, fowlkes_mallows_score);
pair_scores!(average_method: normalized_mutual_info_score, adjusted_mutual_info_score);
pair_scores!(data: calinski_harabasz_score, davies_bouldin_score);

#[pyfunction]
#[pyo3(signature = (labels_true, labels_pred, beta = 1.0))]
fn homogeneity_completeness_v_measure(
    py: Python<'_>,
    labels_true: &Bound<'_, PyAny>,
    labels_pred: &Bound<'_, PyAny>,
    beta: f64,
) -> PyResult<(f64, f64, f64)> {
    let pair = label_pair(labels_true, labels_pred, ("labels_true", "labels_pred"))?;
    with_label_pair!(pair, |t, p, T| maybe_detach(py, t.len(), || {
        clu::homogeneity_completeness_v_measure(t, p, beta)
    }))
    .map_err(to_py_err)
}

fn metric_of(metric: &str, p: f64) -> PyResult<SilhouetteMetric> {
    SilhouetteMetric::parse(metric, p).map_err(to_py_err)
}

#[pyfunction]
#[pyo3(signature = (x, labels, metric = "euclidean", p = 2.0))]
fn silhouette_samples<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    labels: &Bound<'py, PyAny>,
    metric: &str,
    p: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let metric = metric_of(metric, p)?;
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    let y = crate::python::labels::labels(labels, "labels")?;
    let s = with_labels!(y, |l, T| crate::python::parallel::detach(py, || {
        clu::silhouette_samples(xv, l, metric)
    }))
    .map_err(to_py_err)?;
    Ok(s.into_pyarray(py))
}

#[pyfunction]
#[pyo3(signature = (x, labels, metric = "euclidean", p = 2.0))]
fn silhouette_score(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    metric: &str,
    p: f64,
) -> PyResult<f64> {
    let metric = metric_of(metric, p)?;
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    let y = crate::python::labels::labels(labels, "labels")?;
    with_labels!(y, |l, T| crate::python::parallel::detach(py, || {
        clu::silhouette_score(xv, l, metric)
    }))
    .map_err(to_py_err)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; adjusted_rand_score, mutual_info_score, fowlkes_mallows_score,
        normalized_mutual_info_score, adjusted_mutual_info_score,
        homogeneity_completeness_v_measure, silhouette_samples, silhouette_score,
        calinski_harabasz_score, davies_bouldin_score);
    Ok(())
}
