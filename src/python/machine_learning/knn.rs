//! Native `KNN`.

use super::decision_tree::parse_count;
use crate::machine_learning::knn::{KnnClassifier, Weights};
use crate::math::distance::Metric;
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `(distances, indices)` as NumPy arrays.
type Neighbours<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<i64>>);

/// scikit-learn's `p`: a real number in `(0, inf]` (None is 2). `0 < p < 1` is refused: those
/// are not distance metrics, which scikit-learn only runs with a warning on its brute-force
/// path; ours take only true metrics.
fn parse_p(p: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
    let Some(p) = p.filter(|o| !o.is_none()) else {
        return Ok(2.0);
    };
    let wrong = || {
        PyValueError::new_err(format!(
            "The 'p' parameter of KNN must be a float in the range (0.0, inf] or None. Got {} instead.",
            p.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    };
    if p.is_instance_of::<pyo3::types::PyBool>() || p.is_instance_of::<pyo3::types::PyString>() {
        return Err(wrong());
    }
    let v: f64 = p.extract().map_err(|_| wrong())?;
    if v.is_nan() || v <= 0.0 {
        return Err(wrong());
    }
    if v < 1.0 {
        return Err(PyValueError::new_err(format!(
            "p must be >= 1 for the Minkowski metric, got {v}: for 0 < p < 1 Minkowski metrics \
             are not distance metrics; set p >= 1"
        )));
    }
    Ok(v)
}

#[pyclass(name = "KNN", module = "rustyml._native.machine_learning")]
pub(crate) struct PyKNN {
    inner: KnnClassifier,
}

#[pymethods]
impl PyKNN {
    #[new]
    #[pyo3(signature = (n_neighbors = None, weights = "uniform", metric = "minkowski", p = None))]
    fn new(
        n_neighbors: Option<&Bound<'_, PyAny>>,
        weights: &str,
        metric: &str,
        p: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let k = parse_count(n_neighbors, "n_neighbors")?.unwrap_or(5);
        if k == 0 {
            return Err(PyValueError::new_err(
                "n_neighbors must be at least 1, got 0",
            ));
        }
        let p = parse_p(p)?;
        // scikit-learn's names; "minkowski" (its default) resolves p = 1, 2, inf to the
        // manhattan, euclidean (product-based search) and chebyshev metrics.
        let metric = match metric {
            "euclidean" | "l2" => Metric::Euclidean,
            "manhattan" | "cityblock" | "l1" => Metric::Manhattan,
            "chebyshev" | "infinity" => Metric::Chebyshev,
            "minkowski" if p == 1.0 => Metric::Manhattan,
            "minkowski" if p == 2.0 => Metric::Euclidean,
            "minkowski" if p == f64::INFINITY => Metric::Chebyshev,
            "minkowski" => Metric::Minkowski(p),
            other => {
                return Err(PyValueError::new_err(format!(
                "unknown metric {other:?}; expected one of 'minkowski', 'euclidean', 'manhattan', 'chebyshev'"
            )))
            }
        };
        let inner = KnnClassifier::new(k)
            .with_weights(Weights::parse(weights).map_err(to_py_err)?)
            .with_metric(metric);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit(&xv, &yv).map(|_| ())).map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(crate::python::parallel::detach(py, || model.predict(&xv))
            .map_err(to_py_err)?
            .into_pyarray(py))
    }

    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.predict_proba(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    /// `(distances, indices)` of the nearest training samples; `X=None` queries the training
    /// set itself, each sample excluded from its own neighbours.
    #[pyo3(signature = (x = None, n_neighbors = None))]
    fn kneighbors<'py>(
        &self,
        py: Python<'py>,
        x: Option<&Bound<'py, PyAny>>,
        n_neighbors: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Neighbours<'py>> {
        let k = parse_count(n_neighbors, "n_neighbors")?;
        let model = &self.inner;
        let (dist, ind) = match x.filter(|o| !o.is_none()) {
            Some(x) => {
                let x = f64_array::<Ix2>(x, "X")?;
                let xv = x.view();
                crate::python::parallel::detach(py, || model.kneighbors(&xv, k))
            }
            None => crate::python::parallel::detach(py, || model.kneighbors_of_training(k)),
        }
        .map_err(to_py_err)?;
        Ok((
            dist.into_pyarray(py),
            ind.mapv(|i| i as i64).into_pyarray(py),
        ))
    }

    #[getter]
    fn classes_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .classes()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("KNN")))
    }

    #[getter]
    fn n_samples_fit_(&self) -> PyResult<usize> {
        self.inner
            .n_samples_fit()
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("KNN")))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: KnnClassifier::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
