//! The contracts every layer, loss and optimizer fulfils.

use super::layers::layer_weight::LayerWeight;
use super::layers::TrainingParameters;
use super::{Tensor, TensorView};
use crate::error::{IoError, Result};

/// One trainable parameter buffer with its gradient, as an optimizer sees it.
pub struct ParamGrad<'a> {
    pub value: &'a mut [f32],
    pub grad: &'a [f32],
    /// Whether weight decay applies (kernels: yes; biases and normalisation scales/offsets: no).
    pub decays: bool,
}

impl<'a> ParamGrad<'a> {
    /// A kernel-like parameter: weight decay applies.
    pub fn weight(value: &'a mut [f32], grad: &'a [f32]) -> Self {
        Self {
            value,
            grad,
            decays: true,
        }
    }

    /// A bias, scale or offset: never decayed.
    pub fn no_decay(value: &'a mut [f32], grad: &'a [f32]) -> Self {
        Self {
            value,
            grad,
            decays: false,
        }
    }
}

/// A network layer.
/// Where a layer's random stream (dropout masks, noise) stands: the generator's seed, stream
/// and word position, so that a saved model continues drawing where the original would.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RandomStream {
    pub seed: [u8; 32],
    pub stream: u64,
    pub word_pos: u128,
}

impl RandomStream {
    /// The position of `rng`.
    pub fn of(rng: &rand_chacha::ChaCha8Rng) -> Self {
        Self {
            seed: rng.get_seed(),
            stream: rng.get_stream(),
            word_pos: rng.get_word_pos(),
        }
    }

    /// A generator at this position.
    pub fn generator(&self) -> rand_chacha::ChaCha8Rng {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::from_seed(self.seed);
        rng.set_stream(self.stream);
        rng.set_word_pos(self.word_pos);
        rng
    }
}

/// Keras's mask: `true` where a step is read, `false` where it is padding. A sequence's mask
/// is `[batch, timesteps]` (one entry per sample and step).
pub type Mask = ndarray::ArrayD<bool>;

/// What a layer does with a mask arriving with its input, by Keras 3's rules for the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskRule {
    /// Keras's `supports_masking` with the default `compute_mask`: the mask reaches the next
    /// layer unchanged and the layer's own computation ignores it.
    PassThrough,
    /// No `supports_masking`: Keras drops the mask (with a warning); so does rustyml.
    Drop,
    /// Keras reads the mask in the layer's computation in a way rustyml does not reproduce
    /// yet: a mask reaching it is refused rather than silently ignored.
    Unsupported,
}

/// Keras 3 layers that pass a mask through unchanged and ignore it (they set
/// `supports_masking` and keep the default `compute_mask`), by rustyml's layer names.
const MASK_PASSING_LAYERS: &[&str] = &[
    "Dense",
    "Identity",
    "Activation",
    "Linear",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "LeakyReLU",
    "ELU",
    "SELU",
    "Softplus",
    "Softsign",
    "HardSigmoid",
    "Exponential",
    "GELU",
    "SiLU",
    "Mish",
    "Softmax",
    "PReLU",
    "Dropout",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "GaussianDropout",
    "GaussianNoise",
    "LayerNormalization",
    "GroupNormalization",
    "InstanceNormalization",
    "UnitNormalization",
];

/// Keras 3 layers whose computation reads the mask (masked statistics, masked softmax, the
/// masked mean): rustyml refuses a mask there instead of computing something else.
/// (Keras's `Softmax` layer also reads a mask, but rustyml builds it for `Activation("softmax")`
/// too, which passes the mask on, and a sequence mask does not broadcast to Keras's `Softmax`
/// anyway.)
const MASK_READING_LAYERS: &[&str] = &["BatchNormalization", "GlobalAveragePooling1D"];

/// Keras's rule for a layer named `layer_type` (see [`MaskRule`]).
pub fn keras_mask_rule(layer_type: &str) -> MaskRule {
    if MASK_PASSING_LAYERS.contains(&layer_type) {
        MaskRule::PassThrough
    } else if MASK_READING_LAYERS.contains(&layer_type) {
        MaskRule::Unsupported
    } else {
        MaskRule::Drop
    }
}

pub trait Layer: std::any::Any + Send + Sync {
    /// Training pass: computes the output and keeps what `backward` needs.
    fn forward(&mut self, input: &Tensor) -> Result<Tensor>;
    /// `forward` on an input the caller hands over: layers that cache their input keep it
    /// as it is instead of copying it (a network's first layer, fed a fresh batch).
    fn forward_owned(&mut self, input: Tensor) -> Result<Tensor> {
        self.forward(&input)
    }
    /// Inference pass: keeps nothing, mode-dependent layers behave as at inference.
    fn predict(&self, input: &Tensor) -> Result<Tensor>;
    /// `predict` on a borrowed input. Layers that read their input in place override it, so
    /// a network's caller (the Python front's arrays) is never copied to start inference.
    fn predict_view(&self, input: TensorView<'_>) -> Result<Tensor> {
        self.predict(&input.to_owned())
    }
    /// Stores the parameter gradients and returns the gradient with respect to the input.
    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor>;
    /// `backward` for a network's first layer, whose input gradient nobody reads: stores the
    /// same parameter gradients; layers whose input gradient costs a product of its own skip
    /// computing it.
    fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        self.backward(grad_output).map(drop)
    }
    /// Training pass given Keras's mask of the input (`None`: none). The layers that read a
    /// mask (the recurrent ones) override it; for the others it is `forward`, after
    /// [`Layer::compute_mask`] has refused a mask they cannot honour.
    fn forward_masked(&mut self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        let _ = mask;
        self.forward(input)
    }
    /// [`Layer::predict`] given Keras's mask of the input.
    fn predict_masked(&self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        let _ = mask;
        self.predict(input)
    }
    /// Keras's `compute_mask`: the mask of the output, from the input and the mask arriving
    /// with it. The default follows [`keras_mask_rule`] for the layer's name: pass it on,
    /// drop it, or refuse it (an error naming the layer).
    fn compute_mask(&self, input: TensorView<'_>, mask: Option<&Mask>) -> Result<Option<Mask>> {
        let _ = input;
        let Some(mask) = mask else {
            return Ok(None);
        };
        match keras_mask_rule(self.layer_type()) {
            MaskRule::PassThrough => Ok(Some(mask.clone())),
            MaskRule::Drop => Ok(None),
            MaskRule::Unsupported => Err(crate::error::Error::invalid_input(format!(
                "{}: a Keras mask (from Embedding(mask_zero=True) or Masking) reaches this layer; \
                 Keras reads it in this layer's computation, which rustyml does not support yet \
                 (place the layer before the mask is made, or drop the mask)",
                self.layer_type()
            ))),
        }
    }
    fn layer_type(&self) -> &str {
        "Unknown"
    }
    fn output_shape(&self) -> String {
        "Unknown".to_string()
    }
    fn param_count(&self) -> TrainingParameters;
    /// Trainable parameters with their latest gradients, in a fixed order.
    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        Vec::new()
    }
    fn get_weights(&self) -> LayerWeight<'_>;
    /// Whether the `bias` array of [`Layer::get_weights`] is in use. A layer built with Keras's
    /// `use_bias=False` keeps a zero, untrained bias there; front ends that speak Keras's weight
    /// lists leave it out.
    fn uses_bias(&self) -> bool {
        true
    }
    fn set_training_if_mode_dependent(&mut self, _is_training: bool) {}
    /// The position of the layer's random stream, for saving a model that will continue
    /// training; `None` for a layer that draws nothing.
    fn random_stream(&self) -> Option<RandomStream> {
        None
    }
    /// Puts back a position from [`Layer::random_stream`] (a layer that draws nothing
    /// ignores it).
    fn set_random_stream(&mut self, _stream: &RandomStream) {}

    /// Keras's regularization penalty of the last training forward pass (see
    /// [`crate::neural_network::regularizers`]): the weights' penalties when `weights` (a
    /// trainable layer's first call) plus, when `activity`, the output's divided by the batch
    /// size. It also arms the next `backward` to add those penalties' gradients, multiplied by
    /// `grad_scale` (the batch share the loss gradient is scaled by). Layers without
    /// regularizers: 0.
    fn regularize(&mut self, _grad_scale: f32, _weights: bool, _activity: bool) -> f32 {
        0.0
    }
    /// The weights' regularization penalty at their current values (0 without regularizers).
    fn weight_penalty(&self) -> f32 {
        0.0
    }
    /// The output (activity) regularization penalty of `output`, one of this layer's outputs,
    /// not divided by the batch size (0 without an activity regularizer).
    fn activity_penalty(&self, _output: &Tensor) -> f32 {
        0.0
    }

    /// Loads weights of the layer's own kind (used by model loading). Layers with weights
    /// override this; the default accepts only `LayerWeight::Empty`.
    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match weights {
            LayerWeight::Empty => Ok(()),
            _ => Err(IoError::ModelStructureMismatch(format!(
                "layer `{}` has no weights but the file holds some",
                self.layer_type()
            ))
            .into()),
        }
    }
}

/// A training objective. `Send + Sync` so a compiled model can cross threads (the Python
/// front trains with the GIL released).
pub trait Loss: Send + Sync {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32>;
    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor>;

    /// The loss with one weight per sample (rows along axis 0), Keras's `sample_weight`:
    /// `sum_i w_i L_i / batch`, `L_i` sample `i`'s own loss. Unit weights give
    /// `compute_loss` itself. The default computes each `L_i` with `compute_loss` on the
    /// sample alone, which is exact for a loss that is the mean of its samples' losses; a
    /// loss that depends on the batch as a whole (a reduction, a batch-wide label rule)
    /// overrides it.
    fn compute_weighted_loss(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<f32> {
        crate::neural_network::losses::sample_weights::check_row_weights(weights, y_pred)?;
        if crate::neural_network::losses::sample_weights::all_unit(weights) {
            return self.compute_loss(y_true, y_pred);
        }
        crate::neural_network::losses::sample_weights::weighted_mean_of_samples(
            |t, p| self.compute_loss(t, p),
            y_true,
            y_pred,
            weights,
        )
    }

    /// The gradient of [`Self::compute_weighted_loss`]: `compute_grad` with each sample's
    /// rows times its weight (unit weights: `compute_grad` itself).
    fn compute_weighted_grad(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<Tensor> {
        crate::neural_network::losses::sample_weights::check_row_weights(weights, y_pred)?;
        let grad = self.compute_grad(y_true, y_pred)?;
        if crate::neural_network::losses::sample_weights::all_unit(weights) {
            return Ok(grad);
        }
        crate::neural_network::losses::sample_weights::scale_samples(grad, weights)
    }
}

/// A parameter update rule (`Send + Sync` for the same reason as [`Loss`]).
pub trait Optimizer: Send + Sync {
    /// Called once per batch before the layers are updated.
    fn step(&mut self) {}
    fn global_clipnorm(&self) -> Option<f32> {
        None
    }
    /// Updates every parameter of `layer`, gradients multiplied by `grad_scale` first.
    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32);
    fn learning_rate(&self) -> f32;
    fn set_learning_rate(&mut self, learning_rate: f32);
    /// A copy of the optimizer with all its state (moments, step count), from which a failed
    /// training call is undone; `None` where the optimizer cannot copy itself.
    fn snapshot(&self) -> Option<Box<dyn Optimizer>> {
        None
    }
    /// The running state (step counters, moments, accumulators), for saving a model that
    /// will continue training; `None` where the optimizer cannot export it.
    fn export_state(&self) -> Option<crate::neural_network::optimizers::OptimizerState> {
        None
    }
    /// Puts back a state from `export_state` of an optimizer of the same kind.
    fn import_state(
        &mut self,
        _state: &crate::neural_network::optimizers::OptimizerState,
    ) -> Result<()> {
        Err(crate::error::Error::invalid_input(
            "this optimizer cannot import a saved state",
        ))
    }
}

/// Weights that know which layer type they belong to.
pub trait ApplyWeights<L> {
    fn apply_to_layer(&self, layer: &mut L) -> Result<()>;
}

/// A boxed layer is a layer: models assembled at run time (the Python front builds layers
/// from configs) hold `Box<dyn Layer>` and add them like any other.
impl Layer for Box<dyn Layer> {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        (**self).forward(input)
    }
    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        (**self).predict(input)
    }
    fn predict_view(&self, input: TensorView<'_>) -> Result<Tensor> {
        (**self).predict_view(input)
    }
    fn forward_owned(&mut self, input: Tensor) -> Result<Tensor> {
        (**self).forward_owned(input)
    }
    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        (**self).backward(grad_output)
    }
    fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        (**self).backward_params_only(grad_output)
    }
    fn forward_masked(&mut self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        (**self).forward_masked(input, mask)
    }
    fn predict_masked(&self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        (**self).predict_masked(input, mask)
    }
    fn compute_mask(&self, input: TensorView<'_>, mask: Option<&Mask>) -> Result<Option<Mask>> {
        (**self).compute_mask(input, mask)
    }
    fn layer_type(&self) -> &str {
        (**self).layer_type()
    }
    fn output_shape(&self) -> String {
        (**self).output_shape()
    }
    fn param_count(&self) -> TrainingParameters {
        (**self).param_count()
    }
    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        (**self).parameters()
    }
    fn get_weights(&self) -> LayerWeight<'_> {
        (**self).get_weights()
    }
    fn uses_bias(&self) -> bool {
        (**self).uses_bias()
    }
    fn set_training_if_mode_dependent(&mut self, is_training: bool) {
        (**self).set_training_if_mode_dependent(is_training)
    }
    fn random_stream(&self) -> Option<RandomStream> {
        (**self).random_stream()
    }
    fn set_random_stream(&mut self, stream: &RandomStream) {
        (**self).set_random_stream(stream)
    }
    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        (**self).apply_weights(weights)
    }
    fn regularize(&mut self, grad_scale: f32, weights: bool, activity: bool) -> f32 {
        (**self).regularize(grad_scale, weights, activity)
    }
    fn weight_penalty(&self) -> f32 {
        (**self).weight_penalty()
    }
    fn activity_penalty(&self, output: &Tensor) -> f32 {
        (**self).activity_penalty(output)
    }
}

impl Loss for Box<dyn Loss> {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        (**self).compute_loss(y_true, y_pred)
    }
    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        (**self).compute_grad(y_true, y_pred)
    }
    fn compute_weighted_loss(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<f32> {
        (**self).compute_weighted_loss(y_true, y_pred, weights)
    }
    fn compute_weighted_grad(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<Tensor> {
        (**self).compute_weighted_grad(y_true, y_pred, weights)
    }
}

impl Optimizer for Box<dyn Optimizer> {
    fn step(&mut self) {
        (**self).step()
    }
    fn global_clipnorm(&self) -> Option<f32> {
        (**self).global_clipnorm()
    }
    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        (**self).update(layer, grad_scale)
    }
    fn learning_rate(&self) -> f32 {
        (**self).learning_rate()
    }
    fn set_learning_rate(&mut self, learning_rate: f32) {
        (**self).set_learning_rate(learning_rate)
    }
    fn snapshot(&self) -> Option<Box<dyn Optimizer>> {
        (**self).snapshot()
    }
    fn export_state(&self) -> Option<crate::neural_network::optimizers::OptimizerState> {
        (**self).export_state()
    }
    fn import_state(
        &mut self,
        state: &crate::neural_network::optimizers::OptimizerState,
    ) -> Result<()> {
        (**self).import_state(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer whose in-place inference answers differently from its owned one.
    struct Marked;

    impl Layer for Marked {
        fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
            self.predict(input)
        }
        fn predict(&self, input: &Tensor) -> Result<Tensor> {
            Ok(input.mapv(|_| 1.0))
        }
        fn predict_view(&self, input: TensorView<'_>) -> Result<Tensor> {
            Ok(input.mapv(|_| 2.0))
        }
        fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
            Ok(grad_output.clone())
        }
        fn param_count(&self) -> TrainingParameters {
            TrainingParameters::NoTrainable
        }
        fn get_weights(&self) -> LayerWeight<'_> {
            LayerWeight::Empty
        }
    }

    #[test]
    fn a_boxed_layer_forwards_in_place_inference() {
        let boxed: Box<dyn Layer> = Box::new(Marked);
        let x = Tensor::zeros(ndarray::IxDyn(&[2, 3]));
        // through the Box's own impl (what a Sequential's layer list calls), not the default
        let out = Layer::predict_view(&boxed, x.view()).unwrap();
        assert!(out.iter().all(|&v| v == 2.0));
    }
}
