//! `rustyml._native.neural_network`: one native model class for every Keras-style network.
//!
//! A model crosses the boundary as its layer configs (Keras's `{"class_name", "config"}` JSON,
//! the same JSON a saved file stores) plus arrays; the crate's
//! [`crate::neural_network::keras`] builds it. Training runs batch by batch with the GIL
//! released, in the crate's epoch order; between batches the GIL is taken back briefly to
//! check for Ctrl-C and report progress, so an interrupt stops at a batch boundary with the
//! model intact.

use crate::error::{Error, Result};
use crate::neural_network::keras::KerasSequential;
use crate::neural_network::sequential::TrainingSnapshot;
use crate::neural_network::Tensor;
use crate::python::to_py_err;
use ndarray::{ArrayD, Axis, IxDyn};
use numpy::{IntoPyArray, PyArrayDyn, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One network: the Rust `Sequential` plus the shapes the Python front asks about.
#[pyclass(
    name = "NativeSequential",
    module = "rustyml._native.neural_network",
    frozen
)]
pub(crate) struct PySequential {
    /// Read by inference and queries (any number at once), written by training steps and
    /// setters (alone).
    state: RwLock<KerasSequential>,
    /// Held by a training call for its whole length (the state lock is held only during each
    /// step, never while Python runs): a second training call from another thread waits its
    /// turn, one from the training thread itself (a metric or callback) is refused.
    train_gate: Mutex<()>,
    trainer: Mutex<Option<std::thread::ThreadId>>,
}

/// The weights and optimizer state of a model at one moment (see `snapshot`).
#[pyclass(
    name = "NativeSnapshot",
    module = "rustyml._native.neural_network",
    frozen
)]
pub(crate) struct PySnapshot {
    inner: TrainingSnapshot,
}

/// Marks the thread as the model's trainer until dropped.
struct Training<'a> {
    _gate: std::sync::MutexGuard<'a, ()>,
    trainer: &'a Mutex<Option<std::thread::ThreadId>>,
}

impl Drop for Training<'_> {
    fn drop(&mut self) {
        *self
            .trainer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

impl PySequential {
    /// The model's state to read, for one call: predictions from several threads run side by
    /// side (see [`crate::python::model::read_network`] for why the wait releases the GIL).
    fn read(&self, py: Python<'_>) -> PyResult<RwLockReadGuard<'_, KerasSequential>> {
        crate::python::model::read_network(&self.state, py)
    }

    /// The model's state to change, for one call (one step of training, a setter): waits,
    /// GIL released, until no other call reads or writes it.
    fn write(&self, py: Python<'_>) -> PyResult<RwLockWriteGuard<'_, KerasSequential>> {
        crate::python::model::write_network(&self.state, py)
    }

    /// The right to train, for one training call: refused (RuntimeError) when this thread
    /// is already training the model (a metric or callback calling back into it), waited
    /// for (GIL released) when another thread is.
    fn begin_training(&self, py: Python<'_>) -> PyResult<Training<'_>> {
        let me = std::thread::current().id();
        let trainer = || {
            self.trainer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if *trainer() == Some(me) {
            return Err(PyRuntimeError::new_err(
                "this model is already training on this thread: fit or train_on_batch cannot \
                 be called from inside its own training loop (a metric or callback)",
            ));
        }
        loop {
            match self.train_gate.try_lock() {
                Ok(gate) => {
                    *trainer() = Some(me);
                    return Ok(Training {
                        _gate: gate,
                        trainer: &self.trainer,
                    });
                }
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    drop(p.into_inner());
                    self.train_gate.clear_poison();
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    py.detach(|| drop(self.train_gate.lock()));
                }
            }
        }
    }
}

/// The weights of a `sample_weight` argument: one finite float per sample (`n`), read in
/// place (a contiguous array; the Python front hands one over).
pub(crate) fn sample_weight_slice<'a>(
    weights: Option<&'a numpy::PyReadonlyArray1<'_, f32>>,
    n: usize,
) -> PyResult<Option<&'a [f32]>> {
    let Some(w) = weights else { return Ok(None) };
    let w = w
        .as_slice()
        .map_err(|_| PyValueError::new_err("sample_weight must be a contiguous array"))?;
    if w.len() != n {
        return Err(PyValueError::new_err(format!(
            "sample_weight must hold one weight per sample ({n}), got {}",
            w.len()
        )));
    }
    if let Some(bad) = w.iter().find(|v| !v.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "sample_weight must be finite, got {bad}"
        )));
    }
    Ok(Some(w))
}

fn check_batch(batch_size: usize) -> PyResult<usize> {
    if batch_size == 0 {
        return Err(PyValueError::new_err("batch_size must be at least 1"));
    }
    Ok(batch_size)
}

#[pymethods]
impl PySequential {
    /// Builds every layer for samples of `input_shape`; a layer that does not fit its
    /// predecessor is refused, naming both.
    #[new]
    #[pyo3(signature = (layers_json, input_shape, seed=None))]
    fn new(layers_json: &str, input_shape: Vec<usize>, seed: Option<u64>) -> PyResult<Self> {
        let model = KerasSequential::from_layers_json(layers_json, &input_shape, seed)
            .map_err(to_py_err)?;
        Ok(Self {
            state: RwLock::new(model),
            train_gate: Mutex::new(()),
            trainer: Mutex::new(None),
        })
    }

    /// Sets the optimizer and the loss from their configs.
    fn compile(&self, py: Python<'_>, optimizer_json: &str, loss_json: &str) -> PyResult<()> {
        self.write(py)?
            .compile_json(optimizer_json, loss_json)
            .map_err(to_py_err)
    }

    /// The per-sample output shape of the last layer.
    fn output_shape(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        Ok(self.read(py)?.output_shape().to_vec())
    }

    /// `(layer type, kind, per-sample output shape, parameter count)` per layer.
    #[allow(clippy::type_complexity)]
    fn layer_summaries(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(String, String, Vec<usize>, usize)>> {
        Ok(self
            .read(py)?
            .layer_summaries()
            .into_iter()
            .map(|(kind, shape, params)| (kind.to_lowercase(), kind, shape, params))
            .collect())
    }

    /// One epoch of mini-batch training; returns the sample-weighted mean loss. `progress`
    /// is called as `progress(batches_done, mean_loss_so_far)` after every batch, and
    /// `batch_output` (for Keras's running training metrics) as `batch_output(output, indices)`
    /// with the batch's training-mode output and the samples it holds, so no epoch-long copy
    /// of the outputs is kept.
    ///
    /// The model's lock is held during each step only, not while Python runs: the callbacks
    /// may use the model (predict, get_weights, set_weights, ...). A loss or weight that
    /// becomes NaN or infinite at any batch (the last included) is an error; with `snapshot`
    /// the model's weights and optimizer state are first put back to it.
    ///
    /// `sample_weight` (one per sample) weights each sample's loss as Keras's
    /// `sample_weight` does. With `terminate_on_nan` (Keras's `TerminateOnNaN`) a
    /// non-finite loss is no error: the epoch stops after that batch (reported to
    /// `progress` and `batch_output` like any other) with the weights as that step left them,
    /// and the returned mean loss is non-finite.
    #[pyo3(signature = (x, y, batch_size, shuffle, epoch, progress=None, batch_output=None, snapshot=None, sample_weight=None, terminate_on_nan=false))]
    #[allow(clippy::too_many_arguments)]
    fn train_epoch(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
        y: PyReadonlyArrayDyn<'_, f32>,
        batch_size: usize,
        shuffle: bool,
        epoch: u64,
        progress: Option<Py<PyAny>>,
        batch_output: Option<Py<PyAny>>,
        snapshot: Option<PyRef<'_, PySnapshot>>,
        sample_weight: Option<numpy::PyReadonlyArray1<'_, f32>>,
        terminate_on_nan: bool,
    ) -> PyResult<f32> {
        let batch_size = check_batch(batch_size)?;
        let (xv, yv) = (x.as_array(), y.as_array());
        let n = xv.shape()[0];
        if yv.shape()[0] != n {
            return Err(PyValueError::new_err(format!(
                "x and y have different numbers of samples ({n} and {})",
                yv.shape()[0]
            )));
        }
        let weights = sample_weight_slice(sample_weight.as_ref(), n)?;
        let _training = self.begin_training(py)?;
        let order = {
            let mut st = self.write(py)?;
            if !st.is_compiled() {
                return Err(PyValueError::new_err(
                    "the model must be compiled before training",
                ));
            }
            st.check_training_batch(batch_size.min(n.max(1)))
                .map_err(to_py_err)?;
            // the crate's epoch order: the batches `Sequential::fit_with_batches` trains on
            st.model_mut().epoch_order(n, shuffle, epoch)
        };
        let snapshot = snapshot.as_deref().map(|s| &s.inner);
        let mut total = 0.0f64;
        let mut seen = 0usize;
        let mut stopped = false;
        for (b, idx) in order.chunks(batch_size).enumerate() {
            let out = {
                let mut st = self.write(py)?;
                let model = st.model_mut();
                crate::python::parallel::detach(py, || -> PyResult<Tensor> {
                    let (loss, out) = model
                        .train_rows_weighted(xv.view(), yv.view(), weights, idx)
                        .map_err(to_py_err)?;
                    if terminate_on_nan {
                        // Keras's TerminateOnNaN looks at the loss only, after the step
                        total += f64::from(loss) * idx.len() as f64;
                        seen += idx.len();
                        stopped = !loss.is_finite();
                        return Ok(out);
                    }
                    let problem = if !loss.is_finite() {
                        format!("the loss became {loss} at batch {b}")
                    } else if !model.weights_finite() {
                        format!(
                            "the weights became NaN or infinite at batch {b} (the step diverged)"
                        )
                    } else {
                        total += f64::from(loss) * idx.len() as f64;
                        seen += idx.len();
                        return Ok(out);
                    };
                    let restored = match snapshot {
                        Some(snap) => {
                            model.restore(snap).map_err(to_py_err)?;
                            "; the weights and optimizer state are back to their values before \
                             this call"
                        }
                        None => "",
                    };
                    Err(PyValueError::new_err(format!(
                        "{problem}: lower the learning rate or scale the inputs{restored}"
                    )))
                })?
            };
            // the lock is released: Python code below may use the model
            py.check_signals()?;
            if let Some(cb) = &batch_output {
                let indices = numpy::PyArray1::from_slice(py, idx);
                cb.call1(py, (out.into_pyarray(py), indices))?;
            }
            if let Some(cb) = &progress {
                cb.call1(py, (b + 1, (total / seen as f64) as f32))?;
            }
            if stopped {
                break;
            }
        }
        Ok((total / seen.max(1) as f64) as f32)
    }

    /// `epochs` of the crate's own mini-batch loop (`Sequential::fit_with_batches`: no
    /// callbacks, epochs numbered on from its previous calls); the per-epoch losses. The
    /// Rust door, reachable from Python so that the two doors can be compared.
    fn fit_with_batches(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
        y: PyReadonlyArrayDyn<'_, f32>,
        epochs: u32,
        batch_size: usize,
    ) -> PyResult<Vec<f32>> {
        let _training = self.begin_training(py)?;
        let (x, y) = (x.as_array().to_owned(), y.as_array().to_owned());
        let mut st = self.write(py)?;
        let model = st.model_mut();
        crate::python::parallel::detach(py, || model.fit_with_batches(&x, &y, epochs, batch_size))
            .map(|h| h.loss().to_vec())
            .map_err(to_py_err)
    }

    /// The batch's mean loss and the gradients of `fraction` times it, one float32 array per
    /// parameter (`Sequential::loss_and_gradients`); weights and optimizer state unchanged.
    fn loss_and_gradients<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArrayDyn<'_, f32>,
        y: PyReadonlyArrayDyn<'_, f32>,
        fraction: f32,
    ) -> PyResult<(f32, Vec<Bound<'py, numpy::PyArray1<f32>>>)> {
        let (x, y) = (x.as_array().to_owned(), y.as_array().to_owned());
        let mut st = self.write(py)?;
        if !st.is_compiled() {
            return Err(PyValueError::new_err(
                "the model must be compiled before computing gradients",
            ));
        }
        st.check_training_batch(x.shape().first().copied().unwrap_or(0).max(1))
            .map_err(to_py_err)?;
        let model = st.model_mut();
        let (loss, grads) =
            crate::python::parallel::detach(py, || model.loss_and_gradients(&x, &y, fraction))
                .map_err(to_py_err)?;
        Ok((
            loss,
            grads.into_iter().map(|g| g.into_pyarray(py)).collect(),
        ))
    }

    /// One optimizer step with the given gradients (laid out as `loss_and_gradients` returns
    /// them): `Sequential::apply_gradients`.
    fn apply_gradients(
        &self,
        py: Python<'_>,
        grads: Vec<numpy::PyReadonlyArray1<'_, f32>>,
    ) -> PyResult<()> {
        let grads: Vec<Vec<f32>> = grads.iter().map(|g| g.as_array().to_vec()).collect();
        let _training = self.begin_training(py)?;
        let mut st = self.write(py)?;
        if !st.is_compiled() {
            return Err(PyValueError::new_err(
                "the model must be compiled before applying gradients",
            ));
        }
        let model = st.model_mut();
        crate::python::parallel::detach(py, || model.apply_gradients(&grads)).map_err(to_py_err)
    }

    /// The model's weights and optimizer state now; `None` when the optimizer cannot copy
    /// its state.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Option<PySnapshot>> {
        Ok(self
            .read(py)?
            .model()
            .snapshot()
            .map(|inner| PySnapshot { inner }))
    }

    /// The whole training state (weights, optimizer state, shuffling position) as bytes
    /// for pickling, with a SHA-256 digest of it in front: [`STATE_HEADER`], the digest in
    /// hex, then the crate's `KerasSequential::state_bytes`.
    fn state_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let body = self.read(py)?.state_bytes().map_err(to_py_err)?;
        let mut out = STATE_HEADER.to_vec();
        out.extend_from_slice(state_digest(&body).as_bytes());
        out.extend_from_slice(&body);
        Ok(pyo3::types::PyBytes::new(py, &out))
    }

    /// Puts back a state from `state_bytes` of a model built from the same configs and
    /// compiled alike; a damaged state (its digest does not match) is a `ValueError`, and on
    /// any error the model is unchanged.
    fn load_state_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let damaged = |why: &str| {
            PyValueError::new_err(format!(
                "the pickled Sequential state is damaged (truncated or altered?): {why}"
            ))
        };
        let rest = data
            .strip_prefix(STATE_HEADER)
            .ok_or_else(|| damaged("it does not start with rustyml's state header"))?;
        if rest.len() < 64 {
            return Err(damaged("it is shorter than its digest"));
        }
        let (digest, body) = rest.split_at(64);
        if digest != state_digest(body).as_bytes() {
            return Err(damaged(
                "its contents do not match the SHA-256 digest stored with it",
            ));
        }
        self.write(py)?.load_state_bytes(body).map_err(to_py_err)
    }

    /// Puts back the weights and optimizer state of `snapshot`.
    fn restore(&self, py: Python<'_>, snapshot: PyRef<'_, PySnapshot>) -> PyResult<()> {
        self.write(py)?
            .model_mut()
            .restore(&snapshot.inner)
            .map_err(to_py_err)
    }

    /// Which layers get optimizer updates (Keras's `trainable`), one flag per layer.
    fn set_trainable(&self, py: Python<'_>, flags: Vec<bool>) -> PyResult<()> {
        let mut st = self.write(py)?;
        if flags.len() != st.model().layers().len() {
            return Err(PyValueError::new_err(format!(
                "set_trainable: the model has {} layers, got {} flags",
                st.model().layers().len(),
                flags.len()
            )));
        }
        for (i, t) in flags.into_iter().enumerate() {
            st.model_mut()
                .set_layer_trainable(i, t)
                .map_err(to_py_err)?;
        }
        Ok(())
    }

    /// The loss over all samples in batches, each batch's loss weighted by its size (Keras's
    /// running mean); with `sample_weight` (one per sample) each batch's loss is Keras's
    /// weighted one, so the whole is `sum(w_i loss_i) / n`.
    #[pyo3(signature = (x, y, batch_size, sample_weight=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
        y: PyReadonlyArrayDyn<'_, f32>,
        batch_size: usize,
        sample_weight: Option<numpy::PyReadonlyArray1<'_, f32>>,
    ) -> PyResult<f32> {
        let batch_size = check_batch(batch_size)?;
        let (xv, yv) = (x.as_array(), y.as_array());
        let n = xv.shape()[0];
        let weights = sample_weight_slice(sample_weight.as_ref(), n)?;
        let st = self.read(py)?;
        if !st.is_compiled() {
            return Err(PyValueError::new_err(
                "the model must be compiled before evaluate",
            ));
        }
        crate::python::parallel::detach(py, || {
            let mut total = 0.0f64;
            for start in (0..n).step_by(batch_size) {
                let end = (start + batch_size).min(n);
                // the caller's rows, read in place
                let xb = xv.slice_axis(Axis(0), (start..end).into());
                let yb = yv.slice_axis(Axis(0), (start..end).into()).to_owned();
                let loss = match weights {
                    None => st.model().evaluate_view(xb, &yb)?,
                    Some(w) => st.model().evaluate_view_weighted(xb, &yb, &w[start..end])?,
                };
                total += f64::from(loss) * (end - start) as f64;
            }
            Ok((total / n.max(1) as f64) as f32)
        })
        .map_err(to_py_err)
    }

    /// Inference outputs, in batches.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArrayDyn<'py, f32>,
        batch_size: usize,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let batch_size = check_batch(batch_size)?;
        let xv = x.as_array();
        let n = xv.shape()[0];
        let st = self.read(py)?;
        let out = crate::python::parallel::detach(py, || -> Result<Tensor> {
            let mut parts = Vec::new();
            for start in (0..n).step_by(batch_size) {
                let end = (start + batch_size).min(n);
                // the caller's rows, read in place
                let xb = xv.slice_axis(Axis(0), (start..end).into());
                parts.push(st.model().predict_view(xb)?);
            }
            if parts.len() == 1 {
                return Ok(parts.pop().expect("one part"));
            }
            let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
            ndarray::concatenate(Axis(0), &views)
                .map_err(|e| Error::computation(format!("joining batch outputs: {e}")))
        })
        .map_err(to_py_err)?;
        Ok(out.into_pyarray(py))
    }

    /// The first layer whose inference output holds NaN or infinity for the samples `x`
    /// (index and type), or `None`: how `predict` names the layer where finite input went
    /// non-finite. Runs layer by layer, so the caller passes only the offending samples.
    fn first_non_finite_layer(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
    ) -> PyResult<Option<(usize, String)>> {
        let st = self.read(py)?;
        let mut t: Tensor = x.as_array().to_owned();
        for (i, layer) in st.model().layers().iter().enumerate() {
            t = layer.predict(&t).map_err(to_py_err)?;
            if t.iter().any(|v| !v.is_finite()) {
                return Ok(Some((i, layer.layer_type().to_string())));
            }
        }
        Ok(None)
    }

    /// Calls `callback` while holding the model's read lock, as a prediction does, and
    /// returns its result: lets a test hold the lock at a known moment to show that other
    /// reads proceed meanwhile. `callback` must not change the model (a write would wait for
    /// this very lock).
    fn _hold_read_lock(&self, py: Python<'_>, callback: Py<PyAny>) -> PyResult<Py<PyAny>> {
        let _guard = self.read(py)?;
        callback.call0(py)
    }

    /// Per-sample input shape the model was built for.
    fn input_shape(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        Ok(self.read(py)?.input_shape().to_vec())
    }
}

crate::python::model::network_weight_pymethods!(PySequential);

/// Leads a pickled model state (the version is the last byte).
const STATE_HEADER: &[u8] = b"rustyml.NativeSequential.state\x01";

/// The SHA-256 (hex) of a model state: [`file_digest`] of it as one byte tensor.
fn state_digest(body: &[u8]) -> String {
    file_digest(
        &HashMap::new(),
        [("state", "U8".to_string(), &[body.len()][..], body)],
    )
}

/// The metadata key holding the file's digest.
const DIGEST_KEY: &str = "rustyml.sha256";

/// SHA-256 over the metadata (every key but [`DIGEST_KEY`], sorted) and the tensors (sorted
/// by name: name, dtype, shape, bytes), each field length-prefixed so no two different
/// files hash the same byte stream. safetensors has no checksum of its own: without this a
/// flipped byte in a weight loads silently and changes every prediction.
fn file_digest<'a>(
    metadata: &HashMap<String, String>,
    tensors: impl IntoIterator<Item = (&'a str, String, &'a [usize], &'a [u8])>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"rustyml.safetensors.sha256/1");
    let mut keys: Vec<&String> = metadata.keys().filter(|k| *k != DIGEST_KEY).collect();
    keys.sort();
    field(&(keys.len() as u64).to_le_bytes());
    for k in keys {
        field(k.as_bytes());
        field(metadata[k].as_bytes());
    }
    let mut tensors: Vec<_> = tensors.into_iter().collect();
    tensors.sort_by(|a, b| a.0.cmp(b.0));
    field(&(tensors.len() as u64).to_le_bytes());
    for (name, dtype, shape, bytes) in tensors {
        field(name.as_bytes());
        field(dtype.as_bytes());
        let dims: Vec<u8> = shape
            .iter()
            .flat_map(|d| (*d as u64).to_le_bytes())
            .collect();
        field(&dims);
        field(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a save to `path` writes: the final target of a chain of symlinks (so the link is
/// kept and its target updated), refused when that is not a regular file (a FIFO, a device,
/// a directory) or cannot be resolved.
fn save_target(path: &std::path::Path) -> PyResult<std::path::PathBuf> {
    let mut target = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target),
            Err(e) => {
                return Err(PyOSError::new_err(format!(
                    "cannot write {}: {e}",
                    path.display()
                )))
            }
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&target).map_err(|e| {
                    PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
                })?;
                target = match target.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(m) if m.is_file() => return Ok(target),
            Ok(m) => {
                let kind = if m.is_dir() {
                    "a directory"
                } else {
                    "not a regular file (a FIFO, socket or device)"
                };
                return Err(PyValueError::new_err(format!(
                    "cannot save to {}: {} is {kind}; give the path of a regular file",
                    path.display(),
                    target.display()
                )));
            }
        }
    }
    Err(PyOSError::new_err(format!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )))
}

/// Writes `bytes` to `target` atomically: a temporary file in the same directory, flushed to
/// disk, then renamed over `target`, so a failed save leaves any earlier file whole.
fn write_atomically(
    path: &std::path::Path,
    target: &std::path::Path,
    bytes: &[u8],
) -> PyResult<()> {
    use std::io::Write;
    let err =
        |e: std::io::Error| PyOSError::new_err(format!("cannot write {}: {e}", path.display()));
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_string());
    let mut tmp = None;
    for attempt in 0..100u32 {
        let candidate = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => {
                tmp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(err(e)),
        }
    }
    let Some((tmp_path, mut file)) = tmp else {
        return Err(PyOSError::new_err(format!(
            "cannot write {}: no free temporary name in {}",
            path.display(),
            dir.display()
        )));
    };
    let result = (|| {
        // keep the permissions of the file being replaced
        if let Ok(m) = std::fs::metadata(target) {
            file.set_permissions(m.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp_path, target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp_path);
        return Err(err(e));
    }
    Ok(())
}

/// Writes `arrays` (named `weight_000`, `weight_001`, ... to keep their order) and `metadata`
/// as a safetensors file that any safetensors reader can open, with the SHA-256 of both in
/// the metadata (key `rustyml.sha256`). `path` may be a symlink (its target is written); a
/// FIFO, device or directory there is refused; the file is replaced atomically.
#[pyfunction]
fn save_safetensors(
    py: Python<'_>,
    path: std::path::PathBuf,
    mut metadata: HashMap<String, String>,
    arrays: Vec<PyReadonlyArrayDyn<'_, f32>>,
) -> PyResult<()> {
    let owned: Vec<(String, Vec<usize>, Vec<u8>)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let bytes: Vec<u8> = a.as_array().iter().flat_map(|v| v.to_le_bytes()).collect();
            (format!("weight_{i:04}"), a.shape().to_vec(), bytes)
        })
        .collect();
    py.detach(|| {
        let digest = file_digest(
            &metadata,
            owned.iter().map(|(n, s, b)| {
                (
                    n.as_str(),
                    format!("{:?}", safetensors::Dtype::F32),
                    s.as_slice(),
                    b.as_slice(),
                )
            }),
        );
        metadata.insert(DIGEST_KEY.to_string(), digest);
        let views = owned
            .iter()
            .map(|(name, shape, bytes)| {
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), bytes)
                    .map(|v| (name.clone(), v))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(format!("cannot encode weights: {e}")))?;
        let bytes = safetensors::tensor::serialize(views, Some(metadata))
            .map_err(|e| PyValueError::new_err(format!("cannot encode weights: {e}")))?;
        let target = save_target(&path)?;
        write_atomically(&path, &target, &bytes)
    })
}

/// Reads a file written by [`save_safetensors`]: its metadata, its f32 arrays in order, and
/// whether it carried a digest (files written before digests were stored do not; the caller
/// warns that they cannot be verified). A truncated or altered file (a digest mismatch), or
/// a tensor holding NaN or infinity, is a `ValueError` that says so.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn load_safetensors<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
) -> PyResult<(Bound<'py, PyDict>, Vec<Bound<'py, PyArrayDyn<f32>>>, bool)> {
    let bytes = std::fs::read(&path)
        .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", path.display())))?;
    let bad = |e: &dyn std::fmt::Display| {
        PyValueError::new_err(format!(
            "{} is not a valid safetensors model file (truncated or altered?): {e}",
            path.display()
        ))
    };
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| bad(&e))?;
    let tensors = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| bad(&e))?;
    let metadata: HashMap<String, String> = header.metadata().clone().unwrap_or_default();
    let named = tensors.tensors();
    let verified = match metadata.get(DIGEST_KEY) {
        Some(stored) => {
            let actual = file_digest(
                &metadata,
                named
                    .iter()
                    .map(|(n, v)| (n.as_str(), format!("{:?}", v.dtype()), v.shape(), v.data())),
            );
            if *stored != actual {
                return Err(bad(
                    &"its contents do not match the SHA-256 digest stored in it",
                ));
            }
            true
        }
        None => false,
    };
    let meta = PyDict::new(py);
    for (k, v) in &metadata {
        if k != DIGEST_KEY {
            meta.set_item(k, v)?;
        }
    }
    let mut named = named;
    named.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(named.len());
    for (name, view) in named {
        if view.dtype() != safetensors::Dtype::F32 {
            return Err(bad(&format!(
                "tensor {name} is {:?}, not F32",
                view.dtype()
            )));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // save writes finite weights only from a finite model; NaN or infinity here means a
        // damaged file, and would reach every prediction silently
        if values.iter().any(|v| !v.is_finite()) {
            return Err(bad(&format!("tensor {name} holds NaN or infinity")));
        }
        let arr = ArrayD::from_shape_vec(IxDyn(view.shape()), values).map_err(|e| bad(&e))?;
        out.push(arr.into_pyarray(py));
    }
    Ok((meta, out, verified))
}

/// Keras's `Normalization.adapt` statistics: the mean and population variance of every index
/// of the kept axes (`axis`, Keras's numbering; empty for one scalar pair) over the other axes
/// of all `batches` together, computed with the crate's deterministic moments, GIL released.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn normalization_adapt<'py>(
    py: Python<'py>,
    batches: Vec<PyReadonlyArrayDyn<'py, f64>>,
    axis: Vec<i64>,
) -> PyResult<(Bound<'py, PyArrayDyn<f32>>, Bound<'py, PyArrayDyn<f32>>)> {
    let views: Vec<ndarray::ArrayViewD<'_, f64>> = batches.iter().map(|b| b.as_array()).collect();
    let (mean, variance) = crate::python::parallel::detach(py, || {
        crate::neural_network::layers::adapt_statistics(&views, &axis)
    })
    .map_err(to_py_err)?;
    Ok((mean.into_pyarray(py), variance.into_pyarray(py)))
}

/// `keras.activations.<name>(x)` on a float32 array: the layers' own activation maps, GIL
/// released. `approximate` selects the tanh GELU; `alpha` is ELU's alpha or LeakyReLU's
/// negative slope (Keras's defaults otherwise).
#[pyfunction]
#[pyo3(signature = (x, name, approximate = false, alpha = None))]
fn apply_activation<'py>(
    py: Python<'py>,
    x: PyReadonlyArrayDyn<'py, f32>,
    name: &str,
    approximate: bool,
    alpha: Option<f32>,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    use crate::neural_network::layers::activation::Activation;
    let activation = match (
        crate::neural_network::keras::parse_activation(Some(name)).map_err(to_py_err)?,
        alpha,
    ) {
        (Activation::GELU { .. }, _) => Activation::GELU { approximate },
        (Activation::ELU { .. }, Some(alpha)) => Activation::ELU { alpha },
        (Activation::LeakyReLU { .. }, Some(negative_slope)) => {
            Activation::LeakyReLU { negative_slope }
        }
        (activation, _) => activation,
    };
    activation.validate().map_err(to_py_err)?;
    let mut out = x.as_array().to_owned();
    crate::python::parallel::detach(py, || activation.forward_in_place(&mut out))
        .map_err(to_py_err)?;
    Ok(out.into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySequential>()?;
    m.add_function(wrap_pyfunction!(apply_activation, m)?)?;
    m.add_function(wrap_pyfunction!(normalization_adapt, m)?)?;
    m.add_class::<PySnapshot>()?;
    super::functional_model::register(m)?;
    m.add_function(wrap_pyfunction!(save_safetensors, m)?)?;
    m.add_function(wrap_pyfunction!(load_safetensors, m)?)?;
    Ok(())
}
