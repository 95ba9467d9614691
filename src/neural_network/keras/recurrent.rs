//! Keras's recurrent configs: `SimpleRNN`, `LSTM`, `GRU` ([`RecurrentSpec`]) and the
//! `Bidirectional` wrapper ([`BidirectionalSpec`]).

use super::layer_spec::{default_true, parse_activation, LayerSpec};
use super::regularizer_spec::LayerRegularizers;
use crate::error::{Error, Result};
use crate::neural_network::layers::recurrent::{Bidirectional, MergeMode, SimpleRNN, GRU, LSTM};
use crate::neural_network::traits::Layer;
use serde::{Deserialize, Serialize};

pub(crate) fn default_tanh() -> Option<String> {
    Some("tanh".to_string())
}

pub(crate) fn default_sigmoid() -> Option<String> {
    Some("sigmoid".to_string())
}

/// Keras's SimpleRNN / LSTM / GRU config (each reads the keys it has).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecurrentSpec {
    pub units: usize,
    #[serde(default = "default_tanh")]
    pub activation: Option<String>,
    #[serde(default = "default_sigmoid")]
    pub recurrent_activation: Option<String>,
    #[serde(default = "default_true")]
    pub use_bias: bool,
    #[serde(default)]
    pub return_sequences: bool,
    #[serde(default)]
    pub return_state: bool,
    #[serde(default)]
    pub go_backwards: bool,
    #[serde(default = "default_true")]
    pub unit_forget_bias: bool,
    #[serde(default = "default_true")]
    pub reset_after: bool,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(flatten)]
    pub regularizers: LayerRegularizers,
    /// Keras's input dropout rate (training only).
    #[serde(default)]
    pub dropout: f32,
    /// Keras's recurrent-state dropout rate (training only).
    #[serde(default)]
    pub recurrent_dropout: f32,
    /// Keras's `zero_output_for_mask` (a masked step outputs zeros).
    #[serde(default)]
    pub zero_output_for_mask: bool,
}

/// Keras's Bidirectional config: the wrapped layer's own `{class_name, config}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BidirectionalSpec {
    pub layer: Box<LayerSpec>,
    #[serde(default)]
    pub merge_mode: Option<String>,
}

/// One of the three cells, built from its config.
pub(crate) enum AnyRecurrent {
    Simple(SimpleRNN),
    Lstm(LSTM),
    Gru(GRU),
}

impl AnyRecurrent {
    pub(crate) fn boxed(self) -> Box<dyn Layer> {
        match self {
            AnyRecurrent::Simple(l) => Box::new(l),
            AnyRecurrent::Lstm(l) => Box::new(l),
            AnyRecurrent::Gru(l) => Box::new(l),
        }
    }

    pub(crate) fn bidirectional(self, mode: MergeMode) -> Result<Bidirectional> {
        match self {
            AnyRecurrent::Simple(l) => Bidirectional::new(l, mode),
            AnyRecurrent::Lstm(l) => Bidirectional::new(l, mode),
            AnyRecurrent::Gru(l) => Bidirectional::new(l, mode),
        }
    }
}

/// Builds a SimpleRNN / LSTM / GRU spec for samples `[timesteps, features]`.
pub(crate) fn build_recurrent(
    spec: &LayerSpec,
    sample: &[usize],
    seed: Option<u64>,
) -> Result<AnyRecurrent> {
    let (class, cfg) = match spec {
        LayerSpec::SimpleRNN(c) => ("SimpleRNN", c),
        LayerSpec::LSTM(c) => ("LSTM", c),
        LayerSpec::GRU(c) => ("GRU", c),
        _ => {
            return Err(Error::invalid_parameter(
                "layer",
                "Bidirectional wraps a SimpleRNN, LSTM or GRU layer",
            ))
        }
    };
    if sample.len() != 2 {
        return Err(Error::invalid_input(format!(
            "{class} expects inputs of shape (batch, timesteps, features), but its input has per-sample shape {sample:?}"
        )));
    }
    if cfg.return_state {
        return Err(Error::invalid_parameter(
            "return_state",
            format!("{class}: return_state=True returns several tensors, which a Sequential model cannot pass on"),
        ));
    }
    let act = parse_activation(cfg.activation.as_deref())?;
    let ract = parse_activation(cfg.recurrent_activation.as_deref())?;
    let rng_seed = cfg
        .seed
        .or(seed)
        .unwrap_or_else(|| crate::random::resolve_seed(None));
    let d = sample[1];
    Ok(match spec {
        LayerSpec::SimpleRNN(_) => AnyRecurrent::Simple(
            SimpleRNN::new(d, cfg.units, act)?
                .with_use_bias(cfg.use_bias)
                .with_random_state(rng_seed)
                .with_return_sequences(cfg.return_sequences)
                .with_go_backwards(cfg.go_backwards)
                .with_zero_output_for_mask(cfg.zero_output_for_mask)
                .with_dropout(cfg.dropout, cfg.recurrent_dropout)?,
        ),
        LayerSpec::LSTM(_) => AnyRecurrent::Lstm(
            LSTM::new(d, cfg.units, act)?
                .with_use_bias(cfg.use_bias)
                .with_random_state(rng_seed)
                .with_unit_forget_bias(cfg.unit_forget_bias)
                .with_return_sequences(cfg.return_sequences)
                .with_go_backwards(cfg.go_backwards)
                .with_zero_output_for_mask(cfg.zero_output_for_mask)
                .with_dropout(cfg.dropout, cfg.recurrent_dropout)?
                .with_recurrent_activation(ract)?,
        ),
        _ => AnyRecurrent::Gru(
            GRU::new(d, cfg.units, act)?
                .with_reset_after(cfg.reset_after)
                .with_use_bias(cfg.use_bias)
                .with_random_state(rng_seed)
                .with_return_sequences(cfg.return_sequences)
                .with_go_backwards(cfg.go_backwards)
                .with_zero_output_for_mask(cfg.zero_output_for_mask)
                .with_dropout(cfg.dropout, cfg.recurrent_dropout)?
                .with_recurrent_activation(ract)?,
        ),
    })
}
