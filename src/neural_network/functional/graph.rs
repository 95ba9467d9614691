//! The graph's structure and its inference pass.

use super::shared_weights::copy_weights_from_first;
use crate::error::{Error, Result};
use crate::neural_network::layers::merge::MergeLayer;
use crate::neural_network::traits::{Layer, Loss, Mask, Optimizer};
use crate::neural_network::{Tensor, TensorView};

/// One layer of the graph, with one instance per call (instance 0 holds the weights the
/// model reports; the others are kept equal to it).
pub enum GraphLayer {
    /// A model input (Keras's `InputLayer`): its node hands the caller's array on.
    Input,
    /// A one-input layer (every layer of the crate).
    Plain(Vec<Box<dyn Layer>>),
    /// A merge layer (several inputs, no weights).
    Merge(Vec<Box<dyn MergeLayer>>),
}

/// One call of a layer: `layer` (index into the model's layers), which of its calls, and
/// the nodes whose outputs it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub layer: usize,
    pub call: usize,
    pub inputs: Vec<usize>,
}

/// A network of layers joined as a directed acyclic graph (see the module docs).
pub struct GraphModel {
    pub(super) layers: Vec<GraphLayer>,
    /// In topological order: every node comes after the nodes it takes.
    pub(super) nodes: Vec<Node>,
    /// The node of each model input, in the model's input order.
    pub(super) inputs: Vec<usize>,
    /// The node of each model output, in the model's output order.
    pub(super) outputs: Vec<usize>,
    /// `input_slot[node]`: which model input a node is, if it is one.
    pub(super) input_slot: Vec<Option<usize>>,
    pub(super) frozen: Vec<bool>,
    pub(super) optimizer: Option<Box<dyn Optimizer>>,
    pub(super) losses: Vec<Box<dyn Loss>>,
    pub(super) loss_weights: Vec<f32>,
    pub(super) seed: Option<u64>,
    pub(super) epochs_trained: u64,
}

impl GraphModel {
    /// Assembles a model from its layers (with one instance per call already built) and
    /// nodes in topological order. The structure is checked: node references point
    /// backwards, every input node is an `Input` layer, each call of a plain layer takes one
    /// tensor; instances of a shared layer are given the first one's weights.
    pub fn from_parts(
        mut layers: Vec<GraphLayer>,
        nodes: Vec<Node>,
        inputs: Vec<usize>,
        outputs: Vec<usize>,
        seed: Option<u64>,
    ) -> Result<Self> {
        let bad = |m: String| Err(Error::invalid_input(format!("graph model: {m}")));
        if inputs.is_empty() || outputs.is_empty() {
            return bad("a model needs at least one input and one output".into());
        }
        for (id, node) in nodes.iter().enumerate() {
            let Some(layer) = layers.get(node.layer) else {
                return bad(format!(
                    "node {id} names layer {} of {}",
                    node.layer,
                    layers.len()
                ));
            };
            if let Some(&late) = node.inputs.iter().find(|&&i| i >= id) {
                return bad(format!(
                    "node {id} takes node {late}, which does not come before it"
                ));
            }
            let calls = match layer {
                GraphLayer::Input => 1,
                GraphLayer::Plain(c) => c.len(),
                GraphLayer::Merge(c) => c.len(),
            };
            if node.call >= calls {
                return bad(format!(
                    "node {id} is call {} of a layer with {calls}",
                    node.call
                ));
            }
            if matches!(layer, GraphLayer::Plain(_)) && node.inputs.len() != 1 {
                return bad(format!(
                    "node {id}: a one-input layer takes {} tensors",
                    node.inputs.len()
                ));
            }
        }
        let mut input_slot = vec![None; nodes.len()];
        for (slot, &id) in inputs.iter().enumerate() {
            match nodes.get(id) {
                Some(n) if matches!(layers[n.layer], GraphLayer::Input) => {
                    input_slot[id] = Some(slot)
                }
                _ => return bad(format!("model input {slot} is not an Input node")),
            }
        }
        for (id, node) in nodes.iter().enumerate() {
            if matches!(layers[node.layer], GraphLayer::Input) && input_slot[id].is_none() {
                return bad(format!("Input node {id} is not among the model's inputs"));
            }
        }
        if let Some(&o) = outputs.iter().find(|&&o| o >= nodes.len()) {
            return bad(format!("output node {o} does not exist"));
        }
        for layer in &mut layers {
            if let GraphLayer::Plain(calls) = layer {
                if calls.len() > 1 {
                    copy_weights_from_first(calls)?;
                }
            }
        }
        let frozen = vec![false; layers.len()];
        Ok(Self {
            layers,
            nodes,
            inputs,
            outputs,
            input_slot,
            frozen,
            optimizer: None,
            losses: Vec::new(),
            loss_weights: Vec::new(),
            seed,
            epochs_trained: 0,
        })
    }

    pub fn layers(&self) -> &[GraphLayer] {
        &self.layers
    }

    /// The layers, to change in place (their weights); callers keep every call's instance.
    pub(crate) fn layers_mut(&mut self) -> &mut [GraphLayer] {
        &mut self.layers
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn input_nodes(&self) -> &[usize] {
        &self.inputs
    }

    pub fn output_nodes(&self) -> &[usize] {
        &self.outputs
    }

    /// The first instance of each one-input layer, by layer index (`None` for inputs and
    /// merge layers): the weights the model reports.
    pub fn weight_owner(&self, layer: usize) -> Option<&dyn Layer> {
        match self.layers.get(layer)? {
            GraphLayer::Plain(calls) => Some(calls[0].as_ref()),
            _ => None,
        }
    }

    /// Freezes (`false`) or unfreezes a layer (Keras's `trainable`): it still passes
    /// gradients on but gets no optimizer update.
    pub fn set_layer_trainable(&mut self, layer: usize, trainable: bool) -> Result<()> {
        let n = self.layers.len();
        let flag = self.frozen.get_mut(layer).ok_or_else(|| {
            Error::invalid_parameter("layer", format!("the model has {n} layers, got {layer}"))
        })?;
        *flag = !trainable;
        Ok(())
    }

    /// Checks that `xs` holds one array per model input with one batch size.
    pub(super) fn check_inputs(&self, shapes: &[&[usize]]) -> Result<usize> {
        if shapes.len() != self.inputs.len() {
            return Err(Error::invalid_input(format!(
                "the model has {} inputs, got {} arrays",
                self.inputs.len(),
                shapes.len()
            )));
        }
        let n = shapes[0].first().copied().unwrap_or(0);
        if shapes.iter().any(|s| s.is_empty() || s[0] != n) {
            let batches: Vec<_> = shapes.iter().map(|s| s.first().copied()).collect();
            return Err(Error::invalid_input(format!(
                "every input needs the same number of samples, got {batches:?}"
            )));
        }
        if n == 0 {
            return Err(Error::empty_input("input tensors"));
        }
        Ok(n)
    }

    /// Inference on one batch: every output, in the model's output order.
    pub fn predict(&self, xs: &[TensorView<'_>]) -> Result<Vec<Tensor>> {
        Ok(self.predict_with_masks(xs, None)?.0)
    }

    /// [`Self::predict`], and whether each output carries a Keras mask; adds the layers'
    /// output (activity) regularization penalties, not divided by the batch size, to
    /// `activity` when given (a shared layer's last call's only, as Keras 3 counts them in
    /// training and evaluation).
    pub(super) fn predict_with_masks(
        &self,
        xs: &[TensorView<'_>],
        mut activity: Option<&mut f64>,
    ) -> Result<(Vec<Tensor>, Vec<bool>)> {
        let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
        self.check_inputs(&shapes)?;
        let mut values: Vec<Option<Tensor>> = vec![None; self.nodes.len()];
        let mut masks: Vec<Option<Mask>> = vec![None; self.nodes.len()];
        for (id, node) in self.nodes.iter().enumerate() {
            let value = match &self.layers[node.layer] {
                GraphLayer::Input => {
                    let slot = self.input_slot[id].expect("checked at assembly");
                    xs[slot].to_owned()
                }
                GraphLayer::Plain(calls) => {
                    let layer = &calls[node.call];
                    let src = node.inputs[0];
                    let mask = masks[src].as_ref();
                    let out = match (self.input_slot[src], mask) {
                        // read the caller's array in place
                        (Some(slot), _) => {
                            masks[id] = layer.compute_mask(xs[slot].view(), None)?;
                            layer.predict_view(xs[slot].view())?
                        }
                        (None, mask) => {
                            let x = value_of(&values, src);
                            let next = layer.compute_mask(x.view(), mask)?;
                            let out = layer.predict_masked(x, mask)?;
                            masks[id] = next;
                            out
                        }
                    };
                    if let Some(total) = activity.as_deref_mut() {
                        if node.call + 1 == calls.len() {
                            *total += f64::from(layer.activity_penalty(&out));
                        }
                    }
                    out
                }
                GraphLayer::Merge(calls) => {
                    let ins: Vec<&Tensor> =
                        node.inputs.iter().map(|&i| value_of(&values, i)).collect();
                    masks[id] = merged_mask(calls[node.call].as_ref(), &node.inputs, &masks)?;
                    calls[node.call].predict(&ins)?
                }
            };
            values[id] = Some(value);
        }
        let outputs = self
            .outputs
            .iter()
            .map(|&o| values[o].clone().expect("every node ran"))
            .collect();
        let masked = self.outputs.iter().map(|&o| masks[o].is_some()).collect();
        Ok((outputs, masked))
    }
}

/// Keras's `compute_mask` of a merge layer: the inputs' masks combined with a logical and
/// (inputs without one count as all true); `Dot` drops them.
pub(super) fn merged_mask(
    layer: &dyn MergeLayer,
    inputs: &[usize],
    masks: &[Option<Mask>],
) -> Result<Option<Mask>> {
    let present: Vec<&Mask> = inputs.iter().filter_map(|&i| masks[i].as_ref()).collect();
    let Some((first, rest)) = present.split_first() else {
        return Ok(None);
    };
    if layer.layer_type() == "Dot" {
        return Ok(None);
    }
    let mut out = (*first).clone();
    for m in rest {
        if m.shape() != out.shape() {
            return Err(Error::invalid_input(format!(
                "{}: the inputs' Keras masks have shapes {:?} and {:?}; combining masks of \
                 different shapes is not supported",
                layer.layer_type(),
                out.shape(),
                m.shape()
            )));
        }
        ndarray::Zip::from(&mut out)
            .and(*m)
            .for_each(|a, &b| *a = *a && b);
    }
    Ok(Some(out))
}

/// The output of node `id`, computed earlier in topological order.
pub(super) fn value_of(values: &[Option<Tensor>], id: usize) -> &Tensor {
    values[id].as_ref().expect("nodes run in topological order")
}
