//! The SAG/SAGA replica behind the door's `LogisticRegression` (see the crate's
//! `machine_learning::sklearn_sag`).

use crate::error::Error;
use crate::machine_learning::sklearn_sag::{train_sag, SagLoss, SagRows, SagSettings};
use crate::python::convert::{csr_index, CsrParts};
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `(weights, intercept, n_iter, failure)`: `failure` names why the run has no answer
/// (scikit-learn raises then), the arrays are then the initial ones.
type SagOutcome<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    usize,
    Option<String>,
);

/// Runs scikit-learn's SAG (`saga=False`) or SAGA on the dense C-ordered `x` or, when `x` is
/// `None`, the CSR parts `sparse` with `n_features` columns. `y` holds `{0, 1}` targets
/// (`multinomial=False`, one weight column) or class codes; `coef_init` is
/// `(n_features, n_columns)`, `intercept_init` `(n_columns,)`; `alpha`/`beta` the L2/L1
/// strengths before scaling by the row count; `seed` the number scikit-learn draws from
/// `random_state`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, sample_weight, coef_init, intercept_init, *, sparse=None, n_features, multinomial, alpha, beta, max_squared_sum, tol, max_iter, fit_intercept, saga, seed))]
pub(crate) fn fit_sklearn_sag<'py>(
    py: Python<'py>,
    x: Option<PyReadonlyArray2<'py, f64>>,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: PyReadonlyArray1<'py, f64>,
    coef_init: PyReadonlyArray2<'py, f64>,
    intercept_init: PyReadonlyArray1<'py, f64>,
    sparse: Option<CsrParts<'py>>,
    n_features: usize,
    multinomial: bool,
    alpha: f64,
    beta: f64,
    max_squared_sum: f64,
    tol: f64,
    max_iter: usize,
    fit_intercept: bool,
    saga: bool,
    seed: u32,
) -> PyResult<SagOutcome<'py>> {
    let coef_view = coef_init.as_array();
    let n_columns = coef_view.ncols();
    if coef_view.nrows() != n_features {
        return Err(to_py_err(Error::dimension_mismatch(
            n_features,
            coef_view.nrows(),
        )));
    }
    let weights: Vec<f64> = coef_view.iter().copied().collect();
    let intercept: Vec<f64> = intercept_init.as_array().iter().copied().collect();
    let y = y.as_slice()?;
    let sample_weight = sample_weight.as_slice()?;
    let settings = SagSettings {
        loss: if multinomial {
            SagLoss::Multinomial
        } else {
            SagLoss::Binomial
        },
        n_classes: n_columns,
        alpha,
        beta,
        max_squared_sum,
        tol,
        max_iter,
        fit_intercept,
        saga,
        seed,
    };
    let dense_values = x.as_ref().map(|x| x.as_slice()).transpose()?;
    let sparse_parts = match &sparse {
        Some((indptr, indices, data)) => Some((
            csr_index(indptr, "row pointer")?,
            csr_index(indices, "column index")?,
            data.as_slice()?,
        )),
        None => None,
    };
    let rows = match (&x, dense_values, &sparse_parts) {
        (Some(x), Some(values), None) => {
            if x.as_array().ncols() != n_features {
                return Err(to_py_err(Error::dimension_mismatch(
                    n_features,
                    x.as_array().ncols(),
                )));
            }
            SagRows::Dense {
                values,
                n_rows: x.as_array().nrows(),
                n_features,
            }
        }
        (None, None, Some((indptr, indices, values))) => SagRows::Csr {
            indptr,
            indices,
            values,
            n_features,
        },
        _ => {
            return Err(to_py_err(Error::invalid_input(
                "pass x or its sparse parts, one of the two",
            )))
        }
    };
    let (initial_weights, initial_intercept) = (weights.clone(), intercept.clone());
    let outcome = crate::python::parallel::detach(py, || {
        train_sag(rows, y, sample_weight, &settings, weights, intercept)
    });
    let (weights, intercept, n_iter, failure) = match outcome {
        Ok(run) => (run.weights, run.intercept, run.n_iter, None),
        Err(why) => (initial_weights, initial_intercept, 0, Some(why.to_string())),
    };
    let weights = ndarray::Array2::from_shape_vec((n_features, n_columns), weights)
        .map_err(|e| to_py_err(Error::computation(e.to_string())))?;
    Ok((
        weights.into_pyarray(py),
        intercept.into_pyarray(py),
        n_iter,
        failure,
    ))
}
