//! The liblinear replica behind the doors' `LinearSVC` and
//! `LogisticRegression(solver="liblinear")` (see the crate's
//! `machine_learning::sklearn_liblinear`).

use crate::error::Error;
use crate::machine_learning::sklearn_liblinear::{train, Rows, Solver, TrainSettings};
use crate::python::convert::{csr_index, CsrParts};
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `(coef, n_iter, labels)` of a fit.
type TrainedArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyArray1<i32>>,
);

/// Trains liblinear's `solver` (scikit-learn's number, 0 to 7) as scikit-learn's
/// `train_wrap` does, from the dense C-ordered `x` or, when `x` is `None`, the CSR parts
/// `sparse` with `n_features` columns. `y` holds class codes `0..n_classes`, `class_weight`
/// one factor per code, `seed` the number scikit-learn draws. Returns `(coef, n_iter,
/// labels)`: one weight row per trained problem (bias column last when `bias > 0`; one per
/// class for Crammer-Singer), each problem's iteration count, and the class codes present.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, sample_weight, *, sparse=None, n_features, solver, tol, c, class_weight, max_iter, seed, bias))]
pub(crate) fn train_liblinear<'py>(
    py: Python<'py>,
    x: Option<PyReadonlyArray2<'py, f64>>,
    y: PyReadonlyArray1<'py, i32>,
    sample_weight: PyReadonlyArray1<'py, f64>,
    sparse: Option<CsrParts<'py>>,
    n_features: usize,
    solver: i32,
    tol: f64,
    c: f64,
    class_weight: PyReadonlyArray1<'py, f64>,
    max_iter: i32,
    seed: u32,
    bias: f64,
) -> PyResult<TrainedArrays<'py>> {
    let solver = Solver::from_liblinear(solver).ok_or_else(|| {
        to_py_err(Error::invalid_parameter(
            "solver",
            format!("liblinear solver {solver} is not replicated"),
        ))
    })?;
    let rows = match (&x, &sparse) {
        (Some(x), None) => {
            let x = x.as_array();
            if x.ncols() != n_features {
                return Err(to_py_err(Error::dimension_mismatch(n_features, x.ncols())));
            }
            let flat: Vec<f64> = x.iter().copied().collect();
            Rows::from_dense(&flat, x.nrows(), n_features, bias)
        }
        (None, Some((indptr, indices, data))) => Rows::from_csr(
            &csr_index(indptr, "row pointer")?,
            &csr_index(indices, "column index")?,
            data.as_slice()?,
            n_features,
            bias,
        )
        .map_err(to_py_err)?,
        _ => {
            return Err(to_py_err(Error::invalid_input(
                "pass x or its sparse parts, one of the two",
            )))
        }
    };
    let y = y.as_slice()?;
    let sample_weight = sample_weight.as_slice()?;
    let class_weight = class_weight.as_slice()?;
    let settings = TrainSettings {
        solver,
        eps: tol,
        c,
        class_weight,
        max_iter,
        seed,
    };
    let trained = crate::python::parallel::detach(py, || train(&rows, y, sample_weight, &settings))
        .map_err(to_py_err)?;
    let n_rows = trained.coef.len();
    let flat: Vec<f64> = trained.coef.into_iter().flatten().collect();
    let coef = ndarray::Array2::from_shape_vec((n_rows, rows.n_cols), flat)
        .map_err(|e| to_py_err(Error::computation(e.to_string())))?;
    Ok((
        coef.into_pyarray(py),
        trained.n_iter.into_pyarray(py),
        trained.labels.into_pyarray(py),
    ))
}
