//! `rustyml._native.parallel`: the rayon global pool, as rayon exposes it.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Threads in rayon's global pool (building it with `RAYON_NUM_THREADS` if not built yet).
#[pyfunction]
fn current_num_threads() -> usize {
    rayon::current_num_threads()
}

/// Build rayon's global pool once with `num_threads` workers; an error if it is already built
/// (any earlier parallel call builds it).
#[pyfunction]
fn build_global(num_threads: usize) -> PyResult<()> {
    if num_threads == 0 {
        return Err(PyValueError::new_err("num_threads must be at least 1"));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(num_threads)
        .build_global()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot build the global thread pool: {e} (it is built once, on first use or by an earlier build_global call)")))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(current_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(build_global, m)?)?;
    Ok(())
}
