//! `rustyml._native.math`: matmul, reduction and distance kernels.

use super::{f64_array, float_array, parse_parallelism, to_py_err, FloatArray};
use crate::math::{distance, matmul, reduction};
use ndarray::{Ix1, Ix2, IxDyn};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;

/// Products this small return before the GIL round trip costs more than the product.
const GIL_RELEASE_MIN_MNK: usize = 4096;

fn promote<'py, D: ndarray::Dimension>(a: &FloatArray<'py, D>) -> ndarray::Array<f64, D> {
    match a {
        FloatArray::F64(x) => x.as_array().to_owned(),
        FloatArray::F32(x) => x.as_array().mapv(f64::from),
    }
}

macro_rules! run_product {
    ($py:expr, $work:expr, $body:expr) => {{
        if $work >= GIL_RELEASE_MIN_MNK {
            crate::python::parallel::detach($py, || $body)
        } else {
            $body
        }
    }};
}

/// `a @ b` for 2-D float arrays. Same dtype in, same dtype out; mixed float32/float64 promote
/// to float64. `parallelism`: `"auto"`, `"serial"` or a worker count.
#[pyfunction]
#[pyo3(signature = (a, b, parallelism = None))]
fn dot<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    parallelism: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let par = match parallelism {
        Some(p) => parse_parallelism(p)?,
        None => matmul::Parallelism::Rayon(0),
    };
    let a = float_array::<Ix2>(a, "a")?;
    let b = float_array::<Ix2>(b, "b")?;
    Ok(match (&a, &b) {
        (FloatArray::F64(x), FloatArray::F64(y)) => {
            let (x, y) = (x.as_array(), y.as_array());
            let work = x.nrows() * x.ncols() * y.ncols();
            run_product!(py, work, matmul::dot_par(x, y, par))
                .map_err(to_py_err)?
                .into_pyarray(py)
                .into_any()
        }
        (FloatArray::F32(x), FloatArray::F32(y)) => {
            let (x, y) = (x.as_array(), y.as_array());
            let work = x.nrows() * x.ncols() * y.ncols();
            run_product!(py, work, matmul::dot_par(x, y, par))
                .map_err(to_py_err)?
                .into_pyarray(py)
                .into_any()
        }
        _ => {
            let (x, y) = (promote(&a), promote(&b));
            crate::python::parallel::detach(py, || matmul::dot_par(x.view(), y.view(), par))
                .map_err(to_py_err)?
                .into_pyarray(py)
                .into_any()
        }
    })
}

/// `a @ x` for a 2-D `a` and a 1-D `x`.
#[pyfunction]
#[pyo3(signature = (a, x, parallelism = None))]
fn matvec<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    parallelism: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let par = match parallelism {
        Some(p) => parse_parallelism(p)?,
        None => matmul::Parallelism::Rayon(0),
    };
    let a = float_array::<Ix2>(a, "a")?;
    let x = float_array::<Ix1>(x, "x")?;
    Ok(match (&a, &x) {
        (FloatArray::F64(m), FloatArray::F64(v)) => {
            let (m, v) = (m.as_array(), v.as_array());
            run_product!(py, m.len(), matmul::matvec(m, v, par))
                .map_err(to_py_err)?
                .into_pyarray(py)
                .into_any()
        }
        (FloatArray::F32(m), FloatArray::F32(v)) => {
            let (m, v) = (m.as_array(), v.as_array());
            run_product!(py, m.len(), matmul::matvec(m, v, par))
                .map_err(to_py_err)?
                .into_pyarray(py)
                .into_any()
        }
        _ => {
            let (m, v) = (promote(&a), promote(&x));
            crate::python::parallel::detach(py, || matmul::matvec(m.view(), v.view(), par))
                .map_err(to_py_err)?
                .into_pyarray(py)
                .into_any()
        }
    })
}

/// Run a 1-D f64 reduction over any float array: C-contiguous arrays of any shape are read in
/// place as one flat sequence; other layouts are gathered into C order first.
fn reduce<'py, R: Send>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    kernel: impl Fn(ndarray::ArrayView1<f64>) -> R + Send + Sync,
) -> PyResult<R> {
    let x = f64_array::<IxDyn>(x, "x")?;
    let view = x.view();
    let flat_len = view.len();
    Ok(match view.as_slice() {
        Some(s) => {
            let flat = ndarray::ArrayView1::from(s);
            crate::python::parallel::detach(py, || kernel(flat))
        }
        None if view.ndim() == 1 => {
            let flat = view.into_dimensionality::<Ix1>().expect("1-D");
            crate::python::parallel::detach(py, || kernel(flat))
        }
        None => {
            let owned = ndarray::Array1::from_iter(view.iter().copied());
            debug_assert_eq!(owned.len(), flat_len);
            crate::python::parallel::detach(py, || kernel(owned.view()))
        }
    })
}

/// Deterministic sum (blocked fold: identical bits serial or parallel).
#[pyfunction]
fn sum(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    reduce(py, x, reduction::sum)
}

/// Deterministic sum of squares.
#[pyfunction]
fn sq_sum(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    reduce(py, x, reduction::sq_sum)
}

/// Mean and population variance (`ddof=0`) by blocked Welford/Chan moments.
#[pyfunction]
fn mean_var(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<(f64, f64)> {
    reduce(py, x, reduction::mean_var)?
        .ok_or_else(|| PyValueError::new_err("mean_var of an empty array is undefined"))
}

fn vector_pair<'py>(
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    f: impl Fn(ndarray::ArrayView1<f64>, ndarray::ArrayView1<f64>) -> crate::Result<f64>,
) -> PyResult<f64> {
    let a = f64_array::<Ix1>(a, "a")?;
    let b = f64_array::<Ix1>(b, "b")?;
    f(a.view(), b.view()).map_err(to_py_err)
}

/// Euclidean distance between two vectors.
#[pyfunction]
fn euclidean(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
    vector_pair(a, b, distance::euclidean)
}

/// Squared euclidean distance between two vectors.
#[pyfunction]
fn squared_euclidean(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
    vector_pair(a, b, distance::squared_euclidean)
}

/// Manhattan distance between two vectors.
#[pyfunction]
fn manhattan(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
    vector_pair(a, b, distance::manhattan)
}

/// Minkowski distance of order `p >= 1` between two vectors.
#[pyfunction]
#[pyo3(signature = (a, b, p = 2.0))]
fn minkowski(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, p: f64) -> PyResult<f64> {
    vector_pair(a, b, |x, y| distance::minkowski(x, y, p))
}

/// Distances of every row of `a` to every row of `b`.
#[pyfunction]
#[pyo3(signature = (a, b = None, metric = "euclidean", p = 2.0))]
fn pairwise<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: Option<&Bound<'py, PyAny>>,
    metric: &str,
    p: f64,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let metric = distance::Metric::parse(metric, p).map_err(to_py_err)?;
    let a = f64_array::<Ix2>(a, "a")?;
    let b = match b {
        Some(b) => Some(f64_array::<Ix2>(b, "b")?),
        None => None,
    };
    let (av, bv) = (
        a.view(),
        b.as_ref().map(|b| b.view()).unwrap_or_else(|| a.view()),
    );
    let d = crate::python::parallel::detach(py, || distance::pairwise(av, bv, metric))
        .map_err(to_py_err)?;
    Ok(d.into_pyarray(py))
}

/// Distances between corresponding rows of two equally shaped arrays.
#[pyfunction]
#[pyo3(signature = (a, b, metric = "euclidean", p = 2.0))]
fn rowwise<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    metric: &str,
    p: f64,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let metric = distance::Metric::parse(metric, p).map_err(to_py_err)?;
    let a = f64_array::<Ix2>(a, "a")?;
    let b = f64_array::<Ix2>(b, "b")?;
    let (av, bv) = (a.view(), b.view());
    let d = crate::python::parallel::detach(py, || distance::rowwise(av, bv, metric))
        .map_err(to_py_err)?;
    Ok(d.into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    super::add_submodule(m, "matmul", |s| {
        s.add_function(wrap_pyfunction!(dot, s)?)?;
        s.add_function(wrap_pyfunction!(matvec, s)?)
    })?;
    super::add_submodule(m, "reduction", |s| {
        s.add_function(wrap_pyfunction!(sum, s)?)?;
        s.add_function(wrap_pyfunction!(sq_sum, s)?)?;
        s.add_function(wrap_pyfunction!(mean_var, s)?)
    })?;
    super::add_submodule(m, "distance", |s| {
        s.add_function(wrap_pyfunction!(euclidean, s)?)?;
        s.add_function(wrap_pyfunction!(squared_euclidean, s)?)?;
        s.add_function(wrap_pyfunction!(manhattan, s)?)?;
        s.add_function(wrap_pyfunction!(minkowski, s)?)?;
        s.add_function(wrap_pyfunction!(pairwise, s)?)?;
        s.add_function(wrap_pyfunction!(rowwise, s)?)
    })?;
    Ok(())
}
