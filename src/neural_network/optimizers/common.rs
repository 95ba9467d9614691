//! What every optimizer holds besides its own update rule (the learning rate, weight decay and
//! its rule, the gradient clips), and the builders and `Optimizer` methods that only read or set
//! it: stamped into each optimizer by [`common_builders!`] and [`common_optimizer_methods!`].

use super::rules::{prepare_grad, GradientClip, WeightDecayRule};
use super::state::LayerSlots;
use super::validation::non_negative;
use crate::error::Result;
use crate::neural_network::traits::{Layer, ParamGrad};
use std::borrow::Cow;

#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub(crate) learning_rate: f32,
    pub(crate) weight_decay: f32,
    pub(crate) global_clipnorm: Option<f32>,
    pub(crate) clip: Option<GradientClip>,
    pub(crate) decay: WeightDecayRule,
}

impl Common {
    /// `learning_rate` already checked by the caller (constructors differ on 0);
    /// `weight_decay` finite and >= 0, checked here, after the optimizer's own options.
    pub(crate) fn new(
        learning_rate: f32,
        weight_decay: f32,
        decay: WeightDecayRule,
    ) -> Result<Self> {
        Ok(Self {
            learning_rate,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            clip: None,
            decay,
        })
    }

    /// The gradient the update rule sees: scaled, clipped, and with weight decay applied
    /// (see [`prepare_grad`]).
    #[inline]
    pub(crate) fn grad<'a>(&self, param: &mut ParamGrad<'a>, grad_scale: f32) -> Cow<'a, [f32]> {
        prepare_grad(
            param,
            grad_scale,
            self.clip,
            self.decay,
            self.learning_rate,
            self.weight_decay,
        )
    }

    /// One `update` of an optimizer whose rule reads only each parameter's own state: claims
    /// the layer's slot in `slots` (new buffers start at `fill`) and runs `rule` on every
    /// parameter in order with its values, its prepared gradient and its `K` buffers.
    pub(crate) fn update_each<const K: usize>(
        &self,
        layer: &mut dyn Layer,
        grad_scale: f32,
        slots: &mut LayerSlots<K>,
        fill: f32,
        mut rule: impl FnMut(&mut [f32], &[f32], &mut [Vec<f32>; K]),
    ) {
        let mut params = layer.parameters();
        let buffers = slots.claim_filled(&params, fill);
        for (param, buffers) in params.iter_mut().zip(buffers.iter_mut()) {
            let grad = self.grad(param, grad_scale);
            rule(param.value, &grad, buffers);
        }
    }
}

/// The builders every optimizer shares, over the [`Common`] at `self.<path>`; `$default_rule`
/// names the optimizer's default weight-decay rule in the docs.
macro_rules! common_builders {
    ($($path:ident).+, $default_rule:literal) => {
        /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
        pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> Result<Self> {
            self.$($path).+.global_clipnorm = Some(super::validation::positive(
                "global_clipnorm",
                global_clipnorm,
            )?);
            Ok(self)
        }

        #[doc = concat!("Replaces how weight decay applies (default: ", $default_rule, ").")]
        pub fn with_weight_decay_rule(mut self, rule: WeightDecayRule) -> Self {
            self.$($path).+.decay = rule;
            self
        }

        /// Clips each parameter's gradient (by its own norm, or elementwise by value) after the
        /// global-norm scale.
        pub fn with_gradient_clip(mut self, clip: GradientClip) -> Result<Self> {
            self.$($path).+.clip = Some(super::validation::gradient_clip(clip)?);
            Ok(self)
        }

        /// Replaces the learning rate; this one may be 0 (finite and >= 0), as a warm-up
        /// schedule's first step is.
        pub fn with_learning_rate(mut self, learning_rate: f32) -> Result<Self> {
            self.$($path).+.learning_rate = super::validation::learning_rate(learning_rate)?;
            Ok(self)
        }
    };
}
pub(super) use common_builders;

/// The `Optimizer` methods that only read or set the [`Common`] at `self.<path>`, and the
/// snapshot (a clone: every optimizer here is `Clone`).
macro_rules! common_optimizer_methods {
    ($($path:ident).+) => {
        fn global_clipnorm(&self) -> Option<f32> {
            self.$($path).+.global_clipnorm
        }

        fn learning_rate(&self) -> f32 {
            self.$($path).+.learning_rate
        }

        fn set_learning_rate(&mut self, learning_rate: f32) {
            self.$($path).+.learning_rate = learning_rate;
        }

        fn snapshot(&self) -> Option<Box<dyn Optimizer>> {
            Some(Box::new(self.clone()))
        }
    };
}
pub(super) use common_optimizer_methods;
