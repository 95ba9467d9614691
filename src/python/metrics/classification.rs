//! Native classification metrics over int64 / float64 label arrays.

use super::{wanted_labels, FromPyLabel};
use crate::metrics::checked::classification::{
    self as cls, Average, ConfusionNormalize, MultiClass, Probabilities, ZeroDivision,
};
use crate::python::labels::{label_pair, labels, maybe_detach, with_label_pair, with_labels};
use crate::python::{f64_array, to_py_err};
use ndarray::{Array1, Ix1, Ix2, IxDyn};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyo3::IntoPyObjectExt;

pair_scores!(cls(y_true, y_pred): accuracy_score, matthews_corrcoef);

/// `(precision, recall, fscore)` floats for an `average`, or `(labels, precision, recall,
/// fscore, support)` arrays for `average=None`.
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, beta, average, pos_label, zero_division))]
fn precision_recall_fscore_support<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_pred: &Bound<'py, PyAny>,
    beta: f64,
    average: Option<&str>,
    pos_label: &Bound<'py, PyAny>,
    zero_division: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let zd = ZeroDivision::from_value(zero_division).map_err(to_py_err)?;
    let average = average.map(Average::parse).transpose().map_err(to_py_err)?;
    let pair = label_pair(y_true, y_pred, ("y_true", "y_pred"))?;
    with_label_pair!(pair, |t, p, T| match average {
        Some(avg) => {
            let pos = <T as FromPyLabel>::from_py(pos_label, "pos_label")?;
            let r = maybe_detach(py, t.len(), || {
                cls::precision_recall_fscore(t, p, beta, avg, &pos, zd)
            })
            .map_err(to_py_err)?;
            r.into_bound_py_any(py)
        }
        None => {
            let r = maybe_detach(py, t.len(), || {
                cls::precision_recall_fscore_support(t, p, beta, zd)
            })
            .map_err(to_py_err)?;
            let support: Vec<i64> = r.support.iter().map(|&s| s as i64).collect();
            (
                Array1::from(r.labels).into_pyarray(py),
                Array1::from(r.precision).into_pyarray(py),
                Array1::from(r.recall).into_pyarray(py),
                Array1::from(r.fscore).into_pyarray(py),
                Array1::from(support).into_pyarray(py),
            )
                .into_bound_py_any(py)
        }
    })
}

/// `(labels, matrix)`: counts as int64, or float64 with `normalize`.
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, labels = None, normalize = None))]
fn confusion_matrix<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_pred: &Bound<'py, PyAny>,
    labels: Option<&Bound<'py, PyAny>>,
    normalize: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let how = normalize
        .map(ConfusionNormalize::parse)
        .transpose()
        .map_err(to_py_err)?;
    let pair = label_pair(y_true, y_pred, ("y_true", "y_pred"))?;
    with_label_pair!(pair, |t, p, T| {
        let wanted: Option<Vec<T>> = wanted_labels(labels)?;
        let (classes, cm) = maybe_detach(py, t.len(), || {
            cls::confusion_matrix(t, p, wanted.as_deref())
        })
        .map_err(to_py_err)?;
        let classes = Array1::from(classes).into_pyarray(py);
        match how {
            None => (classes, cm.mapv(|v| v as i64).into_pyarray(py)).into_bound_py_any(py),
            Some(h) => (
                classes,
                cls::normalize_confusion_matrix(cm.view(), h).into_pyarray(py),
            )
                .into_bound_py_any(py),
        }
    })
}

#[pyfunction]
#[pyo3(signature = (y_true, y_pred, adjusted = false))]
fn balanced_accuracy_score(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_pred: &Bound<'_, PyAny>,
    adjusted: bool,
) -> PyResult<f64> {
    let pair = label_pair(y_true, y_pred, ("y_true", "y_pred"))?;
    with_label_pair!(pair, |t, p, T| maybe_detach(py, t.len(), || {
        cls::balanced_accuracy_score(t, p, adjusted)
    }))
    .map_err(to_py_err)
}

/// ROC AUC: a 1-D `y_score` is binary; a 2-D one is multiclass (`multi_class` 'ovr'/'ovo').
#[pyfunction]
#[pyo3(signature = (y_true, y_score, average = "macro", multi_class = "raise"))]
fn roc_auc_score(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    average: &str,
    multi_class: &str,
) -> PyResult<f64> {
    let y = labels(y_true, "y_true")?;
    let score = f64_array::<IxDyn>(y_score, "y_score")?;
    let sv = score.view();
    match sv.ndim() {
        1 => {
            let s = sv.into_dimensionality::<Ix1>().expect("1-D");
            with_labels!(y, |t, T| maybe_detach(py, t.len(), || cls::roc_auc_score(
                t, s
            )))
            .map_err(to_py_err)
        }
        2 => {
            let s = sv.into_dimensionality::<Ix2>().expect("2-D");
            if multi_class == "raise" {
                return Err(PyValueError::new_err(
                    "multi_class must be in ('ovo', 'ovr'): a 2-D y_score is scored one-vs-rest or one-vs-one",
                ));
            }
            let mc = MultiClass::parse(multi_class).map_err(to_py_err)?;
            let avg = Average::parse(average).map_err(to_py_err)?;
            with_labels!(y, |t, T| maybe_detach(py, t.len(), || {
                cls::roc_auc_score_multiclass(t, s, mc, avg)
            }))
            .map_err(to_py_err)
        }
        d => Err(PyValueError::new_err(format!(
            "y_score must be 1- or 2-dimensional, got {d} dimensions"
        ))),
    }
}

/// Mean cross-entropy; `y_proba` 1-D (positive class) or 2-D (one column per class).
#[pyfunction]
#[pyo3(signature = (y_true, y_proba, labels = None))]
fn log_loss(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_proba: &Bound<'_, PyAny>,
    labels: Option<&Bound<'_, PyAny>>,
) -> PyResult<f64> {
    let y = crate::python::labels::labels(y_true, "y_true")?;
    let proba = f64_array::<IxDyn>(y_proba, "y_proba")?;
    let pv = proba.view();
    let probs = match pv.ndim() {
        1 => Probabilities::Positive(pv.into_dimensionality::<Ix1>().expect("1-D")),
        2 => Probabilities::PerClass(pv.into_dimensionality::<Ix2>().expect("2-D")),
        d => {
            return Err(PyValueError::new_err(format!(
                "y_proba must be 1- or 2-dimensional, got {d} dimensions"
            )))
        }
    };
    with_labels!(y, |t, T| {
        let wanted: Option<Vec<T>> = wanted_labels(labels)?;
        maybe_detach(py, t.len(), || cls::log_loss(t, probs, wanted.as_deref())).map_err(to_py_err)
    })
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; accuracy_score, precision_recall_fscore_support, confusion_matrix,
        balanced_accuracy_score, matthews_corrcoef, roc_auc_score, log_loss);
    Ok(())
}
