//! Native `KMeans`.

use super::auto_or_value;
use crate::machine_learning::{KMeans, KMeansInit, NInit};
use crate::python::f64_array;
use crate::python::model::native_estimator;
use crate::python::params;
use ndarray::Ix2;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

/// `"k-means++"`, `"random"` or an array of initial centers.
pub(super) fn parse_init(init: &Bound<'_, PyAny>) -> PyResult<KMeansInit> {
    if let Ok(s) = init.cast::<PyString>() {
        return match s.to_str()? {
            "k-means++" => Ok(KMeansInit::KMeansPlusPlus),
            "random" => Ok(KMeansInit::Random),
            other => Err(PyValueError::new_err(format!(
                "init must be 'k-means++', 'random' or an array of shape (n_clusters, n_features), got {other:?}"
            ))),
        };
    }
    let centers = f64_array::<Ix2>(init, "init")?;
    Ok(KMeansInit::Centers(centers.view().to_owned()))
}

fn parse_n_init(n_init: &Bound<'_, PyAny>) -> PyResult<NInit> {
    let expected = "'auto' or a positive integer";
    if let Some(auto) = auto_or_value(n_init, "n_init", NInit::Auto, expected, expected)? {
        return Ok(auto);
    }
    match n_init.extract::<i64>() {
        Ok(n) if n >= 1 => Ok(NInit::Runs(n as usize)),
        Ok(n) => Err(PyValueError::new_err(format!(
            "n_init must be 'auto' or a positive integer, got {n}"
        ))),
        // an integer too large for i64 is a bad value, anything else a bad type
        Err(_) if n_init.is_instance_of::<PyInt>() => Err(PyValueError::new_err(format!(
            "n_init must be 'auto' or a positive integer below 2**63, got {n_init}"
        ))),
        Err(_) => Err(PyTypeError::new_err(
            "n_init must be 'auto' or a positive integer",
        )),
    }
}

native_estimator! {
    PyKMeans(KMeans, "KMeans");
    new(
        n_clusters: usize,
        init: &Bound<'_, PyAny>,
        n_init: &Bound<'_, PyAny>,
        max_iter: usize,
        tol: f64,
        random_state: Option<&Bound<'_, PyAny>>,
    ) {
        Ok(KMeans::builder(n_clusters)
            .with_init(parse_init(init)?)
            .with_n_init_mode(parse_n_init(n_init)?)
            .with_max_iter(max_iter)
            .with_tol(tol)
            .with_seed(params::random_state(random_state)?))
    }
    fit(x) => |m, x| m.fit_checked(&x).map(|_| ());
    read predict => |m, x| m.predict_checked(&x).map(|l| l.mapv(|l| l as i32));
    read transform => |m, x| m.transform(&x);
    read score => |m, x| m.score(&x);
    fitted cluster_centers_ => |m| m.cluster_centers().cloned();
    fitted labels_ => |m| m.labels().map(|l| l.mapv(|l| l as i32));
    fitted inertia_ => |m| m.inertia();
    fitted n_iter_ => |m| m.n_iter();
    fitted rounding_decided_ => |m| m.rounding_decided();
}
