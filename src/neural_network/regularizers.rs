//! Keras's weight and activity regularizers: penalties added to the training loss.
//!
//! A [`Regularizer`] is Keras 3's `L1`, `L2` or `L1L2`: `l1 * sum(|x|) + l2 * sum(x²)`. Its
//! serde form is Keras's serialized object, `{"module": "keras.regularizers", "class_name":
//! "L2", "config": {"l2": 0.01}, "registered_name": null}` (Keras's names `"l1"`, `"l2"`,
//! `"l1l2"` are read too), so a layer config carries it through `get_config`, saved files and
//! pickles.
//!
//! [`Regularized`] wraps a layer with regularizers on some of its weights (by the names of
//! [`LayerWeight::named_arrays`](super::layers::layer_weight::LayerWeight::named_arrays)) and
//! on its output. The training engines ask every layer for its penalty between the forward
//! and the backward pass ([`Layer::regularize`]); the wrapper then adds the penalties'
//! gradients during backward: the output penalty's to the gradient arriving at the output, the
//! weights' to the parameter gradients. As in Keras 3 (JAX backend):
//! - an output (activity) penalty is divided by the batch size;
//! - the gradient of `|x|` at `x = 0` is `+1` (JAX's);
//! - a frozen layer's weights carry no penalty (Keras regularizes trainable weights only),
//!   its output still does; a layer called several times (a functional model's shared
//!   layer) has one weight penalty, and the output penalty of its last call only: Keras 3's
//!   training and evaluation steps count that one (its `model.losses` outside them lists
//!   every call's).

use super::layers::layer_weight::LayerWeight;
use super::layers::TrainingParameters;
use super::traits::{Layer, Mask, ParamGrad, RandomStream};
use super::{Tensor, TensorView};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Which of Keras's classes a regularizer is (kept for its config: `L1L2(l1=0.01)` stays an
/// `L1L2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegularizerKind {
    L1,
    L2,
    L1L2,
}

/// Keras 3's `L1`, `L2` and `L1L2` regularizers: `l1 * sum(|x|) + l2 * sum(x²)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "KerasRegularizer", into = "KerasRegularizer")]
pub struct Regularizer {
    kind: RegularizerKind,
    l1: f64,
    l2: f64,
}

/// Keras's default factor of `L1()` and `L2()` (and of the names `"l1"`, `"l2"`).
pub const DEFAULT_FACTOR: f64 = 0.01;

fn check_factor(name: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("a regularization factor must be a non-negative finite number, got {value}"),
        ))
    }
}

impl Regularizer {
    /// Keras's `L1(l1)`: `l1 * sum(|x|)`.
    pub fn l1(l1: f64) -> Result<Self> {
        Ok(Self {
            kind: RegularizerKind::L1,
            l1: check_factor("l1", l1)?,
            l2: 0.0,
        })
    }

    /// Keras's `L2(l2)`: `l2 * sum(x²)`.
    pub fn l2(l2: f64) -> Result<Self> {
        Ok(Self {
            kind: RegularizerKind::L2,
            l1: 0.0,
            l2: check_factor("l2", l2)?,
        })
    }

    /// Keras's `L1L2(l1, l2)`: both penalties.
    pub fn l1_l2(l1: f64, l2: f64) -> Result<Self> {
        Ok(Self {
            kind: RegularizerKind::L1L2,
            l1: check_factor("l1", l1)?,
            l2: check_factor("l2", l2)?,
        })
    }

    /// Keras's class of this regularizer.
    pub fn kind(&self) -> RegularizerKind {
        self.kind
    }

    /// The L1 factor (0 for an `L2`).
    pub fn l1_factor(&self) -> f64 {
        self.l1
    }

    /// The L2 factor (0 for an `L1`).
    pub fn l2_factor(&self) -> f64 {
        self.l2
    }

    /// `l1 * sum(|x|) + l2 * sum(x²)`, each term as Keras forms it in float32 (the factor
    /// cast to float32 times the sum; the sums here are accumulated in float64, then rounded).
    pub fn penalty<'a>(&self, x: impl IntoIterator<Item = &'a f32>) -> f32 {
        let (mut abs, mut sq) = (0.0f64, 0.0f64);
        for &v in x {
            abs += f64::from(v.abs());
            sq += f64::from(v) * f64::from(v);
        }
        let mut total = 0.0f32;
        if self.l1 != 0.0 {
            total += self.l1 as f32 * abs as f32;
        }
        if self.l2 != 0.0 {
            total += self.l2 as f32 * sq as f32;
        }
        total
    }

    /// The gradient of `scale` times the penalty at `x`: `scale * (l1 * sign(x) + l2 * 2x)`,
    /// where `sign(0) = +1` as in JAX's gradient of `|x|`.
    pub fn gradient_at(&self, x: f32, scale: f32) -> f32 {
        let (l1, l2) = (self.l1 as f32, self.l2 as f32);
        let mut g = 0.0f32;
        if l1 != 0.0 {
            g += if x >= 0.0 { l1 } else { -l1 };
        }
        if l2 != 0.0 {
            g += l2 * (2.0 * x);
        }
        if scale == 1.0 {
            g
        } else {
            g * scale
        }
    }

    /// Adds the gradient of `scale` times the penalty at `values` to `grad`.
    pub fn add_gradient(&self, values: &[f32], scale: f32, grad: &mut [f32]) {
        for (g, &v) in grad.iter_mut().zip(values) {
            *g += self.gradient_at(v, scale);
        }
    }

    fn from_name(name: &str) -> std::result::Result<Self, String> {
        let made = match name {
            "l1" | "L1" => Self::l1(DEFAULT_FACTOR),
            "l2" | "L2" => Self::l2(DEFAULT_FACTOR),
            // Keras 3's `L1L2()` defaults to no penalty at all
            "l1l2" | "L1L2" => Self::l1_l2(0.0, 0.0),
            other => return Err(unknown_regularizer(other)),
        };
        made.map_err(|e| e.to_string())
    }

    fn from_class(
        class_name: &str,
        config: &Map<String, Value>,
    ) -> std::result::Result<Self, String> {
        let allowed: &[&str] = match class_name {
            "L1" => &["l1"],
            "L2" => &["l2"],
            "L1L2" => &["l1", "l2"],
            other => return Err(unknown_regularizer(other)),
        };
        if let Some(extra) = config.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!(
                "regularizer {class_name} has no argument {extra:?} (it takes {allowed:?})"
            ));
        }
        // `None` (null) is Keras's default: 0.01 for L1 / L2, 0 for L1L2's two factors
        let factor = |key: &str, default: f64| -> std::result::Result<f64, String> {
            match config.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Number(n)) => n
                    .as_f64()
                    .ok_or_else(|| format!("regularizer {class_name}: {key} is not a number")),
                Some(other) => Err(format!(
                    "regularizer {class_name}: {key} must be a number, got {other}"
                )),
            }
        };
        let made = match class_name {
            "L1" => Self::l1(factor("l1", DEFAULT_FACTOR)?),
            "L2" => Self::l2(factor("l2", DEFAULT_FACTOR)?),
            _ => Self::l1_l2(factor("l1", 0.0)?, factor("l2", 0.0)?),
        };
        made.map_err(|e| format!("regularizer {class_name}: {e}"))
    }
}

fn unknown_regularizer(name: &str) -> String {
    if matches!(name, "OrthogonalRegularizer" | "orthogonal_regularizer") {
        return "OrthogonalRegularizer is not supported by rustyml (L1, L2 and L1L2 are)".into();
    }
    format!("unknown regularizer {name:?}; expected L1, L2 or L1L2 (or the names \"l1\", \"l2\", \"l1l2\")")
}

/// A regularizer as Keras writes it: a name, or its serialized object.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum KerasRegularizer {
    Name(String),
    Object {
        #[serde(default)]
        module: Option<String>,
        class_name: String,
        #[serde(default)]
        config: Map<String, Value>,
        #[serde(default)]
        registered_name: Option<String>,
    },
}

impl TryFrom<KerasRegularizer> for Regularizer {
    type Error = String;

    fn try_from(raw: KerasRegularizer) -> std::result::Result<Self, String> {
        match raw {
            KerasRegularizer::Name(name) => Self::from_name(&name),
            KerasRegularizer::Object {
                class_name, config, ..
            } => Self::from_class(&class_name, &config),
        }
    }
}

impl From<Regularizer> for KerasRegularizer {
    fn from(r: Regularizer) -> Self {
        let mut config = Map::new();
        let (class_name, keys): (&str, &[(&str, f64)]) = match r.kind {
            RegularizerKind::L1 => ("L1", &[("l1", r.l1)]),
            RegularizerKind::L2 => ("L2", &[("l2", r.l2)]),
            RegularizerKind::L1L2 => ("L1L2", &[("l1", r.l1), ("l2", r.l2)]),
        };
        for &(k, v) in keys {
            config.insert(k.to_string(), Value::from(v));
        }
        KerasRegularizer::Object {
            module: Some("keras.regularizers".to_string()),
            class_name: class_name.to_string(),
            config,
            registered_name: None,
        }
    }
}

/// A layer with Keras regularizers on some of its weights and/or its output (see the module
/// docs). Every `Layer` method forwards to the wrapped layer; the penalties' gradients are
/// kept here, beside the wrapped layer's own, and [`Layer::parameters`] hands out their sum.
pub struct Regularized {
    inner: Box<dyn Layer>,
    /// The name of each entry of the wrapped layer's `parameters()`, in order (a layer whose
    /// parameters repeat its weight list, a `Bidirectional`, repeats the names).
    names: Vec<&'static str>,
    weights: Vec<(&'static str, Regularizer)>,
    activity: Option<Regularizer>,
    /// The last training output, kept for the activity penalty's gradient.
    output: Option<Tensor>,
    /// Set by `regularize`: the gradient scale and whether the weights' and the output's
    /// penalties count.
    armed: Option<(f32, bool, bool)>,
    /// Per parameter: its gradient with the penalty's added (`None`: no penalty on it).
    grads: Vec<Option<Vec<f32>>>,
}

impl Regularized {
    /// Wraps `inner`. `weights` names the arrays to regularize as the layer's
    /// [`LayerWeight::named_arrays`] names them (`weight`, `kernel`, `recurrent_kernel`,
    /// `bias`, `embeddings`, `depthwise_weight`, `pointwise_weight`); a name the layer lacks
    /// is refused, except `bias` on a layer built without one (nothing to regularize, as in
    /// Keras).
    pub fn new(
        inner: Box<dyn Layer>,
        weights: Vec<(&'static str, Regularizer)>,
        activity: Option<Regularizer>,
    ) -> Result<Self> {
        let all: Vec<&'static str> = inner
            .get_weights()
            .array_views()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        let uses_bias = inner.uses_bias();
        let names: Vec<&'static str> = all
            .iter()
            .copied()
            .filter(|&n| uses_bias || n != "bias")
            .collect();
        let mut kept = Vec::with_capacity(weights.len());
        for (name, r) in weights {
            if names.contains(&name) {
                kept.push((name, r));
            } else if !all.contains(&name) {
                return Err(Error::invalid_input(format!(
                    "layer {} has no weight {name:?} to regularize (its weights: {all:?})",
                    inner.layer_type()
                )));
            }
        }
        Ok(Self {
            inner,
            names,
            weights: kept,
            activity,
            output: None,
            armed: None,
            grads: Vec::new(),
        })
    }

    fn regularizer_of(&self, name: &str) -> Option<&Regularizer> {
        self.weights
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| r)
    }

    /// The activity gradient added to `grad_output` (training output kept by `forward`).
    fn with_activity_gradient(&mut self, grad_output: &Tensor, scale: f32) -> Option<Tensor> {
        let r = self.activity?;
        let out = self.output.take()?;
        let batch = out.shape().first().copied().unwrap_or(1).max(1) as f32;
        let s = scale / batch;
        let mut g = grad_output.clone();
        for (g, &o) in g.iter_mut().zip(out.iter()) {
            *g += r.gradient_at(o, s);
        }
        Some(g)
    }

    /// After the wrapped layer's backward: each regularized parameter's gradient plus the
    /// penalty's (`scale` times it).
    fn add_weight_gradients(&mut self, scale: f32, weights: bool) {
        let regs: Vec<Option<Regularizer>> = if weights && !self.weights.is_empty() {
            (0..self.names.len())
                .map(|i| self.regularizer_of(self.names[i]).copied())
                .collect()
        } else {
            Vec::new()
        };
        let n = self.names.len().max(1);
        self.grads = self
            .inner
            .parameters()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let r = regs.get(i % n).copied().flatten()?;
                let mut g = p.grad.to_vec();
                r.add_gradient(p.value, scale, &mut g);
                Some(g)
            })
            .collect();
    }

    fn take_armed(&mut self) -> (f32, bool, bool) {
        // A backward that no engine armed counts everything at full scale.
        self.armed.take().unwrap_or((1.0, true, true))
    }

    /// The incoming gradient with the activity penalty's added, when it counts.
    fn activity_gradient(
        &mut self,
        grad_output: &Tensor,
        scale: f32,
        activity: bool,
    ) -> Option<Tensor> {
        if activity {
            self.with_activity_gradient(grad_output, scale)
        } else {
            self.output = None;
            None
        }
    }
}

impl Layer for Regularized {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.inner.forward(input)?;
        if self.activity.is_some() {
            self.output = Some(out.clone());
        }
        Ok(out)
    }
    fn forward_owned(&mut self, input: Tensor) -> Result<Tensor> {
        let out = self.inner.forward_owned(input)?;
        if self.activity.is_some() {
            self.output = Some(out.clone());
        }
        Ok(out)
    }
    fn forward_masked(&mut self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        let out = self.inner.forward_masked(input, mask)?;
        if self.activity.is_some() {
            self.output = Some(out.clone());
        }
        Ok(out)
    }
    fn predict_masked(&self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        self.inner.predict_masked(input, mask)
    }
    fn compute_mask(&self, input: TensorView<'_>, mask: Option<&Mask>) -> Result<Option<Mask>> {
        self.inner.compute_mask(input, mask)
    }
    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.inner.predict(input)
    }
    fn predict_view(&self, input: TensorView<'_>) -> Result<Tensor> {
        self.inner.predict_view(input)
    }
    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (scale, weights, activity) = self.take_armed();
        let gi = match self.activity_gradient(grad_output, scale, activity) {
            Some(g) => self.inner.backward(&g)?,
            None => self.inner.backward(grad_output)?,
        };
        self.add_weight_gradients(scale, weights);
        Ok(gi)
    }
    fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        let (scale, weights, activity) = self.take_armed();
        match self.activity_gradient(grad_output, scale, activity) {
            Some(g) => self.inner.backward_params_only(&g)?,
            None => self.inner.backward_params_only(grad_output)?,
        }
        self.add_weight_gradients(scale, weights);
        Ok(())
    }
    fn layer_type(&self) -> &str {
        self.inner.layer_type()
    }
    fn output_shape(&self) -> String {
        self.inner.output_shape()
    }
    fn param_count(&self) -> TrainingParameters {
        self.inner.param_count()
    }
    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let grads = &self.grads;
        self.inner
            .parameters()
            .into_iter()
            .enumerate()
            .map(|(i, p)| match grads.get(i).and_then(Option::as_deref) {
                Some(g) if g.len() == p.grad.len() => ParamGrad {
                    value: p.value,
                    grad: g,
                    decays: p.decays,
                },
                _ => p,
            })
            .collect()
    }
    fn get_weights(&self) -> LayerWeight<'_> {
        self.inner.get_weights()
    }
    fn uses_bias(&self) -> bool {
        self.inner.uses_bias()
    }
    fn set_training_if_mode_dependent(&mut self, is_training: bool) {
        self.inner.set_training_if_mode_dependent(is_training)
    }
    fn random_stream(&self) -> Option<RandomStream> {
        self.inner.random_stream()
    }
    fn set_random_stream(&mut self, stream: &RandomStream) {
        self.inner.set_random_stream(stream)
    }
    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        self.inner.apply_weights(weights)
    }
    fn regularize(&mut self, grad_scale: f32, weights: bool, activity: bool) -> f32 {
        self.armed = Some((grad_scale, weights, activity));
        let mut total = if weights { self.weight_penalty() } else { 0.0 };
        if let (true, Some(r), Some(out)) = (activity, self.activity, &self.output) {
            let batch = out.shape().first().copied().unwrap_or(1).max(1) as f32;
            total += r.penalty(out.iter()) / batch;
        }
        total
    }
    fn weight_penalty(&self) -> f32 {
        if self.weights.is_empty() {
            return 0.0;
        }
        let w = self.inner.get_weights();
        let mut total = 0.0f32;
        for (name, view) in w.array_views() {
            if let Some(r) = self.regularizer_of(name) {
                if self.names.contains(&name) {
                    total += r.penalty(view.iter());
                }
            }
        }
        total
    }
    fn activity_penalty(&self, output: &Tensor) -> f32 {
        self.activity.map_or(0.0, |r| r.penalty(output.iter()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural_network::layers::activation::Activation;
    use crate::neural_network::layers::dense::Dense;

    #[test]
    fn keras_configs_round_trip_and_bad_values_are_refused() {
        let r: Regularizer = serde_json::from_str(
            r#"{"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.5}, "registered_name": null}"#,
        )
        .unwrap();
        assert_eq!(r, Regularizer::l2(0.5).unwrap());
        let back = serde_json::to_value(r).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"module": "keras.regularizers", "class_name": "L2",
                               "config": {"l2": 0.5}, "registered_name": null})
        );
        let named: Regularizer = serde_json::from_str(r#""l1""#).unwrap();
        assert_eq!(named, Regularizer::l1(0.01).unwrap());
        let both: Regularizer = serde_json::from_str(r#""l1l2""#).unwrap();
        assert_eq!((both.l1_factor(), both.l2_factor()), (0.0, 0.0));
        let partial: Regularizer =
            serde_json::from_str(r#"{"class_name": "L1L2", "config": {"l1": 0.25}}"#).unwrap();
        assert_eq!(partial, Regularizer::l1_l2(0.25, 0.0).unwrap());
        for bad in [
            r#"{"class_name": "L2", "config": {"l2": -1.0}}"#,
            r#"{"class_name": "L1", "config": {"l1": "x"}}"#,
            r#"{"class_name": "L1", "config": {"l2": 1.0}}"#,
            r#"{"class_name": "Orthogonal", "config": {}}"#,
            r#""l1_l2""#,
        ] {
            assert!(serde_json::from_str::<Regularizer>(bad).is_err(), "{bad}");
        }
        assert!(Regularizer::l1(f64::NAN).is_err());
        assert!(Regularizer::l1_l2(0.1, f64::INFINITY).is_err());
    }

    /// The penalty's gradient against central differences of the penalty itself (float64
    /// differences of the float32 function, step 1e-2 on a quadratic / piecewise linear
    /// function away from the kink: exact up to the float32 rounding of the sums).
    #[test]
    fn penalty_gradients_match_finite_differences() {
        // offset so that no entry sits within h of |x|'s kink at 0 (checked below on its own)
        let x: Vec<f32> = (0..12)
            .map(|i| (i as f32 * 0.37 + 0.2).sin() * 1.5)
            .collect();
        for r in [
            Regularizer::l1(0.3).unwrap(),
            Regularizer::l2(0.2).unwrap(),
            Regularizer::l1_l2(0.05, 0.7).unwrap(),
        ] {
            let mut grad = vec![0.0f32; x.len()];
            r.add_gradient(&x, 0.5, &mut grad);
            for i in 0..x.len() {
                let h = 1e-2f32;
                let (mut up, mut down) = (x.clone(), x.clone());
                up[i] += h;
                down[i] -= h;
                let fd = 0.5 * (f64::from(r.penalty(&up)) - f64::from(r.penalty(&down)))
                    / (f64::from(up[i]) - f64::from(down[i]));
                // the penalties are ~10: their float32 rounding (~1e-6) over the 2h step
                let tol = 4.0 * 12.0 * f64::from(f32::EPSILON) / f64::from(h) + 1e-6;
                assert!(
                    (f64::from(grad[i]) - fd).abs() <= tol,
                    "{r:?} at {i}: {} vs {fd}",
                    grad[i]
                );
            }
        }
        // JAX's gradient of |x| at 0 is +1
        assert_eq!(Regularizer::l1(0.5).unwrap().gradient_at(0.0, 1.0), 0.5);
        assert_eq!(Regularizer::l1(0.5).unwrap().gradient_at(-0.0, 1.0), 0.5);
    }

    fn dense(seed: u64) -> Box<dyn Layer> {
        Box::new(
            Dense::new(3, 2, Activation::Tanh)
                .unwrap()
                .with_random_state(seed),
        )
    }

    /// The wrapped layer's loss `sum(out * c) + penalties` differentiated by the wrapper
    /// against central differences over every weight (float64 steps of a float32 function).
    #[test]
    fn wrapped_layer_gradients_match_finite_differences() {
        let x = Tensor::from_shape_fn(ndarray::IxDyn(&[4, 3]), |i| {
            ((i[0] * 3 + i[1]) as f32 * 0.61).cos()
        });
        let c = Tensor::from_shape_fn(ndarray::IxDyn(&[4, 2]), |i| {
            ((i[0] + 2 * i[1]) as f32 * 0.43).sin()
        });
        let make = || {
            Regularized::new(
                dense(3),
                vec![
                    ("weight", Regularizer::l1_l2(0.02, 0.3).unwrap()),
                    ("bias", Regularizer::l2(0.5).unwrap()),
                ],
                Some(Regularizer::l2(0.25).unwrap()),
            )
            .unwrap()
        };
        // total objective at weights `w` (kernel then bias, flat)
        let objective = |w: &[f32]| -> f64 {
            let mut layer = make();
            let arrays: Vec<ndarray::ArrayD<f32>> = vec![
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[3, 2]), w[..6].to_vec()).unwrap(),
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[1, 2]), w[6..].to_vec()).unwrap(),
            ];
            let weights = layer.get_weights().with_arrays(arrays).unwrap();
            layer.apply_weights(&weights).unwrap();
            let out = layer.forward(&x).unwrap();
            let data: f64 = out
                .iter()
                .zip(c.iter())
                .map(|(&o, &c)| f64::from(o * c))
                .sum();
            data + f64::from(layer.regularize(1.0, true, true))
        };
        let mut layer = make();
        let w0: Vec<f32> = layer
            .get_weights()
            .array_views()
            .iter()
            .flat_map(|(_, a)| a.iter().copied().collect::<Vec<_>>())
            .collect();
        layer.forward(&x).unwrap();
        layer.regularize(1.0, true, true);
        layer.backward(&c).unwrap();
        let analytic: Vec<f32> = layer
            .parameters()
            .iter()
            .flat_map(|p| p.grad.to_vec())
            .collect();
        assert_eq!(analytic.len(), 8);
        for i in 0..8 {
            let h = 1e-2f32;
            let (mut up, mut down) = (w0.clone(), w0.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (objective(&up) - objective(&down)) / (f64::from(up[i]) - f64::from(down[i]));
            // tanh's third derivative over h²/6 plus the float32 rounding of ~10 terms of
            // size ~1 over the 2h step
            let tol = 2e-4 + 32.0 * f64::from(f32::EPSILON) / f64::from(h);
            assert!(
                (f64::from(analytic[i]) - fd).abs() <= tol,
                "weight {i}: {} vs {fd}",
                analytic[i]
            );
        }
    }

    /// Two shards' gradients (shares 1/4 and 3/4 of a batch of 4) sum to the whole batch's,
    /// penalties included; at share 1 and unarmed the wrapper gives the same bits.
    #[test]
    fn shard_gradients_sum_to_the_batch_gradient() {
        let x = Tensor::from_shape_fn(ndarray::IxDyn(&[4, 3]), |i| {
            ((i[0] * 3 + i[1]) as f32 * 0.61).cos()
        });
        let g = Tensor::from_shape_fn(ndarray::IxDyn(&[4, 2]), |i| {
            ((i[0] + 2 * i[1]) as f32 * 0.43).sin() * 0.25
        });
        let make = || {
            Regularized::new(
                dense(5),
                vec![("weight", Regularizer::l1_l2(0.02, 0.3).unwrap())],
                Some(Regularizer::l1(0.1).unwrap()),
            )
            .unwrap()
        };
        let grads = |rows: std::ops::Range<usize>, share: f32, arm: bool| -> Vec<f32> {
            let mut layer = make();
            let xs = x
                .slice_axis(ndarray::Axis(0), rows.clone().into())
                .to_owned();
            let n = rows.len() as f32;
            let gs = g.slice_axis(ndarray::Axis(0), rows.into()).to_owned();
            layer.forward(&xs).unwrap();
            if arm {
                layer.regularize(share, true, true);
            }
            // `g` is the gradient of the whole batch's mean loss; a shard's engine passes its
            // own mean loss's (4/n times larger per row) scaled by the share
            layer.backward(&gs.mapv(|v| v * (4.0 / n) * share)).unwrap();
            layer
                .parameters()
                .iter()
                .flat_map(|p| p.grad.to_vec())
                .collect()
        };
        let whole = grads(0..4, 1.0, true);
        assert_eq!(whole, grads(0..4, 1.0, false));
        let (a, b) = (grads(0..1, 0.25, true), grads(1..4, 0.75, true));
        for ((w, a), b) in whole.iter().zip(&a).zip(&b) {
            assert!(
                (w - (a + b)).abs() <= 8.0 * f32::EPSILON * w.abs().max(1.0),
                "{w} vs {a} + {b}"
            );
        }
    }

    fn regularized_network() -> crate::neural_network::keras::KerasSequential {
        let mut net = crate::neural_network::keras::model_from_config(
            r#"{"seed": 3, "input_shape": [5], "layers": [
                {"class_name": "Dense", "config": {"units": 6, "activation": "tanh",
                 "kernel_regularizer": {"module": "keras.regularizers", "class_name": "L1L2",
                                        "config": {"l1": 0.02, "l2": 0.1}, "registered_name": null},
                 "activity_regularizer": "l2"}},
                {"class_name": "Dense", "config": {"units": 2,
                 "bias_regularizer": {"class_name": "L1", "config": {"l1": 0.3}}}}]}"#,
        )
        .unwrap();
        net.compile_json(
            r#"{"class_name": "Adam", "config": {"learning_rate": 0.01}}"#,
            r#"{"name": "mean_squared_error"}"#,
        )
        .unwrap();
        net
    }

    /// Through a whole Sequential: the training loss is the data loss plus the penalties
    /// (as `evaluate` reports it at the same weights); share-1 gradients applied are a step
    /// bit for bit; shards' gradients sum to the batch's.
    #[test]
    fn a_regularized_sequential_steps_as_its_gradients_say() {
        let x = Tensor::from_shape_fn(ndarray::IxDyn(&[12, 5]), |i| {
            ((i[0] * 5 + i[1]) as f32 * 0.37).sin()
        });
        let y = Tensor::from_shape_fn(ndarray::IxDyn(&[12, 2]), |i| {
            ((i[0] + 2 * i[1]) as f32 * 0.21).cos()
        });
        let (mut stepped, mut applied) = (regularized_network(), regularized_network());
        let plain = {
            let mut m = crate::neural_network::keras::model_from_config(
                r#"{"seed": 3, "input_shape": [5], "layers": [
                    {"class_name": "Dense", "config": {"units": 6, "activation": "tanh"}},
                    {"class_name": "Dense", "config": {"units": 2}}]}"#,
            )
            .unwrap();
            m.compile_json(
                r#"{"class_name": "Adam", "config": {"learning_rate": 0.01}}"#,
                r#"{"name": "mean_squared_error"}"#,
            )
            .unwrap();
            m
        };
        let data = plain.model().evaluate(&x, &y).unwrap();
        let with_penalties = stepped.model().evaluate(&x, &y).unwrap();
        // the penalties here are ~0.1 of a loss ~1
        assert!(with_penalties > data + 1e-2, "{with_penalties} vs {data}");
        for _ in 0..3 {
            let want_eval = stepped.model().evaluate(&x, &y).unwrap();
            let loss = stepped.model_mut().train_batch(&x, &y).unwrap();
            // training and evaluation modes agree for these layers: same sum, same order
            assert!(
                (loss - want_eval).abs() <= 4.0 * f32::EPSILON * loss,
                "{loss} vs {want_eval}"
            );
            let (l2, grads) = applied.model_mut().loss_and_gradients(&x, &y, 1.0).unwrap();
            assert_eq!(l2.to_bits(), loss.to_bits());
            applied.model_mut().apply_gradients(&grads).unwrap();
        }
        let bits = |n: &crate::neural_network::keras::KerasSequential| -> Vec<u32> {
            n.get_weights()
                .iter()
                .flat_map(|a| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                .collect()
        };
        assert_eq!(bits(&stepped), bits(&applied));

        let (_, whole) = applied.model_mut().loss_and_gradients(&x, &y, 1.0).unwrap();
        let rows = |r: std::ops::Range<usize>, t: &Tensor| {
            t.slice_axis(ndarray::Axis(0), r.into()).to_owned()
        };
        let (_, a) = applied
            .model_mut()
            .loss_and_gradients(&rows(0..5, &x), &rows(0..5, &y), 5.0 / 12.0)
            .unwrap();
        let (_, b) = applied
            .model_mut()
            .loss_and_gradients(&rows(5..12, &x), &rows(5..12, &y), 7.0 / 12.0)
            .unwrap();
        for ((w, a), b) in whole.iter().zip(&a).zip(&b) {
            for ((w, a), b) in w.iter().zip(a).zip(b) {
                // sums of 12 row terms of size <= ~1 plus the penalty's in two orders
                assert!(
                    (w - (a + b)).abs() <= 32.0 * f32::EPSILON,
                    "{w} vs {a} + {b}"
                );
            }
        }
    }
}
