//! The liblinear replica behind the doors' `LinearSVC` and
//! `LogisticRegression(solver="liblinear")` (see the crate's
//! `machine_learning::sklearn_liblinear`).

use crate::error::Error;
use crate::machine_learning::sklearn_liblinear::{
    grouped_order, train, train_pair, Rows, Solver, TrainSettings,
};
use crate::python::convert::{csr_index, CsrParts};
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `(coef, n_iter)` of a fit.
type FitArrays<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<i32>>);

/// `(coef, n_iter, labels, probe)`: a fit, its class codes and, when asked, the probe's fit.
type TrainedArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyArray1<i32>>,
    Option<FitArrays<'py>>,
);

/// Trains liblinear's `solver` (scikit-learn's number, 0 to 7) as scikit-learn's
/// `train_wrap` does, from the dense C-ordered `x` or, when `x` is `None`, the CSR parts
/// `sparse` with `n_features` columns. `y` holds class codes `0..n_classes`, `class_weight`
/// one factor per code, `seed` the number scikit-learn draws. With `probe_ulps`, the same
/// fit also runs, side by side, on the values moved by that many ulp: entry `k` of the
/// values (row-major for `x`, the CSR data's order) times `1 - ulps eps` where `k % 3 == 1`,
/// else `1 + ulps eps` (the doors' rounding probe of TRON). Returns `(coef, n_iter, labels,
/// probe)`: one weight row per trained problem (bias column last when `bias > 0`; one per
/// class for Crammer-Singer), each problem's iteration count, the class codes present, and
/// `(coef, n_iter)` of the probe's fit or `None`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, sample_weight, *, sparse=None, n_features, solver, tol, c, class_weight, max_iter, seed, bias, probe_ulps=None))]
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
    probe_ulps: Option<u32>,
) -> PyResult<TrainedArrays<'py>> {
    let solver = Solver::from_liblinear(solver).ok_or_else(|| {
        to_py_err(Error::invalid_parameter(
            "solver",
            format!("liblinear solver {solver} is not replicated"),
        ))
    })?;
    let y = y.as_slice()?;
    let sample_weight = sample_weight.as_slice()?;
    let n_rows = match (&x, &sparse) {
        (Some(x), None) => x.as_array().nrows(),
        (None, Some((indptr, _, _))) => indptr.len()?.saturating_sub(1),
        _ => {
            return Err(to_py_err(Error::invalid_input(
                "pass x or its sparse parts, one of the two",
            )))
        }
    };
    if y.len() != n_rows || sample_weight.len() != n_rows {
        return Err(to_py_err(Error::invalid_input(
            "liblinear: y and sample_weight need one entry per row",
        )));
    }
    // Converted straight into liblinear's coordinate order (with y and the weights taken
    // in it too), so the training streams its rows without a regrouping copy.
    let order = grouped_order(y, sample_weight);
    let y: Vec<i32> = order.iter().map(|&r| y[r]).collect();
    let sample_weight: Vec<f64> = order.iter().map(|&r| sample_weight[r]).collect();
    // the rows of `values` (x's entries, row-major, or the CSR data) in that order
    let rows_of = |values: &[f64]| -> PyResult<Rows<'static>> {
        match (&x, &sparse) {
            (Some(x), None) => {
                let (n, d) = x.as_array().dim();
                if d != n_features {
                    return Err(to_py_err(Error::dimension_mismatch(n_features, d)));
                }
                Rows::from_dense_in(values, n, n_features, bias, Some(&order)).map_err(to_py_err)
            }
            (None, Some((indptr, indices, _))) => Rows::from_csr_in(
                &csr_index(indptr, "row pointer")?,
                &csr_index(indices, "column index")?,
                values,
                n_features,
                bias,
                Some(&order),
            )
            .map_err(to_py_err),
            _ => unreachable!("one of the two, checked above"),
        }
    };
    let values = match (&x, &sparse) {
        (Some(x), None) => row_major(x.as_array()),
        (None, Some((_, _, data))) => std::borrow::Cow::Borrowed(data.as_slice()?),
        _ => unreachable!("one of the two, checked above"),
    };
    let rows = rows_of(&values)?;
    let moved_rows = match probe_ulps {
        Some(ulps) => {
            let step = f64::from(ulps) * f64::EPSILON;
            let (up, down) = (1.0 + step, 1.0 - step);
            let moved: Vec<f64> = (values.iter().enumerate())
                .map(|(k, &v)| v * if k % 3 == 1 { down } else { up })
                .collect();
            Some(rows_of(&moved)?)
        }
        None => None,
    };
    let class_weight = class_weight.as_slice()?;
    let settings = TrainSettings {
        solver,
        eps: tol,
        c,
        class_weight,
        max_iter,
        seed,
    };
    let (trained, probe) = crate::python::parallel::detach(py, || match &moved_rows {
        Some(moved_rows) => {
            let (trained, probe) = train_pair(&rows, moved_rows, &y, &sample_weight, &settings);
            (trained, Some(probe))
        }
        None => (train(&rows, &y, &sample_weight, &settings), None),
    });
    let trained = trained.map_err(to_py_err)?;
    let probe = probe.transpose().map_err(to_py_err)?;
    let (coef, n_iter) = fit_arrays(py, trained.coef, trained.n_iter, rows.n_cols)?;
    let probe = probe
        .map(|p| fit_arrays(py, p.coef, p.n_iter, rows.n_cols))
        .transpose()?;
    Ok((coef, n_iter, trained.labels.into_pyarray(py), probe))
}

/// A fit's weight rows as one `(problems, n_cols)` array, beside its iteration counts.
fn fit_arrays<'py>(
    py: Python<'py>,
    coef: Vec<Vec<f64>>,
    n_iter: Vec<i32>,
    n_cols: usize,
) -> PyResult<FitArrays<'py>> {
    let n_rows = coef.len();
    let flat: Vec<f64> = coef.into_iter().flatten().collect();
    let coef = ndarray::Array2::from_shape_vec((n_rows, n_cols), flat)
        .map_err(|e| to_py_err(Error::computation(e.to_string())))?;
    Ok((coef.into_pyarray(py), n_iter.into_pyarray(py)))
}

/// `a`'s entries in row-major order: borrowed when C-contiguous (as the doors pass them).
fn row_major<'a>(a: ndarray::ArrayView2<'a, f64>) -> std::borrow::Cow<'a, [f64]> {
    match a.to_slice() {
        Some(flat) => std::borrow::Cow::Borrowed(flat),
        None => std::borrow::Cow::Owned(a.iter().copied().collect()),
    }
}
