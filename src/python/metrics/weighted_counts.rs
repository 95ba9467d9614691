//! Weighted label-pair counts (`sample_weight`) over int64 / float64 label arrays, computed
//! with the GIL released on large inputs.

use crate::metrics::checked::weighted_counts as wc;
use crate::python::labels::{label_pair, maybe_detach, with_label_pair};
use crate::python::{f64_array, to_py_err};
use ndarray::{Array1, Ix1, Ix2};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyo3::IntoPyObjectExt;

/// `(classes, tp, pred, true)`: the sorted union of the labels and, per class, the summed
/// weights of its true positives, its predictions and its true samples (float64, each summed
/// in sample order as `np.bincount(codes, weights)` does).
#[pyfunction]
fn weighted_class_counts<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_pred: &Bound<'py, PyAny>,
    sample_weight: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let w = f64_array::<Ix1>(sample_weight, "sample_weight")?;
    let wv = w.view();
    let pair = label_pair(y_true, y_pred, ("y_true", "y_pred"))?;
    with_label_pair!(pair, |t, p, T| {
        let c =
            maybe_detach(py, t.len(), || wc::weighted_class_counts(t, p, wv)).map_err(to_py_err)?;
        (
            Array1::from(c.classes).into_pyarray(py),
            c.tp.into_pyarray(py),
            c.pred.into_pyarray(py),
            c.truth.into_pyarray(py),
        )
            .into_bound_py_any(py)
    })
}

/// `(classes, matrix)`: the float64 weighted confusion matrix over the sorted union of the
/// labels, each cell summed in sample order.
#[pyfunction]
fn weighted_confusion_matrix<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_pred: &Bound<'py, PyAny>,
    sample_weight: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let w = f64_array::<Ix1>(sample_weight, "sample_weight")?;
    let wv = w.view();
    let pair = label_pair(y_true, y_pred, ("y_true", "y_pred"))?;
    with_label_pair!(pair, |t, p, T| {
        let (classes, cm) = maybe_detach(py, t.len(), || wc::weighted_confusion_matrix(t, p, wv))
            .map_err(to_py_err)?;
        (Array1::from(classes).into_pyarray(py), cm.into_pyarray(py)).into_bound_py_any(py)
    })
}

/// `(tp, pred, true, exact, row_tp, row_pred, row_true)` of two multilabel indicator
/// matrices (float64 arrays, samples x labels): per label the summed weights of its true
/// positives, predictions and true samples, the weight of the rows predicted exactly (each
/// sample weighs 1 without `sample_weight`), and per sample the unweighted counts.
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, sample_weight = None))]
fn multilabel_counts<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_pred: &Bound<'py, PyAny>,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let t = f64_array::<Ix2>(y_true, "y_true")?;
    let p = f64_array::<Ix2>(y_pred, "y_pred")?;
    let w = sample_weight
        .map(|w| f64_array::<Ix1>(w, "sample_weight"))
        .transpose()?;
    let (tv, pv) = (t.view(), p.view());
    let wv = w.as_ref().map(|w| w.view());
    let c = maybe_detach(py, tv.len(), || wc::multilabel_counts(tv, pv, wv)).map_err(to_py_err)?;
    (
        c.tp.into_pyarray(py),
        c.pred.into_pyarray(py),
        c.truth.into_pyarray(py),
        c.exact,
        c.row_tp.into_pyarray(py),
        c.row_pred.into_pyarray(py),
        c.row_truth.into_pyarray(py),
    )
        .into_bound_py_any(py)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; weighted_class_counts, weighted_confusion_matrix, multilabel_counts);
    Ok(())
}
