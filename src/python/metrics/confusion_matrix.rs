//! Native binary `ConfusionMatrix`.

use crate::metrics::ConfusionMatrix;
use crate::python::{f64_array, to_py_err};
use ndarray::Ix1;
use pyo3::prelude::*;

/// Counts of a binary classifier (values `>= 0.5` are positive) and the metrics derived
/// from them; 0/0 ratios are 0 (specificity too, unlike the Rust type's 1: scikit-learn's
/// `zero_division` default).
#[pyclass(name = "ConfusionMatrix", module = "rustyml._native.metrics", frozen)]
pub(crate) struct PyConfusionMatrix {
    inner: ConfusionMatrix,
}

#[pymethods]
impl PyConfusionMatrix {
    #[new]
    fn new(y_true: &Bound<'_, PyAny>, y_pred: &Bound<'_, PyAny>) -> PyResult<Self> {
        let t = f64_array::<Ix1>(y_true, "y_true")?;
        let p = f64_array::<Ix1>(y_pred, "y_pred")?;
        Ok(Self {
            inner: ConfusionMatrix::from_thresholded(t.view(), p.view(), 0.5).map_err(to_py_err)?,
        })
    }

    /// From counts directly.
    #[staticmethod]
    #[pyo3(signature = (tp, fp, tn, fn_))]
    fn from_counts(tp: usize, fp: usize, tn: usize, fn_: usize) -> PyResult<Self> {
        Ok(Self {
            inner: ConfusionMatrix::from_counts(tp, fp, tn, fn_).map_err(to_py_err)?,
        })
    }

    #[getter]
    fn tp(&self) -> usize {
        self.inner.get_counts().0
    }
    #[getter]
    fn fp(&self) -> usize {
        self.inner.get_counts().1
    }
    #[getter]
    fn tn(&self) -> usize {
        self.inner.get_counts().2
    }
    #[getter(r#fn)]
    fn fn_(&self) -> usize {
        self.inner.get_counts().3
    }

    /// `(tp, fp, tn, fn)`.
    fn get_counts(&self) -> (usize, usize, usize, usize) {
        self.inner.get_counts()
    }
    fn accuracy(&self) -> f64 {
        self.inner.accuracy()
    }
    fn error_rate(&self) -> f64 {
        self.inner.error_rate()
    }
    fn precision(&self) -> f64 {
        self.inner.precision()
    }
    fn recall(&self) -> f64 {
        self.inner.recall()
    }
    fn specificity(&self) -> f64 {
        let (_, fp, tn, _) = self.inner.get_counts();
        if tn + fp == 0 {
            0.0
        } else {
            self.inner.specificity()
        }
    }
    fn f1_score(&self) -> f64 {
        self.inner.f1_score()
    }
    fn balanced_accuracy(&self) -> f64 {
        (self.inner.recall() + self.specificity()) / 2.0
    }
    fn mcc(&self) -> f64 {
        self.inner.mcc()
    }
    /// The counts as a table and the derived metrics.
    fn summary(&self) -> String {
        self.inner.summary_with_specificity(self.specificity())
    }
    fn __str__(&self) -> String {
        self.summary()
    }
    fn __repr__(&self) -> String {
        let (tp, fp, tn, fn_) = self.inner.get_counts();
        format!("ConfusionMatrix(tp={tp}, fp={fp}, tn={tn}, fn={fn_})")
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .map(|o| o.get().inner == self.inner)
            .unwrap_or(false)
    }
}
