//! Keras's optimizer configs (`SGD`, `Adam`/`AdamW`, `RMSprop`, `Adagrad`, `Nadam`, `Adamax`),
//! built with Keras 3's update rules (epsilon placement, decoupled weight decay, clipping) and
//! an optional learning-rate schedule.

use crate::error::{Error, Result};
use crate::neural_network::optimizers::{
    AdaGrad, Adam, AdamEpsilon, Adamax, DecayCoupling, DecayScope, EpsilonPlacement, GradientClip,
    LearningRateSchedule, Nadam, RMSprop, Scheduled, WeightDecayRule, SGD,
};
use crate::neural_network::traits::Optimizer;
use serde::{Deserialize, Serialize};

/// How an optimizer spec's weight decay applies. Keras's rule is the default, so that files
/// saved before the field existed load with the door's semantics.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WeightDecayRuleSpec {
    /// Keras 3: `p -= p * wd * lr` on every trainable variable before the update.
    #[default]
    Decoupled,
    /// scikit-learn's MLP `alpha`: `g + wd * p` on the kernels only.
    CoupledL2Kernels,
}

impl WeightDecayRuleSpec {
    pub(crate) fn rule(self) -> WeightDecayRule {
        match self {
            Self::Decoupled => {
                WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable)
            }
            Self::CoupledL2Kernels => {
                WeightDecayRule::new(DecayCoupling::CoupledL2, DecayScope::KernelsOnly)
            }
        }
    }
}

/// Keras's clipping arguments and the decay rule, common to every optimizer spec. Fields
/// added after the first release default so that older saved files still load.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct CommonSpec {
    pub learning_rate: f32,
    #[serde(default)]
    pub weight_decay: f32,
    #[serde(default)]
    pub global_clipnorm: Option<f32>,
    #[serde(default)]
    pub clipnorm: Option<f32>,
    #[serde(default)]
    pub clipvalue: Option<f32>,
    #[serde(default)]
    pub weight_decay_rule: WeightDecayRuleSpec,
    /// Keras's `learning_rate=<schedule>`: the rate of every step comes from it (then
    /// `learning_rate` holds its value at step 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<LearningRateSchedule>,
}

impl CommonSpec {
    /// The per-variable clip, refusing more than one of Keras's three clipping arguments.
    pub(crate) fn clip(&self) -> Result<Option<GradientClip>> {
        let set = [
            self.clipnorm.is_some(),
            self.clipvalue.is_some(),
            self.global_clipnorm.is_some(),
        ];
        if set.iter().filter(|&&s| s).count() > 1 {
            return Err(Error::invalid_parameter(
                "clipnorm",
                "only one of clipnorm, clipvalue and global_clipnorm can be set".to_string(),
            ));
        }
        Ok(match (self.clipnorm, self.clipvalue) {
            (Some(c), _) => Some(GradientClip::Norm(c)),
            (_, Some(c)) => Some(GradientClip::Value(c)),
            _ => None,
        })
    }
}

/// Keras's optimizer configs (Keras's class names), trained by Keras 3's update rules.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "class_name", content = "config")]
#[allow(clippy::upper_case_acronyms)]
pub enum OptimizerSpec {
    SGD {
        #[serde(flatten)]
        common: CommonSpec,
        #[serde(default)]
        momentum: f32,
        #[serde(default)]
        nesterov: bool,
    },
    // Keras's AdamW is its Adam with a default weight decay: the door sets the same rules on
    // both, so one spec and one engine serve them.
    #[serde(alias = "AdamW")]
    Adam {
        #[serde(flatten)]
        common: CommonSpec,
        #[serde(default = "keras_beta_1")]
        beta_1: f32,
        #[serde(default = "keras_beta_2")]
        beta_2: f32,
        #[serde(default = "keras_epsilon")]
        epsilon: f32,
        #[serde(default)]
        amsgrad: bool,
    },
    RMSprop {
        #[serde(flatten)]
        common: CommonSpec,
        #[serde(default = "keras_rho")]
        rho: f32,
        #[serde(default = "keras_epsilon")]
        epsilon: f32,
        #[serde(default)]
        momentum: f32,
        #[serde(default)]
        centered: bool,
    },
    Adagrad {
        #[serde(flatten)]
        common: CommonSpec,
        #[serde(default = "keras_epsilon")]
        epsilon: f32,
        /// Keras's default; files saved before the field existed had accumulators from 0
        /// and now start at Keras's 0.1.
        #[serde(default = "keras_initial_accumulator")]
        initial_accumulator_value: f32,
    },
    Nadam {
        #[serde(flatten)]
        common: CommonSpec,
        #[serde(default = "keras_beta_1")]
        beta_1: f32,
        #[serde(default = "keras_beta_2")]
        beta_2: f32,
        #[serde(default = "keras_epsilon")]
        epsilon: f32,
    },
    Adamax {
        #[serde(flatten)]
        common: CommonSpec,
        #[serde(default = "keras_beta_1")]
        beta_1: f32,
        #[serde(default = "keras_beta_2")]
        beta_2: f32,
        #[serde(default = "keras_epsilon")]
        epsilon: f32,
    },
}

/// Keras's constructor defaults, so that a partial config (`{"learning_rate": 0.01}`)
/// means what `from_config` makes of it in Keras.
fn keras_beta_1() -> f32 {
    0.9
}

fn keras_beta_2() -> f32 {
    0.999
}

fn keras_epsilon() -> f32 {
    1e-7
}

fn keras_rho() -> f32 {
    0.9
}

pub(crate) fn keras_initial_accumulator() -> f32 {
    0.1
}

/// Every optimizer's options that Keras shares: the per-variable and global clips and the
/// learning-rate schedule.
pub(crate) fn finish<O: Optimizer + 'static>(
    opt: O,
    common: &CommonSpec,
    with_clip: impl FnOnce(O, GradientClip) -> Result<O>,
    with_global: impl FnOnce(O, f32) -> Result<O>,
) -> Result<Box<dyn Optimizer>> {
    let opt = match common.clip()? {
        Some(c) => with_clip(opt, c)?,
        None => opt,
    };
    let opt: Box<dyn Optimizer> = match common.global_clipnorm {
        Some(c) => Box::new(with_global(opt, c)?),
        None => Box::new(opt),
    };
    Ok(match &common.learning_rate_schedule {
        Some(schedule) => Box::new(Scheduled::new(opt, schedule.clone())?),
        None => opt,
    })
}

/// The constructors refuse a learning rate of 0 (RustyML 0.15's guard); Keras accepts it, so
/// each optimizer is built at this rate and then given the spec's through
/// `with_learning_rate`, which accepts any finite rate >= 0.
const PROVISIONAL_LR: f32 = 1.0;

impl OptimizerSpec {
    /// The same optimizer at learning rate `learning_rate`.
    pub fn with_learning_rate(mut self, learning_rate: f32) -> Self {
        match &mut self {
            OptimizerSpec::SGD { common, .. }
            | OptimizerSpec::Adam { common, .. }
            | OptimizerSpec::RMSprop { common, .. }
            | OptimizerSpec::Adagrad { common, .. }
            | OptimizerSpec::Nadam { common, .. }
            | OptimizerSpec::Adamax { common, .. } => common.learning_rate = learning_rate,
        }
        self
    }

    /// The optimizer this config describes, with Keras 3's update rules.
    pub fn build(&self) -> Result<Box<dyn Optimizer>> {
        match self {
            OptimizerSpec::SGD {
                common,
                momentum,
                nesterov,
            } => finish(
                SGD::new(PROVISIONAL_LR, *momentum, *nesterov, common.weight_decay)?
                    .with_learning_rate(common.learning_rate)?
                    .with_weight_decay_rule(common.weight_decay_rule.rule()),
                common,
                SGD::with_gradient_clip,
                SGD::with_global_clipnorm,
            ),
            OptimizerSpec::Adam {
                common,
                beta_1,
                beta_2,
                epsilon,
                amsgrad,
            } => finish(
                Adam::new(
                    PROVISIONAL_LR,
                    *beta_1,
                    *beta_2,
                    *epsilon,
                    common.weight_decay,
                )?
                .with_learning_rate(common.learning_rate)?
                .with_weight_decay_rule(common.weight_decay_rule.rule())
                .with_epsilon_placement(AdamEpsilon::UncorrectedRoot)
                .with_amsgrad(*amsgrad),
                common,
                Adam::with_gradient_clip,
                Adam::with_global_clipnorm,
            ),
            OptimizerSpec::RMSprop {
                common,
                rho,
                epsilon,
                momentum,
                centered,
            } => finish(
                RMSprop::new(PROVISIONAL_LR, *rho, *epsilon, common.weight_decay)?
                    .with_learning_rate(common.learning_rate)?
                    .with_weight_decay_rule(common.weight_decay_rule.rule())
                    .with_epsilon_placement(EpsilonPlacement::InsideRoot)
                    .with_momentum(*momentum)?
                    .with_centered(*centered),
                common,
                RMSprop::with_gradient_clip,
                RMSprop::with_global_clipnorm,
            ),
            OptimizerSpec::Adagrad {
                common,
                epsilon,
                initial_accumulator_value,
            } => finish(
                AdaGrad::new(PROVISIONAL_LR, *epsilon, common.weight_decay)?
                    .with_learning_rate(common.learning_rate)?
                    .with_weight_decay_rule(common.weight_decay_rule.rule())
                    .with_epsilon_placement(EpsilonPlacement::InsideRoot)
                    .with_initial_accumulator(*initial_accumulator_value)?,
                common,
                AdaGrad::with_gradient_clip,
                AdaGrad::with_global_clipnorm,
            ),
            OptimizerSpec::Nadam {
                common,
                beta_1,
                beta_2,
                epsilon,
            } => finish(
                Nadam::new(
                    common.learning_rate,
                    *beta_1,
                    *beta_2,
                    *epsilon,
                    common.weight_decay,
                )?
                .with_weight_decay_rule(common.weight_decay_rule.rule()),
                common,
                Nadam::with_gradient_clip,
                Nadam::with_global_clipnorm,
            ),
            OptimizerSpec::Adamax {
                common,
                beta_1,
                beta_2,
                epsilon,
            } => finish(
                Adamax::new(
                    common.learning_rate,
                    *beta_1,
                    *beta_2,
                    *epsilon,
                    common.weight_decay,
                )?
                .with_weight_decay_rule(common.weight_decay_rule.rule()),
                common,
                Adamax::with_gradient_clip,
                Adamax::with_global_clipnorm,
            ),
        }
    }
}
