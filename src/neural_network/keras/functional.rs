//! Graph models from Keras's functional config: `{"name", "seed", "layers": [{"class_name",
//! "name", "config", "inbound_nodes": [{"args": [tensor or [tensors]], "kwargs": {}}]}],
//! "input_layers": [[name, node, 0], ...], "output_layers": [...]}`, where a tensor is
//! `{"class_name": "__keras_tensor__", "config": {"keras_history": [layer, node, 0]}}`, as
//! Keras 3's `Model.get_config()` writes it. One-input layers are built by the same registry
//! as `Sequential`'s ([`LayerSpec`]), merge layers by [`MergeSpec`].

use super::merge_spec::MergeSpec;
use super::{config_error, layer_seed, weight_layout, LayerSpec, LossSpec, OptimizerSpec};
use crate::error::{Error, Result};
use crate::neural_network::functional::{GraphLayer, GraphModel, Node};
use crate::neural_network::layers::size_guard;
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, IxDyn};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// A graph model built from a functional config, with the config and the shapes and names
/// front ends report.
pub struct KerasFunctional {
    model: GraphModel,
    config: Value,
    names: Vec<String>,
    classes: Vec<String>,
    /// Per layer, per call: the per-sample output shape.
    call_shapes: Vec<Vec<Vec<usize>>>,
    input_shapes: Vec<Vec<usize>>,
    output_shapes: Vec<Vec<usize>>,
    compiled: Option<(OptimizerSpec, Vec<LossSpec>, Vec<f32>)>,
}

/// One layer as front ends list it: `(name, class name, per-call output shapes, parameter
/// count, number of weight arrays)`.
pub type LayerSummary = (String, String, Vec<Vec<usize>>, usize, usize);

/// Builds the graph model a functional config describes (see the module docs).
pub fn functional_model_from_config(config_json: &str) -> Result<KerasFunctional> {
    KerasFunctional::from_config(config_json)
}

#[derive(Deserialize)]
struct FunctionalConfig {
    #[serde(default)]
    seed: Option<u64>,
    layers: Vec<LayerEntry>,
    input_layers: Value,
    output_layers: Value,
}

#[derive(Deserialize)]
struct LayerEntry {
    class_name: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    config: Value,
    #[serde(default)]
    inbound_nodes: Vec<Value>,
}

/// A reference to the output of call `node` of layer `layer` (Keras's `keras_history`).
type TensorRef = (String, usize);

fn graph_error(msg: String) -> Error {
    Error::invalid_input(msg)
}

/// `[name, node, index]` -> a reference (our layers have one output: index 0).
fn parse_history(v: &Value) -> Option<TensorRef> {
    let a = v.as_array()?;
    if a.len() != 3 || a[2].as_u64()? != 0 {
        return None;
    }
    Some((a[0].as_str()?.to_string(), a[1].as_u64()? as usize))
}

/// `input_layers` / `output_layers`: one `[name, node, 0]` or a list of them.
fn parse_refs(v: &Value, what: &str) -> Result<Vec<TensorRef>> {
    if let Some(r) = parse_history(v) {
        return Ok(vec![r]);
    }
    v.as_array()
        .and_then(|a| a.iter().map(parse_history).collect::<Option<Vec<_>>>())
        .filter(|refs| !refs.is_empty())
        .ok_or_else(|| {
            graph_error(format!(
                "{what} must be [layer_name, node_index, 0] or a non-empty list of them, got {v}"
            ))
        })
}

/// The tensors one inbound node takes: its first argument, a tensor or a list of tensors.
fn parse_call(v: &Value, layer: &str) -> Result<Vec<TensorRef>> {
    let bad = || {
        graph_error(format!(
            "layer {layer:?}: an inbound node must be {{\"args\": [tensor or [tensors]]}}, got {v}"
        ))
    };
    let first = v
        .get("args")
        .and_then(|a| a.as_array())
        .and_then(|a| a.first())
        .ok_or_else(bad)?;
    let tensor = |t: &Value| {
        t.get("config")
            .and_then(|c| c.get("keras_history"))
            .and_then(parse_history)
    };
    match first {
        Value::Array(list) => list
            .iter()
            .map(tensor)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad),
        t => tensor(t).map(|r| vec![r]).ok_or_else(bad),
    }
}

/// An `InputLayer`'s per-sample shape: `batch_shape` without its batch axis, or `shape`.
fn input_shape(config: &Value, name: &str) -> Result<Vec<usize>> {
    let parse = |v: &Value, skip: usize| -> Option<Vec<usize>> {
        v.as_array()?
            .iter()
            .skip(skip)
            .map(|d| d.as_u64().filter(|&d| d > 0).map(|d| d as usize))
            .collect()
    };
    config
        .get("batch_shape")
        .and_then(|v| parse(v, 1))
        .or_else(|| config.get("shape").and_then(|v| parse(v, 0)))
        .ok_or_else(|| {
            graph_error(format!(
                "Input {name:?} needs batch_shape [null, sizes...] or shape [sizes...] of positive sizes"
            ))
        })
}

/// What one layer entry builds (a short-lived list while a config is read: the boxes would
/// only move the size around).
#[allow(clippy::large_enum_variant)]
enum Kind {
    Input(Vec<usize>),
    Plain(LayerSpec),
    Merge(MergeSpec),
}

impl KerasFunctional {
    /// See [`functional_model_from_config`].
    pub fn from_config(config_json: &str) -> Result<Self> {
        let raw: Value = serde_json::from_str(config_json).map_err(|e| config_error("model", e))?;
        let config: FunctionalConfig =
            serde_json::from_value(raw.clone()).map_err(|e| config_error("functional model", e))?;
        let seed = config.seed;
        let n_layers = config.layers.len();
        // names, kinds and calls
        let mut index = HashMap::new();
        let mut names = Vec::with_capacity(n_layers);
        let mut kinds = Vec::with_capacity(n_layers);
        let mut calls: Vec<Vec<Vec<TensorRef>>> = Vec::with_capacity(n_layers);
        for (i, entry) in config.layers.iter().enumerate() {
            let name = entry
                .name
                .clone()
                .or_else(|| {
                    entry
                        .config
                        .get("name")
                        .and_then(|n| n.as_str())
                        .map(String::from)
                })
                .ok_or_else(|| {
                    graph_error(format!("layer {i} ({}) has no name", entry.class_name))
                })?;
            if index.insert(name.clone(), i).is_some() {
                return Err(graph_error(format!(
                    "two layers are named {name:?}: layer names must be unique in a model"
                )));
            }
            let spec = serde_json::json!({"class_name": entry.class_name, "config": entry.config});
            let kind = if entry.class_name == "InputLayer" {
                Kind::Input(input_shape(&entry.config, &name)?)
            } else if MergeSpec::is_merge(&entry.class_name) {
                Kind::Merge(serde_json::from_value(spec).map_err(|e| {
                    config_error(&format!("layer {name:?} ({})", entry.class_name), e)
                })?)
            } else {
                let spec: LayerSpec = serde_json::from_value(spec).map_err(|e| {
                    config_error(&format!("layer {name:?} ({})", entry.class_name), e)
                })?;
                super::regularizer_spec::check_regularizer_keys(&spec, Some(&entry.config))
                    .map_err(|e| {
                        graph_error(format!("layer {name:?} ({}): {e}", entry.class_name))
                    })?;
                Kind::Plain(spec)
            };
            let layer_calls = entry
                .inbound_nodes
                .iter()
                .map(|v| parse_call(v, &name))
                .collect::<Result<Vec<_>>>()?;
            if !matches!(kind, Kind::Input(_)) && layer_calls.is_empty() {
                return Err(graph_error(format!(
                    "layer {name:?} ({}) is not called on any tensor: it is not connected to the model",
                    entry.class_name
                )));
            }
            if let (Kind::Plain(_), Some(c)) = (&kind, layer_calls.iter().find(|c| c.len() != 1)) {
                return Err(graph_error(format!(
                    "layer {name:?} ({}) takes one tensor, got a call on {}",
                    entry.class_name,
                    c.len()
                )));
            }
            names.push(name);
            kinds.push(kind);
            calls.push(layer_calls);
        }
        let resolve = |r: &TensorRef, user: &str| -> Result<(usize, usize)> {
            let &l = index.get(&r.0).ok_or_else(|| {
                graph_error(format!(
                    "{user} refers to layer {:?}, which the model does not have",
                    r.0
                ))
            })?;
            let n_calls = if matches!(kinds[l], Kind::Input(_)) {
                1
            } else {
                calls[l].len()
            };
            if r.1 >= n_calls {
                return Err(graph_error(format!(
                    "{user} refers to call {} of layer {:?}, which has {n_calls}",
                    r.1, r.0
                )));
            }
            Ok((l, r.1))
        };
        let inputs = parse_refs(&config.input_layers, "input_layers")?
            .iter()
            .map(|r| resolve(r, "input_layers"))
            .collect::<Result<Vec<_>>>()?;
        for &(l, _) in &inputs {
            if !matches!(kinds[l], Kind::Input(_)) {
                return Err(graph_error(format!(
                    "model input {:?} is not an Input layer",
                    names[l]
                )));
            }
        }
        let outputs = parse_refs(&config.output_layers, "output_layers")?
            .iter()
            .map(|r| resolve(r, "output_layers"))
            .collect::<Result<Vec<_>>>()?;
        // topological order: inputs first, then a depth-first post-order from the outputs
        let mut order: Vec<(usize, usize)> = inputs.clone();
        let mut state: HashMap<(usize, usize), bool> = inputs.iter().map(|&k| (k, true)).collect();
        for &out in &outputs {
            let mut stack = vec![(out, false)];
            while let Some((key, expanded)) = stack.pop() {
                if expanded {
                    state.insert(key, true);
                    order.push(key);
                    continue;
                }
                match state.get(&key) {
                    Some(true) => continue,
                    Some(false) => {
                        return Err(graph_error(format!(
                            "the graph has a cycle through layer {:?}",
                            names[key.0]
                        )))
                    }
                    None => {}
                }
                if let Kind::Input(_) = kinds[key.0] {
                    return Err(graph_error(format!(
                        "Graph disconnected: the outputs depend on Input {:?}, which is not \
                         among the model's inputs",
                        names[key.0]
                    )));
                }
                state.insert(key, false);
                stack.push((key, true));
                let user = format!("layer {:?}", names[key.0]);
                for r in calls[key.0][key.1].iter().rev() {
                    let dep = resolve(r, &user)?;
                    match state.get(&dep) {
                        Some(true) => {}
                        Some(false) => {
                            return Err(graph_error(format!(
                                "the graph has a cycle through layer {:?}",
                                names[dep.0]
                            )))
                        }
                        None => stack.push((dep, false)),
                    }
                }
            }
        }
        let mut used = vec![false; n_layers];
        for &(l, _) in &order {
            used[l] = true;
        }
        if let Some(l) = (0..n_layers).find(|&l| !used[l]) {
            return Err(graph_error(format!(
                "layer {:?} is not connected to any output of the model",
                names[l]
            )));
        }
        // build every call, in topological order, for the shapes its inputs have
        let node_of: HashMap<(usize, usize), usize> =
            order.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut call_index: Vec<HashMap<usize, usize>> = vec![HashMap::new(); n_layers];
        for &(l, c) in &order {
            let next = call_index[l].len();
            call_index[l].entry(c).or_insert(next);
        }
        let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(order.len());
        let mut plain: Vec<Vec<Option<Box<dyn Layer>>>> = (0..n_layers)
            .map(|l| (0..call_index[l].len()).map(|_| None).collect())
            .collect();
        let mut merges: Vec<
            Vec<Option<Box<dyn crate::neural_network::layers::merge::MergeLayer>>>,
        > = (0..n_layers)
            .map(|l| (0..call_index[l].len()).map(|_| None).collect())
            .collect();
        let mut first_shape: Vec<Option<Vec<usize>>> = vec![None; n_layers];
        let mut call_shapes: Vec<Vec<Vec<usize>>> = (0..n_layers)
            .map(|l| vec![Vec::new(); call_index[l].len()])
            .collect();
        let mut nodes = Vec::with_capacity(order.len());
        for &(l, c) in &order {
            let name = &names[l];
            let call = call_index[l][&c];
            let input_nodes: Vec<usize> = match kinds[l] {
                Kind::Input(_) => Vec::new(),
                _ => calls[l][c]
                    .iter()
                    .map(|r| node_of[&resolve(r, name).expect("resolved above")])
                    .collect(),
            };
            let in_shapes: Vec<Vec<usize>> =
                input_nodes.iter().map(|&i| shapes[i].clone()).collect();
            let out = match &kinds[l] {
                Kind::Input(shape) => shape.clone(),
                Kind::Merge(spec) => {
                    let m = spec.build()?;
                    let out = m.output_shape(&in_shapes).map_err(|e| {
                        graph_error(format!("layer {name:?}: {}", strip_prefix(&e)))
                    })?;
                    merges[l][call] = Some(m);
                    out
                }
                Kind::Plain(spec) => {
                    let shape = &in_shapes[0];
                    if let Some(first) = &first_shape[l] {
                        if first != shape {
                            return Err(graph_error(format!(
                                "layer {name:?} ({}) is called on tensors of per-sample shapes {first:?} and {shape:?}: a shared layer takes one shape",
                                spec.class_name()
                            )));
                        }
                    }
                    let fail = |e: Error| {
                        graph_error(format!(
                            "layer {name:?} ({}) does not fit its input of per-sample shape {shape:?}: {}",
                            spec.class_name(),
                            strip_prefix(&e)
                        ))
                    };
                    let probe_shape = [&[1usize][..], &shape[..]].concat();
                    size_guard::check_f32_alloc(
                        &spec.class_name(),
                        "one sample's input",
                        &probe_shape,
                    )
                    .map_err(fail)?;
                    let layer = spec.build(shape, layer_seed(seed, l)).map_err(fail)?;
                    let probe = ArrayD::<f32>::zeros(IxDyn(&probe_shape));
                    let out = layer.predict(&probe).map_err(fail)?.shape()[1..].to_vec();
                    first_shape[l] = Some(shape.clone());
                    plain[l][call] = Some(layer);
                    out
                }
            };
            call_shapes[l][call] = out.clone();
            shapes.push(out);
            nodes.push(Node {
                layer: l,
                call,
                inputs: input_nodes,
            });
        }
        let layers: Vec<GraphLayer> = kinds
            .iter()
            .enumerate()
            .map(|(l, kind)| match kind {
                Kind::Input(_) => GraphLayer::Input,
                Kind::Plain(_) => GraphLayer::Plain(
                    plain[l]
                        .drain(..)
                        .map(|o| o.expect("every call built"))
                        .collect(),
                ),
                Kind::Merge(_) => GraphLayer::Merge(
                    merges[l]
                        .drain(..)
                        .map(|o| o.expect("every call built"))
                        .collect(),
                ),
            })
            .collect();
        let input_nodes: Vec<usize> = inputs.iter().map(|k| node_of[k]).collect();
        let output_nodes: Vec<usize> = outputs.iter().map(|k| node_of[k]).collect();
        let input_shapes = input_nodes.iter().map(|&i| shapes[i].clone()).collect();
        let output_shapes = output_nodes.iter().map(|&i| shapes[i].clone()).collect();
        let model = GraphModel::from_parts(layers, nodes, input_nodes, output_nodes, seed)?;
        Ok(Self {
            model,
            config: raw,
            names,
            classes: config.layers.iter().map(|e| e.class_name.clone()).collect(),
            call_shapes,
            input_shapes,
            output_shapes,
            compiled: None,
        })
    }

    /// Sets the optimizer, one loss per output and each output's weight in the total loss.
    pub fn compile(
        &mut self,
        optimizer: OptimizerSpec,
        losses: Vec<LossSpec>,
        loss_weights: Vec<f32>,
    ) -> Result<()> {
        let built = losses
            .iter()
            .map(LossSpec::build)
            .collect::<Result<Vec<_>>>()?;
        self.model
            .compile(optimizer.build()?, built, loss_weights.clone())?;
        self.compiled = Some((optimizer, losses, loss_weights));
        Ok(())
    }

    /// [`Self::compile`] from JSON: the optimizer's `{"class_name", "config"}`, a list of
    /// loss configs and a list of weights.
    pub fn compile_json(
        &mut self,
        optimizer_json: &str,
        losses_json: &str,
        loss_weights: Vec<f32>,
    ) -> Result<()> {
        let opt: OptimizerSpec =
            serde_json::from_str(optimizer_json).map_err(|e| config_error("optimizer", e))?;
        let losses: Vec<LossSpec> =
            serde_json::from_str(losses_json).map_err(|e| config_error("losses", e))?;
        self.compile(opt, losses, loss_weights)
    }

    pub fn is_compiled(&self) -> bool {
        self.compiled.is_some()
    }

    /// The config the model was built from.
    pub fn to_config(&self) -> &Value {
        &self.config
    }

    pub fn model(&self) -> &GraphModel {
        &self.model
    }

    pub fn model_mut(&mut self) -> &mut GraphModel {
        &mut self.model
    }

    /// The layer names, in the config's order.
    pub fn layer_names(&self) -> &[String] {
        &self.names
    }

    pub fn input_shapes(&self) -> &[Vec<usize>] {
        &self.input_shapes
    }

    pub fn output_shapes(&self) -> &[Vec<usize>] {
        &self.output_shapes
    }

    /// The weight owners (first instance of every one-input layer), in layer order, moved
    /// out of the model for `f` and put back after.
    fn with_owners<T>(&mut self, f: impl FnOnce(&mut [Box<dyn Layer>]) -> T) -> T {
        let mut owners = Vec::new();
        let mut slots = Vec::new();
        for (i, layer) in self.model.layers_mut().iter_mut().enumerate() {
            if let GraphLayer::Plain(calls) = layer {
                owners.push(calls.remove(0));
                slots.push(i);
            }
        }
        let out = f(&mut owners);
        for (i, owner) in slots.into_iter().zip(owners) {
            if let GraphLayer::Plain(calls) = &mut self.model.layers_mut()[i] {
                calls.insert(0, owner);
            }
        }
        out
    }

    /// Every layer's weights in Keras's order and shapes, layer by layer.
    pub fn get_weights(&self) -> Vec<ArrayD<f32>> {
        (0..self.names.len())
            .filter_map(|l| self.model.weight_owner(l))
            .flat_map(weight_layout::keras_weights)
            .map(|(_, a)| a)
            .collect()
    }

    /// The names of each layer's arrays, in the config's layer order and
    /// [`Self::get_weights`]'s array order (empty for inputs and layers without weights).
    pub fn weight_names(&self) -> Vec<Vec<String>> {
        (0..self.names.len())
            .map(|l| {
                self.model
                    .weight_owner(l)
                    .map(weight_layout::keras_weight_names)
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Loads weights in [`Self::get_weights`]'s order; all are checked before any is set.
    pub fn set_weights(&mut self, weights: Vec<ArrayD<f32>>) -> Result<()> {
        self.with_owners(|owners| weight_layout::set_keras_weights(owners, weights))?;
        for layer in self.model.layers_mut() {
            if let GraphLayer::Plain(calls) = layer {
                if calls.len() > 1 {
                    let w = calls[0].get_weights().into_owned();
                    for c in calls[1..].iter_mut() {
                        c.apply_weights(&w)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Per layer, in config order: `(name, class name, per-call output shapes, parameter
    /// count, number of weight arrays)`.
    pub fn layer_summaries(&self) -> Vec<LayerSummary> {
        (0..self.names.len())
            .map(|l| {
                let arrays = self
                    .model
                    .weight_owner(l)
                    .map(weight_layout::keras_weights)
                    .unwrap_or_default();
                (
                    self.names[l].clone(),
                    self.classes[l].clone(),
                    self.call_shapes[l].clone(),
                    arrays.iter().map(|(_, a)| a.len()).sum(),
                    arrays.len(),
                )
            })
            .collect()
    }
}

/// An error's message without the crate's `invalid input: ` prefix, for nesting in another.
fn strip_prefix(e: &Error) -> String {
    let s = e.to_string();
    s.strip_prefix("invalid input: ")
        .map(str::to_string)
        .unwrap_or(s)
}
