//! AdamW (Loshchilov & Hutter 2019): Adam with decoupled weight decay, `p *= 1 - lr * wd` beside the adaptive step.

use super::adam_core::{adam_optimizer, AdamCore};
use super::rules::{AdamEpsilon, DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::OptimizerState;
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

adam_optimizer!(
    /// AdamW (Loshchilov & Hutter 2019): Adam with decoupled weight decay, `p *= 1 - lr * wd` beside the adaptive step. Biases and normalisation parameters never decay.
    AdamW,
    DecayCoupling::Decoupled,
    "decoupled, kernels only"
);
