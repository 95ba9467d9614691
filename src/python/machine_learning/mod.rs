//! `rustyml._native.machine_learning`: one native class per estimator. The scikit-learn
//! conventions (keyword hyper-parameters, get_params/set_params, fitted `_` attributes,
//! pickling) live in the Python wrappers of `rustyml.machine_learning`.

use pyo3::prelude::*;
use pyo3::types::PyModule;

mod dbscan;
mod decision_tree;
mod isolation_forest;
mod kmeans;
mod knn;
mod linear_regression;
mod meanshift;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<linear_regression::PyLinearRegression>()?;
    m.add_class::<kmeans::PyKMeans>()?;
    m.add_class::<dbscan::PyDBSCAN>()?;
    m.add_class::<meanshift::PyMeanShift>()?;
    m.add_function(pyo3::wrap_pyfunction!(meanshift::estimate_bandwidth, m)?)?;
    m.add_class::<decision_tree::PyDecisionTree>()?;
    m.add_class::<isolation_forest::PyIsolationForest>()?;
    m.add_class::<knn::PyKNN>()?;
    Ok(())
}
