//! `rustyml._native.parallel`: the rayon global pool, as rayon exposes it.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Threads in rayon's global pool (building it with `RAYON_NUM_THREADS` if not built yet).
#[pyfunction]
fn current_num_threads() -> usize {
    rayon::current_num_threads()
}

/// The most workers `build_global` accepts: far more than any machine benefits from (16 per
/// core, at least 256), small enough that building the pool takes milliseconds, not minutes.
fn max_pool_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (16 * cores).max(256)
}

/// Build rayon's global pool once with `num_threads` workers; an error if it is already built
/// (any earlier parallel call builds it).
#[pyfunction]
fn build_global(num_threads: &Bound<'_, PyAny>) -> PyResult<()> {
    if num_threads.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "num_threads must be an integer, got a bool",
        ));
    }
    // Extract as a wide integer first so negative and huge values get a ValueError that
    // names the limit, not an OverflowError from the conversion.
    let requested: i128 = num_threads
        .extract()
        .map_err(|_| PyTypeError::new_err("num_threads must be an integer"))?;
    let max = max_pool_threads();
    if requested < 1 || requested > max as i128 {
        return Err(PyValueError::new_err(format!(
            "num_threads must be between 1 and {max} (16 per core, at least 256), got {requested}"
        )));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(requested as usize)
        .build_global()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot build the global thread pool: {e} (it is built once, on first use or by an earlier build_global call)")))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(current_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(build_global, m)?)?;
    Ok(())
}
