//! Networks from Keras configs: the same JSON the Python `rustyml.neural_network.Sequential`
//! sends across (and stores in its saved files) builds the same network here.
//!
//! A layer is described by Keras's `{"class_name": ..., "config": {...}}`; [`LayerSpec`] is the
//! registry of the classes rustyml has (adding a layer is one variant there and one arm in
//! [`LayerSpec::build`]). Optimizers and losses are described the same way
//! ([`OptimizerSpec`], [`LossSpec`]) and built with Keras 3's update rules. A
//! [`KerasSequential`] is the built [`Sequential`] together with the configs it came from, the
//! per-layer shapes, and the weights in Keras's layout ([`weight_layout`]).
//!
//! ```
//! use rustyml::neural_network::keras::model_from_config;
//! let mut net = model_from_config(
//!     r#"{"seed": 0, "input_shape": [3], "layers": [
//!         {"class_name": "Dense", "config": {"units": 4, "activation": "relu"}},
//!         {"class_name": "Dense", "config": {"units": 1}}]}"#,
//! )
//! .unwrap();
//! net.compile_json(
//!     r#"{"class_name": "SGD", "config": {"learning_rate": 0.1, "momentum": 0.0, "nesterov": false}}"#,
//!     r#"{"name": "mean_squared_error"}"#,
//! )
//! .unwrap();
//! let x = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[8, 3]));
//! let y = ndarray::ArrayD::<f32>::ones(ndarray::IxDyn(&[8, 1]));
//! net.model_mut().fit_with_batches(&x, &y, 2, 4).unwrap();
//! assert_eq!(net.output_shape(), &[1]);
//! ```

mod convolution;
mod functional;
mod layer_spec;
mod loss_spec;
mod merge_spec;
mod optimizer_spec;
mod pooling;
mod recurrent;
mod regularizer_spec;
mod training_state;
pub mod weight_layout;

pub use convolution::{ConvSpec, DepthwiseSpec};
pub use functional::{functional_model_from_config, KerasFunctional, LayerSummary};
#[cfg(feature = "python")]
pub(crate) use layer_spec::parse_activation;
pub use layer_spec::{AxisSpec, LayerSpec, SpatialArg};
pub use loss_spec::LossSpec;
pub use merge_spec::MergeSpec;
pub use optimizer_spec::{CommonSpec, OptimizerSpec, WeightDecayRuleSpec};
pub use pooling::{GlobalPoolSpec, PoolSpec};
pub use recurrent::{BidirectionalSpec, RecurrentSpec};
pub use regularizer_spec::LayerRegularizers;

use crate::error::{Error, Result};
use crate::neural_network::layers::size_guard;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::sequential::Sequential;
use ndarray::{ArrayD, IxDyn};
use serde::Deserialize;
use serde_json::Value;

/// `invalid {what} config: {e}`: how a config that does not parse is refused.
fn config_error(what: &str, e: serde_json::Error) -> Error {
    Error::invalid_input(format!("invalid {what} config: {e}"))
}

/// The per-layer seed a model seed gives layer `index`: the model seed and the position, so
/// adding a layer does not reshuffle the others' initialisation.
pub fn layer_seed(model_seed: Option<u64>, index: usize) -> Option<u64> {
    model_seed.map(|s| {
        s.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(index as u64 + 1)
    })
}

/// A [`Sequential`] built from Keras configs, with the configs, the per-sample shapes each
/// layer produces and the compile settings it was given.
pub struct KerasSequential {
    model: Sequential,
    layers: Vec<LayerSpec>,
    name: Option<String>,
    seed: Option<u64>,
    input_shape: Vec<usize>,
    output_shapes: Vec<Vec<usize>>,
    compiled: Option<(OptimizerSpec, LossSpec)>,
}

/// A whole model's config, as the Python `Sequential.get_config()` writes it.
#[derive(Deserialize)]
struct ModelConfig {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    input_shape: Option<Vec<usize>>,
    layers: Vec<Value>,
}

/// Builds the model a whole config describes: `{"layers": [...], "input_shape": [...],
/// "seed": ..., "name": ...}`, the JSON of the Python `Sequential.get_config()` (and of the
/// `config` entry of a saved file's metadata). `input_shape` is the per-sample shape, and
/// required.
pub fn model_from_config(config_json: &str) -> Result<KerasSequential> {
    KerasSequential::from_config(config_json)
}

impl KerasSequential {
    /// See [`model_from_config`].
    pub fn from_config(config_json: &str) -> Result<Self> {
        let config: ModelConfig =
            serde_json::from_str(config_json).map_err(|e| config_error("model", e))?;
        let input_shape = config.input_shape.ok_or_else(|| {
            Error::invalid_input("the model config has no input_shape (the per-sample shape)")
        })?;
        let mut model = Self::from_layer_values(config.layers, &input_shape, config.seed)?;
        model.name = config.name;
        Ok(model)
    }

    /// Builds every layer of `layers_json` (a JSON list of `{"class_name", "config"}`) for
    /// samples of `input_shape`; `seed` fixes every layer's initialisation (each layer's own
    /// `seed` wins) and the mini-batch shuffling.
    pub fn from_layers_json(
        layers_json: &str,
        input_shape: &[usize],
        seed: Option<u64>,
    ) -> Result<Self> {
        let specs: Vec<Value> =
            serde_json::from_str(layers_json).map_err(|e| config_error("layers", e))?;
        Self::from_layer_values(specs, input_shape, seed)
    }

    fn from_layer_values(
        specs: Vec<Value>,
        input_shape: &[usize],
        seed: Option<u64>,
    ) -> Result<Self> {
        let layers = specs
            .into_iter()
            .enumerate()
            .map(|(i, raw)| {
                let class = raw
                    .get("class_name")
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_string();
                let config = raw.get("config").cloned();
                let spec: LayerSpec = serde_json::from_value(raw)
                    .map_err(|e| config_error(&format!("layer {i} ({class})"), e))?;
                regularizer_spec::check_regularizer_keys(&spec, config.as_ref())
                    .map_err(|e| Error::invalid_input(format!("layer {i} ({class}): {e}")))?;
                Ok(spec)
            })
            .collect::<Result<Vec<LayerSpec>>>()?;
        Self::new(layers, input_shape, seed)
    }

    /// Builds `layers` for samples of `input_shape` (no batch axis): each layer for the
    /// shape the one before it produces (found by running one zero sample through it), so
    /// a layer that does not fit its predecessor is refused here, naming both.
    pub fn new(layers: Vec<LayerSpec>, input_shape: &[usize], seed: Option<u64>) -> Result<Self> {
        if layers.is_empty() {
            return Err(Error::invalid_input("the model has no layers"));
        }
        let mut model = Sequential::new_with_seed(crate::random::resolve_seed(seed));
        let mut shape = input_shape.to_vec();
        let mut output_shapes = Vec::with_capacity(layers.len());
        let mut previous = String::from("the input");
        let mut total_params: u128 = 0;
        for (i, spec) in layers.iter().enumerate() {
            let class = spec.class_name();
            let fail = |e: Error| {
                Error::invalid_input(format!(
                    "layer {i} ({class}) does not fit {previous} of per-sample shape {shape:?}: {e}"
                ))
            };
            // the probe (one sample of the layer's input) is checked before it is allocated
            let probe_shape = [&[1usize][..], &shape[..]].concat();
            size_guard::check_f32_alloc(&class, "one sample's input", &probe_shape)
                .map_err(fail)?;
            let layer = spec.build(&shape, layer_seed(seed, i)).map_err(fail)?;
            // Each layer's weights passed the one-array bound; together they must too.
            let own = match layer.param_count() {
                TrainingParameters::Trainable(n) | TrainingParameters::NonTrainable(n) => n,
                TrainingParameters::NoTrainable => 0,
            };
            total_params = total_params.saturating_add(own as u128);
            if total_params * 4 > size_guard::array_byte_limit() as u128 {
                return Err(Error::invalid_input(format!(
                    "layer {i} ({class}): the model's weights would need {}, more than half of this machine's memory; use smaller layers",
                    size_guard::describe_bytes(total_params * 4)
                )));
            }
            let probe = ArrayD::<f32>::zeros(IxDyn(&probe_shape));
            let out = layer.predict(&probe).map_err(fail)?;
            shape = out.shape()[1..].to_vec();
            output_shapes.push(shape.clone());
            model.add(layer);
            previous = format!("layer {i} ({class})");
        }
        Ok(Self {
            model,
            layers,
            name: None,
            seed,
            input_shape: input_shape.to_vec(),
            output_shapes,
            compiled: None,
        })
    }

    /// Sets the optimizer and the loss.
    pub fn compile(&mut self, optimizer: OptimizerSpec, loss: LossSpec) -> Result<()> {
        let (opt, loss_fn) = (optimizer.build()?, loss.build()?);
        self.model.compile(opt, loss_fn);
        self.compiled = Some((optimizer, loss));
        Ok(())
    }

    /// [`Self::compile`] from the optimizer's `{"class_name", "config"}` and the loss's
    /// `{"name", "from_logits"}` JSON.
    pub fn compile_json(&mut self, optimizer_json: &str, loss_json: &str) -> Result<()> {
        let opt: OptimizerSpec =
            serde_json::from_str(optimizer_json).map_err(|e| config_error("optimizer", e))?;
        let loss: LossSpec =
            serde_json::from_str(loss_json).map_err(|e| config_error("loss", e))?;
        self.compile(opt, loss)
    }

    /// The model's config: `{"name", "seed", "input_shape", "layers"}`, each layer's config
    /// with every argument rustyml reads, defaults filled in. [`model_from_config`] of it
    /// builds this network again (the same weights, for a seeded model).
    pub fn to_config(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "seed": self.seed,
            "input_shape": self.input_shape,
            "layers": self.layers,
        })
    }

    /// The compile settings (optimizer and loss configs), if compiled. The optimizer's
    /// learning rate is the model's current one.
    pub fn compile_config(&self) -> Option<(OptimizerSpec, LossSpec)> {
        let (opt, loss) = self.compiled.clone()?;
        let opt = match self.model.learning_rate() {
            Some(lr) => opt.with_learning_rate(lr),
            None => opt,
        };
        Some((opt, loss))
    }

    /// Whether `compile` has been called.
    pub fn is_compiled(&self) -> bool {
        self.compiled.is_some()
    }

    /// The layer configs, in order.
    pub fn layer_specs(&self) -> &[LayerSpec] {
        &self.layers
    }

    /// The model seed (`None`: layers and shuffling drew from the global stream).
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    pub fn model(&self) -> &Sequential {
        &self.model
    }

    pub fn model_mut(&mut self) -> &mut Sequential {
        &mut self.model
    }

    /// The built network, without its configs.
    pub fn into_model(self) -> Sequential {
        self.model
    }

    /// Per-sample input shape the model was built for.
    pub fn input_shape(&self) -> &[usize] {
        &self.input_shape
    }

    /// Each layer's per-sample output shape.
    pub fn output_shapes(&self) -> &[Vec<usize>] {
        &self.output_shapes
    }

    /// The last layer's per-sample output shape.
    pub fn output_shape(&self) -> &[usize] {
        self.output_shapes.last().map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every layer's weights in Keras's order and shapes.
    pub fn get_weights(&self) -> Vec<ArrayD<f32>> {
        self.model
            .layers()
            .iter()
            .flat_map(|layer| weight_layout::keras_weights(layer.as_ref()))
            .map(|(_, a)| a)
            .collect()
    }

    /// The names of each layer's arrays, in [`Self::get_weights`] order (as this crate names
    /// them: `weight`, `bias`, `running_mean`...).
    pub fn weight_names(&self) -> Vec<Vec<String>> {
        self.model
            .layers()
            .iter()
            .map(|layer| weight_layout::keras_weight_names(layer.as_ref()))
            .collect()
    }

    /// Loads weights given in Keras's order and shapes (or this crate's shapes); every array
    /// is checked (count, shape, finite values, a non-negative moving variance) before any
    /// is set, so a refused call changes nothing.
    pub fn set_weights(&mut self, weights: Vec<ArrayD<f32>>) -> Result<()> {
        weight_layout::set_keras_weights(self.model.layers_mut(), weights)
    }

    /// `(layer type, per-sample output shape, parameter count)` per layer; the count is
    /// Keras's (every array it lists, moving statistics included).
    pub fn layer_summaries(&self) -> Vec<(String, Vec<usize>, usize)> {
        self.model
            .layers()
            .iter()
            .zip(&self.output_shapes)
            .map(|(layer, shape)| {
                let params = weight_layout::keras_weights(layer.as_ref())
                    .iter()
                    .map(|(_, a)| a.len())
                    .sum();
                (layer.layer_type().to_string(), shape.clone(), params)
            })
            .collect()
    }

    /// Refuses a training batch whose activations could not fit: training keeps every
    /// layer's output for the backward pass plus one gradient of the widest, for the whole
    /// batch (inference runs in chunks and needs none of this). The bound is half the
    /// machine's physical memory; the message names the widest layer, the bytes and the
    /// largest batch_size that fits.
    pub fn check_training_batch(&self, batch_size: usize) -> Result<()> {
        use size_guard::{describe_bytes, physical_memory_bytes};
        let per_sample = |s: &[usize]| s.iter().fold(4u128, |a, &d| a.saturating_mul(d as u128));
        let mut total = per_sample(&self.input_shape);
        let mut widest = (0u128, 0usize);
        for (i, shape) in self.output_shapes.iter().enumerate() {
            let b = per_sample(shape);
            total = total.saturating_add(b);
            if b > widest.0 {
                widest = (b, i);
            }
        }
        // outputs kept for backward + the widest gradient in flight
        let per_sample_total = total.saturating_add(widest.0.saturating_mul(2));
        let need = per_sample_total.saturating_mul(batch_size as u128);
        let limit = (physical_memory_bytes() / 2) as u128;
        if need <= limit {
            return Ok(());
        }
        let fits = (limit / per_sample_total.max(1)).min(usize::MAX as u128);
        let layer = &self.model.layers()[widest.1];
        Err(Error::invalid_input(format!(
            "training with batch_size={batch_size} needs about {} of activations and gradients per batch \
             (layer {} ({}) alone outputs {} per sample), more than half of this machine's memory ({}); \
             use a smaller batch_size{}",
            describe_bytes(need),
            widest.1,
            layer.layer_type(),
            describe_bytes(widest.0),
            describe_bytes(physical_memory_bytes() as u128),
            if fits >= 1 {
                format!(" (at most {fits})")
            } else {
                " or smaller layers: not even one sample fits".to_string()
            }
        )))
    }
}

#[cfg(test)]
mod tests;
