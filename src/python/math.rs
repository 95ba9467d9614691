//! `rustyml._native.math`: matmul, reduction and distance kernels.

use super::{f64_array, float_array, parse_parallelism, to_py_err, FloatArray};
use crate::math::{distance, given_distances, losses, matmul, optimize, reduction};
use crate::python::convert::GraphParts;
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

/// One product of two float arrays in their common dtype (mixed float32/float64 promote to
/// float64), returned as a NumPy array: `$body` runs on the views `$x`, `$y` (released from
/// the GIL when `$work` reaches [`GIL_RELEASE_MIN_MNK`]; always after a promotion).
macro_rules! float_product {
    ($py:expr, ($a:expr, $b:expr), |$x:ident, $y:ident| work = $work:expr, $body:expr) => {{
        let out = match (&$a, &$b) {
            (FloatArray::F64($x), FloatArray::F64($y)) => {
                let ($x, $y) = ($x.as_array(), $y.as_array());
                run_detached($py, $work, || $body)
                    .map_err(to_py_err)?
                    .into_pyarray($py)
                    .into_any()
            }
            (FloatArray::F32($x), FloatArray::F32($y)) => {
                let ($x, $y) = ($x.as_array(), $y.as_array());
                run_detached($py, $work, || $body)
                    .map_err(to_py_err)?
                    .into_pyarray($py)
                    .into_any()
            }
            _ => {
                let (promoted_a, promoted_b) = (promote(&$a), promote(&$b));
                let ($x, $y) = (promoted_a.view(), promoted_b.view());
                crate::python::parallel::detach($py, || $body)
                    .map_err(to_py_err)?
                    .into_pyarray($py)
                    .into_any()
            }
        };
        out
    }};
}

/// `body`, outside the GIL when `work` is large enough to pay for the round trip.
fn run_detached<R: Send>(py: Python<'_>, work: usize, body: impl FnOnce() -> R + Send) -> R {
    if work >= GIL_RELEASE_MIN_MNK {
        crate::python::parallel::detach(py, body)
    } else {
        body()
    }
}

/// A product's `parallelism` argument (`None`: all workers).
fn product_parallelism(parallelism: Option<&Bound<'_, PyAny>>) -> PyResult<matmul::Parallelism> {
    match parallelism {
        Some(p) => parse_parallelism(p),
        None => Ok(matmul::Parallelism::Rayon(0)),
    }
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
    let par = product_parallelism(parallelism)?;
    let a = float_array::<Ix2>(a, "a")?;
    let b = float_array::<Ix2>(b, "b")?;
    Ok(float_product!(
        py,
        (a, b),
        |x, y| work = x.nrows() * x.ncols() * y.ncols(),
        matmul::dot_par(x, y, par)
    ))
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
    let par = product_parallelism(parallelism)?;
    let a = float_array::<Ix2>(a, "a")?;
    let x = float_array::<Ix1>(x, "x")?;
    Ok(float_product!(
        py,
        (a, x),
        |m, v| work = m.len(),
        matmul::matvec(m, v, par)
    ))
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

/// Binary logistic loss of scores `z` against 0/1 targets `y` (`crate::math::losses`):
/// `(summed loss, per-score derivative sigmoid(z) - y, its sum)`.
#[pyfunction]
fn logistic_loss_grad<'py>(
    py: Python<'py>,
    z: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
) -> PyResult<(f64, Bound<'py, numpy::PyArray1<f64>>, f64)> {
    let z = f64_array::<Ix1>(z, "z")?;
    let y = f64_array::<Ix1>(y, "y")?;
    let (z, y) = (z.view().to_vec(), y.view().to_vec());
    if z.len() != y.len() {
        return Err(PyValueError::new_err(format!(
            "z has {} scores but y has {} targets",
            z.len(),
            y.len()
        )));
    }
    let mut r = vec![0.0; z.len()];
    let (loss, rsum) =
        crate::python::parallel::detach(py, || losses::logistic_loss_grad(&z, &y, &mut r));
    Ok((loss, r.into_pyarray(py), rsum))
}

/// A summed loss, its gradient with respect to the scores, and the gradient's column sums.
type LossGrad<'py> = (
    f64,
    Bound<'py, numpy::PyArray2<f64>>,
    Bound<'py, numpy::PyArray1<f64>>,
);

/// Softmax cross-entropy of an `n x k` score matrix against class indices `labels`
/// (`crate::math::losses`): `(summed loss, gradient softmax(z) - onehot, its column sums)`.
#[pyfunction]
fn softmax_loss_grad<'py>(
    py: Python<'py>,
    z: &Bound<'py, PyAny>,
    labels: Vec<usize>,
) -> PyResult<LossGrad<'py>> {
    let z = f64_array::<Ix2>(z, "z")?;
    let (n, k) = z.view().dim();
    if labels.len() != n {
        return Err(PyValueError::new_err(format!(
            "z has {n} rows but labels has {} entries",
            labels.len()
        )));
    }
    if k == 0 || labels.iter().any(|&c| c >= k) {
        return Err(PyValueError::new_err(format!(
            "labels must be class indices below the {k} columns of z"
        )));
    }
    let z: Vec<f64> = z.view().iter().copied().collect();
    let mut r = vec![0.0; n * k];
    let (loss, colsum) =
        crate::python::parallel::detach(py, || losses::softmax_loss_grad(&z, k, &labels, &mut r));
    let r = ndarray::Array2::from_shape_vec((n, k), r).expect("n x k gradient");
    Ok((loss, r.into_pyarray(py), colsum.into_pyarray(py)))
}

/// L-BFGS (`crate::math::optimize::minimize`, the linear models' minimiser) of a Python
/// objective `fun(x) -> (f, grad)`; returns `(x, f, n_iter, converged)`. An exception raised
/// by `fun` ends the run and propagates.
#[pyfunction]
#[pyo3(signature = (fun, x0, max_iter=100, gtol=1e-4, ftol=1e7 * f64::EPSILON, memory=10))]
fn lbfgs<'py>(
    py: Python<'py>,
    fun: &Bound<'py, PyAny>,
    x0: Vec<f64>,
    max_iter: usize,
    gtol: f64,
    ftol: f64,
    memory: usize,
) -> PyResult<(Bound<'py, numpy::PyArray1<f64>>, f64, usize, bool)> {
    if memory == 0 {
        return Err(PyValueError::new_err("memory must be at least 1"));
    }
    let n = x0.len();
    let mut raised: Option<PyErr> = None;
    let objective = |x: ndarray::ArrayView1<f64>, grad: &mut ndarray::Array1<f64>| {
        let mut call = || -> PyResult<f64> {
            let out = fun.call1((x.to_owned().into_pyarray(py),))?;
            let (f, g): (f64, Vec<f64>) = out.extract()?;
            if g.len() != n {
                return Err(PyValueError::new_err(format!(
                    "the objective returned a gradient of {} entries for {n} variables",
                    g.len()
                )));
            }
            grad.assign(&ndarray::Array1::from(g));
            Ok(f)
        };
        call().map_err(|e| {
            raised = Some(e);
            crate::error::Error::computation("the objective raised")
        })
    };
    let opts = optimize::LbfgsOptions {
        max_iter,
        gtol,
        ftol,
        memory,
        ..Default::default()
    };
    let result = optimize::minimize(objective, ndarray::Array1::from(x0), &opts);
    if let Some(e) = raised {
        return Err(e);
    }
    let r = result.map_err(to_py_err)?;
    Ok((r.x.into_pyarray(py), r.f, r.n_iter, r.converged))
}

/// Labels and squared distances of a nearest-center scan.
type Nearest<'py> = (
    Bound<'py, numpy::PyArray1<i64>>,
    Bound<'py, numpy::PyArray1<f64>>,
);

/// For every row of `x`, the index of the nearest row of `centers` (squared euclidean) and
/// that squared distance: the single-machine KMeans' assignment scan
/// (`distance::nearest_rows`), one pass with no `n x k` distance matrix.
#[pyfunction]
fn nearest<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    centers: &Bound<'py, PyAny>,
) -> PyResult<Nearest<'py>> {
    let x = f64_array::<Ix2>(x, "x")?;
    let c = f64_array::<Ix2>(centers, "centers")?;
    let (xv, cv) = (x.view(), c.view());
    let (labels, d2) = crate::python::parallel::detach(py, || distance::nearest_rows(xv, cv))
        .map_err(to_py_err)?;
    let labels: Vec<i64> = labels.into_iter().map(|l| l as i64).collect();
    Ok((labels.into_pyarray(py), d2.into_pyarray(py)))
}

/// Distances, indices and a flag, as `distance.given_nearest` / `graph_nearest` return them.
type GivenNearest<'py> = (
    Bound<'py, numpy::PyArray2<f64>>,
    Bound<'py, numpy::PyArray2<i64>>,
    bool,
);

fn given_to_python<'py>(
    py: Python<'py>,
    (found, flag): (given_distances::GivenNeighbours, bool),
) -> GivenNearest<'py> {
    (
        found.distances.into_pyarray(py),
        found.indices.mapv(|j| j as i64).into_pyarray(py),
        flag,
    )
}

/// The `k` smallest entries of every row of a dense distance matrix, nearest first (equal
/// values by column), and whether no row's answer hangs on equal values
/// (`given_distances::nearest_in_dense_rows`).
#[pyfunction]
fn given_nearest<'py>(
    py: Python<'py>,
    distances: &Bound<'py, PyAny>,
    k: usize,
) -> PyResult<GivenNearest<'py>> {
    let d = f64_array::<Ix2>(distances, "distances")?;
    let dv = d.view();
    let found =
        crate::python::parallel::detach(py, || given_distances::nearest_in_dense_rows(dv, k))
            .map_err(to_py_err)?;
    Ok(given_to_python(py, found))
}

/// The `k` smallest stored entries of every row of a CSR graph (`data`, `indices`, `indptr`),
/// equal values in stored order, and whether every row was stored sorted already
/// (`given_distances::nearest_in_graph_rows`).
#[pyfunction]
fn graph_nearest<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    indices: numpy::PyReadonlyArray1<'py, i64>,
    indptr: numpy::PyReadonlyArray1<'py, i64>,
    k: usize,
) -> PyResult<GivenNearest<'py>> {
    let parts = GraphParts::from_py(data, &indices, &indptr)?;
    let found = crate::python::parallel::detach(py, || {
        given_distances::nearest_in_graph_rows(&parts.graph()?, k)
    })
    .map_err(to_py_err)?;
    Ok(given_to_python(py, found))
}

/// The positions of a CSR graph's stored entries (`data`, `indices`, `indptr`) with every
/// row in order of value, equal values in stored order (`GivenGraph::value_order`): `data[order]`
/// is scikit-learn's `sort_graph_by_row_values`.
#[pyfunction]
fn graph_value_order<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    indices: numpy::PyReadonlyArray1<'py, i64>,
    indptr: numpy::PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
    let parts = GraphParts::from_py(data, &indices, &indptr)?;
    let order = crate::python::parallel::detach(py, || parts.graph().map(|g| g.value_order()))
        .map_err(to_py_err)?;
    Ok(numpy::PyArray1::from_iter(
        py,
        order.into_iter().map(|p| p as i64),
    ))
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
    super::add_submodule(m, "losses", |s| {
        s.add_function(wrap_pyfunction!(logistic_loss_grad, s)?)?;
        s.add_function(wrap_pyfunction!(softmax_loss_grad, s)?)
    })?;
    super::add_submodule(m, "optimize", |s| {
        s.add_function(wrap_pyfunction!(lbfgs, s)?)
    })?;
    super::add_submodule(m, "distance", |s| {
        s.add_function(wrap_pyfunction!(euclidean, s)?)?;
        s.add_function(wrap_pyfunction!(squared_euclidean, s)?)?;
        s.add_function(wrap_pyfunction!(manhattan, s)?)?;
        s.add_function(wrap_pyfunction!(minkowski, s)?)?;
        s.add_function(wrap_pyfunction!(pairwise, s)?)?;
        s.add_function(wrap_pyfunction!(rowwise, s)?)?;
        s.add_function(wrap_pyfunction!(nearest, s)?)?;
        s.add_function(wrap_pyfunction!(given_nearest, s)?)?;
        s.add_function(wrap_pyfunction!(graph_nearest, s)?)?;
        s.add_function(wrap_pyfunction!(graph_value_order, s)?)
    })?;
    Ok(())
}
