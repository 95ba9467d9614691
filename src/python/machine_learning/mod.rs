//! `rustyml._native.machine_learning`: one native class per estimator. The scikit-learn
//! conventions (keyword hyper-parameters, get_params/set_params, fitted `_` attributes,
//! pickling) live in the Python wrappers of `rustyml.machine_learning`.

use pyo3::prelude::*;
use pyo3::types::PyModule;

mod dbscan;
mod kmeans;
mod lda;
mod linear_regression;
mod linear_svc;
mod logistic_regression;
mod meanshift;
mod svc;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<linear_regression::PyLinearRegression>()?;
    m.add_class::<logistic_regression::PyLogisticRegression>()?;
    m.add_class::<svc::PySVC>()?;
    m.add_class::<linear_svc::PyLinearSVC>()?;
    m.add_class::<lda::PyLDA>()?;
    m.add_class::<kmeans::PyKMeans>()?;
    m.add_class::<dbscan::PyDBSCAN>()?;
    m.add_class::<meanshift::PyMeanShift>()?;
    m.add_function(pyo3::wrap_pyfunction!(meanshift::estimate_bandwidth, m)?)?;
    Ok(())
}
