//! `rustyml._native.machine_learning`: one native class per estimator. The scikit-learn
//! conventions (keyword hyper-parameters, get_params/set_params, fitted `_` attributes,
//! pickling) live in the Python wrappers of `rustyml.machine_learning`.

use pyo3::prelude::*;
use pyo3::types::PyModule;

mod kernel_pca;
mod linear_regression;
mod pca;
mod tsne;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<linear_regression::PyLinearRegression>()?;
    m.add_class::<pca::PyPCA>()?;
    m.add_class::<kernel_pca::PyKernelPCA>()?;
    m.add_class::<tsne::PyTSNE>()?;
    Ok(())
}
