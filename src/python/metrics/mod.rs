//! `rustyml._native.metrics`: regression, classification and clustering metrics. Label
//! arrays arrive as int64 or float64 (the Python wrappers encode anything else), see
//! [`crate::python::labels`].

use pyo3::prelude::*;
use pyo3::types::PyModule;

/// Native metric functions of one shape, each forwarding to the checked metric of its name:
/// `module(a, b): names` scores of two label arrays (Python parameters `a`, `b`);
/// `average_method: names` the same with scikit-learn's `average_method`; `data: names` scores
/// of a data matrix `X` and its cluster labels.
macro_rules! pair_scores {
    ($module:ident($a:ident, $b:ident): $($name:ident),* $(,)?) => {
        $(
            #[pyfunction]
            fn $name(py: Python<'_>, $a: &Bound<'_, PyAny>, $b: &Bound<'_, PyAny>) -> PyResult<f64> {
                let pair = label_pair($a, $b, (stringify!($a), stringify!($b)))?;
                with_label_pair!(pair, |t, p, T| maybe_detach(py, t.len(), || $module::$name(t, p)))
                    .map_err(to_py_err)
            }
        )*
    };
    (average_method: $($name:ident),* $(,)?) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (labels_true, labels_pred, average_method = "arithmetic"))]
            fn $name(
                py: Python<'_>,
                labels_true: &Bound<'_, PyAny>,
                labels_pred: &Bound<'_, PyAny>,
                average_method: &str,
            ) -> PyResult<f64> {
                let method = AverageMethod::parse(average_method).map_err(to_py_err)?;
                let pair = label_pair(labels_true, labels_pred, ("labels_true", "labels_pred"))?;
                with_label_pair!(pair, |t, p, T| maybe_detach(py, t.len(), || {
                    clu::$name(t, p, method)
                }))
                .map_err(to_py_err)
            }
        )*
    };
    (data: $($name:ident),* $(,)?) => {
        $(
            #[pyfunction]
            fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, labels: &Bound<'_, PyAny>) -> PyResult<f64> {
                let x = f64_array::<Ix2>(x, "X")?;
                let xv = x.view();
                let y = crate::python::labels::labels(labels, "labels")?;
                with_labels!(y, |l, T| maybe_detach(py, xv.len(), || clu::$name(xv, l)))
                    .map_err(to_py_err)
            }
        )*
    };
}

/// Adds the `#[pyfunction]`s named to the module `m` (in a `register` returning `PyResult`).
macro_rules! add_functions {
    ($m:ident; $($name:ident),+ $(,)?) => {
        $($m.add_function(wrap_pyfunction!($name, $m)?)?;)+
    };
}

mod classification;
mod clustering;
mod confusion_matrix;
mod ranking;
mod regression;
mod weighted_counts;

/// Conversion of one native label type from a Python scalar (`pos_label`).
pub(crate) trait FromPyLabel: Sized {
    fn from_py(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self>;
}

/// The optional `labels` argument in the native label type `T` of the arrays it goes with.
fn wanted_labels<T: numpy::Element + Copy>(
    labels: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Vec<T>>> {
    use numpy::PyArrayMethods;
    labels
        .map(|l| {
            Ok(l.cast::<numpy::PyArray1<T>>()?
                .readonly()
                .as_array()
                .to_vec())
        })
        .transpose()
}

impl FromPyLabel for i64 {
    fn from_py(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        crate::python::labels::label_i64(obj, name)
    }
}

impl FromPyLabel for f64 {
    fn from_py(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        crate::python::labels::label_f64(obj, name)
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    regression::register(m)?;
    classification::register(m)?;
    clustering::register(m)?;
    ranking::register(m)?;
    weighted_counts::register(m)?;
    m.add_class::<confusion_matrix::PyConfusionMatrix>()?;
    Ok(())
}
