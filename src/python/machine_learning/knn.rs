//! Native `KNN`.

use crate::machine_learning::knn::{KnnClassifier, Weights};
use crate::math::distance::Metric;
use crate::python::model::{native_estimator, ToPython};
use crate::python::params::count;
use crate::python::{f64_array, to_py_err};
use ndarray::Ix2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

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
    if p.is_instance_of::<PyBool>() || p.is_instance_of::<PyString>() {
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

/// scikit-learn's metric names; "minkowski" (its default) resolves p = 1, 2, inf to the
/// manhattan, euclidean (product-based search) and chebyshev metrics; "cosine" is scanned.
fn parse_metric(metric: &str, p: f64) -> PyResult<Metric> {
    Ok(match metric {
        "euclidean" | "l2" => Metric::Euclidean,
        "manhattan" | "cityblock" | "l1" => Metric::Manhattan,
        "chebyshev" | "infinity" => Metric::Chebyshev,
        "cosine" => Metric::Cosine,
        "minkowski" if p == 1.0 => Metric::Manhattan,
        "minkowski" if p == 2.0 => Metric::Euclidean,
        "minkowski" if p == f64::INFINITY => Metric::Chebyshev,
        "minkowski" => Metric::Minkowski(p),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown metric {other:?}; expected one of 'minkowski', 'euclidean', 'manhattan', 'chebyshev', 'cosine'"
            )))
        }
    })
}

native_estimator! {
    PyKNN(KnnClassifier, "KNN");
    new(
        n_neighbors: &Bound<'_, PyAny>,
        weights: &str,
        metric: &str,
        p: Option<&Bound<'_, PyAny>>,
    ) {
        let k = count(Some(n_neighbors), "n_neighbors")?.unwrap_or(0);
        if k == 0 {
            return Err(PyValueError::new_err(
                "n_neighbors must be at least 1, got 0",
            ));
        }
        let metric = parse_metric(metric, parse_p(p)?)?;
        Ok(KnnClassifier::new(k)
            .with_weights(Weights::parse(weights).map_err(to_py_err)?)
            .with_metric(metric))
    }
    fit(x, y) => |m, x, y| m.fit(&x, &y).map(|_| ());
    read predict => |m, x| m.predict(&x);
    read predict_proba => |m, x| m.predict_proba(&x);
    fitted classes_ => |m| m.classes().cloned();
    fitted n_samples_fit_ => |m| m.n_samples_fit();
    {
        /// `(distances, indices)` of the nearest training samples; `X=None` queries the
        /// training set itself, each sample excluded from its own neighbours.
        #[pyo3(signature = (x = None, n_neighbors = None))]
        fn kneighbors<'py>(
            &self,
            py: Python<'py>,
            x: Option<&Bound<'py, PyAny>>,
            n_neighbors: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let k = count(n_neighbors, "n_neighbors")?;
            let (dist, ind) = match x.filter(|o| !o.is_none()) {
                Some(x) => {
                    let x = f64_array::<Ix2>(x, "X")?;
                    let xv = x.view();
                    self.inner.read(py, |m| m.kneighbors(&xv, k))
                }
                None => self.inner.read(py, |m| m.kneighbors_of_training(k)),
            }
            .map_err(to_py_err)?;
            (dist, ind.mapv(|i| i as i64)).to_python(py)
        }
    }
}
