//! Compiling and training a graph model: forward in topological order, the weighted sum
//! of the outputs' losses, backward in reverse order, one optimizer update per layer.

use super::graph::{merged_mask, value_of, GraphLayer, GraphModel};
use super::shared_weights::{copy_values_from_first, sum_gradients, SummedGradients};
use crate::error::{Error, Result};
use crate::neural_network::sequential::{gather_rows, masked_loss_unsupported, shuffled_order};
use crate::neural_network::traits::{Loss, Mask, Optimizer};
use crate::neural_network::{NnError, Tensor, TensorView};

/// What one training step reports.
#[derive(Clone, Debug)]
pub struct StepResult {
    /// `sum(loss_weights[j] * output_losses[j])`, before the update.
    pub loss: f32,
    /// Each output's own (unweighted) loss.
    pub output_losses: Vec<f32>,
    /// The training-mode outputs (before the update).
    pub outputs: Vec<Tensor>,
}

/// Adds `g` into the gradient slot `slot` (the first contribution is moved in).
fn accumulate(slot: &mut Option<Tensor>, g: Tensor) -> Result<()> {
    match slot {
        None => *slot = Some(g),
        Some(acc) => {
            if acc.shape() != g.shape() {
                return Err(Error::invalid_input(format!(
                    "graph model: gradients of shapes {:?} and {:?} meet at one tensor",
                    acc.shape(),
                    g.shape()
                )));
            }
            *acc += &g;
        }
    }
    Ok(())
}

impl GraphModel {
    /// Sets the optimizer and one loss per output with its weight in the total loss.
    pub fn compile(
        &mut self,
        optimizer: Box<dyn Optimizer>,
        losses: Vec<Box<dyn Loss>>,
        loss_weights: Vec<f32>,
    ) -> Result<()> {
        let n = self.outputs.len();
        if losses.len() != n || loss_weights.len() != n {
            return Err(Error::invalid_input(format!(
                "the model has {n} outputs: give one loss and one loss weight each, got {} and {}",
                losses.len(),
                loss_weights.len()
            )));
        }
        if let Some(w) = loss_weights.iter().find(|w| !w.is_finite()) {
            return Err(Error::invalid_parameter(
                "loss_weights",
                format!("must be finite, got {w}"),
            ));
        }
        self.optimizer = Some(optimizer);
        self.losses = losses;
        self.loss_weights = loss_weights;
        Ok(())
    }

    pub fn is_compiled(&self) -> bool {
        self.optimizer.is_some()
    }

    pub fn learning_rate(&self) -> Option<f32> {
        self.optimizer.as_ref().map(|o| o.learning_rate())
    }

    pub fn set_learning_rate(&mut self, learning_rate: f32) {
        if let Some(o) = self.optimizer.as_mut() {
            o.set_learning_rate(learning_rate);
        }
    }

    /// The shuffling seed (drawn once from the global stream for an unseeded model).
    pub fn seed(&mut self) -> u64 {
        *self
            .seed
            .get_or_insert_with(|| crate::random::resolve_seed(None))
    }

    /// The sample order of epoch `epoch`: `Sequential::epoch_order`'s for the same seed.
    pub fn epoch_order(&mut self, n: usize, shuffle: bool, epoch: u64) -> Vec<usize> {
        if !shuffle {
            return (0..n).collect();
        }
        shuffled_order(self.seed(), n, epoch)
    }

    fn check_targets(&self, n: usize, ys: &[&[usize]]) -> Result<()> {
        if !self.is_compiled() {
            return Err(NnError::NotCompiled("optimizer").into());
        }
        if ys.len() != self.outputs.len() {
            return Err(Error::invalid_input(format!(
                "the model has {} outputs, got {} target arrays",
                self.outputs.len(),
                ys.len()
            )));
        }
        if let Some(bad) = ys.iter().find(|s| s.first() != Some(&n)) {
            return Err(Error::invalid_input(format!(
                "targets need {n} samples like the inputs, got shape {bad:?}"
            )));
        }
        Ok(())
    }

    /// One training step on the rows `rows` of every input and target.
    pub fn train_rows(
        &mut self,
        xs: &[TensorView<'_>],
        ys: &[TensorView<'_>],
        rows: &[usize],
    ) -> Result<StepResult> {
        self.train_rows_weighted(xs, ys, &[], rows)
    }

    /// [`Self::train_rows`] with Keras's per-sample loss weights, one entry per output
    /// (`None`: that output unweighted; an empty list: every output unweighted), each
    /// holding a weight for every sample of the inputs (not only `rows`): output `j`'s loss
    /// is `sum(w_i loss_i) / batch` and its gradient per sample is scaled by `w_i` (see
    /// [`crate::neural_network::losses::sample_weights`]).
    pub fn train_rows_weighted(
        &mut self,
        xs: &[TensorView<'_>],
        ys: &[TensorView<'_>],
        sample_weights: &[Option<&[f32]>],
        rows: &[usize],
    ) -> Result<StepResult> {
        let weights = self.gather_weights(sample_weights, xs, rows)?;
        let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
        let n = self.check_inputs(&shapes)?;
        let y_shapes: Vec<&[usize]> = ys.iter().map(|y| y.shape()).collect();
        self.check_targets(n, &y_shapes)?;
        if let Some(&bad) = rows.iter().find(|&&r| r >= n) {
            return Err(Error::invalid_input(format!(
                "row {bad} is out of range for {n} samples"
            )));
        }
        let xb: Vec<Tensor> = xs.iter().map(|x| gather_rows(x, rows)).collect();
        let yb: Vec<Tensor> = ys.iter().map(|y| gather_rows(y, rows)).collect();
        self.step(xb, &yb, &weights)
    }

    /// Each output's weights for `rows`, from the per-output weights of every sample.
    fn gather_weights(
        &self,
        sample_weights: &[Option<&[f32]>],
        xs: &[TensorView<'_>],
        rows: &[usize],
    ) -> Result<Vec<Option<Vec<f32>>>> {
        if sample_weights.is_empty() {
            return Ok(vec![None; self.outputs.len()]);
        }
        if sample_weights.len() != self.outputs.len() {
            return Err(Error::invalid_input(format!(
                "the model has {} outputs, got {} sample weight arrays",
                self.outputs.len(),
                sample_weights.len()
            )));
        }
        let n = xs.first().map(|x| x.shape()[0]).unwrap_or(0);
        sample_weights
            .iter()
            .map(|w| match w {
                None => Ok(None),
                Some(w) if w.len() != n => Err(Error::invalid_input(format!(
                    "sample_weight holds {} weights for {n} samples",
                    w.len()
                ))),
                Some(w) => Ok(Some(rows.iter().map(|&r| w[r]).collect())),
            })
            .collect()
    }

    /// One training step on whole arrays.
    pub fn train_batch(&mut self, xs: Vec<Tensor>, ys: &[Tensor]) -> Result<StepResult> {
        let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
        let n = self.check_inputs(&shapes)?;
        let y_shapes: Vec<&[usize]> = ys.iter().map(|y| y.shape()).collect();
        self.check_targets(n, &y_shapes)?;
        self.step(xs, ys, &vec![None; ys.len()])
    }

    /// Mini-batch training for `epochs` epochs (batches are chunks of each epoch's order);
    /// returns each epoch's sample-weighted mean loss.
    pub fn fit_with_batches(
        &mut self,
        xs: &[Tensor],
        ys: &[Tensor],
        epochs: u32,
        batch_size: usize,
    ) -> Result<Vec<f32>> {
        let xv: Vec<TensorView<'_>> = xs.iter().map(|x| x.view()).collect();
        let yv: Vec<TensorView<'_>> = ys.iter().map(|y| y.view()).collect();
        let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
        let n = self.check_inputs(&shapes)?;
        if batch_size == 0 {
            return Err(Error::invalid_parameter("batch_size", "must be at least 1"));
        }
        let mut history = Vec::with_capacity(epochs as usize);
        for _ in 0..epochs {
            let order = self.epoch_order(n, true, self.epochs_trained);
            let mut weighted = 0.0f64;
            for batch in order.chunks(batch_size) {
                let step = self.train_rows(&xv, &yv, batch)?;
                weighted += step.loss as f64 * batch.len() as f64;
            }
            self.epochs_trained += 1;
            history.push((weighted / n as f64) as f32);
        }
        Ok(history)
    }

    /// Epochs run by `fit_with_batches`.
    pub fn epochs_trained(&self) -> u64 {
        self.epochs_trained
    }

    /// The compiled total loss and each output's loss of `predict(xs)` against `ys`.
    pub fn evaluate(
        &self,
        xs: &[TensorView<'_>],
        ys: &[TensorView<'_>],
    ) -> Result<(f32, Vec<f32>)> {
        self.evaluate_weighted(xs, ys, &[])
    }

    /// [`Self::evaluate`] with per-sample loss weights per output, as
    /// [`Self::train_rows_weighted`] takes them (here for exactly the samples of `xs`).
    pub fn evaluate_weighted(
        &self,
        xs: &[TensorView<'_>],
        ys: &[TensorView<'_>],
        sample_weights: &[Option<&[f32]>],
    ) -> Result<(f32, Vec<f32>)> {
        let n = xs.first().map(|x| x.shape()[0]).unwrap_or(0);
        let weights = self.gather_weights(sample_weights, xs, &(0..n).collect::<Vec<_>>())?;
        let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
        let n = self.check_inputs(&shapes)?;
        let y_shapes: Vec<&[usize]> = ys.iter().map(|y| y.shape()).collect();
        self.check_targets(n, &y_shapes)?;
        let mut activity = 0.0f64;
        let (outs, masked) = self.predict_with_masks(xs, Some(&mut activity))?;
        if masked.contains(&true) {
            return Err(masked_loss_unsupported());
        }
        let mut total = 0.0f32;
        let mut each = Vec::with_capacity(outs.len());
        for (j, out) in outs.iter().enumerate() {
            let y = ys[j].to_owned();
            let l = match &weights[j] {
                None => self.losses[j].compute_loss(&y, out)?,
                Some(w) => self.losses[j].compute_weighted_loss(&y, out, w)?,
            };
            total += self.loss_weights[j] * l;
            each.push(l);
        }
        // Keras's evaluation loss holds the regularization penalties: each trainable layer's
        // weights' once, the output penalty (a shared layer's last call's) over the batch,
        // divided by its size
        for (i, layer) in self.layers.iter().enumerate() {
            if let GraphLayer::Plain(calls) = layer {
                if !self.frozen[i] {
                    total += calls[0].weight_penalty();
                }
            }
        }
        if activity != 0.0 {
            total += activity as f32 / n as f32;
        }
        Ok((total, each))
    }

    fn step(
        &mut self,
        xs: Vec<Tensor>,
        ys: &[Tensor],
        weights: &[Option<Vec<f32>>],
    ) -> Result<StepResult> {
        for layer in &mut self.layers {
            if let GraphLayer::Plain(calls) = layer {
                for c in calls.iter_mut() {
                    c.set_training_if_mode_dependent(true);
                }
            }
        }
        // forward, in topological order
        let mut xs: Vec<Option<Tensor>> = xs.into_iter().map(Some).collect();
        let mut values: Vec<Option<Tensor>> = vec![None; self.nodes.len()];
        let mut masks: Vec<Option<Mask>> = vec![None; self.nodes.len()];
        for id in 0..self.nodes.len() {
            let node = &self.nodes[id];
            let value = match &mut self.layers[node.layer] {
                GraphLayer::Input => {
                    let slot = self.input_slot[id].expect("checked at assembly");
                    xs[slot].take().expect("one node per model input")
                }
                GraphLayer::Plain(calls) => {
                    let x = value_of(&values, node.inputs[0]);
                    let mask = masks[node.inputs[0]].as_ref();
                    let layer = &mut calls[node.call];
                    let next = layer.compute_mask(x.view(), mask)?;
                    let out = layer.forward_masked(x, mask)?;
                    masks[id] = next;
                    out
                }
                GraphLayer::Merge(calls) => {
                    let ins: Vec<&Tensor> =
                        node.inputs.iter().map(|&i| value_of(&values, i)).collect();
                    masks[id] = merged_mask(calls[node.call].as_ref(), &node.inputs, &masks)?;
                    calls[node.call].forward(&ins)?
                }
            };
            values[id] = Some(value);
        }
        if self.outputs.iter().any(|&o| masks[o].is_some()) {
            return Err(masked_loss_unsupported());
        }
        // the losses, and their gradients at the outputs
        let mut grads: Vec<Option<Tensor>> = vec![None; self.nodes.len()];
        let mut loss = 0.0f32;
        let mut output_losses = Vec::with_capacity(self.outputs.len());
        for (j, &o) in self.outputs.iter().enumerate() {
            let out = value_of(&values, o);
            let w = self.loss_weights[j];
            let (l, mut g) = match &weights[j] {
                None => (
                    self.losses[j].compute_loss(&ys[j], out)?,
                    self.losses[j].compute_grad(&ys[j], out)?,
                ),
                Some(sw) => (
                    self.losses[j].compute_weighted_loss(&ys[j], out, sw)?,
                    self.losses[j].compute_weighted_grad(&ys[j], out, sw)?,
                ),
            };
            if w != 1.0 {
                g.mapv_inplace(|v| v * w);
            }
            loss += w * l;
            output_losses.push(l);
            accumulate(&mut grads[o], g)?;
        }
        // Keras adds the regularization penalties to the loss: a shared layer's weights'
        // once (its first call's instance, unless frozen); its output penalty for its last
        // call only, as Keras 3's training and evaluation steps count it
        for (i, layer) in self.layers.iter_mut().enumerate() {
            if let GraphLayer::Plain(calls) = layer {
                let last = calls.len() - 1;
                for (c, call) in calls.iter_mut().enumerate() {
                    loss += call.regularize(1.0, c == 0 && !self.frozen[i], c == last);
                }
            }
        }
        let outputs: Vec<Tensor> = self
            .outputs
            .iter()
            .map(|&o| value_of(&values, o).clone())
            .collect();
        drop(values);
        // backward, in reverse order; nothing reads the gradient of a model input
        for id in (0..self.nodes.len()).rev() {
            let Some(g) = grads[id].take() else { continue };
            let node = &self.nodes[id];
            match &mut self.layers[node.layer] {
                GraphLayer::Input => {}
                GraphLayer::Plain(calls) => {
                    let src = node.inputs[0];
                    if self.input_slot[src].is_some() {
                        calls[node.call].backward_params_only(&g)?;
                    } else {
                        let gi = calls[node.call].backward(&g)?;
                        accumulate(&mut grads[src], gi)?;
                    }
                }
                GraphLayer::Merge(calls) => {
                    let gis = calls[node.call].backward(&g)?;
                    for (&src, gi) in node.inputs.iter().zip(gis) {
                        if self.input_slot[src].is_none() {
                            accumulate(&mut grads[src], gi)?;
                        }
                    }
                }
            }
        }
        self.update()?;
        Ok(StepResult {
            loss,
            output_losses,
            outputs,
        })
    }

    /// One optimizer step over every trainable layer, in layer order (a shared layer's
    /// calls' gradients summed first).
    fn update(&mut self) -> Result<()> {
        let frozen = &self.frozen;
        let summed: Vec<Option<Vec<Vec<f32>>>> = self
            .layers
            .iter_mut()
            .enumerate()
            .map(|(i, layer)| match layer {
                GraphLayer::Plain(calls) if calls.len() > 1 && !frozen[i] => {
                    Some(sum_gradients(calls))
                }
                _ => None,
            })
            .collect();
        let optimizer = self
            .optimizer
            .as_mut()
            .ok_or(NnError::NotCompiled("optimizer"))?;
        let scale = match optimizer.global_clipnorm() {
            Some(max_norm) => {
                let mut sq = 0.0f64;
                for (i, layer) in self.layers.iter_mut().enumerate() {
                    match (layer, &summed[i]) {
                        (_, Some(sum)) => {
                            sq += sum
                                .iter()
                                .map(|g| crate::math::reduction::sq_sum_f32(g))
                                .sum::<f64>()
                        }
                        (GraphLayer::Plain(calls), None) if !frozen[i] => {
                            sq += calls[0]
                                .parameters()
                                .iter()
                                .map(|p| crate::math::reduction::sq_sum_f32(p.grad))
                                .sum::<f64>()
                        }
                        _ => {}
                    }
                }
                crate::neural_network::optimizers::kernels::global_clip_factor(sq, max_norm)
            }
            None => 1.0,
        };
        optimizer.step();
        for (i, (layer, sum)) in self.layers.iter_mut().zip(summed).enumerate() {
            let GraphLayer::Plain(calls) = layer else {
                continue;
            };
            if frozen[i] {
                continue;
            }
            match sum {
                None => optimizer.update(calls[0].as_mut(), scale),
                Some(grads) => {
                    let owner = calls.remove(0);
                    let mut view = SummedGradients { owner, grads };
                    optimizer.update(&mut view, scale);
                    calls.insert(0, view.owner);
                    copy_values_from_first(calls);
                }
            }
        }
        Ok(())
    }
}
