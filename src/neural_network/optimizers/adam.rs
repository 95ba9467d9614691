//! Adam (Kingma & Ba 2015) with L2-coupled weight decay: `g + wd * p` enters the moments.

use super::adam_core::{adam_optimizer, AdamCore};
use super::rules::{AdamEpsilon, DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::OptimizerState;
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

adam_optimizer!(
    /// Adam (Kingma & Ba 2015) with L2-coupled weight decay: `g + wd * p` enters the moments. Biases and normalisation parameters never decay.
    Adam,
    DecayCoupling::CoupledL2,
    "L2-coupled, kernels only"
);
