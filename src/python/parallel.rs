//! `rustyml._native.parallel`: the worker count (`crate::parallel`) for Python, the entry every
//! native call runs through, and the C symbols threadpoolctl's controller calls.

use std::os::raw::c_int;
use std::sync::OnceLock;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::parallel;

/// Run a native call with the GIL released and the current worker count (`parallel::install`).
/// Take a model's lock before calling this, never inside `f` (see `crate::parallel`).
pub(crate) fn detach<R: Send>(py: Python<'_>, f: impl FnOnce() -> R + Send) -> R {
    py.detach(|| parallel::install(f))
}

/// Which environment variable chose the count at import, if any.
static STARTUP_SOURCE: OnceLock<Option<&'static str>> = OnceLock::new();

/// The worker count native calls use now.
#[pyfunction]
fn get_num_threads() -> usize {
    parallel::num_threads()
}

fn parse_count(num_threads: &Bound<'_, PyAny>) -> PyResult<usize> {
    if num_threads.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "num_threads must be an integer, got a bool",
        ));
    }
    // A wide integer first, so negative and huge values get a ValueError naming the limit,
    // not an OverflowError from the conversion.
    let requested: i128 = num_threads
        .extract()
        .map_err(|_| PyTypeError::new_err("num_threads must be an integer"))?;
    let max = parallel::max_threads();
    if requested < 1 || requested > max as i128 {
        return Err(PyValueError::new_err(format!(
            "num_threads must be between 1 and {max} (16 per core, at least 256), got {requested}"
        )));
    }
    Ok(requested as usize)
}

/// Use `num_threads` workers from the next native call on (`None`: back to the count chosen
/// at import).
#[pyfunction]
#[pyo3(signature = (num_threads))]
fn set_num_threads(py: Python<'_>, num_threads: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match num_threads.filter(|n| !n.is_none()) {
        None => {
            parallel::reset_num_threads();
            Ok(())
        }
        Some(n) => {
            let n = parse_count(n)?;
            py.detach(|| parallel::set_num_threads(n))
                .map_err(pyo3::exceptions::PyRuntimeError::new_err)
        }
    }
}

/// The environment variable that set the count at import (`None`: the machine's width).
#[pyfunction]
fn startup_source() -> Option<&'static str> {
    STARTUP_SOURCE.get().copied().flatten()
}

/// Logical cores this process may use.
#[pyfunction]
fn cores() -> usize {
    parallel::cores()
}

/// Diagnostic for tests: the most threads seen working at once in a parallel loop of `items`,
/// each item waiting up to `wait_s` seconds for `target` to run together.
#[pyfunction]
fn _peak_workers(py: Python<'_>, items: usize, target: usize, wait_s: f64) -> PyResult<usize> {
    if !(wait_s.is_finite() && (0.0..=60.0).contains(&wait_s)) {
        return Err(PyValueError::new_err("wait_s must be in [0, 60]"));
    }
    let wait = std::time::Duration::from_secs_f64(wait_s);
    Ok(py.detach(|| parallel::peak_workers(items, target, wait)))
}

/// threadpoolctl's controller reads the count through this symbol (it finds libraries by the
/// symbols they export, as it does for BLAS and OpenMP runtimes).
#[no_mangle]
pub extern "C" fn rustyml_get_num_threads() -> c_int {
    c_int::try_from(parallel::num_threads()).unwrap_or(c_int::MAX)
}

/// threadpoolctl's controller sets the count through this symbol: 0 on success, -1 for a count
/// out of range (nothing changed).
#[no_mangle]
pub extern "C" fn rustyml_set_num_threads(num_threads: c_int) -> c_int {
    match usize::try_from(num_threads).map(parallel::set_num_threads) {
        Ok(Ok(())) => 0,
        _ => -1,
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // At import, before any native call: the count the host asked for.
    let from_env = parallel::width_from_environment();
    STARTUP_SOURCE.get_or_init(|| from_env.map(|(_, name)| name));
    parallel::init(from_env.map(|(n, _)| n));
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(startup_source, m)?)?;
    m.add_function(wrap_pyfunction!(cores, m)?)?;
    m.add_function(wrap_pyfunction!(_peak_workers, m)?)?;
    m.add("max_threads", parallel::max_threads())?;
    Ok(())
}
