//! The replica of scikit-learn's `lbfgs` logistic regression behind the door's
//! `LogisticRegression` (see the crate's `machine_learning::logistic_lbfgs`).

use crate::error::Error;
use crate::machine_learning::logistic_lbfgs::{fit_sklearn_lbfgs, LbfgsFitSettings};
use crate::math::lbfgsb::LbfgsbStatus;
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `(coef, intercept, n_iter, status, probe_gap)` of a fit.
type LbfgsArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    usize,
    &'static str,
    f64,
);

/// Fits scikit-learn's `LogisticRegression(solver="lbfgs")` on the dense C-ordered `x`
/// and class codes `y` (`0..n_classes`), `sample_weight` the product of sample and class
/// weights or `None`, `c` infinite for no penalty. Returns `(coef, intercept, n_iter,
/// status, probe_gap)` in scikit-learn's layout, `status` one of `"converged"`,
/// `"max_iter"`, `"max_fun"`, `"line_search"` (SciPy's abnormal end) and `"fragile"` (a
/// decision within rounding, or a probe run with rounding-sized moves that ended elsewhere
/// or more than `max_probe_gap` away: SciPy's run may differ).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, sample_weight, *, n_classes, c, fit_intercept, max_iter, tol, max_probe_gap, start_coef=None, start_intercept=None))]
pub(crate) fn fit_sklearn_logistic_lbfgs<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, i64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_classes: usize,
    c: f64,
    fit_intercept: bool,
    max_iter: usize,
    tol: f64,
    max_probe_gap: f64,
    start_coef: Option<PyReadonlyArray2<'py, f64>>,
    start_intercept: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<LbfgsArrays<'py>> {
    let codes: Vec<usize> = y
        .as_array()
        .iter()
        .map(|&v| usize::try_from(v))
        .collect::<Result<_, _>>()
        .map_err(|_| to_py_err(Error::invalid_input("negative class code")))?;
    let weights: Option<Vec<f64>> = sample_weight.map(|w| w.as_array().to_vec());
    let x = x.as_array();
    let settings = LbfgsFitSettings {
        c,
        fit_intercept,
        max_iter,
        tol,
        max_probe_gap,
        start: start_coef.map(|coef| {
            let intercept = start_intercept.map_or_else(
                || ndarray::Array1::zeros(coef.as_array().nrows()),
                |b| b.as_array().to_owned(),
            );
            (coef.as_array().to_owned(), intercept)
        }),
    };
    let fit = crate::python::parallel::detach(py, || {
        fit_sklearn_lbfgs(x, &codes, n_classes, weights.as_deref(), &settings)
    })
    .map_err(to_py_err)?;
    let status = match fit.status {
        LbfgsbStatus::ConvergedGradient | LbfgsbStatus::ConvergedReduction => "converged",
        LbfgsbStatus::IterationLimit => "max_iter",
        LbfgsbStatus::EvaluationLimit => "max_fun",
        LbfgsbStatus::LineSearchFailed => "line_search",
        LbfgsbStatus::Fragile => "fragile",
    };
    Ok((
        fit.coef.into_pyarray(py),
        fit.intercept.into_pyarray(py),
        fit.n_iter,
        status,
        fit.probe_gap,
    ))
}
