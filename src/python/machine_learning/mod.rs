//! `rustyml._native.machine_learning`: one native class per estimator. The scikit-learn
//! conventions (keyword hyper-parameters, get_params/set_params, fitted `_` attributes,
//! pickling) live in the Python wrappers of `rustyml.machine_learning`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyModule, PyString};

mod dbscan;
mod decision_tree;
mod incremental;
mod isolation_forest;
mod kernel_pca;
mod kmeans;
mod knn;
mod lda;
mod linear_regression;
mod linear_svc;
mod logistic_regression;
mod meanshift;
mod pca;
mod sklearn_lbfgs;
mod sklearn_liblinear;
mod sklearn_sag;
mod sklearn_svm;
mod sklearn_tree;
mod svc;
mod tsne;

/// The opening scikit-learn's `'auto'`-or-value hyper-parameters share: the string `"auto"`
/// is `Some(auto)`; another string is a `ValueError` naming `expected`, a bool a `TypeError`
/// naming `expected_type` (Python's `True` is an int, never meant as a value here); anything
/// else is `None`, for the caller to read as its value.
fn auto_or_value<T>(
    obj: &Bound<'_, PyAny>,
    name: &str,
    auto: T,
    expected: &str,
    expected_type: &str,
) -> PyResult<Option<T>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str()? {
            "auto" => Ok(Some(auto)),
            other => Err(PyValueError::new_err(format!(
                "{name} must be {expected}, got {other:?}"
            ))),
        };
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be {expected_type}, got a bool"
        )));
    }
    Ok(None)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<linear_regression::PyLinearRegression>()?;
    m.add_class::<logistic_regression::PyLogisticRegression>()?;
    m.add_class::<svc::PySVC>()?;
    m.add_class::<linear_svc::PyLinearSVC>()?;
    m.add_class::<lda::PyLDA>()?;
    m.add_class::<kmeans::PyKMeans>()?;
    m.add_class::<incremental::PyMiniBatchKMeans>()?;
    m.add_class::<incremental::PyIncrementalPCA>()?;
    m.add_class::<dbscan::PyDBSCAN>()?;
    m.add_class::<meanshift::PyMeanShift>()?;
    m.add_function(pyo3::wrap_pyfunction!(meanshift::estimate_bandwidth, m)?)?;
    m.add_class::<pca::PyPCA>()?;
    m.add_function(pyo3::wrap_pyfunction!(
        sklearn_lbfgs::fit_sklearn_logistic_lbfgs,
        m
    )?)?;
    m.add_function(pyo3::wrap_pyfunction!(
        sklearn_liblinear::train_liblinear,
        m
    )?)?;
    m.add_function(pyo3::wrap_pyfunction!(
        sklearn_tree::grow_random_split_forest_arrays,
        m
    )?)?;
    m.add_function(pyo3::wrap_pyfunction!(
        sklearn_tree::grow_sklearn_tree_arrays,
        m
    )?)?;
    m.add_function(pyo3::wrap_pyfunction!(sklearn_svm::fit_sklearn_svc, m)?)?;
    m.add_function(pyo3::wrap_pyfunction!(sklearn_sag::fit_sklearn_sag, m)?)?;
    m.add_class::<kernel_pca::PyKernelPCA>()?;
    m.add_class::<tsne::PyTSNE>()?;
    m.add_class::<decision_tree::PyDecisionTree>()?;
    m.add_class::<isolation_forest::PyIsolationForest>()?;
    m.add_class::<knn::PyKNN>()?;
    Ok(())
}
