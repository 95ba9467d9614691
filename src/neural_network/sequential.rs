//! The `Sequential` model: a stack of layers trained by one optimizer against one loss.

use super::layers::layer_weight::LayerWeight;
use super::layers::serialize_model::{
    apply_weights_to_layer, LayerInfo, SerializableLayer, SerializableSequential,
    MODEL_FORMAT_VERSION, MODEL_MAGIC,
};
use super::layers::TrainingParameters;
use super::optimizers::OptimizerState;
use super::traits::{Layer, Loss, Optimizer, ParamGrad};
use super::{NnError, Tensor, TensorView};
use crate::error::{Error, IoError, Result};
use ndarray::Axis;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;
use std::path::Path;

/// Per-epoch training losses returned by `fit` and `fit_with_batches`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct History {
    loss: Vec<f32>,
}

impl History {
    /// The training loss of every epoch, in order. Like Keras, an epoch's entry is measured
    /// during that epoch, each batch before its own update.
    pub fn loss(&self) -> &[f32] {
        &self.loss
    }
}

/// Inference chunks aim for a widest activation of about this many bytes (cache-sized).
pub const INFERENCE_CHUNK_BYTES: usize = 4 << 20;

/// The fewest items an inference chunk holds (smaller ones lose the products' efficiency).
const INFERENCE_MIN_CHUNK: usize = 16;

/// A linear stack of layers.
///
/// `compile` attaches an optimizer and a loss; `train_batch` is one forward/backward/update
/// step; `fit` repeats it on the whole data, `fit_with_batches` on mini-batches in the order
/// [`Sequential::epoch_order`] gives each epoch (from the model's seed: `new_with_seed` /
/// `set_seed`, else one draw of the global seed stream).
pub struct Sequential {
    layers: Vec<Box<dyn Layer>>,
    optimizer: Option<Box<dyn Optimizer>>,
    loss: Option<Box<dyn Loss>>,
    /// The shuffling seed; an unseeded model draws one from the global stream on first use.
    seed: Option<u64>,
    /// Epochs run by `fit_with_batches` since the seed was set: the next call continues the
    /// sequence of epoch orders there, as Keras's `initial_epoch` does.
    epochs_trained: u64,
    /// `frozen[i]`: layer `i` gets no optimizer update (Keras's `trainable = False`); layers
    /// past the end of the list train.
    frozen: Vec<bool>,
}

/// The weights and optimizer state of a [`Sequential`] at one moment, from which
/// [`Sequential::restore`] undoes the training done since.
pub struct TrainingSnapshot {
    weights: Vec<LayerWeight<'static>>,
    optimizer: Option<Box<dyn Optimizer>>,
}

impl Default for Sequential {
    fn default() -> Self {
        Self::new()
    }
}

impl Sequential {
    pub fn new() -> Self {
        Self {
            layers: Vec::new(),
            optimizer: None,
            loss: None,
            seed: None,
            epochs_trained: 0,
            frozen: Vec::new(),
        }
    }

    /// Freezes (`false`) or unfreezes layer `index`: a frozen layer still passes gradients
    /// to the layers before it but gets no optimizer update (no weight decay either), as a
    /// Keras layer with `trainable = False`. All layers train by default.
    pub fn set_layer_trainable(&mut self, index: usize, trainable: bool) -> Result<()> {
        if index >= self.layers.len() {
            return Err(Error::invalid_parameter(
                "index",
                format!(
                    "the model has {} layers, got layer {index}",
                    self.layers.len()
                ),
            ));
        }
        if self.frozen.len() <= index {
            self.frozen.resize(index + 1, false);
        }
        self.frozen[index] = !trainable;
        Ok(())
    }

    /// Whether layer `index` receives optimizer updates (see [`Self::set_layer_trainable`]).
    pub fn layer_trainable(&self, index: usize) -> bool {
        !self.frozen.get(index).copied().unwrap_or(false)
    }

    /// The current weights and optimizer state (copies); `None` when the optimizer cannot
    /// copy its state.
    pub fn snapshot(&self) -> Option<TrainingSnapshot> {
        let optimizer = match &self.optimizer {
            Some(o) => Some(o.snapshot()?),
            None => None,
        };
        Some(TrainingSnapshot {
            weights: self
                .layers
                .iter()
                .map(|l| l.get_weights().into_owned())
                .collect(),
            optimizer,
        })
    }

    /// Puts back the weights and optimizer state of `snapshot`, taken from this model.
    pub fn restore(&mut self, snapshot: &TrainingSnapshot) -> Result<()> {
        if snapshot.weights.len() != self.layers.len() {
            return Err(Error::invalid_input(
                "the snapshot was taken from a model with other layers",
            ));
        }
        for (layer, w) in self.layers.iter_mut().zip(&snapshot.weights) {
            layer.apply_weights(w)?;
        }
        if let Some(opt) = &snapshot.optimizer {
            self.optimizer = opt.snapshot();
        }
        Ok(())
    }

    /// Whether every weight of every layer is finite.
    pub fn weights_finite(&self) -> bool {
        self.layers.iter().all(|l| l.get_weights().all_finite())
    }

    /// A model whose mini-batch shuffling is fixed by `seed`.
    pub fn new_with_seed(seed: u64) -> Self {
        let mut model = Self::new();
        model.seed = Some(seed);
        model
    }

    /// Fixes (and restarts) the mini-batch shuffling.
    pub fn set_seed(&mut self, seed: u64) -> &mut Self {
        self.seed = Some(seed);
        self.epochs_trained = 0;
        self
    }

    /// The sample order of epoch `epoch` (numbered from 0) over `n` samples: `0..n` when
    /// `shuffle` is false, else a permutation that depends on the model's seed and `epoch`
    /// only (not on earlier calls, the thread count or the door the training came through).
    /// Every mini-batch loop takes its batches as consecutive chunks of this order:
    /// `fit_with_batches` here, and the Keras-style front ends, which run their own epoch loop
    /// around callbacks; so one model, data and seed train on the same batches either way.
    pub fn epoch_order(&mut self, n: usize, shuffle: bool, epoch: u64) -> Vec<usize> {
        if !shuffle {
            return (0..n).collect();
        }
        let seed = *self
            .seed
            .get_or_insert_with(|| crate::random::resolve_seed(None));
        shuffled_order(seed, n, epoch)
    }

    /// One training step on the rows `rows` of `x` and `y` (a mini-batch of an epoch order),
    /// gathered into one copy that the first layer keeps as its cache. Returns the loss and
    /// the training-mode output, as [`Self::train_batch_with_output`].
    pub fn train_rows(
        &mut self,
        x: TensorView<'_>,
        y: TensorView<'_>,
        rows: &[usize],
    ) -> Result<(f32, Tensor)> {
        self.train_rows_weighted(x, y, None, rows)
    }

    /// [`Self::train_rows`] with Keras's per-sample loss weights: `sample_weight` holds one
    /// weight per sample of `x` (all of them, not only `rows`); the step's loss is
    /// `sum(w_i loss_i) / batch` and each sample's gradient is scaled by its weight (see
    /// [`crate::neural_network::losses::sample_weights`]). `None` is the unweighted step.
    pub fn train_rows_weighted(
        &mut self,
        x: TensorView<'_>,
        y: TensorView<'_>,
        sample_weight: Option<&[f32]>,
        rows: &[usize],
    ) -> Result<(f32, Tensor)> {
        self.check_trainable()?;
        Self::check_pair(x.shape(), y.shape())?;
        if let Some(&bad) = rows.iter().find(|&&r| r >= x.shape()[0]) {
            return Err(Error::invalid_input(format!(
                "row {bad} is out of range for {} samples",
                x.shape()[0]
            )));
        }
        let weights = match sample_weight {
            Some(w) if w.len() != x.shape()[0] => {
                return Err(Error::invalid_input(format!(
                    "sample_weight holds {} weights for {} samples",
                    w.len(),
                    x.shape()[0]
                )))
            }
            Some(w) => Some(rows.iter().map(|&r| w[r]).collect::<Vec<f32>>()),
            None => None,
        };
        let yb = gather_rows(&y, rows);
        self.step_with_output(Cow::Owned(gather_rows(&x, rows)), &yb, weights.as_deref())
    }

    /// The shuffling seed (`None`: unseeded and not drawn yet).
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// Epochs run by `fit_with_batches` since the seed was set.
    pub fn epochs_trained(&self) -> u64 {
        self.epochs_trained
    }

    /// Puts back the shuffling position of a saved model: its seed and epochs run.
    pub fn resume_shuffling(&mut self, seed: Option<u64>, epochs_trained: u64) {
        self.seed = seed;
        self.epochs_trained = epochs_trained;
    }

    /// The optimizer's running state (see `Optimizer::export_state`); `None` before `compile`
    /// or for an optimizer that cannot export it.
    pub fn optimizer_state(&self) -> Option<OptimizerState> {
        self.optimizer.as_ref()?.export_state()
    }

    /// Puts back an optimizer state from [`Self::optimizer_state`]; on error the optimizer is
    /// unchanged.
    pub fn load_optimizer_state(&mut self, state: &OptimizerState) -> Result<()> {
        let current = self
            .optimizer
            .as_ref()
            .ok_or(NnError::NotCompiled("optimizer"))?;
        let mut next = current.snapshot().ok_or_else(|| {
            Error::invalid_input("this optimizer cannot copy itself to take a saved state")
        })?;
        next.import_state(state)?;
        self.optimizer = Some(next);
        Ok(())
    }

    /// Sets the optimizer's learning rate (no-op before `compile`).
    pub fn set_learning_rate(&mut self, learning_rate: f32) -> &mut Self {
        if let Some(opt) = self.optimizer.as_mut() {
            opt.set_learning_rate(learning_rate);
        }
        self
    }

    /// The optimizer's current learning rate; `None` before `compile`.
    pub fn learning_rate(&self) -> Option<f32> {
        self.optimizer.as_ref().map(|o| o.learning_rate())
    }

    pub fn add<L: 'static + Layer>(&mut self, layer: L) -> &mut Self {
        self.layers.push(Box::new(layer));
        self
    }

    pub fn compile<O, LFunc>(&mut self, optimizer: O, loss: LFunc) -> &mut Self
    where
        O: 'static + Optimizer,
        LFunc: 'static + Loss,
    {
        self.optimizer = Some(Box::new(optimizer));
        self.loss = Some(Box::new(loss));
        self
    }

    /// The layers in order (front ends read shapes and weights through this).
    pub fn layers(&self) -> &[Box<dyn Layer>] {
        &self.layers
    }

    /// The layers in order, mutable (front ends load weights through `Layer::apply_weights`).
    pub fn layers_mut(&mut self) -> &mut [Box<dyn Layer>] {
        &mut self.layers
    }

    fn check_layers(&self) -> Result<()> {
        if self.layers.is_empty() {
            return Err(NnError::EmptyModel.into());
        }
        Ok(())
    }

    fn check_trainable(&self) -> Result<()> {
        self.check_layers()?;
        if self.optimizer.is_none() {
            return Err(NnError::NotCompiled("optimizer").into());
        }
        if self.loss.is_none() {
            return Err(NnError::NotCompiled("loss function").into());
        }
        Ok(())
    }

    /// Both tensors have a batch axis, samples, and the same batch size; returns it.
    fn check_pair(x: &[usize], y: &[usize]) -> Result<usize> {
        if x.is_empty() || y.is_empty() {
            return Err(Error::invalid_input(
                "inputs and targets need a batch axis (rank >= 1)",
            ));
        }
        if x.contains(&0) || y.contains(&0) {
            return Err(Error::empty_input("input tensors"));
        }
        if x[0] != y[0] {
            return Err(Error::dimension_mismatch(x[0], y[0]));
        }
        Ok(x[0])
    }

    /// One training step on `(x, y)`: forward, loss, backward, optimizer update. Returns the
    /// loss of the forward pass, i.e. of the model as it was before this update.
    pub fn train_batch(&mut self, x: &Tensor, y: &Tensor) -> Result<f32> {
        self.check_trainable()?;
        Self::check_pair(x.shape(), y.shape())?;
        self.step(x, y)
    }

    /// `train_batch`, also returning the batch's training-mode output (before the step), from
    /// which Keras computes its running training metrics.
    ///
    /// The batch is handed over: the first layer keeps it as its cache rather than a copy.
    pub fn train_batch_with_output(&mut self, x: Tensor, y: &Tensor) -> Result<(f32, Tensor)> {
        self.check_trainable()?;
        Self::check_pair(x.shape(), y.shape())?;
        self.step_with_output(Cow::Owned(x), y, None)
    }

    /// `train_batch` without the checks (callers have made them).
    fn step(&mut self, x: &Tensor, y: &Tensor) -> Result<f32> {
        self.step_with_output(Cow::Borrowed(x), y, None)
            .map(|(loss, _)| loss)
    }

    fn step_with_output(
        &mut self,
        x: Cow<'_, Tensor>,
        y: &Tensor,
        weights: Option<&[f32]>,
    ) -> Result<(f32, Tensor)> {
        let (loss, out) = self.forward_backward(x, y, weights, 1.0)?;
        let optimizer = self.optimizer.as_mut().expect("checked by check_trainable");
        let frozen = &self.frozen;
        let trains = |i: usize| !frozen.get(i).copied().unwrap_or(false);
        let scale = match optimizer.global_clipnorm() {
            Some(max_norm) => clip_scale(&mut self.layers, max_norm, trains),
            None => 1.0,
        };
        optimizer.step();
        for (i, layer) in self.layers.iter_mut().enumerate() {
            if trains(i) {
                optimizer.update(layer.as_mut(), scale);
            }
        }
        Ok((loss, out))
    }

    /// One training-mode pass: forward, the loss (weighted per sample by `weights`, one per
    /// row of the batch, when given), and backward from `fraction` times its gradient,
    /// leaving every layer's parameter gradients in place; returns the loss and the output.
    /// Shared by a training step (`fraction = 1`) and `loss_and_gradients`, so a
    /// data-parallel shard walks the network exactly as a step does.
    fn forward_backward(
        &mut self,
        x: Cow<'_, Tensor>,
        y: &Tensor,
        weights: Option<&[f32]>,
        fraction: f32,
    ) -> Result<(f32, Tensor)> {
        let loss_fn = self.loss.as_ref().expect("checked by check_trainable");
        for layer in &mut self.layers {
            layer.set_training_if_mode_dependent(true);
        }
        let (first, rest) = self.layers.split_first_mut().expect("checked non-empty");
        // Keras's mask (Embedding(mask_zero=True), Masking) travels with the activations.
        let mut mask = first.compute_mask(x.view(), None)?;
        let mut out = match x {
            Cow::Borrowed(x) => first.forward(x)?,
            Cow::Owned(x) => first.forward_owned(x)?,
        };
        for layer in rest.iter_mut() {
            let next = layer.compute_mask(out.view(), mask.as_ref())?;
            out = match &mask {
                None => layer.forward(&out)?,
                Some(m) => layer.forward_masked(&out, Some(m))?,
            };
            mask = next;
        }
        if mask.is_some() {
            return Err(masked_loss_unsupported());
        }
        let (mut loss, mut grad) = match weights {
            None => (
                loss_fn.compute_loss(y, &out)?,
                loss_fn.compute_grad(y, &out)?,
            ),
            Some(w) => (
                loss_fn.compute_weighted_loss(y, &out, w)?,
                loss_fn.compute_weighted_grad(y, &out, w)?,
            ),
        };
        // Keras adds the layers' regularization penalties (a frozen layer's weights have none)
        // to the loss; each layer adds their gradients, times `fraction`, during backward
        let frozen = &self.frozen;
        for (i, layer) in self.layers.iter_mut().enumerate() {
            loss += layer.regularize(fraction, !frozen.get(i).copied().unwrap_or(false), true);
        }
        if fraction != 1.0 {
            grad.mapv_inplace(|g| g * fraction);
        }
        let (first, rest) = self.layers.split_first_mut().expect("checked non-empty");
        for layer in rest.iter_mut().rev() {
            grad = layer.backward(&grad)?;
        }
        // nothing reads the gradient of the network's input
        first.backward_params_only(&grad)?;
        Ok((loss, out))
    }

    /// The loss of `(x, y)` (the batch's mean, as `train_batch` reports it) and the gradient of
    /// `fraction` times that loss with respect to every parameter of every layer (frozen ones
    /// included), in `parameters()` order, layer by layer; no weight or optimizer state
    /// changes. Data-parallel training splits a global batch of `B` rows into shards of `m_s`
    /// rows and passes `fraction = m_s / B`: the shards' gradients then sum to the global
    /// batch's (up to rounding), because each loss is a mean over its rows. With
    /// `fraction = 1` the gradients are bit for bit those a `train_batch` step applies.
    pub fn loss_and_gradients(
        &mut self,
        x: &Tensor,
        y: &Tensor,
        fraction: f32,
    ) -> Result<(f32, Vec<Vec<f32>>)> {
        self.check_trainable()?;
        Self::check_pair(x.shape(), y.shape())?;
        if !(fraction.is_finite() && fraction > 0.0) {
            return Err(Error::invalid_parameter(
                "fraction",
                format!("must be a finite number > 0, got {fraction}"),
            ));
        }
        let (loss, _) = self.forward_backward(Cow::Borrowed(x), y, None, fraction)?;
        let grads = self
            .layers
            .iter_mut()
            .flat_map(|l| {
                l.parameters()
                    .iter()
                    .map(|p| p.grad.to_vec())
                    .collect::<Vec<_>>()
            })
            .collect();
        Ok((loss, grads))
    }

    /// One optimizer step with the given gradients (laid out as
    /// [`Self::loss_and_gradients`] returns them) instead of a batch's: the global-norm clip,
    /// the step count and each trainable layer's update, exactly as `train_batch` applies its
    /// own gradients. Refused, changing nothing, when the gradients do not fit the layers (or
    /// the layers hold none yet: they list their parameters once a backward pass ran).
    pub fn apply_gradients(&mut self, grads: &[Vec<f32>]) -> Result<()> {
        self.check_trainable()?;
        let sizes: Vec<Vec<usize>> = self
            .layers
            .iter_mut()
            .map(|l| l.parameters().iter().map(|p| p.value.len()).collect())
            .collect();
        let expected: Vec<usize> = sizes.iter().flatten().copied().collect();
        let given: Vec<usize> = grads.iter().map(Vec::len).collect();
        if expected.is_empty() && !given.is_empty() {
            // layers list their parameters once they hold gradients
            return Err(Error::invalid_input(
                "the layers hold no gradients yet: compute gradients (or train one step) on \
                 this model once before applying given ones",
            ));
        }
        if expected != given {
            return Err(Error::invalid_input(format!(
                "the gradients have sizes {given:?} but the parameters have {expected:?}"
            )));
        }
        let frozen = &self.frozen;
        let trains = |i: usize| !frozen.get(i).copied().unwrap_or(false);
        let mut per_layer = Vec::with_capacity(sizes.len());
        let mut rest = grads;
        for s in &sizes {
            let (mine, after) = rest.split_at(s.len());
            per_layer.push(mine);
            rest = after;
        }
        let optimizer = self.optimizer.as_mut().expect("checked by check_trainable");
        // the clip factor of `clip_scale`, from the given gradients in the same order
        let scale = match optimizer.global_clipnorm() {
            Some(max_norm) => {
                let sq: f64 = per_layer
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| trains(*i))
                    .flat_map(|(_, g)| g.iter().map(|p| crate::math::reduction::sq_sum_f32(p)))
                    .sum();
                crate::neural_network::optimizers::kernels::global_clip_factor(sq, max_norm)
            }
            None => 1.0,
        };
        optimizer.step();
        for (i, layer) in self.layers.iter_mut().enumerate() {
            if !trains(i) {
                continue;
            }
            // The optimizer sees the layer's parameters with the given gradients; its state
            // is claimed in call order, so the stand-in meets this layer's buffers.
            let mut stand_in = GivenGradients {
                values: layer
                    .parameters()
                    .iter()
                    .map(|p| p.value.to_vec())
                    .collect(),
                decays: layer.parameters().iter().map(|p| p.decays).collect(),
                grads: per_layer[i].to_vec(),
            };
            optimizer.update(&mut stand_in, scale);
            for (p, v) in layer.parameters().iter_mut().zip(&stand_in.values) {
                p.value.copy_from_slice(v);
            }
        }
        Ok(())
    }

    /// Full-batch training: `epochs` calls of `train_batch` on all of `x`.
    pub fn fit(&mut self, x: &Tensor, y: &Tensor, epochs: u32) -> Result<History> {
        self.check_trainable()?;
        Self::check_pair(x.shape(), y.shape())?;
        let loss = (0..epochs)
            .map(|_| self.step(x, y))
            .collect::<Result<Vec<f32>>>()?;
        Ok(History { loss })
    }

    /// Mini-batch training: every epoch steps on consecutive batches of `batch_size` (the last
    /// one possibly shorter) of [`Self::epoch_order`], the epochs numbered on from those this
    /// model has already run (restarted by `set_seed`). An epoch's
    /// loss is the sample-weighted mean of its batch losses, as Keras reports it.
    pub fn fit_with_batches(
        &mut self,
        x: &Tensor,
        y: &Tensor,
        epochs: u32,
        batch_size: usize,
    ) -> Result<History> {
        self.check_trainable()?;
        let n = Self::check_pair(x.shape(), y.shape())?;
        if batch_size == 0 || batch_size > n {
            return Err(Error::invalid_parameter(
                "batch_size",
                format!("must be in 1..={n} (the number of samples), got {batch_size}"),
            ));
        }
        let mut history = History::default();
        for _ in 0..epochs {
            let order = self.epoch_order(n, true, self.epochs_trained);
            let mut weighted = 0.0f64;
            for batch in order.chunks(batch_size) {
                let xb = gather_rows(&x.view(), batch);
                let yb = gather_rows(&y.view(), batch);
                let loss = self.step_with_output(Cow::Owned(xb), &yb, None)?.0;
                weighted += loss as f64 * batch.len() as f64;
            }
            self.epochs_trained += 1;
            history.loss.push((weighted / n as f64) as f32);
        }
        Ok(history)
    }

    /// The compiled loss of `predict(x)` against `y`; changes nothing.
    pub fn evaluate(&self, x: &Tensor, y: &Tensor) -> Result<f32> {
        self.evaluate_view(x.view(), y)
    }

    /// [`Self::evaluate`] on a borrowed input.
    pub fn evaluate_view(&self, x: TensorView<'_>, y: &Tensor) -> Result<f32> {
        self.evaluate_loss(x, y, None)
    }

    /// [`Self::evaluate_view`] with one loss weight per sample (Keras's
    /// `evaluate(sample_weight=)`): `sum(w_i loss_i) / batch`.
    pub fn evaluate_view_weighted(
        &self,
        x: TensorView<'_>,
        y: &Tensor,
        weights: &[f32],
    ) -> Result<f32> {
        self.evaluate_loss(x, y, Some(weights))
    }

    fn evaluate_loss(&self, x: TensorView<'_>, y: &Tensor, weights: Option<&[f32]>) -> Result<f32> {
        self.check_layers()?;
        let loss_fn = self
            .loss
            .as_ref()
            .ok_or(NnError::NotCompiled("loss function"))?;
        Self::check_pair(x.shape(), y.shape())?;
        if self.output_carries_mask(x.slice_axis(Axis(0), (0..1).into()))? {
            return Err(masked_loss_unsupported());
        }
        // Keras's evaluation loss holds the regularization penalties too: the trainable
        // layers' weights' and every layer's output penalty over the batch, divided by its size
        let batch = x.shape()[0] as f32;
        let mut activity = vec![0.0f64; self.layers.len()];
        let out = self.predict_view_seen(x, &mut |i, out| {
            activity[i] += f64::from(self.layers[i].activity_penalty(out));
        })?;
        let mut loss = match weights {
            None => loss_fn.compute_loss(y, &out)?,
            Some(w) => loss_fn.compute_weighted_loss(y, &out, w)?,
        };
        for (i, layer) in self.layers.iter().enumerate() {
            if self.layer_trainable(i) {
                loss += layer.weight_penalty();
            }
            if activity[i] != 0.0 {
                loss += activity[i] as f32 / batch;
            }
        }
        Ok(loss)
    }

    /// Inference pass (mode-dependent layers such as dropout act as at inference).
    pub fn predict(&self, x: &Tensor) -> Result<Tensor> {
        self.predict_view(x.view())
    }

    /// [`Self::predict`] on a borrowed input (the first layer reads it in place where it can).
    ///
    /// A large batch runs through the whole stack in chunks of items sized so that the widest
    /// activation of a chunk stays cache-sized (about [`INFERENCE_CHUNK_BYTES`]): one layer's
    /// output is read by the next while still in cache, and the activations' memory no
    /// longer grows with the batch. The chunk size follows from the shapes alone (measured on
    /// the first item), so the results never depend on threads or gates.
    pub fn predict_view(&self, x: TensorView<'_>) -> Result<Tensor> {
        self.predict_view_seen(x, &mut |_, _| {})
    }

    /// [`Self::predict_view`], showing each layer's output (chunk by chunk) to `seen` with
    /// the layer's index.
    fn predict_view_seen(
        &self,
        x: TensorView<'_>,
        seen: &mut dyn FnMut(usize, &Tensor),
    ) -> Result<Tensor> {
        self.check_layers()?;
        if x.ndim() == 0 {
            return Err(Error::invalid_input("input needs a batch axis (rank >= 1)"));
        }
        if x.is_empty() {
            return Err(Error::empty_input("input tensors"));
        }
        let n = x.shape()[0];
        let chunk = if self.layers.len() > 1 && n >= 2 * INFERENCE_MIN_CHUNK {
            let widest = self.widest_activation(x.slice_axis(Axis(0), (0..1).into()))?;
            (INFERENCE_CHUNK_BYTES / (widest * std::mem::size_of::<f32>()).max(1))
                .max(INFERENCE_MIN_CHUNK)
        } else {
            n
        };
        if chunk >= n {
            return self.predict_chain(x, &mut *seen);
        }
        let mut out: Option<Tensor> = None;
        for (i, part) in x.axis_chunks_iter(Axis(0), chunk).enumerate() {
            let y = self.predict_chain(part, &mut *seen)?;
            let all = out.get_or_insert_with(|| {
                let mut shape = y.shape().to_vec();
                shape[0] = n;
                Tensor::zeros(shape)
            });
            all.slice_axis_mut(Axis(0), (i * chunk..i * chunk + y.shape()[0]).into())
                .assign(&y);
        }
        Ok(out.expect("at least one chunk"))
    }

    /// The layers one after another on `x`, each output shown to `seen` on its way.
    fn predict_chain(
        &self,
        x: TensorView<'_>,
        mut seen: impl FnMut(usize, &Tensor),
    ) -> Result<Tensor> {
        let (first, rest) = self.layers.split_first().expect("checked non-empty");
        let mut mask = first.compute_mask(x.view(), None)?;
        let mut out = first.predict_view(x)?;
        seen(0, &out);
        for (i, layer) in rest.iter().enumerate() {
            let next = layer.compute_mask(out.view(), mask.as_ref())?;
            out = match &mask {
                None => layer.predict(&out)?,
                Some(m) => layer.predict_masked(&out, Some(m))?,
            };
            mask = next;
            seen(i + 1, &out);
        }
        Ok(out)
    }

    /// Whether the network's output carries a Keras mask (run on one item: whether a mask
    /// exists does not depend on the values).
    fn output_carries_mask(&self, item: TensorView<'_>) -> Result<bool> {
        let (first, rest) = self.layers.split_first().expect("checked non-empty");
        let mut mask = first.compute_mask(item.view(), None)?;
        let mut out = first.predict_view(item)?;
        for layer in rest {
            let next = layer.compute_mask(out.view(), mask.as_ref())?;
            out = layer.predict_masked(&out, mask.as_ref())?;
            mask = next;
        }
        Ok(mask.is_some())
    }

    /// The largest per-item element count among the layers' outputs, from one item.
    fn widest_activation(&self, item: TensorView<'_>) -> Result<usize> {
        let mut widest = 0;
        self.predict_chain(item, |_, out| widest = widest.max(out.len()))?;
        Ok(widest)
    }

    /// Prints a Keras-style table of the layers, their output shapes and parameter counts.
    pub fn summary(&self) {
        print!("{}", self.summary_string());
    }

    fn summary_string(&self) -> String {
        use std::fmt::Write;
        let rule = |c: char| c.to_string().repeat(78);
        let mut s = String::new();
        let mut seen: std::collections::HashMap<String, usize> = Default::default();
        let (mut trainable, mut frozen) = (0usize, 0usize);
        let _ = writeln!(s, "Model: \"sequential\"");
        let _ = writeln!(s, "{}", rule('_'));
        let _ = writeln!(
            s,
            " {:<34}{:<28}{:>14}",
            "Layer (type)", "Output Shape", "Param #"
        );
        let _ = writeln!(s, "{}", rule('='));
        for (i, layer) in self.layers.iter().enumerate() {
            let kind = layer.layer_type();
            let base = snake_case(kind);
            let count = seen.entry(base.clone()).or_insert(0);
            let name = if *count == 0 {
                base.clone()
            } else {
                format!("{base}_{count}")
            };
            *count += 1;
            let params = match layer.param_count() {
                TrainingParameters::Trainable(n) => {
                    trainable += n;
                    n
                }
                TrainingParameters::NonTrainable(n) => {
                    frozen += n;
                    n
                }
                TrainingParameters::NoTrainable => 0,
            };
            let _ = writeln!(
                s,
                " {:<34}{:<28}{:>14}",
                format!("{name} ({kind})"),
                layer.output_shape(),
                params
            );
            let _ = writeln!(
                s,
                "{}",
                rule(if i + 1 == self.layers.len() { '=' } else { '_' })
            );
        }
        if self.layers.is_empty() {
            let _ = writeln!(s, "{}", rule('='));
        }
        let _ = writeln!(s, "Total params: {}", trainable + frozen);
        let _ = writeln!(s, "Trainable params: {trainable}");
        let _ = writeln!(s, "Non-trainable params: {frozen}");
        let _ = writeln!(s, "{}", rule('_'));
        s
    }

    /// Every layer's weights, in order (borrowed).
    pub fn get_weights(&self) -> Vec<LayerWeight<'_>> {
        self.layers.iter().map(|l| l.get_weights()).collect()
    }

    /// Writes the layers' types, output shapes and weights (postcard, `serialize_model`'s
    /// format).
    pub fn save_to_path(&self, path: impl AsRef<Path>) -> Result<()> {
        let file = SerializableSequential {
            magic: MODEL_MAGIC,
            format_version: MODEL_FORMAT_VERSION,
            layers: self
                .layers
                .iter()
                .map(|l| SerializableLayer {
                    info: LayerInfo {
                        layer_type: l.layer_type().to_string(),
                        output_shape: l.output_shape(),
                    },
                    weights: l.get_weights(),
                })
                .collect(),
        };
        std::fs::write(path, postcard::to_allocvec(&file)?)?;
        Ok(())
    }

    /// Loads weights saved by `save_to_path` into this model, which must have the same
    /// architecture. On any mismatch the model keeps the weights it had.
    pub fn load_from_path(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let bytes = std::fs::read(path)?;
        let ((magic, version), _) = postcard::take_from_bytes::<(u32, u32)>(&bytes)?;
        if magic != MODEL_MAGIC {
            return Err(IoError::UnsupportedModelFormat(format!(
                "not a rustyml model file (magic {magic:#010x}, expected {MODEL_MAGIC:#010x})"
            ))
            .into());
        }
        if version != MODEL_FORMAT_VERSION {
            return Err(IoError::UnsupportedModelFormat(format!(
                "model format version {version}, this build reads version {MODEL_FORMAT_VERSION}"
            ))
            .into());
        }
        let file: SerializableSequential<'static> = postcard::from_bytes(&bytes)?;
        if file.layers.len() != self.layers.len() {
            return Err(IoError::ModelStructureMismatch(format!(
                "the file holds {} layers, the model has {}",
                file.layers.len(),
                self.layers.len()
            ))
            .into());
        }
        if let Some((saved, layer)) = file
            .layers
            .iter()
            .zip(&self.layers)
            .find(|(s, l)| s.info.layer_type != l.layer_type())
        {
            return Err(IoError::ModelStructureMismatch(format!(
                "the file holds a `{}` layer where the model has a `{}`",
                saved.info.layer_type,
                layer.layer_type()
            ))
            .into());
        }
        // A weight shape can still disagree half way; keep a copy to roll back to.
        let backup: Vec<LayerWeight<'static>> =
            postcard::from_bytes(&postcard::to_allocvec(&self.get_weights())?)?;
        for (i, saved) in file.layers.iter().enumerate() {
            let layer = self.layers[i].as_mut();
            if let Err(e) = apply_weights_to_layer(layer, &saved.weights, &saved.info.layer_type) {
                for (layer, old) in self.layers.iter_mut().zip(&backup).take(i) {
                    let _ = layer.apply_weights(old);
                }
                return Err(e);
            }
        }
        Ok(())
    }
}

/// Keras weights the loss by a mask reaching the output; rustyml refuses it instead of
/// computing another loss.
pub(crate) fn masked_loss_unsupported() -> Error {
    Error::invalid_input(
        "the model's output carries a Keras mask (a sequence layer after \
         Embedding(mask_zero=True) or Masking returns every step); Keras would weight the loss \
         by it, which rustyml does not support yet: end with a recurrent layer that returns \
         the last step, or drop the mask",
    )
}

/// The shuffled sample order of epoch `epoch` for a model seeded with `seed`: what
/// [`Sequential::epoch_order`] returns, shared with the graph models so every network
/// trains on the same batches for the same seed.
pub fn shuffled_order(seed: u64, n: usize, epoch: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ epoch.wrapping_mul(0xA076_1D64_78BD_642F));
    order.shuffle(&mut rng);
    order
}

/// The factor that brings the gradients' global L2 norm down to `max_norm` (1 when it is
/// already there), from a deterministic blocked sum of squares.
/// The rows `rows` of `a` as a new tensor: one copy of each row's contiguous run when `a` is
/// C-ordered (what the front ends hand in), else ndarray's general `select`.
pub fn gather_rows(a: &TensorView<'_>, rows: &[usize]) -> Tensor {
    let Some(data) = a.as_slice() else {
        return a.select(Axis(0), rows);
    };
    let row = a.shape()[1..].iter().product::<usize>();
    let mut out = Vec::with_capacity(rows.len() * row);
    for &i in rows {
        out.extend_from_slice(&data[i * row..(i + 1) * row]);
    }
    let mut shape = a.shape().to_vec();
    shape[0] = rows.len();
    Tensor::from_shape_vec(ndarray::IxDyn(&shape), out).expect("rows of the source's shape")
}

fn clip_scale(layers: &mut [Box<dyn Layer>], max_norm: f32, trains: impl Fn(usize) -> bool) -> f32 {
    let sq: f64 = layers
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| trains(*i))
        .flat_map(|(_, l)| {
            l.parameters()
                .iter()
                .map(|p| crate::math::reduction::sq_sum_f32(p.grad))
                .collect::<Vec<_>>()
        })
        .sum();
    crate::neural_network::optimizers::kernels::global_clip_factor(sq, max_norm)
}

/// A layer's parameter values paired with gradients from elsewhere (the sum of data-parallel
/// shards' gradients), for `Sequential::apply_gradients`: the optimizer reads and updates
/// only `parameters()`, so it updates these values as it would the layer's own.
struct GivenGradients {
    values: Vec<Vec<f32>>,
    decays: Vec<bool>,
    grads: Vec<Vec<f32>>,
}

impl Layer for GivenGradients {
    fn forward(&mut self, _input: &Tensor) -> Result<Tensor> {
        unreachable!("a stand-in for an optimizer update only")
    }
    fn predict(&self, _input: &Tensor) -> Result<Tensor> {
        unreachable!("a stand-in for an optimizer update only")
    }
    fn backward(&mut self, _grad_output: &Tensor) -> Result<Tensor> {
        unreachable!("a stand-in for an optimizer update only")
    }
    fn param_count(&self) -> TrainingParameters {
        TrainingParameters::Trainable(self.values.iter().map(Vec::len).sum())
    }
    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        self.values
            .iter_mut()
            .zip(&self.grads)
            .zip(&self.decays)
            .map(|((value, grad), &decays)| ParamGrad {
                value,
                grad,
                decays,
            })
            .collect()
    }
    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::Empty
    }
}

/// `"BatchNormalization"` -> `"batch_normalization"`, Keras's layer naming.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower = i > 0 && chars[i - 1].is_lowercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if i > 0 && (prev_lower || (next_lower && chars[i - 1].is_uppercase())) {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural_network::layers::activation::Activation;
    use crate::neural_network::layers::dense::Dense;
    use crate::neural_network::losses::MeanSquaredError;
    use crate::neural_network::optimizers::{Adam, SGD};
    use crate::neural_network::test_support::on_threads;
    use ndarray::Array2;

    /// Embedding(mask_zero) then LSTM: the Sequential hands the embedding's mask to the LSTM
    /// (predict and training alike); with every step returned, the mask reaches the loss and
    /// training is refused with nothing changed.
    #[test]
    fn a_keras_mask_travels_to_the_recurrent_layer_and_is_refused_at_the_loss() {
        use crate::neural_network::layers::{Embedding, LSTM};
        use crate::neural_network::traits::Layer as _;
        let x = Tensor::from_shape_vec(
            ndarray::IxDyn(&[3, 4]),
            vec![1., 2., 0., 0., 3., 0., 1., 2., 0., 0., 0., 0.],
        )
        .unwrap();
        let emb = || {
            Embedding::new(4, 3)
                .unwrap()
                .with_random_state(1)
                .with_mask_zero(true)
        };
        let lstm = |seq| {
            LSTM::new(3, 2, Activation::Tanh)
                .unwrap()
                .with_random_state(2)
                .with_return_sequences(seq)
        };
        let (e, l) = (emb(), lstm(false));
        let mask = e.compute_mask(x.view(), None).unwrap().unwrap();
        assert_eq!(mask.iter().filter(|&&k| k).count(), 5);
        let embedded = e.predict(&x).unwrap();
        let want = l.predict_masked(&embedded, Some(&mask)).unwrap();
        assert_ne!(want, l.predict(&embedded).unwrap(), "the mask matters here");
        let mut m = Sequential::new();
        m.add(emb()).add(lstm(false));
        assert_eq!(m.predict(&x).unwrap(), want);
        // the training pass sees the same mask: its output is the masked one
        m.compile(SGD::new(0.1, 0.0, false, 0.0).unwrap(), MeanSquaredError);
        let y = Tensor::zeros(ndarray::IxDyn(&[3, 2]));
        let (_, out) = m.step_with_output(Cow::Borrowed(&x), &y, None).unwrap();
        assert_eq!(out, want);
        // a fully masked sample keeps the zero state
        assert!(want.slice(ndarray::s![2, ..]).iter().all(|&v| v == 0.0));

        let mut seq = Sequential::new();
        seq.add(emb()).add(lstm(true));
        seq.compile(SGD::new(0.1, 0.0, false, 0.0).unwrap(), MeanSquaredError);
        // every layer's weights, flattened
        let weights = |seq: &Sequential| -> Vec<Vec<f32>> {
            seq.get_weights()
                .iter()
                .map(|w| {
                    w.named_arrays()
                        .into_iter()
                        .flat_map(|(_, a)| a.iter().copied().collect::<Vec<f32>>())
                        .collect()
                })
                .collect()
        };
        let before = weights(&seq);
        let y = Tensor::zeros(ndarray::IxDyn(&[3, 4, 2]));
        let err = seq.train_batch(&x, &y).unwrap_err().to_string();
        assert!(err.contains("mask"), "{err}");
        assert!(seq
            .evaluate(&x, &y)
            .unwrap_err()
            .to_string()
            .contains("mask"));
        let after = weights(&seq);
        assert_eq!(before, after);
        assert_eq!(seq.predict(&x).unwrap().shape(), &[3, 4, 2]);
    }

    #[test]
    fn keras_mask_rules_by_layer() {
        use crate::neural_network::traits::{keras_mask_rule, MaskRule};
        assert_eq!(keras_mask_rule("Dense"), MaskRule::PassThrough);
        assert_eq!(keras_mask_rule("Dropout"), MaskRule::PassThrough);
        assert_eq!(keras_mask_rule("Flatten"), MaskRule::Drop);
        assert_eq!(keras_mask_rule("Conv1D"), MaskRule::Drop);
        assert_eq!(keras_mask_rule("BatchNormalization"), MaskRule::Unsupported);
        let d = Dense::new(2, 2, Activation::Linear).unwrap();
        let x = Tensor::zeros(ndarray::IxDyn(&[1, 2]));
        let m = crate::neural_network::traits::Mask::from_elem(ndarray::IxDyn(&[1]), true);
        assert_eq!(d.compute_mask(x.view(), Some(&m)).unwrap(), Some(m.clone()));
        assert_eq!(d.compute_mask(x.view(), None).unwrap(), None);
    }

    #[test]
    fn a_handed_over_batch_trains_exactly_as_a_borrowed_one() {
        use crate::neural_network::layers::convolution::Conv2D;
        use crate::neural_network::layers::flatten::Flatten;
        let build = |conv: bool| {
            let mut m = Sequential::new_with_seed(4);
            if conv {
                m.add(
                    Conv2D::new(3, (3, 3), vec![6, 5, 5, 2], (1, 1), Activation::ReLU)
                        .unwrap()
                        .with_random_state(3),
                );
                m.add(Flatten::new(vec![6, 3, 3, 3]).unwrap());
                m.add(
                    Dense::new(27, 2, Activation::Linear)
                        .unwrap()
                        .with_random_state(5),
                );
            } else {
                m.add(
                    Dense::new(50, 4, Activation::Tanh)
                        .unwrap()
                        .with_random_state(6),
                );
                m.add(
                    Dense::new(4, 2, Activation::Linear)
                        .unwrap()
                        .with_random_state(7),
                );
            }
            m.compile(SGD::new(0.1, 0.0, false, 0.0).unwrap(), MeanSquaredError);
            m
        };
        let x = Tensor::from_shape_fn(ndarray::IxDyn(&[6, 5, 5, 2]), |i| {
            ((i[0] * 7 + i[1] * 5 + i[2] * 3 + i[3]) % 13) as f32 * 0.1 - 0.6
        });
        let y = t2(6, 2, (0..12).map(|v| v as f32 * 0.1).collect());
        let bits = |m: &Sequential| -> Vec<u32> {
            m.layers
                .iter()
                .flat_map(|l| l.get_weights().named_arrays())
                .flat_map(|(_, a)| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                .collect()
        };
        for conv in [true, false] {
            let x = if conv {
                x.clone()
            } else {
                x.clone()
                    .into_shape_with_order(ndarray::IxDyn(&[6, 50]))
                    .unwrap()
            };
            let (mut borrowed, mut owned) = (build(conv), build(conv));
            for _ in 0..3 {
                let a = borrowed.train_batch(&x, &y).unwrap();
                let (b, _) = owned.train_batch_with_output(x.clone(), &y).unwrap();
                assert_eq!(a.to_bits(), b.to_bits());
            }
            assert!(bits(&borrowed) == bits(&owned), "conv first: {conv}");
        }
    }

    #[test]
    fn large_batches_infer_in_chunks_with_the_bits_of_chunk_sized_batches() {
        // 64 KiB widest activation per item: 4 MiB chunks of 64 items
        let (n, width) = (150, 16_384);
        let mut model = Sequential::new_with_seed(1);
        model.add(
            Dense::new(8, width, Activation::ReLU)
                .unwrap()
                .with_random_state(2),
        );
        model.add(
            Dense::new(width, 3, Activation::Linear)
                .unwrap()
                .with_random_state(3),
        );
        let x = Tensor::from_shape_fn(ndarray::IxDyn(&[n, 8]), |i| {
            ((i[0] * 5 + i[1] * 3) % 11) as f32 * 0.1 - 0.5
        });
        let chunk = INFERENCE_CHUNK_BYTES / (width * 4);
        assert!(chunk >= INFERENCE_MIN_CHUNK && chunk < n && n % chunk != 0);
        let whole = model.predict(&x).unwrap();
        assert_eq!(whole.shape(), &[n, 3]);
        for start in (0..n).step_by(chunk) {
            let end = (start + chunk).min(n);
            let part = model
                .predict_view(x.slice_axis(Axis(0), (start..end).into()))
                .unwrap();
            let rows = whole.slice_axis(Axis(0), (start..end).into());
            assert!(
                rows.iter()
                    .zip(part.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "rows {start}..{end}"
            );
        }
    }

    fn t2(r: usize, c: usize, v: Vec<f32>) -> Tensor {
        Array2::from_shape_vec((r, c), v).unwrap().into_dyn()
    }

    fn one_by_one(w: f32, b: f32) -> Dense {
        let mut d = Dense::new(1, 1, Activation::Linear).unwrap();
        d.set_weights(Array2::from_elem((1, 1), w), Array2::from_elem((1, 1), b))
            .unwrap();
        d
    }

    fn wb(model: &Sequential) -> (f32, f32) {
        match &model.get_weights()[0] {
            LayerWeight::Dense(d) => (d.weight[[0, 0]], d.bias[[0, 0]]),
            _ => unreachable!(),
        }
    }

    /// w = 1, b = 0, x = 2, y = 6: loss (2 - 6)² = 16, dL/dw = 2 (2 - 6) 2 = -16, dL/db = -8.
    #[test]
    fn one_sgd_step_and_clip_by_global_norm_by_hand() {
        let (x, y) = (t2(1, 1, vec![2.0]), t2(1, 1, vec![6.0]));
        let mut m = Sequential::new();
        m.add(one_by_one(1.0, 0.0))
            .compile(SGD::new(0.01, 0.0, false, 0.0).unwrap(), MeanSquaredError);
        assert_eq!(m.train_batch(&x, &y).unwrap(), 16.0);
        let (w, b) = wb(&m);
        assert!((w - 1.16).abs() < 1e-6 && (b - 0.08).abs() < 1e-6);

        // Global norm sqrt(16² + 8²) = sqrt(320); clipped to 4 both steps shrink alike.
        let mut m = Sequential::new();
        let sgd = SGD::new(0.01, 0.0, false, 0.0)
            .unwrap()
            .with_global_clipnorm(4.0)
            .unwrap();
        m.add(one_by_one(1.0, 0.0)).compile(sgd, MeanSquaredError);
        m.train_batch(&x, &y).unwrap();
        let s = 4.0 / 320f32.sqrt();
        let (w, b) = wb(&m);
        assert!((w - (1.0 + 0.16 * s)).abs() < 1e-6 && (b - 0.08 * s).abs() < 1e-6);
    }

    /// x = (2, 1), y = (6, 0), w = 1, b = 0, sample weights (3, 0): the weighted loss is
    /// (3 (2 - 6)² + 0) / 2 = 24 (Keras divides by the batch size), dL/dw = 3 · 2 (2 - 6) 2 / 2
    /// = -24 and dL/db = 3 · 2 (2 - 6) / 2 = -12; unit weights step bit for bit as none.
    #[test]
    fn a_weighted_step_by_hand_and_unit_weights_exactly_unweighted() {
        let (x, y) = (t2(2, 1, vec![2.0, 1.0]), t2(2, 1, vec![6.0, 0.0]));
        let build = || {
            let mut m = Sequential::new();
            m.add(one_by_one(1.0, 0.0))
                .compile(SGD::new(0.01, 0.0, false, 0.0).unwrap(), MeanSquaredError);
            m
        };
        let mut m = build();
        let (loss, _) = m
            .train_rows_weighted(x.view(), y.view(), Some(&[3.0, 0.0]), &[0, 1])
            .unwrap();
        assert!((loss - 24.0).abs() < 1e-5, "{loss}");
        let (w, b) = wb(&m);
        assert!(
            (w - 1.24).abs() < 1e-6 && (b - 0.12).abs() < 1e-6,
            "{w} {b}"
        );
        // rows are picked from the whole weight array
        let mut m = build();
        let (loss, _) = m
            .train_rows_weighted(x.view(), y.view(), Some(&[3.0, 5.0]), &[0])
            .unwrap();
        assert!((loss - 48.0).abs() < 1e-5, "{loss}");
        let (mut plain, mut unit) = (build(), build());
        for _ in 0..3 {
            let a = plain.train_rows(x.view(), y.view(), &[1, 0]).unwrap().0;
            let b = unit
                .train_rows_weighted(x.view(), y.view(), Some(&[1.0, 1.0]), &[1, 0])
                .unwrap()
                .0;
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert_eq!(wb(&plain), wb(&unit));
        assert_eq!(
            plain
                .evaluate_view_weighted(x.view(), &y, &[1.0, 1.0])
                .unwrap()
                .to_bits(),
            plain.evaluate(&x, &y).unwrap().to_bits()
        );
        // a weight list of the wrong length changes nothing
        let before = wb(&plain);
        assert!(plain
            .train_rows_weighted(x.view(), y.view(), Some(&[1.0]), &[0, 1])
            .is_err());
        assert_eq!(wb(&plain), before);
    }

    /// 24 rows of 5 smooth features and 2 smooth targets.
    fn smooth_regression_data() -> (Tensor, Tensor) {
        let x = Tensor::from_shape_fn(vec![24, 5], |i| ((i[0] * 5 + i[1]) as f32 * 0.37).sin());
        let y = Tensor::from_shape_fn(vec![24, 2], |i| ((i[0] + 2 * i[1]) as f32 * 0.21).cos());
        (x, y)
    }

    /// A seeded 5-16-2 MLP compiled with an Adam clipping the global norm at 0.5.
    fn clipped_adam_mlp() -> Sequential {
        let mut m = Sequential::new_with_seed(5);
        m.add(
            Dense::new(5, 16, Activation::Tanh)
                .unwrap()
                .with_random_state(1),
        )
        .add(
            Dense::new(16, 2, Activation::Linear)
                .unwrap()
                .with_random_state(2),
        )
        .compile(
            Adam::new(0.01, 0.9, 0.999, 1e-7, 0.0)
                .unwrap()
                .with_global_clipnorm(0.5)
                .unwrap(),
            MeanSquaredError,
        );
        m
    }

    /// Same seeds give the same trained weights, bit for bit, whether rayon has 1 or 2
    /// threads (initialisation, shuffling, products and updates never depend on it).
    #[test]
    fn same_seed_same_weights_at_one_and_two_threads() {
        let (x, y) = smooth_regression_data();
        let train = |threads: usize| {
            on_threads(threads, || {
                let mut m = clipped_adam_mlp();
                let h = m.fit_with_batches(&x, &y, 4, 7).unwrap();
                let bits: Vec<u32> = m.predict(&x).unwrap().iter().map(|v| v.to_bits()).collect();
                (h, bits)
            })
        };
        let (a, b) = (train(1), train(2));
        assert_eq!(a.0, b.0);
        assert_eq!(a.1, b.1);
    }

    /// Gradients of the whole batch (share 1) applied through `apply_gradients` are a
    /// `train_batch` step, bit for bit, with a clipping Adam; two shards' gradients (shares
    /// 10/24 and 14/24) sum to the batch's within float32 rounding of the 24-term sums; a
    /// misfit gradient list changes nothing.
    #[test]
    fn gradients_applied_are_a_training_step() {
        let (x, y) = smooth_regression_data();
        let bits = |m: &Sequential| -> Vec<u32> {
            m.predict(&x).unwrap().iter().map(|v| v.to_bits()).collect()
        };
        let (mut stepped, mut applied) = (clipped_adam_mlp(), clipped_adam_mlp());
        for _ in 0..3 {
            let want = stepped.train_batch(&x, &y).unwrap();
            let (loss, grads) = applied.loss_and_gradients(&x, &y, 1.0).unwrap();
            assert_eq!(loss.to_bits(), want.to_bits());
            applied.apply_gradients(&grads).unwrap();
        }
        assert_eq!(bits(&stepped), bits(&applied));

        let (_, whole) = applied.loss_and_gradients(&x, &y, 1.0).unwrap();
        let head = gather_rows(&x.view(), &(0..10).collect::<Vec<_>>());
        let tail = gather_rows(&x.view(), &(10..24).collect::<Vec<_>>());
        let yh = gather_rows(&y.view(), &(0..10).collect::<Vec<_>>());
        let yt = gather_rows(&y.view(), &(10..24).collect::<Vec<_>>());
        let (_, a) = applied.loss_and_gradients(&head, &yh, 10.0 / 24.0).unwrap();
        let (_, b) = applied.loss_and_gradients(&tail, &yt, 14.0 / 24.0).unwrap();
        // Both are sums of the rows' contributions (each row's own gradient at share 1/24)
        // in two orders, each within (24 + a few) u of the exact sum of their magnitudes.
        let mut magnitude: Vec<Vec<f32>> = whole.iter().map(|g| vec![0.0; g.len()]).collect();
        for i in 0..24 {
            let (xi, yi) = (gather_rows(&x.view(), &[i]), gather_rows(&y.view(), &[i]));
            let (_, gi) = applied.loss_and_gradients(&xi, &yi, 1.0 / 24.0).unwrap();
            for (m, g) in magnitude.iter_mut().zip(gi) {
                m.iter_mut().zip(g).for_each(|(m, g)| *m += g.abs());
            }
        }
        let tol = 2.0 * 32.0 * f32::EPSILON / 2.0;
        for (((w, a), b), m) in whole.iter().zip(&a).zip(&b).zip(&magnitude) {
            for (((w, a), b), m) in w.iter().zip(a).zip(b).zip(m) {
                assert!((w - (a + b)).abs() <= tol * m, "{w} vs {a} + {b}");
            }
        }

        let before = bits(&applied);
        let mut short = whole.clone();
        short.pop();
        assert!(applied.apply_gradients(&short).is_err());
        assert_eq!(bits(&applied), before);
    }

    #[test]
    fn summary_counts_parameters() {
        let mut m = Sequential::new();
        m.add(Dense::new(4, 8, Activation::ReLU).unwrap())
            .add(Dense::new(8, 2, Activation::Softmax).unwrap());
        let s = m.summary_string();
        assert!(s.contains("dense (Dense)") && s.contains("dense_1 (Dense)"));
        assert!(s.contains("Total params: 58"), "{s}");
        assert_eq!(snake_case("BatchNormalization"), "batch_normalization");
        assert_eq!(snake_case("LSTM"), "lstm");
        assert_eq!(snake_case("Conv2DTranspose"), "conv2d_transpose");
    }

    #[test]
    fn save_and_load_round_trip_and_roll_back_on_mismatch() {
        let path =
            std::env::temp_dir().join(format!("rustyml_seq_unit_{}.bin", std::process::id()));
        let mut m = Sequential::new();
        m.add(one_by_one(3.0, -1.0)).add(one_by_one(0.5, 2.0));
        m.save_to_path(&path).unwrap();
        let mut fresh = Sequential::new();
        fresh.add(one_by_one(0.0, 0.0)).add(one_by_one(0.0, 0.0));
        fresh.load_from_path(&path).unwrap();
        let x = t2(1, 1, vec![2.0]);
        assert_eq!(
            fresh.predict(&x).unwrap()[[0, 0]],
            (3.0 * 2.0 - 1.0) * 0.5 + 2.0
        );

        // Second layer's shape disagrees: the first layer must keep its old weights.
        let mut other = Sequential::new();
        other
            .add(one_by_one(7.0, 7.0))
            .add(Dense::new(1, 2, Activation::Linear).unwrap());
        let err = other.load_from_path(&path).unwrap_err();
        assert!(matches!(err, Error::Io(IoError::ModelStructureMismatch(_))));
        assert_eq!(wb(&other), (7.0, 7.0));
        let _ = std::fs::remove_file(&path);
    }
}
