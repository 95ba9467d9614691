//! The Python extension module `rustyml._native` (feature `python`).
//!
//! A thin layer: argument conversion and validation at the boundary, then the crate's own
//! kernels with the GIL released. Submodules mirror the crate (`tuning`, `math`,
//! `machine_learning`, ...) and are registered in `sys.modules` under their dotted names so
//! `import rustyml._native.tuning.matmul` works; the pure-Python package re-exports them.

use pyo3::prelude::*;
use pyo3::types::PyModule;

mod calibration;
pub(crate) mod convert;
mod errors;
mod functional_model;
pub(crate) mod labels;
mod machine_learning;
mod math;
mod metrics;
mod model;
mod neural_network;
pub(crate) mod parallel;
mod params;
mod tuning;
mod utils;

pub(crate) use convert::*;
pub(crate) use errors::to_py_err;

/// Create `parent.<name>`, fill it with `init`, and register it in `sys.modules`.
pub(crate) fn add_submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
    init: impl FnOnce(&Bound<'py, PyModule>) -> PyResult<()>,
) -> PyResult<Bound<'py, PyModule>> {
    let py = parent.py();
    let full = format!("{}.{}", parent.name()?, name);
    let child = PyModule::new(py, name)?;
    child.setattr("__name__", &full)?;
    init(&child)?;
    parent.add_submodule(&child)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(&full, &child)?;
    Ok(child)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.setattr("__name__", "rustyml._native")?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    add_submodule(m, "tuning", tuning::register)?;
    add_submodule(m, "math", math::register)?;
    add_submodule(m, "parallel", parallel::register)?;
    add_submodule(m, "machine_learning", machine_learning::register)?;
    add_submodule(m, "utils", utils::register)?;
    add_submodule(m, "metrics", metrics::register)?;
    add_submodule(m, "neural_network", neural_network::register)?;
    add_submodule(m, "calibration", calibration::register)?;
    Ok(())
}
