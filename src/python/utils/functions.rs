//! Native preprocessing functions: `standardize`, `normalize`, split indices, one-hot.

use super::map_2d_free;
use crate::python::labels::{labels, maybe_detach, with_labels};
use crate::python::{f64_array, to_py_err};
use crate::utils::train_test_split::SplitSize;
use crate::utils::{self, NormalizationAxis, NormalizationOrder, StandardizationAxis};
use ndarray::{Array1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyModule;

fn axis_name(axis: &str) -> PyResult<&str> {
    match axis {
        "row" | "column" | "global" => Ok(axis),
        other => Err(PyValueError::new_err(format!(
            "axis must be 'row', 'column' or 'global' (or 1, 0, None), got {other:?}"
        ))),
    }
}

/// Zero mean, unit variance per row, per column or over the whole matrix.
#[pyfunction]
#[pyo3(signature = (x, axis = "column"))]
fn standardize<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    axis: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let axis = match axis_name(axis)? {
        "row" => StandardizationAxis::Row,
        "column" => StandardizationAxis::Column,
        _ => StandardizationAxis::Global,
    };
    map_2d_free(py, x, |xv| utils::standardize(&xv, axis))
}

/// Unit norm per row, per column or over the whole matrix; `order` is 'l1', 'l2', 'max' or a
/// number `p > 0`.
#[pyfunction]
#[pyo3(signature = (x, axis = "row", order = None))]
fn normalize<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    axis: &str,
    order: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let axis = match axis_name(axis)? {
        "row" => NormalizationAxis::Row,
        "column" => NormalizationAxis::Column,
        _ => NormalizationAxis::Global,
    };
    let order = match order {
        None => NormalizationOrder::L2,
        Some(o) if o.is_instance_of::<pyo3::types::PyString>() => {
            NormalizationOrder::parse(&o.extract::<String>()?).map_err(to_py_err)?
        }
        Some(o) if o.is_instance_of::<pyo3::types::PyBool>() => {
            return Err(PyTypeError::new_err(
                "order must be 'l1', 'l2', 'max' or a number, got a bool",
            ))
        }
        Some(o) => NormalizationOrder::Lp(
            o.extract::<f64>()
                .map_err(|_| PyTypeError::new_err("order must be 'l1', 'l2', 'max' or a number"))?,
        ),
    };
    map_2d_free(py, x, |xv| utils::normalize(&xv, axis, order))
}

fn split_size(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<SplitSize>> {
    let Some(obj) = obj else { return Ok(None) };
    if obj.is_none() {
        return Ok(None);
    }
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, a float or None, got a bool"
        )));
    }
    if obj.is_instance_of::<pyo3::types::PyFloat>() {
        return Ok(Some(SplitSize::Fraction(obj.extract()?)));
    }
    match obj.extract::<i64>() {
        Ok(v) if v >= 0 => Ok(Some(SplitSize::Count(v as usize))),
        Ok(v) => Err(PyValueError::new_err(format!(
            "{name}={v} should be either positive and smaller than the number of samples or a float in the (0, 1) range"
        ))),
        Err(_) => match obj.extract::<f64>() {
            Ok(v) => Ok(Some(SplitSize::Fraction(v))),
            Err(_) => Err(PyTypeError::new_err(format!("{name} must be an int, a float or None"))),
        },
    }
}

type IndexPair<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// `(train, test)` row indices (int64) for `n` samples.
#[pyfunction]
#[pyo3(signature = (n, test_size = None, train_size = None, random_state = None, shuffle = true, stratify = None))]
fn train_test_indices<'py>(
    py: Python<'py>,
    n: usize,
    test_size: Option<&Bound<'py, PyAny>>,
    train_size: Option<&Bound<'py, PyAny>>,
    random_state: Option<u64>,
    shuffle: bool,
    stratify: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<IndexPair<'py>> {
    let test = split_size(test_size, "test_size")?;
    let train = split_size(train_size, "train_size")?;
    let strata = stratify.as_ref().map(|s| s.as_array());
    let (tr, te) = maybe_detach(py, n, || {
        utils::train_test_split::train_test_indices(n, test, train, random_state, shuffle, strata)
    })
    .map_err(to_py_err)?;
    let to_py = |v: Vec<usize>| Array1::from_iter(v.into_iter().map(|i| i as i64)).into_pyarray(py);
    Ok((to_py(tr), to_py(te)))
}

/// One-hot rows for non-negative integer labels.
#[pyfunction]
#[pyo3(signature = (y, num_classes = None))]
fn to_categorical<'py>(
    py: Python<'py>,
    y: &Bound<'py, PyAny>,
    num_classes: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let y = labels(y, "y")?;
    let out = with_labels!(y, |v, T| maybe_detach(py, v.len(), || {
        utils::label_encoding::to_categorical_labels(v, num_classes)
    }))
    .map_err(to_py_err)?;
    Ok(out.into_pyarray(py))
}

/// Index of each row's largest value.
#[pyfunction]
fn to_sparse_categorical<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let x = f64_array::<Ix2>(x, "categorical")?;
    let xv = x.view();
    let labels = maybe_detach(py, xv.len(), || utils::to_sparse_categorical(&xv));
    Ok(labels.map_err(to_py_err)?.mapv(i64::from).into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(standardize, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(train_test_indices, m)?)?;
    m.add_function(wrap_pyfunction!(to_categorical, m)?)?;
    m.add_function(wrap_pyfunction!(to_sparse_categorical, m)?)?;
    Ok(())
}
