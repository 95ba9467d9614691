//! Activation functions: the [`Activation`] enum used as a layer's `activation`, and one
//! activation layer per file wrapping it. A layer keeps one tensor for the backward pass, not
//! two: the activated output for the activations whose derivative is a function of it (ReLU,
//! sigmoid, tanh, softmax...), the pre-activation for the smooth ones whose derivative is not
//! (GELU, SiLU, Mish); see [`ActivationCache`].

use crate::declare_gate;
use crate::error::{Error, Result};
use crate::gate::Gate;
use crate::neural_network::layers::layer_util::{require_non_empty, seen_shape, to_c_order};
use crate::neural_network::Tensor;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// SELU's constants (Klambauer et al. 2017), as Keras and PyTorch use them.
pub const SELU_ALPHA: f32 = 1.673_263_2;
pub const SELU_SCALE: f32 = 1.050_701;

/// An elementwise (or, for softmax, last-axis) activation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Activation {
    Linear,
    ReLU,
    Sigmoid,
    Tanh,
    Softmax,
    LeakyReLU {
        negative_slope: f32,
    },
    ELU {
        alpha: f32,
    },
    SELU,
    Softplus,
    Softsign,
    HardSigmoid,
    Exponential,
    /// `x Φ(x)` (Φ the standard normal CDF); `approximate`: Keras's tanh approximation
    /// `x/2 (1 + tanh(√(2/π) (x + 0.044715 x³)))`. Keras's `"gelu"` is the exact form.
    GELU {
        approximate: bool,
    },
    /// `x σ(x)`, Keras's `silu` (alias `swish`).
    SiLU,
    /// `x tanh(softplus(x))`.
    Mish,
}

/// `√(2/π)` and the cubic coefficient of the tanh-approximated GELU.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;
const GELU_CUBIC: f32 = 0.044_715;
/// `1/√(2π)`, the standard normal density at 0.
const FRAC_1_SQRT_2PI: f32 = 0.398_942_3;
/// Above this, Mish's `tanh(softplus(x))` is 1 in f32 (it is already from x ≈ 9); clamping
/// `e^x` here keeps `(e^x)²` finite.
const MISH_SATURATION: f32 = 20.0;

/// Exact GELU, `x/2 erfc(-x/√2)`: erfc rather than `1 + erf` keeps the left tail accurate
/// (no cancellation).
#[inline]
fn gelu_exact(x: f32) -> f32 {
    0.5 * x * libm::erfcf(-x * std::f32::consts::FRAC_1_SQRT_2)
}

/// `Φ(x) + x φ(x)`.
#[inline]
fn gelu_exact_derivative(x: f32) -> f32 {
    0.5 * libm::erfcf(-x * std::f32::consts::FRAC_1_SQRT_2)
        + x * FRAC_1_SQRT_2PI * f32_math::exp(-0.5 * x * x)
}

/// Keras's tanh GELU through the identity `(1 + tanh u) / 2 = σ(2u)`: the same function, with
/// no cancellation in the left tail and no overflow.
#[inline]
fn gelu_tanh(x: f32) -> f32 {
    let u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    x * sigmoid(2.0 * u)
}

#[inline]
fn gelu_tanh_derivative(x: f32) -> f32 {
    let u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    let s = sigmoid(2.0 * u);
    let du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_CUBIC * x * x);
    let spread = s * (1.0 - s);
    // Saturated (spread 0), the second term is 0; `x du` alone may be inf far out.
    let slope = if spread > 0.0 {
        x * spread * 2.0 * du
    } else {
        0.0
    };
    s + slope
}

#[inline]
fn silu(x: f32) -> f32 {
    x * sigmoid(x)
}

/// `σ(x) (1 + x (1 - σ(x)))`.
#[inline]
fn silu_derivative(x: f32) -> f32 {
    let s = sigmoid(x);
    s * (1.0 + x * (1.0 - s))
}

/// With `n = e^x` and `p = n (n + 2)`: `tanh(softplus(x)) = p / (p + 2)` and
/// `1 - tanh² = 4 (p + 1) / (p + 2)²`, both free of cancellation in either tail.
#[inline]
fn mish_parts(x: f32) -> (f32, f32) {
    let n = f32_math::exp(x.min(MISH_SATURATION));
    let p = n * (n + 2.0);
    let t = p / (p + 2.0);
    // beyond the clamp, 1 - t² is 0 in truth, not its value at the clamp
    let one_minus_t2 = if x > MISH_SATURATION {
        0.0
    } else {
        4.0 * (p + 1.0) / ((p + 2.0) * (p + 2.0))
    };
    (t, one_minus_t2)
}

#[inline]
fn mish(x: f32) -> f32 {
    x * mish_parts(x).0
}

/// `tanh(softplus x) + x (1 - tanh²(softplus x)) σ(x)`.
#[inline]
fn mish_derivative(x: f32) -> f32 {
    let (t, one_minus_t2) = mish_parts(x);
    t + x * one_minus_t2 * sigmoid(x)
}

/// What a layer keeps from a training forward pass for its activation's backward pass:
/// nothing for the identity, the output when the derivative is a function of it, the
/// pre-activation when it is not. Either way one copy of one tensor, made by
/// [`Activation::forward_training`].
#[derive(Debug, Clone)]
pub enum ActivationCache {
    /// Linear: the gradient passes through; only the shape is kept (for shape checks).
    Identity { shape: Vec<usize> },
    /// The activated output.
    Output(Tensor),
    /// The input of the activation (GELU, SiLU, Mish).
    PreActivation(Tensor),
}

impl ActivationCache {
    /// The shape of the activation's input and output.
    pub fn shape(&self) -> &[usize] {
        match self {
            ActivationCache::Identity { shape } => shape,
            ActivationCache::Output(t) | ActivationCache::PreActivation(t) => t.shape(),
        }
    }
}

#[inline]
fn sigmoid(x: f32) -> f32 {
    f32_math::sigmoid(x)
}

#[inline]
fn softplus(x: f32) -> f32 {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): exact for large |x|.
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

impl Activation {
    /// Refuses parameters whose backward pass could not tell the branches apart.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Activation::LeakyReLU { negative_slope }
                if !(negative_slope.is_finite() && negative_slope > 0.0) =>
            {
                Err(Error::invalid_parameter(
                    "negative_slope",
                    format!("must be finite and > 0, got {negative_slope}"),
                ))
            }
            Activation::ELU { alpha } if !(alpha.is_finite() && alpha > 0.0) => Err(
                Error::invalid_parameter("alpha", format!("must be finite and > 0, got {alpha}")),
            ),
            _ => Ok(()),
        }
    }

    /// Keras's name for the activation (`"relu"`, `"leaky_relu"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Linear => "linear",
            Activation::ReLU => "relu",
            Activation::Sigmoid => "sigmoid",
            Activation::Tanh => "tanh",
            Activation::Softmax => "softmax",
            Activation::LeakyReLU { .. } => "leaky_relu",
            Activation::ELU { .. } => "elu",
            Activation::SELU => "selu",
            Activation::Softplus => "softplus",
            Activation::Softsign => "softsign",
            Activation::HardSigmoid => "hard_sigmoid",
            Activation::Exponential => "exponential",
            Activation::GELU { .. } => "gelu",
            Activation::SiLU => "silu",
            Activation::Mish => "mish",
        }
    }

    /// Whether the backward pass needs the pre-activation: the derivative of GELU, SiLU and
    /// Mish is not a function of their output (they are not invertible).
    pub fn needs_pre_activation(&self) -> bool {
        matches!(
            self,
            Activation::GELU { .. } | Activation::SiLU | Activation::Mish
        )
    }

    /// [`Activation::apply_scalar`] over a slice in place, the variant matched once so the
    /// loop vectorises (the same values as element by element).
    pub fn apply_slice(&self, xs: &mut [f32]) {
        apply_slice_widest(self, xs);
    }

    /// Applies the activation to a scalar (every variant but softmax).
    #[inline]
    pub fn apply_scalar(&self, x: f32) -> f32 {
        match *self {
            Activation::Linear | Activation::Softmax => x,
            // Not `x.max(0.0)`: that maps NaN to 0 and would hide it.
            Activation::ReLU => {
                if x < 0.0 {
                    0.0
                } else {
                    x
                }
            }
            Activation::Sigmoid => sigmoid(x),
            Activation::Tanh => f32_math::tanh(x),
            Activation::LeakyReLU { negative_slope } => {
                if x >= 0.0 {
                    x
                } else {
                    negative_slope * x
                }
            }
            Activation::ELU { alpha } => {
                if x > 0.0 {
                    x
                } else {
                    alpha * x.exp_m1()
                }
            }
            Activation::SELU => {
                if x > 0.0 {
                    SELU_SCALE * x
                } else {
                    SELU_SCALE * SELU_ALPHA * x.exp_m1()
                }
            }
            Activation::Softplus => softplus(x),
            Activation::Softsign => x / (1.0 + x.abs()),
            Activation::HardSigmoid => (x / 6.0 + 0.5).clamp(0.0, 1.0),
            Activation::Exponential => x.exp(),
            Activation::GELU { approximate: false } => gelu_exact(x),
            Activation::GELU { approximate: true } => gelu_tanh(x),
            Activation::SiLU => silu(x),
            Activation::Mish => mish(x),
        }
    }

    /// The derivative at the pre-activation `x` (every variant but softmax).
    #[inline]
    pub fn derivative_from_input(&self, x: f32) -> f32 {
        match *self {
            Activation::GELU { approximate: false } => gelu_exact_derivative(x),
            Activation::GELU { approximate: true } => gelu_tanh_derivative(x),
            Activation::SiLU => silu_derivative(x),
            Activation::Mish => mish_derivative(x),
            act => act.derivative_from_output(act.apply_scalar(x)),
        }
    }

    /// The derivative at the point whose activated value is `a` (every variant but softmax).
    /// NaN for the activations whose derivative is not a function of the output
    /// ([`Activation::needs_pre_activation`]): the layers taking an activation either keep the
    /// pre-activation for those or refuse them.
    #[inline]
    pub fn derivative_from_output(&self, a: f32) -> f32 {
        match *self {
            Activation::Linear | Activation::Softmax => 1.0,
            Activation::ReLU => relu_derivative(a),
            Activation::Sigmoid => sigmoid_derivative(a),
            Activation::Tanh => tanh_derivative(a),
            Activation::LeakyReLU { negative_slope } => {
                if a >= 0.0 {
                    1.0
                } else {
                    negative_slope
                }
            }
            Activation::ELU { alpha } => {
                if a > 0.0 {
                    1.0
                } else {
                    a + alpha
                }
            }
            Activation::SELU => {
                if a > 0.0 {
                    SELU_SCALE
                } else {
                    a + SELU_SCALE * SELU_ALPHA
                }
            }
            // d/dx softplus = sigmoid(x) = 1 - e^{-softplus(x)}
            Activation::Softplus => -(-a).exp_m1(),
            Activation::Softsign => {
                let t = 1.0 - a.abs();
                t * t
            }
            Activation::HardSigmoid => {
                if a > 0.0 && a < 1.0 {
                    1.0 / 6.0
                } else {
                    0.0
                }
            }
            Activation::Exponential => a,
            Activation::GELU { .. } | Activation::SiLU | Activation::Mish => f32::NAN,
        }
    }

    /// Whether the forward map calls `exp`/`tanh` per element (those go behind
    /// [`EXP_MAP_F32`], the cheap ones behind [`CHEAP_MAP_F32`]).
    fn forward_gate(&self) -> &'static Gate {
        match self {
            Activation::Sigmoid
            | Activation::Tanh
            | Activation::Softmax
            | Activation::ELU { .. }
            | Activation::SELU
            | Activation::Softplus
            | Activation::Exponential
            | Activation::GELU { .. }
            | Activation::SiLU
            | Activation::Mish => &EXP_MAP_F32,
            _ => &CHEAP_MAP_F32,
        }
    }

    /// Derivatives from the output are cheap except softplus's, which calls `exp`; those from
    /// the pre-activation (GELU, SiLU, Mish) call `exp` or `erfc`.
    fn backward_gate(&self) -> &'static Gate {
        match self {
            Activation::Softplus
            | Activation::GELU { .. }
            | Activation::SiLU
            | Activation::Mish => &EXP_MAP_F32,
            _ => &CHEAP_MAP_F32,
        }
    }

    /// The training epilogue of a layer: `z` is the pre-activation, or already the output
    /// when the layer fused the activation into its product (`already_applied`; only ever for
    /// activations differentiated from the output). Returns the output and what
    /// [`Activation::backward_cached`] reads: no copy for linear, one copy of the output or of
    /// the pre-activation otherwise.
    pub fn forward_training(
        &self,
        mut z: Tensor,
        already_applied: bool,
    ) -> Result<(Tensor, ActivationCache)> {
        assert!(
            !(already_applied && self.needs_pre_activation()),
            "{} cannot be fused: its backward pass reads the pre-activation",
            self.name()
        );
        if matches!(self, Activation::Linear) {
            let shape = z.shape().to_vec();
            return Ok((z, ActivationCache::Identity { shape }));
        }
        if self.needs_pre_activation() {
            let out = self.forward(&z)?;
            return Ok((out, ActivationCache::PreActivation(z)));
        }
        if !already_applied {
            self.forward_in_place(&mut z)?;
        }
        let cache = ActivationCache::Output(z.clone());
        Ok((z, cache))
    }

    /// Backward pass from what [`Activation::forward_training`] kept: the gradient with
    /// respect to the pre-activation, in C order.
    pub fn backward_cached(&self, cache: &ActivationCache, grad_output: &Tensor) -> Result<Tensor> {
        match cache {
            ActivationCache::Identity { shape } => {
                if shape.as_slice() != grad_output.shape() {
                    return Err(Error::shape_mismatch(shape.as_slice(), grad_output.shape()));
                }
                Ok(to_c_order(grad_output))
            }
            ActivationCache::Output(a) => self.backward(a, grad_output),
            ActivationCache::PreActivation(z) => self.backward_from_pre_activation(z, grad_output),
        }
    }

    /// Backward pass from the pre-activation `z` (every variant but softmax): the gradient with
    /// respect to `z`, in C order.
    pub fn backward_from_pre_activation(&self, z: &Tensor, grad_output: &Tensor) -> Result<Tensor> {
        if z.shape() != grad_output.shape() {
            return Err(Error::shape_mismatch(z.shape(), grad_output.shape()));
        }
        if matches!(self, Activation::Softmax) {
            let out = self.forward(z)?;
            return self.backward(&out, grad_output);
        }
        let mut grad = to_c_order(grad_output);
        if matches!(self, Activation::Linear) {
            return Ok(grad);
        }
        let z = z.as_standard_layout();
        let x = z
            .as_slice()
            .expect("a C-order tensor is one contiguous slice");
        let g = grad
            .as_slice_mut()
            .expect("a C-order tensor is one contiguous slice");
        let act = *self;
        zip_f32(self.backward_gate(), g, x, move |g, x| {
            g * act.derivative_from_input(x)
        });
        Ok(grad)
    }

    /// Forward pass into a new C-order tensor. Softmax normalises over the last axis and needs
    /// at least 2 axes.
    pub fn forward(&self, z: &Tensor) -> Result<Tensor> {
        let mut out = to_c_order(z);
        self.forward_in_place(&mut out)?;
        Ok(out)
    }

    /// Forward pass in place (the fused epilogue of layers that own their pre-activation).
    /// A tensor not in C order is repacked first, so `z` always ends in C order.
    pub fn forward_in_place(&self, z: &mut Tensor) -> Result<()> {
        if matches!(self, Activation::Linear) {
            return Ok(());
        }
        if matches!(self, Activation::Softmax) && z.ndim() < 2 {
            return Err(softmax_rank_error(z.shape()));
        }
        if !z.is_standard_layout() {
            *z = to_c_order(z);
        }
        let lane = z.shape().last().copied().unwrap_or(1);
        let gate = self.forward_gate();
        let s = z
            .as_slice_mut()
            .expect("a C-order tensor is one contiguous slice");
        match *self {
            Activation::Softmax => lanes_f32(gate, s, lane, softmax_lane),
            act => map_f32(gate, s, move |v| act.apply_scalar(v)),
        }
        Ok(())
    }

    /// Backward pass from the activated output: the gradient with respect to the pre-activation,
    /// in C order. Refused for the activations that need the pre-activation
    /// ([`Activation::needs_pre_activation`]).
    pub fn backward(&self, activated: &Tensor, grad_output: &Tensor) -> Result<Tensor> {
        if self.needs_pre_activation() {
            return Err(Error::invalid_input(format!(
                "{}: the derivative is not a function of the output; differentiate from the \
                 pre-activation",
                self.name()
            )));
        }
        if activated.shape() != grad_output.shape() {
            return Err(Error::shape_mismatch(
                activated.shape(),
                grad_output.shape(),
            ));
        }
        let mut grad = to_c_order(grad_output);
        if matches!(self, Activation::Linear) {
            return Ok(grad);
        }
        if matches!(self, Activation::Softmax) && activated.ndim() < 2 {
            return Err(softmax_rank_error(activated.shape()));
        }
        let activated = activated.as_standard_layout();
        let a = activated
            .as_slice()
            .expect("a C-order tensor is one contiguous slice");
        let g = grad
            .as_slice_mut()
            .expect("a C-order tensor is one contiguous slice");
        let gate = self.backward_gate();
        match *self {
            Activation::Softmax => {
                let lane = activated.shape().last().copied().unwrap_or(1);
                zip_lanes_f32(gate, g, a, lane, softmax_lane_backward);
            }
            // The common activations get a loop of their own: matching the variant per
            // element keeps the loop from vectorising.
            Activation::ReLU => zip_f32(gate, g, a, |g, a| g * relu_derivative(a)),
            Activation::Sigmoid => zip_f32(gate, g, a, |g, a| g * sigmoid_derivative(a)),
            Activation::Tanh => zip_f32(gate, g, a, |g, a| g * tanh_derivative(a)),
            act => zip_f32(gate, g, a, move |g, a| g * act.derivative_from_output(a)),
        }
        Ok(grad)
    }
}

/// Derivatives from the activated output, shared by [`Activation::derivative_from_output`]
/// and the vectorised loops of [`Activation::backward`].
#[inline]
fn relu_derivative(a: f32) -> f32 {
    if a > 0.0 {
        1.0
    } else {
        0.0
    }
}

#[inline]
fn sigmoid_derivative(a: f32) -> f32 {
    a * (1.0 - a)
}

#[inline]
fn tanh_derivative(a: f32) -> f32 {
    1.0 - a * a
}

fn softmax_rank_error(shape: &[usize]) -> Error {
    Error::invalid_input(format!(
        "softmax needs at least 2 axes (batch, classes), got shape {shape:?}"
    ))
}

/// Softmax of one lane in place, max-shifted so large logits do not overflow.
fn softmax_lane(lane: &mut [f32]) {
    let max = lane.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let mut sum = 0.0f32;
    for v in lane.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    lane.iter_mut().for_each(|e| *e /= sum);
}

/// The softmax Jacobian-vector product of one lane: `g_i <- a_i (g_i - sum_j a_j g_j)`.
fn softmax_lane_backward(g: &mut [f32], a: &[f32]) {
    let dot: f32 = g.iter().zip(a).map(|(&g, &a)| g * a).sum();
    g.iter_mut().zip(a).for_each(|(g, &a)| *g = a * (*g - dot));
}

// ---------------------------------------------------------------------------------------
// f32 elementwise engines. Every output element (or softmax lane) is computed by the same
// serial code whichever path runs, so the gates never change a bit.
// ---------------------------------------------------------------------------------------

declare_gate! {
    /// f32 memory-bound maps: the ReLU family, linear ops, PReLU, dropout scaling, embedding
    /// gathers. Work = elements written.
    pub CHEAP_MAP_F32: elementwise::cheap_map_f32 = 4_000_000, "elements"
}

declare_gate! {
    /// f32 exp-heavy maps: sigmoid, tanh, ELU, SELU, softplus, softmax, exponential, Gaussian
    /// noise draws. Work = elements written.
    pub EXP_MAP_F32: elementwise::exp_map_f32 = 131_072, "elements"
}

/// Elements per rayon task: enough work to amortise a steal, small enough to balance.
pub(crate) const MAP_TASK: usize = 1 << 14;

/// `v = f(v)` for every element, in parallel behind `gate`.
pub(crate) fn map_f32(gate: &Gate, s: &mut [f32], f: impl Fn(f32) -> f32 + Sync + Send) {
    if gate.allows_parallel(s.len()) {
        s.par_chunks_mut(MAP_TASK)
            .for_each(|c| c.iter_mut().for_each(|v| *v = f(*v)));
    } else {
        s.iter_mut().for_each(|v| *v = f(*v));
    }
}

/// `d = f(d, s)` for every element pair, in parallel behind `gate`.
pub(crate) fn zip_f32(
    gate: &Gate,
    dst: &mut [f32],
    src: &[f32],
    f: impl Fn(f32, f32) -> f32 + Sync + Send,
) {
    assert_eq!(dst.len(), src.len(), "zip_f32 operands differ in length");
    let serial = |d: &mut [f32], s: &[f32]| d.iter_mut().zip(s).for_each(|(d, &s)| *d = f(*d, s));
    if gate.allows_parallel(dst.len()) {
        dst.par_chunks_mut(MAP_TASK)
            .zip(src.par_chunks(MAP_TASK))
            .for_each(|(d, s)| serial(d, s));
    } else {
        serial(dst, src);
    }
}

/// `f(lane)` for every consecutive lane of `lane` elements, lanes in parallel behind `gate`.
pub(crate) fn lanes_f32(
    gate: &Gate,
    s: &mut [f32],
    lane: usize,
    f: impl Fn(&mut [f32]) + Sync + Send,
) {
    if lane == 0 {
        return;
    }
    if gate.allows_parallel(s.len()) {
        s.par_chunks_mut(lane)
            .with_min_len((MAP_TASK / lane).max(1))
            .for_each(f);
    } else {
        s.chunks_mut(lane).for_each(f);
    }
}

/// `f(dst_lane, src_lane)` for every pair of consecutive lanes, in parallel behind `gate`.
pub(crate) fn zip_lanes_f32(
    gate: &Gate,
    dst: &mut [f32],
    src: &[f32],
    lane: usize,
    f: impl Fn(&mut [f32], &[f32]) + Sync + Send,
) {
    assert_eq!(
        dst.len(),
        src.len(),
        "zip_lanes_f32 operands differ in length"
    );
    if lane == 0 {
        return;
    }
    if gate.allows_parallel(dst.len()) {
        dst.par_chunks_mut(lane)
            .zip(src.par_chunks(lane))
            .with_min_len((MAP_TASK / lane).max(1))
            .for_each(|(d, s)| f(d, s));
    } else {
        dst.chunks_mut(lane)
            .zip(src.chunks(lane))
            .for_each(|(d, s)| f(d, s));
    }
}

// ---------------------------------------------------------------------------------------
// Activation layers: one file each, every one a thin wrapper over an `Activation`.
// ---------------------------------------------------------------------------------------

/// Inference forward of an activation layer: refuses an empty tensor, then maps.
fn layer_forward(activation: Activation, input: &Tensor) -> Result<Tensor> {
    require_non_empty(input)?;
    activation.forward(input)
}

/// Training forward of an activation layer: the output, and what its backward pass reads.
fn layer_forward_training(
    activation: Activation,
    input: &Tensor,
) -> Result<(Tensor, ActivationCache)> {
    require_non_empty(input)?;
    activation.forward_training(to_c_order(input), false)
}

/// Backward of an activation layer from what its last `forward` cached.
fn layer_backward(
    activation: Activation,
    layer: &'static str,
    cache: Option<&ActivationCache>,
    grad_output: &Tensor,
) -> Result<Tensor> {
    let cache = cache.ok_or_else(|| Error::forward_pass_not_run(layer))?;
    activation.backward_cached(cache, grad_output)
}

/// `summary()` text of an activation layer: known once a forward pass has run.
fn layer_output_shape(cache: Option<&ActivationCache>) -> String {
    seen_shape(cache.map(|c| c.shape()))
}

/// `impl Layer` and `From<Layer> for Activation` for an activation layer type that has a
/// `cache: Option<ActivationCache>` field and a `fn activation(&self) -> Activation`.
macro_rules! impl_activation_layer {
    ($ty:ident) => {
        impl $crate::neural_network::traits::Layer for $ty {
            fn forward(
                &mut self,
                input: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.cache = None;
                let (out, cache) = super::layer_forward_training(self.activation(), input)?;
                self.cache = Some(cache);
                Ok(out)
            }

            fn predict(
                &self,
                input: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                super::layer_forward(self.activation(), input)
            }

            fn backward(
                &mut self,
                grad_output: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                super::layer_backward(
                    self.activation(),
                    stringify!($ty),
                    self.cache.as_ref(),
                    grad_output,
                )
            }

            fn layer_type(&self) -> &str {
                stringify!($ty)
            }

            fn output_shape(&self) -> String {
                super::layer_output_shape(self.cache.as_ref())
            }

            $crate::neural_network::layers::layer_util::no_parameters!();
        }

        impl From<$ty> for super::Activation {
            fn from(layer: $ty) -> Self {
                layer.activation()
            }
        }
    };
}

/// A parameterless activation layer: the struct, `new`, `Default` and the `Layer` impl.
macro_rules! parameterless_activation_layer {
    ($(#[$meta:meta])* $ty:ident => $variant:ident) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        pub struct $ty {
            /// What the last training forward kept for `backward`.
            cache: Option<super::ActivationCache>,
        }

        impl $ty {
            pub fn new() -> Self {
                Self::default()
            }

            fn activation(&self) -> super::Activation {
                super::Activation::$variant
            }
        }

        impl_activation_layer!($ty);
    };
}

pub mod elu;
pub mod exponential;
pub(crate) mod f32_math;
pub mod gelu;
pub mod hard_sigmoid;
pub mod leaky_relu;
pub mod linear;
pub mod mish;
pub mod p_relu;
pub mod relu;
pub mod selu;
pub mod sigmoid;
pub mod silu;
pub mod softmax;
pub mod softplus;
pub mod softsign;
pub mod tanh;

pub use elu::ELU;
pub use exponential::Exponential;
pub use gelu::GELU;
pub use hard_sigmoid::HardSigmoid;
pub use leaky_relu::LeakyReLU;
pub use linear::Linear;
pub use mish::Mish;
pub use p_relu::PReLU;
pub use relu::ReLU;
pub use selu::SELU;
pub use sigmoid::Sigmoid;
pub use silu::SiLU;
pub use softmax::Softmax;
pub use softplus::Softplus;
pub use softsign::Softsign;
pub use tanh::Tanh;

crate::isa::widest_isa! {
    /// [`Activation::apply_slice`] at the CPU's vector width (same bits on every host).
    fn apply_slice_widest(act: &Activation, xs: &mut [f32]) => apply_slice_inline
}

#[inline(always)]
fn apply_slice_inline(act: &Activation, xs: &mut [f32]) {
    match *act {
        Activation::Sigmoid => xs.iter_mut().for_each(|v| *v = sigmoid(*v)),
        Activation::Tanh => xs.iter_mut().for_each(|v| *v = f32_math::tanh(*v)),
        act => xs.iter_mut().for_each(|v| *v = act.apply_scalar(*v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::{Array2, ArrayD, IxDyn};

    const ALL: [Activation; 16] = [
        Activation::Linear,
        Activation::ReLU,
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Softmax,
        Activation::LeakyReLU {
            negative_slope: 0.2,
        },
        Activation::ELU { alpha: 1.5 },
        Activation::SELU,
        Activation::Softplus,
        Activation::Softsign,
        Activation::HardSigmoid,
        Activation::Exponential,
        Activation::GELU { approximate: false },
        Activation::GELU { approximate: true },
        Activation::SiLU,
        Activation::Mish,
    ];

    /// The training forward and the backward from its cache, as a layer runs them.
    fn train_step(act: Activation, x: &Tensor, g: &Tensor) -> (Tensor, Tensor) {
        let (y, cache) = act.forward_training(x.clone(), false).unwrap();
        let d = act.backward_cached(&cache, g).unwrap();
        (y, d)
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        t.iter().map(|v| v.to_bits()).collect()
    }

    /// Values spread over [-4, 4], none exactly at a kink.
    fn ramp(rows: usize, cols: usize) -> Tensor {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            ((i * 31 + j * 17) as f32 * 0.173).sin() * 4.0 + 0.013
        })
        .into_dyn()
    }

    #[test]
    fn every_activation_keeps_nan() {
        // max(x, 0)-style code maps NaN to a number and hides it; every activation, scalar
        // and at the widest vector width (a length with a remainder for every width), keeps
        // a NaN input NaN.
        for act in ALL.iter().filter(|a| !matches!(a, Activation::Softmax)) {
            assert!(act.apply_scalar(f32::NAN).is_nan(), "{act:?}");
            let mut xs = vec![f32::NAN; 37];
            act.apply_slice(&mut xs);
            assert!(xs.iter().all(|v| v.is_nan()), "{act:?}");
        }
    }

    #[test]
    fn the_widest_instruction_set_gives_the_scalar_bits() {
        // Every float class (zeros, subnormals, the exp clamps, huge, inf, NaN) and a ramp;
        // a length that leaves a remainder for every vector width.
        let mut xs: Vec<f32> = vec![
            0.0,
            -0.0,
            1e-40,
            -1e-40,
            0.4,
            -0.4,
            88.7,
            -87.3,
            100.0,
            -100.0,
            3e38,
            -3e38,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        xs.extend((0..1000).map(|i| (i as f32 - 500.0) * 0.037));
        // Softmax is not elementwise (apply_scalar passes it through; its own test covers it).
        for act in ALL.into_iter().filter(|a| *a != Activation::Softmax) {
            let mut widest = xs.clone();
            act.apply_slice(&mut widest);
            let mut portable = xs.clone();
            apply_slice_inline(&act, &mut portable);
            for ((&x, &w), &p) in xs.iter().zip(&widest).zip(&portable) {
                let scalar = act.apply_scalar(x);
                assert_eq!(w.to_bits(), scalar.to_bits(), "{act:?} at {x}");
                assert_eq!(p.to_bits(), scalar.to_bits(), "{act:?} at {x}");
            }
        }
    }

    #[test]
    fn every_map_agrees_bitwise_serial_and_parallel() {
        // Larger than several tasks, with a lane width that does not divide the task size.
        let x = ramp(3 * MAP_TASK / 7 + 5, 7);
        let g = ramp(3 * MAP_TASK / 7 + 5, 7).mapv(|v| v * 0.5 - 0.1);
        for act in ALL {
            for gate in [&CHEAP_MAP_F32, &EXP_MAP_F32] {
                let (s, p) = serial_and_parallel(gate, || train_step(act, &x, &g));
                assert_eq!(bits(&s.0), bits(&p.0), "{} forward", act.name());
                assert_eq!(bits(&s.1), bits(&p.1), "{} backward", act.name());
            }
        }
    }

    #[test]
    fn strided_input_gives_c_order_and_same_values() {
        let x = ramp(5, 6);
        let strided = x.t().to_owned();
        assert!(!strided.is_standard_layout());
        for act in ALL {
            let out = act.forward(&strided).unwrap();
            assert!(out.is_standard_layout(), "{}", act.name());
            let packed = act
                .forward(&strided.as_standard_layout().into_owned())
                .unwrap();
            assert_eq!(bits(&out), bits(&packed), "{}", act.name());
        }
    }

    #[test]
    fn forward_matches_hand_derived_values() {
        let x = ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![-1.0f32, 0.0, 2.0]).unwrap();
        let e = std::f32::consts::E;
        let cases: Vec<(Activation, [f32; 3])> = vec![
            (Activation::Linear, [-1.0, 0.0, 2.0]),
            (Activation::ReLU, [0.0, 0.0, 2.0]),
            (
                Activation::Sigmoid,
                [1.0 / (1.0 + e), 0.5, 1.0 / (1.0 + e.powi(-2))],
            ),
            (
                Activation::Tanh,
                [
                    -(e - 1.0 / e) / (e + 1.0 / e),
                    0.0,
                    (e * e - e.powi(-2)) / (e * e + e.powi(-2)),
                ],
            ),
            (
                Activation::LeakyReLU {
                    negative_slope: 0.2,
                },
                [-0.2, 0.0, 2.0],
            ),
            (
                Activation::ELU { alpha: 1.5 },
                [1.5 * (1.0 / e - 1.0), 0.0, 2.0],
            ),
            (
                Activation::SELU,
                [
                    SELU_SCALE * SELU_ALPHA * (1.0 / e - 1.0),
                    0.0,
                    SELU_SCALE * 2.0,
                ],
            ),
            (
                Activation::Softplus,
                [(1.0 + 1.0 / e).ln(), 2f32.ln(), (1.0 + e * e).ln()],
            ),
            (Activation::Softsign, [-0.5, 0.0, 2.0 / 3.0]),
            (Activation::HardSigmoid, [1.0 / 3.0, 0.5, 5.0 / 6.0]),
            (Activation::Exponential, [1.0 / e, 1.0, e * e]),
        ];
        for (act, want) in cases {
            let got = act.forward(&x).unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-6, "{}: {g} vs {w}", act.name());
            }
        }
        // GELU, SiLU and Mish in f64 from their definitions; Φ(-1) and Φ(2) from normal
        // tables; the tolerance is the f32 rounding of values below 2 (plus erfc's few ulps).
        let x64 = [-1.0f64, 0.0, 2.0];
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        let phi = [0.158_655_253_931_457_05, 0.5, 0.977_249_868_051_820_8];
        let approx = |x: f64| {
            let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
            0.5 * x * (1.0 + u.tanh())
        };
        let smooth: Vec<(Activation, [f64; 3])> = vec![
            (
                Activation::GELU { approximate: false },
                [0, 1, 2].map(|i| x64[i] * phi[i]),
            ),
            (Activation::GELU { approximate: true }, x64.map(approx)),
            (Activation::SiLU, x64.map(|x| x * sig(x))),
            (
                Activation::Mish,
                x64.map(|x| x * (1.0 + x.exp()).ln().tanh()),
            ),
        ];
        for (act, want) in smooth {
            let got = act.forward(&x).unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!((*g as f64 - w).abs() < 1e-6, "{}: {g} vs {w}", act.name());
            }
        }
        // softmax([-1, 0, 2]) = e^x / (e^-1 + 1 + e^2)
        let z = 1.0 / e + 1.0 + e * e;
        let got = Activation::Softmax.forward(&x).unwrap();
        for (g, w) in got.iter().zip([1.0 / e / z, 1.0 / z, e * e / z]) {
            assert!((g - w).abs() < 1e-6, "softmax: {g} vs {w}");
        }
    }

    /// Central differences of `L = sum(w * f(x))` against `backward(f(x), w)`.
    #[test]
    fn backward_matches_central_differences() {
        // No probe within 0.1 of a kink (0 for the ReLU family, +-3 for HardSigmoid).
        let x = ArrayD::from_shape_vec(
            IxDyn(&[2, 4]),
            vec![0.7, -0.4, 1.3, -1.9, 0.25, -2.5, 2.2, -0.15],
        )
        .unwrap();
        let w = ArrayD::from_shape_vec(
            IxDyn(&[2, 4]),
            vec![0.3, -1.1, 0.8, 0.5, -0.6, 1.4, 0.2, -0.9],
        )
        .unwrap();
        let eps = 1e-3f32;
        for act in ALL {
            let (_, analytic) = train_step(act, &x, &w);
            for i in 0..x.len() {
                let loss = |delta: f32| {
                    let mut xp = x.clone();
                    xp.as_slice_mut().unwrap()[i] += delta;
                    let yp = act.forward(&xp).unwrap();
                    (&yp * &w).sum()
                };
                let numeric = (loss(eps) - loss(-eps)) / (2.0 * eps);
                let a = analytic.as_slice().unwrap()[i];
                assert!(
                    (a - numeric).abs() < 5e-3,
                    "{} element {i}: analytic {a} vs numeric {numeric}",
                    act.name()
                );
            }
        }
    }

    #[test]
    fn branch_at_zero_follows_keras() {
        let x = ArrayD::from_shape_vec(IxDyn(&[1, 1]), vec![0.0f32]).unwrap();
        let ones = ArrayD::ones(IxDyn(&[1, 1]));
        let grad_at_zero = |act: Activation| train_step(act, &x, &ones).1[[0, 0]];
        assert_eq!(grad_at_zero(Activation::ReLU), 0.0);
        assert_eq!(
            grad_at_zero(Activation::LeakyReLU {
                negative_slope: 0.3
            }),
            1.0
        );
        assert_eq!(grad_at_zero(Activation::ELU { alpha: 0.5 }), 0.5);
        assert_eq!(grad_at_zero(Activation::SELU), SELU_SCALE * SELU_ALPHA);
    }

    #[test]
    fn smooth_activations_saturate_without_overflow() {
        // Far out the functions are x (right) and -0 or a vanishing negative (left), their
        // derivatives 1 and 0: no NaN or inf from e^x, x³ or a cancelling 1 + erf.
        for act in ALL.into_iter().filter(|a| a.needs_pre_activation()) {
            for x in [100.0f32, 1e4, 3e38] {
                assert_eq!(act.apply_scalar(x), x, "{act:?} at {x}");
                assert_eq!(act.derivative_from_input(x), 1.0, "{act:?}' at {x}");
            }
            for x in [-100.0f32, -1e4, -3e38] {
                let y = act.apply_scalar(x);
                assert!(y <= 0.0 && y > -1e-30, "{act:?} at {x}: {y}");
                let d = act.derivative_from_input(x);
                assert!(d.abs() < 1e-30, "{act:?}' at {x}: {d}");
            }
        }
        // The left tail keeps its relative accuracy: GELU(-5) = -5 Φ(-5), Φ(-5) = 2.8665e-7.
        let g = Activation::GELU { approximate: false }.apply_scalar(-5.0);
        assert!((g as f64 / (-5.0 * 2.866_515_718_791_939e-7) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn training_caches_one_tensor_and_only_what_backward_reads() {
        let x = ramp(3, 4);
        for act in ALL {
            let (y, cache) = act.forward_training(x.clone(), false).unwrap();
            match (&cache, act) {
                (ActivationCache::Identity { shape }, Activation::Linear) => {
                    assert_eq!(shape.as_slice(), x.shape())
                }
                (ActivationCache::PreActivation(z), a) if a.needs_pre_activation() => {
                    assert_eq!(bits(z), bits(&x))
                }
                (ActivationCache::Output(o), a)
                    if !a.needs_pre_activation() && a != Activation::Linear =>
                {
                    assert_eq!(bits(o), bits(&y))
                }
                _ => panic!("{act:?} cached {cache:?}"),
            }
            // The output-differentiated activations give the same gradient from their input.
            let g = ramp(3, 4).mapv(|v| v * 0.3);
            let from_cache = act.backward_cached(&cache, &g).unwrap();
            let from_input = act.backward_from_pre_activation(&x, &g).unwrap();
            assert_eq!(bits(&from_cache), bits(&from_input), "{act:?}");
        }
        // Those that need the input refuse to be differentiated from the output.
        let y = Activation::SiLU.forward(&x).unwrap();
        assert!(Activation::SiLU.backward(&y, &x).is_err());
    }

    #[test]
    fn nan_propagates_through_every_elementwise_map() {
        for act in ALL {
            assert!(act.apply_scalar(f32::NAN).is_nan(), "{}", act.name());
        }
    }

    #[test]
    fn softmax_refuses_rank_1_and_shapes_must_agree() {
        let v = ArrayD::from_shape_vec(IxDyn(&[3]), vec![1.0f32, 2.0, 3.0]).unwrap();
        assert!(matches!(
            Activation::Softmax.forward(&v),
            Err(Error::InvalidInput(_))
        ));
        let a = ramp(2, 3);
        let g = ramp(3, 2);
        assert!(matches!(
            Activation::Tanh.backward(&a, &g),
            Err(Error::ShapeMismatch { .. })
        ));
    }
}
