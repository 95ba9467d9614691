//! The engine behind every random regularisation layer (`Dropout`, `SpatialDropout1D/2D/3D`,
//! `GaussianDropout`, `GaussianNoise`): input checks, train/inference switching, seeded noise
//! and the cached factors the backward pass reuses. Each layer file only names its noise.
//!
//! Draws are thread-count free: every training pass takes one seed from the layer's generator,
//! and chunk `k` of the noise tensor reads stream `k` of a ChaCha8 generator keyed by that
//! seed, so the values do not depend on which thread fills which chunk.

use crate::declare_gate;
use crate::error::{Error, Result};
use crate::gate::Gate;
use crate::neural_network::layers::activation::{zip_f32, CHEAP_MAP_F32, EXP_MAP_F32};
use crate::neural_network::layers::layer_util::{
    full_shape, require_non_empty, require_shape, to_c_order,
};
use crate::neural_network::Tensor;
use ndarray::IxDyn;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

declare_gate! {
    /// Spatial dropout's scaling: one factor per (sample, channel) broadcast over every
    /// spatial position. Work = elements written.
    pub SPATIAL_DROPOUT_SCALE: elementwise::spatial_dropout_scale = 4_194_304, "elements"
}

/// Elements per random stream (and per rayon task of the draws).
const STREAM_CHUNK: usize = 1 << 14;

/// The noise a layer injects while training.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Noise {
    /// Inverted dropout: each element kept with probability `1 - rate` and scaled by
    /// `1 / (1 - rate)`, else zeroed.
    Dropout { rate: f32 },
    /// The same, one draw per (sample, channel) of a channels-last input of this rank.
    SpatialDropout { rate: f32, rank: usize },
    /// `x * N(1, stddev)`.
    Multiplicative { stddev: f32 },
    /// `x + N(0, stddev)`.
    Additive { stddev: f32 },
}

impl Noise {
    /// Whether this noise leaves every input unchanged.
    fn is_identity(self) -> bool {
        match self {
            Noise::Dropout { rate } | Noise::SpatialDropout { rate, .. } => rate == 0.0,
            Noise::Multiplicative { stddev } | Noise::Additive { stddev } => stddev == 0.0,
        }
    }

    fn drops_everything(self) -> bool {
        matches!(self, Noise::Dropout { rate } | Noise::SpatialDropout { rate, .. } if rate == 1.0)
    }
}

/// What the last training pass did, which the backward pass replays.
#[derive(Debug)]
enum Replay {
    /// The input passed through (inference, rate 0, stddev 0, additive noise).
    Pass(Vec<usize>),
    /// Everything was dropped (rate 1).
    Zero(Vec<usize>),
    /// One factor per element.
    Factors(Tensor),
    /// One factor per (sample, channel), shared by every spatial position.
    ChannelFactors {
        shape: Vec<usize>,
        factors: Vec<f32>,
    },
}

impl Replay {
    fn shape(&self) -> &[usize] {
        match self {
            Replay::Pass(shape) | Replay::Zero(shape) => shape,
            Replay::Factors(f) => f.shape(),
            Replay::ChannelFactors { shape, .. } => shape,
        }
    }
}

/// State shared by the random regularisation layers.
#[derive(Debug)]
pub(crate) struct Stochastic {
    noise: Noise,
    /// The configured shape, batch axis included; empty means "any shape".
    input_shape: Vec<usize>,
    training: bool,
    pub(crate) rng: ChaCha8Rng,
    replay: Option<Replay>,
}

/// `rate` must lie in [0, 1] (`rate_max_inclusive`) or [0, 1).
pub(crate) fn check_rate(rate: f32, rate_max_inclusive: bool) -> Result<()> {
    let ok = rate >= 0.0 && (rate < 1.0 || (rate_max_inclusive && rate == 1.0));
    if !ok {
        let range = if rate_max_inclusive {
            "[0, 1]"
        } else {
            "[0, 1)"
        };
        return Err(Error::invalid_parameter(
            "rate",
            format!("must lie in {range}, got {rate}"),
        ));
    }
    Ok(())
}

impl Stochastic {
    /// Starts in training mode, with a generator from the global seed stream (or entropy).
    pub(crate) fn new(noise: Noise, input_shape: Vec<usize>) -> Self {
        Self {
            noise,
            input_shape,
            training: true,
            rng: crate::random::rng_from(None),
            replay: None,
        }
    }

    pub(crate) fn reseed(&mut self, random_state: u64) {
        self.rng = crate::random::rng_from(Some(random_state));
    }

    pub(crate) fn set_training(&mut self, is_training: bool) {
        self.training = is_training;
    }

    /// The configured shape, or "Unknown" when any shape is accepted.
    pub(crate) fn output_shape(&self) -> String {
        if self.input_shape.is_empty() {
            "Unknown".to_string()
        } else {
            full_shape(&self.input_shape)
        }
    }

    /// Spatial layers need their rank; a configured shape fixes every axis but the batch axis
    /// (mini-batches vary), else `ShapeMismatch`.
    fn check_input(&self, input: &Tensor, layer: &str) -> Result<()> {
        if let Noise::SpatialDropout { rank, .. } = self.noise {
            if input.ndim() != rank {
                return Err(Error::invalid_input(format!(
                    "{layer} expects rank {rank} channels-last input, got shape {:?}",
                    input.shape()
                )));
            }
        }
        if !self.input_shape.is_empty() {
            let same_rank = input.ndim() == self.input_shape.len();
            if !same_rank || input.shape()[1..] != self.input_shape[1..] {
                let mut expected = self.input_shape.clone();
                if same_rank {
                    expected[0] = input.shape()[0];
                }
                return Err(Error::shape_mismatch(expected, input.shape()));
            }
        }
        require_non_empty(input)
    }

    /// Inference: the identity (after the same input checks). Caches nothing.
    pub(crate) fn predict(&self, input: &Tensor, layer: &str) -> Result<Tensor> {
        self.check_input(input, layer)?;
        Ok(to_c_order(input))
    }

    /// Training pass (the identity when the layer is in inference mode).
    pub(crate) fn forward(&mut self, input: &Tensor, layer: &str) -> Result<Tensor> {
        self.check_input(input, layer)?;
        let shape = input.shape().to_vec();
        let mut out = to_c_order(input);
        if !self.training || self.noise.is_identity() {
            self.replay = Some(Replay::Pass(shape));
            return Ok(out);
        }
        if self.noise.drops_everything() {
            self.replay = Some(Replay::Zero(shape));
            return Ok(Tensor::zeros(IxDyn(input.shape())));
        }
        let seed = self.rng.next_u64();
        let x = out.as_slice_mut().expect("C order");
        self.replay = Some(match self.noise {
            Noise::Dropout { rate } => {
                let factors = dropout_factors(seed, x.len(), rate);
                zip_f32(&CHEAP_MAP_F32, x, &factors, |x, m| x * m);
                Replay::Factors(Tensor::from_shape_vec(IxDyn(&shape), factors).expect("same size"))
            }
            Noise::SpatialDropout { rate, .. } => {
                let channels = shape[shape.len() - 1];
                let factors = dropout_factors(seed, shape[0] * channels, rate);
                scale_channels(x, &factors, &shape);
                Replay::ChannelFactors { shape, factors }
            }
            Noise::Multiplicative { stddev } => {
                let mut factors = vec![0.0f32; x.len()];
                fill_streams(&EXP_MAP_F32, seed, &mut factors, |rng, chunk| {
                    fill_normal(rng, chunk, 1.0, stddev)
                });
                zip_f32(&CHEAP_MAP_F32, x, &factors, |x, m| x * m);
                Replay::Factors(Tensor::from_shape_vec(IxDyn(&shape), factors).expect("same size"))
            }
            Noise::Additive { stddev } => {
                let mut noise = vec![0.0f32; x.len()];
                fill_streams(&EXP_MAP_F32, seed, &mut noise, |rng, chunk| {
                    fill_normal(rng, chunk, 0.0, stddev)
                });
                zip_f32(&CHEAP_MAP_F32, x, &noise, |x, n| x + n);
                // d(x + n)/dx = 1: the gradient passes through.
                Replay::Pass(shape)
            }
        });
        Ok(out)
    }

    /// Replays the last training pass on the gradient. In inference mode with no pass yet the
    /// gradient passes through (the layer is the identity there).
    pub(crate) fn backward(&self, grad_output: &Tensor, layer: &'static str) -> Result<Tensor> {
        let replay = match &self.replay {
            Some(replay) => replay,
            None if !self.training => return Ok(to_c_order(grad_output)),
            None => return Err(Error::forward_pass_not_run(layer)),
        };
        require_shape(replay.shape(), grad_output.shape())?;
        let mut grad = to_c_order(grad_output);
        let g = grad.as_slice_mut().expect("C order");
        match replay {
            Replay::Pass(_) => {}
            Replay::Zero(_) => g.fill(0.0),
            Replay::Factors(f) => {
                zip_f32(&CHEAP_MAP_F32, g, f.as_slice().expect("C order"), |g, m| {
                    g * m
                })
            }
            Replay::ChannelFactors { shape, factors } => scale_channels(g, factors, shape),
        }
        Ok(grad)
    }
}

/// Runs `fill(rng, chunk)` over fixed chunks of `dst`, chunk `k` with stream `k` of `seed`,
/// chunks in parallel behind `gate`.
fn fill_streams(
    gate: &Gate,
    seed: u64,
    dst: &mut [f32],
    fill: impl Fn(&mut ChaCha8Rng, &mut [f32]) + Sync + Send,
) {
    let run = |(k, chunk): (usize, &mut [f32])| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(k as u64);
        fill(&mut rng, chunk);
    };
    if gate.allows_parallel(dst.len()) {
        dst.par_chunks_mut(STREAM_CHUNK).enumerate().for_each(run);
    } else {
        dst.chunks_mut(STREAM_CHUNK).enumerate().for_each(run);
    }
}

/// `n` inverted-dropout factors: `1 / (1 - rate)` with probability `1 - rate`, else 0.
pub(crate) fn dropout_factors(seed: u64, n: usize, rate: f32) -> Vec<f32> {
    let scale = 1.0 / (1.0 - rate);
    let mut factors = vec![0.0f32; n];
    fill_streams(&CHEAP_MAP_F32, seed, &mut factors, |rng, chunk| {
        for f in chunk {
            *f = if rng.random::<f32>() >= rate {
                scale
            } else {
                0.0
            };
        }
    });
    factors
}

/// Normal draws `mean + stddev * z` by Box-Muller (in f64, two per pair of uniforms).
fn fill_normal(rng: &mut ChaCha8Rng, chunk: &mut [f32], mean: f32, stddev: f32) {
    let (mean, stddev) = (f64::from(mean), f64::from(stddev));
    for pair in chunk.chunks_mut(2) {
        // 1 - U lies in (0, 1], so the logarithm stays finite.
        let radius = (-2.0 * (1.0 - rng.random::<f64>()).ln()).sqrt();
        let angle = std::f64::consts::TAU * rng.random::<f64>();
        pair[0] = (mean + stddev * radius * angle.cos()) as f32;
        if let Some(second) = pair.get_mut(1) {
            *second = (mean + stddev * radius * angle.sin()) as f32;
        }
    }
}

/// `x[b, ..., c] *= factors[b * channels + c]` for a C-order channels-last tensor of `shape`,
/// rows of `channels` elements in parallel behind [`SPATIAL_DROPOUT_SCALE`].
fn scale_channels(x: &mut [f32], factors: &[f32], shape: &[usize]) {
    let channels = shape[shape.len() - 1];
    let rows_per_sample = x.len() / (shape[0] * channels);
    let scale_row = |(r, row): (usize, &mut [f32])| {
        let b = r / rows_per_sample;
        let f = &factors[b * channels..(b + 1) * channels];
        row.iter_mut().zip(f).for_each(|(v, &m)| *v *= m);
    };
    if SPATIAL_DROPOUT_SCALE.allows_parallel(x.len()) {
        x.par_chunks_mut(channels)
            .enumerate()
            .with_min_len((STREAM_CHUNK / channels).max(1))
            .for_each(scale_row);
    } else {
        x.chunks_mut(channels).enumerate().for_each(scale_row);
    }
}

/// `impl Layer` plus `with_random_state` / `set_training` for a layer struct holding a
/// `core: Stochastic` field; `$ty`'s name is its `layer_type`.
macro_rules! impl_stochastic_layer {
    ($ty:ident) => {
        impl $ty {
            /// Fixes the noise sequence (else the global seed stream, or entropy, applies).
            pub fn with_random_state(mut self, random_state: u64) -> Self {
                self.core.reseed(random_state);
                self
            }

            /// Training mode (the default) injects noise; inference mode is the identity.
            pub fn set_training(&mut self, is_training: bool) {
                self.core.set_training(is_training);
            }
        }

        impl $crate::neural_network::traits::Layer for $ty {
            fn forward(
                &mut self,
                input: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.forward(input, stringify!($ty))
            }

            fn predict(
                &self,
                input: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.predict(input, stringify!($ty))
            }

            fn backward(
                &mut self,
                grad_output: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.backward(grad_output, stringify!($ty))
            }

            fn layer_type(&self) -> &str {
                stringify!($ty)
            }

            fn output_shape(&self) -> String {
                self.core.output_shape()
            }

            $crate::neural_network::layers::layer_util::no_parameters!();

            fn set_training_if_mode_dependent(&mut self, is_training: bool) {
                self.core.set_training(is_training);
            }

            fn random_stream(&self) -> Option<$crate::neural_network::traits::RandomStream> {
                Some($crate::neural_network::traits::RandomStream::of(
                    &self.core.rng,
                ))
            }

            fn set_random_stream(&mut self, stream: &$crate::neural_network::traits::RandomStream) {
                self.core.rng = stream.generator();
            }
        }
    };
}
pub(crate) use impl_stochastic_layer;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    fn bits(t: &Tensor) -> Vec<u32> {
        t.iter().map(|v| v.to_bits()).collect()
    }

    /// Forward then backward of a seeded layer of `noise` on a ramp of `shape`.
    fn run(noise: Noise, shape: &[usize]) -> (Tensor, Tensor) {
        let n: usize = shape.iter().product();
        let x = Tensor::from_shape_vec(
            IxDyn(shape),
            (0..n).map(|k| (k % 97) as f32 * 0.1 - 4.0).collect(),
        )
        .unwrap();
        let mut core = Stochastic::new(noise, Vec::new());
        core.reseed(11);
        let y = core.forward(&x, "test").unwrap();
        let g = core.backward(&x.mapv(|v| v * 0.5 + 1.0), "test").unwrap();
        (y, g)
    }

    #[test]
    fn gates_never_change_a_bit() {
        // Several random streams, so the parallel path really splits the draws.
        let shape = [3, 5 * STREAM_CHUNK / 8 + 3, 8];
        let cases = [
            (&CHEAP_MAP_F32, Noise::Dropout { rate: 0.3 }),
            (&EXP_MAP_F32, Noise::Multiplicative { stddev: 0.7 }),
            (&EXP_MAP_F32, Noise::Additive { stddev: 0.7 }),
            (&CHEAP_MAP_F32, Noise::Multiplicative { stddev: 0.7 }),
            (
                &SPATIAL_DROPOUT_SCALE,
                Noise::SpatialDropout { rate: 0.4, rank: 3 },
            ),
        ];
        for (gate, noise) in cases {
            let (s, p) = serial_and_parallel(gate, || run(noise, &shape));
            assert_eq!(bits(&s.0), bits(&p.0), "{noise:?} forward");
            assert_eq!(bits(&s.1), bits(&p.1), "{noise:?} backward");
        }
    }

    #[test]
    fn dropout_keeps_about_1_minus_rate_and_scales_by_its_inverse() {
        let n = 40_000;
        let (y, _) = run(Noise::Dropout { rate: 0.25 }, &[n]);
        let x: Vec<f32> = (0..n).map(|k| (k % 97) as f32 * 0.1 - 4.0).collect();
        let mut kept = 0usize;
        for (&yv, &xv) in y.iter().zip(&x) {
            if yv != 0.0 {
                kept += 1;
                assert_eq!(yv, xv * (1.0 / 0.75));
            }
        }
        // Binomial(n, 0.75): the standard deviation of the kept fraction is ~0.002.
        let frac = kept as f64 / n as f64;
        assert!((frac - 0.75).abs() < 0.02, "kept fraction {frac}");
    }

    #[test]
    fn normal_draws_have_the_requested_moments() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut z = vec![0.0f32; 100_001];
        fill_normal(&mut rng, &mut z, 2.0, 0.5);
        let n = z.len() as f64;
        let mean = z.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = z
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        // Standard errors: 0.5 / sqrt(n) ~ 0.0016 for the mean, ~0.0011 for the std.
        assert!((mean - 2.0).abs() < 0.01, "mean {mean}");
        assert!((var.sqrt() - 0.5).abs() < 0.01, "std {}", var.sqrt());
    }

    #[test]
    fn spatial_dropout_shares_one_factor_per_sample_and_channel() {
        let shape = [2, 6, 5, 4];
        let (y, _) = run(Noise::SpatialDropout { rate: 0.5, rank: 4 }, &shape);
        let n: usize = shape.iter().product();
        let x = Tensor::from_shape_vec(
            IxDyn(&shape),
            (0..n).map(|k| (k % 97) as f32 * 0.1 - 4.0).collect(),
        )
        .unwrap();
        for b in 0..2 {
            for c in 0..4 {
                let kept = y[[b, 0, 0, c]] != 0.0 || x[[b, 0, 0, c]] == 0.0;
                for h in 0..6 {
                    for w in 0..5 {
                        let want = if kept { x[[b, h, w, c]] * 2.0 } else { 0.0 };
                        assert_eq!(y[[b, h, w, c]], want, "({b},{h},{w},{c})");
                    }
                }
            }
        }
    }

    #[test]
    fn rate_bounds() {
        assert!(check_rate(0.0, true).is_ok() && check_rate(1.0, true).is_ok());
        assert!(check_rate(1.0, false).is_err() && check_rate(0.999, false).is_ok());
        for bad in [-0.1, 1.5, f32::NAN] {
            assert!(check_rate(bad, true).is_err(), "{bad}");
        }
    }
}
