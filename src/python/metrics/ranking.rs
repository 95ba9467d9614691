//! Native ranking metrics (curves, average precision, top-k accuracy) and Cohen's kappa.

use super::{wanted_labels, FromPyLabel};
use crate::metrics::checked::{self, KappaWeights};
use crate::python::labels::{label_pair, labels, maybe_detach, with_label_pair, with_labels};
use crate::python::{f64_array, to_py_err};
use ndarray::{Array1, Ix1, Ix2};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyo3::IntoPyObjectExt;

type Curve = (Array1<f64>, Array1<f64>, Array1<f64>);

/// One binary curve (ROC when `roc`, else precision-recall) over native labels, of counts
/// or of `sample_weight`; `pos_label` None follows scikit-learn's {0, 1} / {-1, 1} rule.
fn curve<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_score: &Bound<'py, PyAny>,
    pos_label: Option<&Bound<'py, PyAny>>,
    drop_intermediate: bool,
    sample_weight: Option<&Bound<'py, PyAny>>,
    roc: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let y = labels(y_true, "y_true")?;
    let score = f64_array::<Ix1>(y_score, "y_score")?;
    let weight = sample_weight
        .map(|w| f64_array::<Ix1>(w, "sample_weight"))
        .transpose()?;
    let (s, w) = (score.view(), weight.as_ref().map(|w| w.view()));
    let (a, b, c): Curve = with_labels!(y, |t, T| {
        let pos: Option<T> = pos_label
            .map(|p| <T as FromPyLabel>::from_py(p, "pos_label"))
            .transpose()?;
        maybe_detach(py, t.len(), || {
            if roc {
                checked::roc_curve(t, s, pos.as_ref(), drop_intermediate, w)
            } else {
                checked::precision_recall_curve(t, s, pos.as_ref(), drop_intermediate, w)
            }
        })
        .map_err(to_py_err)
    })?;
    (a.into_pyarray(py), b.into_pyarray(py), c.into_pyarray(py)).into_bound_py_any(py)
}

/// The two binary curves' functions: the same arguments, handed to [`curve`]; each keeps
/// scikit-learn's default for `drop_intermediate`.
macro_rules! curve_functions {
    ($($(#[doc = $doc:literal])* $name:ident(drop_intermediate = $default:tt), roc = $roc:expr;)+) => {
        $(
            $(#[doc = $doc])*
            #[pyfunction]
            #[pyo3(signature = (
                y_true, y_score, pos_label = None, drop_intermediate = $default, sample_weight = None
            ))]
            fn $name<'py>(
                py: Python<'py>,
                y_true: &Bound<'py, PyAny>,
                y_score: &Bound<'py, PyAny>,
                pos_label: Option<&Bound<'py, PyAny>>,
                drop_intermediate: bool,
                sample_weight: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyAny>> {
                curve(py, y_true, y_score, pos_label, drop_intermediate, sample_weight, $roc)
            }
        )+
    };
}

curve_functions! {
    /// `(fpr, tpr, thresholds)`.
    roc_curve(drop_intermediate = true), roc = true;
    /// `(precision, recall, thresholds)`.
    precision_recall_curve(drop_intermediate = false), roc = false;
}

/// Binary average precision.
#[pyfunction]
fn average_precision_score(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    pos_label: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let y = labels(y_true, "y_true")?;
    let score = f64_array::<Ix1>(y_score, "y_score")?;
    let s = score.view();
    with_labels!(y, |t, T| {
        let pos = <T as FromPyLabel>::from_py(pos_label, "pos_label")?;
        maybe_detach(py, t.len(), || checked::average_precision_score(t, s, &pos))
            .map_err(to_py_err)
    })
}

/// Top-k accuracy of class codes (int64 column indices of `y_score`).
#[pyfunction]
fn top_k_accuracy_score(
    py: Python<'_>,
    y_true: PyReadonlyArray1<'_, i64>,
    y_score: &Bound<'_, PyAny>,
    k: usize,
    normalize: bool,
) -> PyResult<f64> {
    let codes: Vec<usize> = y_true
        .as_array()
        .iter()
        .map(|&c| usize::try_from(c))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err("y_true codes must be non-negative"))?;
    let codes = Array1::from(codes);
    let score = f64_array::<Ix2>(y_score, "y_score")?;
    let s = score.view();
    maybe_detach(py, codes.len(), || {
        checked::top_k_accuracy_score(codes.view(), s, k, normalize)
    })
    .map_err(to_py_err)
}

/// Cohen's kappa; `labels` in the native dtype of the pair, `weights` None / 'linear' /
/// 'quadratic'.
#[pyfunction]
#[pyo3(signature = (y1, y2, labels = None, weights = None))]
fn cohen_kappa_score(
    py: Python<'_>,
    y1: &Bound<'_, PyAny>,
    y2: &Bound<'_, PyAny>,
    labels: Option<&Bound<'_, PyAny>>,
    weights: Option<&str>,
) -> PyResult<f64> {
    let weights = KappaWeights::parse(weights).map_err(to_py_err)?;
    let pair = label_pair(y1, y2, ("y1", "y2"))?;
    with_label_pair!(pair, |t, p, T| {
        let wanted: Option<Vec<T>> = wanted_labels(labels)?;
        maybe_detach(py, t.len(), || {
            checked::cohen_kappa_score(t, p, wanted.as_deref(), weights)
        })
        .map_err(to_py_err)
    })
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; roc_curve, precision_recall_curve, average_precision_score,
        top_k_accuracy_score, cohen_kappa_score);
    Ok(())
}
