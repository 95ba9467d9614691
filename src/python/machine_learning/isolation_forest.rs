//! Native `IsolationForest`.

use super::auto_or_value;
use crate::machine_learning::{Contamination, IsolationForest, MaxSamples};
use crate::python::model::native_estimator;
use crate::python::params::{self, count};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt};

/// `"auto"`, an integer count or a float fraction (as scikit-learn tells them apart).
fn parse_max_samples(obj: &Bound<'_, PyAny>) -> PyResult<MaxSamples> {
    let expected = "'auto', an int or a float in (0, 1]";
    let auto = auto_or_value(
        obj,
        "max_samples",
        MaxSamples::Auto,
        expected,
        "'auto', an int or a float",
    )?;
    if let Some(auto) = auto {
        return Ok(auto);
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(MaxSamples::Count(
            count(Some(obj), "max_samples")?.unwrap_or(0),
        ));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(MaxSamples::Fraction(obj.extract()?));
    }
    // numpy scalars: integers count, floats are fractions
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(MaxSamples::Count(usize::try_from(v).map_err(|_| {
            PyValueError::new_err(format!("max_samples must be at least 1, got {v}"))
        })?));
    }
    obj.extract::<f64>()
        .map(MaxSamples::Fraction)
        .map_err(|_| PyTypeError::new_err("max_samples must be 'auto', an int or a float"))
}

fn parse_contamination(obj: &Bound<'_, PyAny>) -> PyResult<Contamination> {
    let expected = "'auto' or a float in (0, 0.5]";
    let auto = auto_or_value(
        obj,
        "contamination",
        Contamination::Auto,
        expected,
        "'auto' or a float",
    )?;
    if let Some(auto) = auto {
        return Ok(auto);
    }
    obj.extract::<f64>()
        .map(Contamination::Fraction)
        .map_err(|_| PyTypeError::new_err("contamination must be 'auto' or a float in (0, 0.5]"))
}

native_estimator! {
    PyIsolationForest(IsolationForest, "IsolationForest");
    new(
        n_estimators: &Bound<'_, PyAny>,
        max_samples: &Bound<'_, PyAny>,
        contamination: &Bound<'_, PyAny>,
        random_state: Option<&Bound<'_, PyAny>>,
    ) {
        let n_estimators = params::required_count(n_estimators, "n_estimators")?;
        let mut model = IsolationForest::builder(n_estimators)
            .with_seed(params::random_state(random_state)?)
            .with_max_samples(parse_max_samples(max_samples)?);
        model.contamination = parse_contamination(contamination)?;
        Ok(model)
    }
    fit(x) => |m, x| m.fit_checked(&x).map(|_| ());
    read score_samples => |m, x| m.score_samples_checked(&x);
    read decision_function => |m, x| m.decision_function_checked(&x);
    read predict => |m, x| m.predict_checked(&x).map(|p| p.mapv(i64::from));
    fitted offset_ => |m| m.offset();
    fitted max_samples_ => |m| m.max_samples_used();
}
