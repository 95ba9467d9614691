//! The libsvm C-SVC replica behind the door's `SVC` (see the crate's
//! `machine_learning::sklearn_svm`).

use crate::error::Error;
use crate::machine_learning::sklearn_svm::{fit_svc, fit_svc_with_probability, Kernel, SvcParams};
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// A C-SVC fit in scikit-learn's attribute layout: `(support, support_rows, n_support,
/// dual_coef, intercept, n_iter, hit_max_iter, prob_a, prob_b)`, the integer arrays int32 as
/// scikit-learn's.
type SvcArrays<'py> = (
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i32>>,
    bool,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

fn parse_kernel(name: &str, degree: i32, gamma: f64, coef0: f64) -> PyResult<Kernel> {
    Ok(match name {
        "linear" => Kernel::Linear,
        "poly" => Kernel::Poly {
            degree,
            gamma,
            coef0,
        },
        "rbf" => Kernel::Rbf { gamma },
        "sigmoid" => Kernel::Sigmoid { gamma, coef0 },
        "precomputed" => Kernel::Precomputed,
        other => {
            return Err(to_py_err(Error::invalid_parameter(
                "kernel",
                format!("{other:?} is not one of linear, poly, rbf, sigmoid, precomputed"),
            )))
        }
    })
}

fn int32(values: Vec<usize>) -> PyResult<Vec<i32>> {
    values
        .into_iter()
        .map(i32::try_from)
        .collect::<Result<_, _>>()
        .map_err(|_| to_py_err(Error::invalid_input("a count beyond 32 bits")))
}

/// Trains libsvm's one-vs-one C-SVC on the C-contiguous float64 `x` (samples by features, or
/// the square Gram matrix for `kernel="precomputed"`) with class codes `labels` in
/// `0..n_classes`; `max_iter` of -1 is unlimited. With `probability_seed` (the seed
/// scikit-learn draws for libsvm) libsvm's Platt sigmoids are fitted too.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, labels, n_classes, sample_weight, class_weight, *, kernel, degree, gamma, coef0, c, tol, shrinking, max_iter, cache_bytes, probability_seed=None))]
pub(crate) fn fit_sklearn_svc<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, i64>,
    n_classes: usize,
    sample_weight: PyReadonlyArray1<'py, f64>,
    class_weight: PyReadonlyArray1<'py, f64>,
    kernel: &str,
    degree: i32,
    gamma: f64,
    coef0: f64,
    c: f64,
    tol: f64,
    shrinking: bool,
    max_iter: i64,
    cache_bytes: usize,
    probability_seed: Option<u32>,
) -> PyResult<SvcArrays<'py>> {
    let params = SvcParams {
        kernel: parse_kernel(kernel, degree, gamma, coef0)?,
        c,
        tol,
        shrinking,
        max_iter: u64::try_from(max_iter).ok(),
        cache_bytes,
    };
    let labels: Vec<usize> = labels
        .as_array()
        .iter()
        .map(|&v| usize::try_from(v))
        .collect::<Result<_, _>>()
        .map_err(|_| to_py_err(Error::invalid_input("a negative class code")))?;
    let x = x.as_array();
    let weights = sample_weight.as_array().to_vec();
    let class_weight = class_weight.as_array().to_vec();
    let fit = crate::python::parallel::detach(py, || match probability_seed {
        None => fit_svc(x, &labels, n_classes, &weights, &class_weight, params),
        Some(seed) => {
            fit_svc_with_probability(x, &labels, n_classes, &weights, &class_weight, params, seed)
        }
    })
    .map_err(to_py_err)?;
    let rows: Vec<i64> = fit.support_rows.iter().map(|&r| r as i64).collect();
    Ok((
        int32(fit.support)?.into_pyarray(py),
        rows.into_pyarray(py),
        int32(fit.n_support)?.into_pyarray(py),
        fit.dual_coef.into_pyarray(py),
        fit.intercept.into_pyarray(py),
        int32(fit.n_iter)?.into_pyarray(py),
        fit.hit_max_iter,
        fit.prob_a.into_pyarray(py),
        fit.prob_b.into_pyarray(py),
    ))
}
