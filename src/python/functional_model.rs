//! `rustyml._native.neural_network.NativeFunctional`: a graph model (Keras's functional
//! API) built from its functional config; arrays cross as lists, one per model input or
//! output. Training runs an epoch's batches with the GIL released, checking for Ctrl-C
//! between batches.

use crate::error::{Error, Result};
use crate::neural_network::keras::KerasFunctional;
use crate::neural_network::{Tensor, TensorView};
use crate::python::to_py_err;
use ndarray::Axis;
use numpy::{IntoPyArray, PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

#[pyclass(
    name = "NativeFunctional",
    module = "rustyml._native.neural_network",
    frozen
)]
pub(crate) struct PyFunctional {
    state: RwLock<KerasFunctional>,
}

impl PyFunctional {
    /// Waits (GIL released) for the model to read.
    fn read(&self, py: Python<'_>) -> PyResult<RwLockReadGuard<'_, KerasFunctional>> {
        crate::python::model::read_network(&self.state, py)
    }

    /// Waits (GIL released) for the model to change.
    fn write(&self, py: Python<'_>) -> PyResult<RwLockWriteGuard<'_, KerasFunctional>> {
        crate::python::model::write_network(&self.state, py)
    }
}

fn views<'a>(arrays: &'a [PyReadonlyArrayDyn<'_, f32>]) -> Vec<TensorView<'a>> {
    arrays.iter().map(|a| a.as_array()).collect()
}

/// Rows `start..end` of every array (views of the same memory).
fn rows<'a>(arrays: &[TensorView<'a>], start: usize, end: usize) -> Vec<TensorView<'a>> {
    arrays
        .iter()
        .map(|a| a.clone().slice_axis_move(Axis(0), (start..end).into()))
        .collect()
}

/// Per-output weight slices of a `sample_weights` argument (empty: none given).
fn weight_slices<'a>(
    weights: Option<&'a [Option<numpy::PyReadonlyArray1<'_, f32>>]>,
    n: usize,
) -> PyResult<Vec<Option<&'a [f32]>>> {
    weights
        .unwrap_or(&[])
        .iter()
        .map(|w| crate::python::neural_network::sample_weight_slice(w.as_ref(), n))
        .collect()
}

/// What training and evaluation read from their arguments, checked in this order: the batch
/// size (at least 1), the inputs' common sample count, and each output's sample weights.
struct Batched<'a> {
    batch_size: usize,
    xs: Vec<TensorView<'a>>,
    ys: Vec<TensorView<'a>>,
    n: usize,
    weights: Vec<Option<&'a [f32]>>,
}

impl<'a> Batched<'a> {
    fn new(
        xs: &'a [PyReadonlyArrayDyn<'_, f32>],
        ys: &'a [PyReadonlyArrayDyn<'_, f32>],
        batch_size: usize,
        sample_weights: Option<&'a [Option<numpy::PyReadonlyArray1<'_, f32>>]>,
    ) -> PyResult<Self> {
        let batch_size = check_batch(batch_size)?;
        let (xs, ys) = (views(xs), views(ys));
        let n = samples(&xs)?;
        let weights = weight_slices(sample_weights, n)?;
        Ok(Self {
            batch_size,
            xs,
            ys,
            n,
            weights,
        })
    }
}

/// The sample-weighted means of the total loss and of each output's loss over the batches
/// of an epoch (accumulated in f64).
#[derive(Default)]
struct LossMeans {
    total: f64,
    each: Vec<f64>,
}

impl LossMeans {
    /// Adds one batch of `samples` samples.
    fn add(&mut self, total: f32, each: &[f32], samples: usize) {
        let w = samples as f64;
        self.total += f64::from(total) * w;
        self.each.resize(each.len(), 0.0);
        for (e, l) in self.each.iter_mut().zip(each) {
            *e += f64::from(*l) * w;
        }
    }

    /// The means over `n` samples.
    fn means(&self, n: usize) -> (f32, Vec<f32>) {
        let n = n.max(1) as f64;
        (
            (self.total / n) as f32,
            self.each.iter().map(|e| (e / n) as f32).collect(),
        )
    }
}

fn check_batch(batch_size: usize) -> PyResult<usize> {
    if batch_size == 0 {
        return Err(PyValueError::new_err("batch_size must be at least 1"));
    }
    Ok(batch_size)
}

/// The common batch size of `xs` (checked by the model too; here to slice safely).
fn samples(xs: &[TensorView<'_>]) -> PyResult<usize> {
    let n = xs
        .first()
        .and_then(|x| x.shape().first().copied())
        .unwrap_or(0);
    if xs.iter().any(|x| x.shape().first() != Some(&n)) {
        return Err(PyValueError::new_err(
            "every input array needs the same number of samples",
        ));
    }
    Ok(n)
}

#[pymethods]
impl PyFunctional {
    /// Builds the model a functional config (JSON) describes.
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        let model = KerasFunctional::from_config(config_json).map_err(to_py_err)?;
        Ok(Self {
            state: RwLock::new(model),
        })
    }

    /// The optimizer config, a JSON list of loss configs (one per output), and the weights.
    fn compile(
        &self,
        py: Python<'_>,
        optimizer_json: &str,
        losses_json: &str,
        loss_weights: Vec<f32>,
    ) -> PyResult<()> {
        self.write(py)?
            .compile_json(optimizer_json, losses_json, loss_weights)
            .map_err(to_py_err)
    }

    fn input_shapes(&self, py: Python<'_>) -> PyResult<Vec<Vec<usize>>> {
        Ok(self.read(py)?.input_shapes().to_vec())
    }

    fn output_shapes(&self, py: Python<'_>) -> PyResult<Vec<Vec<usize>>> {
        Ok(self.read(py)?.output_shapes().to_vec())
    }

    /// Per layer: `(name, class, per-call output shapes, parameter count, weight arrays)`.
    #[allow(clippy::type_complexity)]
    fn layer_summaries(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(String, String, Vec<Vec<usize>>, usize, usize)>> {
        Ok(self.read(py)?.layer_summaries())
    }

    /// One epoch of mini-batch training in the epoch order of `epoch`; returns the
    /// sample-weighted mean total loss and each output's mean loss. `batch_output` (for
    /// Keras's running training metrics) is called as `batch_output(outputs, indices)` with
    /// each batch's training-mode outputs and the samples it holds.
    ///
    /// `sample_weights` holds one entry per output (`None`: unweighted), each one weight per
    /// sample, as Keras's `sample_weight`. The epoch stops after the first batch whose loss is
    /// not finite; the third value returned is the number of batches run.
    #[pyo3(signature = (xs, ys, batch_size, shuffle, epoch, batch_output=None, sample_weights=None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn train_epoch(
        &self,
        py: Python<'_>,
        xs: Vec<PyReadonlyArrayDyn<'_, f32>>,
        ys: Vec<PyReadonlyArrayDyn<'_, f32>>,
        batch_size: usize,
        shuffle: bool,
        epoch: u64,
        batch_output: Option<Py<PyAny>>,
        sample_weights: Option<Vec<Option<numpy::PyReadonlyArray1<'_, f32>>>>,
    ) -> PyResult<(f32, Vec<f32>, usize)> {
        let data = Batched::new(&xs, &ys, batch_size, sample_weights.as_deref())?;
        let mut batches = 0usize;
        let order = self
            .write(py)?
            .model_mut()
            .epoch_order(data.n, shuffle, epoch);
        let mut losses = LossMeans::default();
        for batch in order.chunks(data.batch_size) {
            py.check_signals()?;
            let mut guard = self.write(py)?;
            let model = &mut *guard;
            let step = crate::python::parallel::detach(py, || {
                model
                    .model_mut()
                    .train_rows_weighted(&data.xs, &data.ys, &data.weights, batch)
            })
            .map_err(to_py_err)?;
            drop(guard);
            if let Some(cb) = &batch_output {
                let outs: Vec<_> = step
                    .outputs
                    .into_iter()
                    .map(|o| o.into_pyarray(py))
                    .collect();
                cb.call1(py, (outs, batch.to_vec()))?;
            }
            losses.add(step.loss, &step.output_losses, batch.len());
            batches += 1;
            if !step.loss.is_finite() {
                break;
            }
        }
        let (total, each) = losses.means(data.n);
        Ok((total, each, batches))
    }

    /// The total and per-output losses over all samples, in batches.
    /// With `sample_weights` (as `train_epoch` takes them) each batch's losses are Keras's
    /// weighted ones.
    #[pyo3(signature = (xs, ys, batch_size, sample_weights=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        xs: Vec<PyReadonlyArrayDyn<'_, f32>>,
        ys: Vec<PyReadonlyArrayDyn<'_, f32>>,
        batch_size: usize,
        sample_weights: Option<Vec<Option<numpy::PyReadonlyArray1<'_, f32>>>>,
    ) -> PyResult<(f32, Vec<f32>)> {
        let data = Batched::new(&xs, &ys, batch_size, sample_weights.as_deref())?;
        let guard = self.read(py)?;
        let st = &*guard;
        if !st.is_compiled() {
            return Err(PyValueError::new_err(
                "the model must be compiled before evaluate",
            ));
        }
        crate::python::parallel::detach(py, || -> Result<(f32, Vec<f32>)> {
            let mut losses = LossMeans::default();
            for start in (0..data.n).step_by(data.batch_size) {
                let end = (start + data.batch_size).min(data.n);
                if data.ys.iter().any(|y| y.shape().first() != Some(&data.n)) {
                    return Err(Error::invalid_input(
                        "targets need as many samples as the inputs",
                    ));
                }
                let batch_weights: Vec<Option<&[f32]>> = data
                    .weights
                    .iter()
                    .map(|w| w.map(|w| &w[start..end]))
                    .collect();
                let (l, per) = st.model().evaluate_weighted(
                    &rows(&data.xs, start, end),
                    &rows(&data.ys, start, end),
                    &batch_weights,
                )?;
                losses.add(l, &per, end - start);
            }
            Ok(losses.means(data.n))
        })
        .map_err(to_py_err)
    }

    /// Every output for the samples of `xs`, in batches.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        xs: Vec<PyReadonlyArrayDyn<'py, f32>>,
        batch_size: usize,
    ) -> PyResult<Vec<Bound<'py, PyArrayDyn<f32>>>> {
        let batch_size = check_batch(batch_size)?;
        let xv = views(&xs);
        let n = samples(&xv)?;
        let guard = self.read(py)?;
        let st = &*guard;
        let outs = crate::python::parallel::detach(py, || -> Result<Vec<Tensor>> {
            let mut parts: Vec<Vec<Tensor>> = Vec::new();
            for start in (0..n.max(1)).step_by(batch_size) {
                let end = (start + batch_size).min(n);
                let xb: Vec<TensorView<'_>> = xv
                    .iter()
                    .map(|a| a.slice_axis(Axis(0), (start..end).into()))
                    .collect();
                parts.push(st.model().predict(&xb)?);
            }
            let n_out = parts[0].len();
            (0..n_out)
                .map(|j| {
                    let v: Vec<_> = parts.iter().map(|p| p[j].view()).collect();
                    ndarray::concatenate(Axis(0), &v)
                        .map_err(|e| Error::computation(format!("joining batch outputs: {e}")))
                })
                .collect()
        })
        .map_err(to_py_err)?;
        Ok(outs.into_iter().map(|o| o.into_pyarray(py)).collect())
    }

    /// Keras's `trainable` per layer (in config order).
    fn set_trainable(&self, py: Python<'_>, flags: Vec<bool>) -> PyResult<()> {
        let mut st = self.write(py)?;
        for (i, t) in flags.into_iter().enumerate() {
            st.model_mut()
                .set_layer_trainable(i, t)
                .map_err(to_py_err)?;
        }
        Ok(())
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFunctional>()
}

crate::python::model::network_weight_pymethods!(PyFunctional);
