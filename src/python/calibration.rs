//! `rustyml._native.calibration`: the crate's calibration ladders and knob sweep
//! (`crate::calibration`) for `python -m rustyml calibrate`, plus the host description a
//! deployment profile's `# match:` line records.
//!
//! The run happens on a worker thread that owns every ladder's data; the calling thread waits
//! with the GIL released and takes it back only to call `progress` between steps (the worker
//! waits meanwhile) and to check for Ctrl-C, which stops the run after the step in progress
//! (gates and knobs restored).

use crate::calibration::{self, Calibration, FamilyResult, Options, Suggestion, SweepResult};
use crate::gate::Gate;
use crate::tuning::host;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyModule};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// How often the waiting thread wakes to check for Ctrl-C when no step finishes.
const SIGNAL_POLL: Duration = Duration::from_millis(200);

/// The host as a deployment profile's `# match:` line describes it: `arch`, `isa`
/// (`avx512` / `avx2` / `baseline`), `cores` (logical CPUs available), plus `cpu` (model name)
/// and `match` (the line's body, `arch=... isa=... cores=...`).
#[pyfunction]
fn host_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("arch", host::arch())?;
    d.set_item("isa", host::isa())?;
    d.set_item("cores", host::cores())?;
    d.set_item("cpu", host::cpu_model())?;
    d.set_item("match", host::match_line())?;
    Ok(d)
}

/// Titles of what a run with these options would time (ladders, then the knob sweep).
#[pyfunction]
#[pyo3(signature = (quick=false, filter=None))]
fn titles(quick: bool, filter: Option<String>) -> Vec<String> {
    Options {
        quick,
        filter,
        max_rungs: None,
    }
    .titles()
}

/// A list with one dict per item, each filled by `fill`.
fn dict_list<'py, T>(
    py: Python<'py>,
    items: impl IntoIterator<Item = T>,
    fill: impl Fn(&Bound<'py, PyDict>, T) -> PyResult<()>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for item in items {
        let d = PyDict::new(py);
        fill(&d, item)?;
        list.append(d)?;
    }
    Ok(list)
}

/// A gate's identity, variable, unit and default; `identity_prefix` goes before the keys
/// `family` and `name` (a ladder's dict says `gate_family`, a gate's own dict `family`).
fn set_gate_items(d: &Bound<'_, PyDict>, gate: &Gate, identity_prefix: &str) -> PyResult<()> {
    d.set_item(format!("{identity_prefix}family"), gate.family)?;
    d.set_item(format!("{identity_prefix}name"), gate.name)?;
    d.set_item("env", gate.env_name())?;
    d.set_item("unit", gate.unit)?;
    d.set_item("default", gate.default)
}

fn family_dict<'py>(py: Python<'py>, f: &FamilyResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("title", &f.title)?;
    set_gate_items(&d, f.gate, "gate_")?;
    let rungs = dict_list(py, &f.rungs, |rd, r| {
        rd.set_item("label", &r.label)?;
        rd.set_item("work", r.work)?;
        rd.set_item("serial_us", r.serial_us)?;
        rd.set_item("parallel_us", r.parallel_us)
    })?;
    d.set_item("rungs", rungs)?;
    let (kind, crossover) = match f.suggestion {
        Suggestion::Crossover { below, from, .. } => ("crossover", Some((below, from))),
        Suggestion::ParallelFromSmallest { .. } => ("parallel_from_smallest", None),
        Suggestion::KeepDefault { .. } => ("keep_default", None),
    };
    d.set_item("suggestion", kind)?;
    d.set_item("crossover", crossover)?;
    d.set_item("suggested", f.suggestion.value())?;
    d.set_item("takeaway", f.takeaway())?;
    Ok(d)
}

fn sweep_dict<'py>(py: Python<'py>, s: &SweepResult) -> PyResult<Bound<'py, PyDict>> {
    let sd = PyDict::new(py);
    sd.set_item("products", &s.products)?;
    sd.set_item("rounds", s.rounds)?;
    sd.set_item("self_ratios", &s.self_ratios)?;
    sd.set_item("required_gain", s.required_gain)?;
    let steps = dict_list(py, &s.steps, |st, step| {
        st.set_item("knob", step.knob)?;
        st.set_item("env", step.env)?;
        st.set_item("value", step.value)?;
        st.set_item("ratios", &step.ratios)?;
        st.set_item("median_ratio", step.median_ratio())?;
        st.set_item("kept", step.kept)
    })?;
    sd.set_item("steps", steps)?;
    let changes = dict_list(py, &s.changes, |cd, ch| {
        cd.set_item("name", ch.name)?;
        cd.set_item("env", ch.env)?;
        cd.set_item("from", ch.from)?;
        cd.set_item("to", ch.to)
    })?;
    sd.set_item("changes", changes)?;
    Ok(sd)
}

fn result_dict<'py>(
    py: Python<'py>,
    c: &Calibration,
    command: &str,
    date: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("quick", c.quick)?;
    d.set_item("cancelled", c.cancelled)?;
    let families = PyList::empty(py);
    for f in &c.families {
        families.append(family_dict(py, f)?)?;
    }
    d.set_item("families", families)?;
    let gates = dict_list(py, c.gates(), |gd, g| {
        set_gate_items(gd, g.gate, "")?;
        gd.set_item("suggested", g.value)?;
        gd.set_item("ladders_agree", g.ladders_agree)?;
        gd.set_item("range", g.range)?;
        gd.set_item("measured_by", g.measured_by)
    })?;
    d.set_item("gates", gates)?;
    match &c.sweep {
        None => d.set_item("sweep", py.None())?,
        Some(s) => d.set_item("sweep", sweep_dict(py, s)?)?,
    }
    d.set_item("report", c.markdown(command, date))?;
    Ok(d)
}

/// Run the calibration ladders (and the gemmkit knob sweep unless `filter` excludes it) and
/// return plain data: `families` (per ladder: title, gate, unit, default, rungs with
/// label/work/serial_us/parallel_us, suggested value, takeaway), `gates` (one suggestion per
/// measured gate), `sweep` (or None) and `report` (the markdown, naming `command` and `date`).
///
/// `progress(done, total, step)` is called after every rung and sweep candidate; an exception
/// it raises, or Ctrl-C, stops the run after the step in progress and is re-raised.
/// `max_rungs` caps each ladder (tests).
#[pyfunction]
#[pyo3(signature = (quick=false, filter=None, progress=None, max_rungs=None, command="python -m rustyml calibrate", date=""))]
fn run<'py>(
    py: Python<'py>,
    quick: bool,
    filter: Option<String>,
    progress: Option<Bound<'py, PyAny>>,
    max_rungs: Option<usize>,
    command: &str,
    date: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let options = Options {
        quick,
        filter,
        max_rungs,
    };
    // Steps go out on one channel; the worker then waits for the answer on the other, so
    // `progress` runs between timings, never during one.
    let (step_sender, step_receiver) = channel::<(usize, usize, String)>();
    let (answer_sender, answer_receiver) = channel::<bool>();
    let worker = std::thread::Builder::new()
        .name("rustyml-calibration".into())
        .spawn(move || {
            calibration::run(&options, &mut |p| {
                // A closed channel means the caller is gone: stop too.
                step_sender
                    .send((p.done, p.total, p.step.to_string()))
                    .is_ok()
                    && answer_receiver.recv().unwrap_or(false)
            })
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the calibration: {e}")))?;
    // The receiver is not Sync; the mutex lets the GIL-free wait borrow it.
    let step_receiver = Mutex::new(step_receiver);
    let mut raised: Option<PyErr> = None;
    loop {
        let message = py.detach(|| {
            step_receiver
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .recv_timeout(SIGNAL_POLL)
        });
        match message {
            Ok((done, total, step)) => {
                if let (Some(callback), None) = (&progress, &raised) {
                    raised = callback.call1((done, total, step)).err();
                }
                if raised.is_none() {
                    raised = py.check_signals().err();
                }
                // The worker may already have finished; then nobody listens, which is fine.
                let _ = answer_sender.send(raised.is_none());
            }
            Err(RecvTimeoutError::Timeout) => {
                // Ctrl-C during a step: remembered, and the next answer stops the run.
                if raised.is_none() {
                    raised = py.check_signals().err();
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let outcome = py.detach(move || worker.join());
    if let Some(e) = raised {
        return Err(e);
    }
    let calibration = outcome.map_err(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        PyRuntimeError::new_err(format!("calibration failed: {what}"))
    })?;
    result_dict(py, &calibration, command, date)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(titles, m)?)?;
    m.add_function(wrap_pyfunction!(host_info, m)?)?;
    m.add("WIN_SPEEDUP", calibration::WIN_SPEEDUP)?;
    m.add("MARGIN_FACTOR", calibration::MARGIN_FACTOR)?;
    m.add("MAX_LADDER_SPREAD", calibration::MAX_LADDER_SPREAD)?;
    m.add("MIN_GAIN", calibration::MIN_GAIN)?;
    Ok(())
}
