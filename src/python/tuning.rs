//! `rustyml._native.tuning`: one submodule per gate family, generated from the gate registry
//! (so a new gate appears here with no edit), plus `matmul.backend` with every gemmkit knob.

use crate::gate::{all_gates, Gate};
use crate::tuning::host::HostClass;
use crate::tuning::matmul::BACKEND_KNOBS;
use crate::tuning::profile::{self, Selection};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyModule, PyTuple};
use std::ffi::CString;

fn leak_cstr(s: String) -> &'static std::ffi::CStr {
    Box::leak(CString::new(s).expect("no NUL in names").into_boxed_c_str())
}

fn threshold_arg(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    what: &str,
) -> PyResult<usize> {
    let value = match (args.len(), kwargs) {
        (1, None) => args.get_item(0)?,
        (0, Some(kw)) if kw.len() == 1 => kw
            .get_item("value")?
            .ok_or_else(|| PyValueError::new_err(format!("{what} takes one argument: value")))?,
        _ => {
            return Err(PyValueError::new_err(format!(
                "{what} takes exactly one argument (a non-negative integer)"
            )))
        }
    };
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what} expects an integer, got bool"
        )));
    }
    let v: i128 = value.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!("{what} expects a non-negative integer"))
    })?;
    usize::try_from(v).map_err(|_| {
        PyValueError::new_err(format!(
            "{what} expects an integer in [0, {}], got {v}",
            usize::MAX
        ))
    })
}

fn add_accessors(
    module: &Bound<'_, PyModule>,
    name: &str,
    doc: String,
    get: fn(&'static Gate) -> usize,
    set: fn(&'static Gate, usize),
    gate: &'static Gate,
) -> PyResult<()> {
    let py = module.py();
    let getter_name = format!("get_{name}");
    let setter_name = format!("set_{name}");
    let what = setter_name.clone();
    let getter = PyCFunction::new_closure(
        py,
        Some(leak_cstr(getter_name.clone())),
        Some(leak_cstr(format!("Current {doc}."))),
        move |_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<usize> {
            Ok(get(gate))
        },
    )?;
    let setter = PyCFunction::new_closure(
        py,
        Some(leak_cstr(setter_name.clone())),
        Some(leak_cstr(format!(
            "Set {doc} (usize::MAX forces serial, 0 forces parallel)."
        ))),
        move |args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
            set(gate, threshold_arg(args, kwargs, &what)?);
            Ok(())
        },
    )?;
    module.add(getter_name.as_str(), getter)?;
    module.add(setter_name.as_str(), setter)?;
    Ok(())
}

fn register_backend(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for knob in BACKEND_KNOBS {
        let (name, get, set) = (knob.name, knob.get, knob.set);
        let setter_name = format!("set_{name}");
        let what = setter_name.clone();
        let getter = PyCFunction::new_closure(
            py,
            Some(leak_cstr(name.to_string())),
            Some(leak_cstr(format!(
                "gemmkit knob {name} (environment variable {}).",
                knob.env
            ))),
            move |_a: &Bound<'_, PyTuple>, _k: Option<&Bound<'_, PyDict>>| -> PyResult<usize> {
                Ok(get())
            },
        )?;
        let setter = PyCFunction::new_closure(
            py,
            Some(leak_cstr(setter_name.clone())),
            Some(leak_cstr(format!(
                "Set gemmkit knob {name}; shadows {} for the rest of the process.",
                knob.env
            ))),
            move |a: &Bound<'_, PyTuple>, k: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
                set(threshold_arg(a, k, &what)?);
                Ok(())
            },
        )?;
        m.add(name, getter)?;
        m.add(setter_name.as_str(), setter)?;
    }
    let names: Vec<&str> = BACKEND_KNOBS.iter().map(|k| k.name).collect();
    m.add("KNOBS", PyTuple::new(py, &names)?)?;
    m.add_function(wrap_pyfunction!(env_var_name, m)?)?;
    Ok(())
}

/// The `GEMMKIT_*` environment variable that configures `knob`.
#[pyfunction]
fn env_var_name(knob: &str) -> PyResult<String> {
    if let Some(k) = BACKEND_KNOBS.iter().find(|k| k.name == knob) {
        Ok(k.env.to_string())
    } else {
        Err(PyKeyError::new_err(format!(
            "unknown gemmkit knob {knob:?}"
        )))
    }
}

/// Every gate as `(family, name, value, default, unit)`.
#[pyfunction]
fn gates(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyTuple>>> {
    all_gates()
        .into_iter()
        .map(|g| (g.family, g.name, g.get(), g.default, g.unit).into_pyobject(py))
        .collect()
}

/// Every gate as `(family, name, source, variable)`: where its value came from
/// (`"default"`, `"profile"`, `"environment"`, `"setter"`) and the `RUSTYML_*` variable it reads.
#[pyfunction]
fn gate_sources(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyTuple>>> {
    all_gates()
        .into_iter()
        .map(|g| (g.family, g.name, g.source().as_str(), g.env_name()).into_pyobject(py))
        .collect()
}

/// Every gemmkit knob as `(name, value, source, variable)`, sources as for gates.
#[pyfunction]
fn knob_sources(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyTuple>>> {
    BACKEND_KNOBS
        .iter()
        .map(|k| (k.name, (k.get)(), k.source().as_str(), k.env).into_pyobject(py))
        .collect()
}

/// This host's class: `{"arch", "isa", "cores", "vendor", "family"}`.
#[pyfunction]
fn host_class(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let host = HostClass::current();
    let d = PyDict::new(py);
    d.set_item("arch", host.arch)?;
    d.set_item("isa", host.isa)?;
    d.set_item("cores", host.cores)?;
    d.set_item("vendor", host.vendor)?;
    d.set_item("family", host.family)?;
    Ok(d)
}

/// The shipped profiles as `(name, text)`.
#[pyfunction]
fn shipped_profiles() -> Vec<(&'static str, &'static str)> {
    profile::SHIPPED.to_vec()
}

/// The profile in force, chosen and applied on the first call (once per process;
/// `rustyml.tuning` calls it at import): `selection` (`"shipped"`, `"file"`, `"none"`, `"no match"`,
/// `"failed"`), `name`, `host` (this machine's class), `profile_host` (its `# match:`),
/// `header` (comment lines), `entries` (`(variable, value, outcome)`; outcome `"profile"` when
/// it applies, else the source that kept its own value, or `"unknown"`), `error`.
#[pyfunction]
fn active_profile(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    describe_profile(py, profile::apply_from_environment())
}

fn describe_profile<'py>(
    py: Python<'py>,
    active: &profile::ActiveProfile,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (selection, error) = match &active.selection {
        Selection::Off => ("none", None),
        Selection::NoMatch => ("no match", None),
        Selection::Shipped(_) => ("shipped", None),
        Selection::File(_) => ("file", None),
        Selection::Failed(message) => ("failed", Some(message.clone())),
    };
    d.set_item("selection", selection)?;
    d.set_item("error", error)?;
    d.set_item("host", active.host.to_string())?;
    let p = active.profile.as_ref();
    d.set_item("name", p.map(|p| p.name.clone()))?;
    d.set_item(
        "profile_host",
        p.and_then(|p| p.host.as_ref().map(|h| h.to_string())),
    )?;
    d.set_item("header", p.map(|p| p.header.clone()).unwrap_or_default())?;
    let entries: Vec<(String, usize, &str)> = active
        .entries
        .iter()
        .map(|e| {
            let outcome = e.outcome.map_or("unknown", |o| o.as_str());
            (e.name.clone(), e.value, outcome)
        })
        .collect();
    d.set_item("entries", entries)?;
    Ok(d)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gate_sources, m)?)?;
    m.add_function(wrap_pyfunction!(knob_sources, m)?)?;
    m.add_function(wrap_pyfunction!(host_class, m)?)?;
    m.add_function(wrap_pyfunction!(shipped_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(active_profile, m)?)?;
    let mut families: Vec<&'static str> = all_gates().iter().map(|g| g.family).collect();
    families.dedup();
    for family in families {
        let sub = super::add_submodule(m, family, |sub| {
            for gate in all_gates().into_iter().filter(|g| g.family == family) {
                let doc = format!(
                    "the {}::{} gate ({}; default {})",
                    family, gate.name, gate.unit, gate.default
                );
                add_accessors(sub, gate.name, doc, Gate::get, Gate::set, gate)?;
            }
            Ok(())
        })?;
        if family == "matmul" {
            super::add_submodule(&sub, "backend", register_backend)?;
        }
    }
    m.add_function(wrap_pyfunction!(gates, m)?)?;
    Ok(())
}
