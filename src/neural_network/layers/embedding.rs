//! The `Embedding` layer: maps integer indices (stored as f32) to rows of a trained table.

use super::activation::{CHEAP_MAP_F32, MAP_TASK};
use super::layer_util::{
    batch_free_shape, forward_cache, require_batched, require_shape, to_c_order,
};
use super::layer_weight::{EmbeddingLayerWeight, LayerWeight};
use super::TrainingParameters;
use crate::error::{Error, IoError, Result};
use crate::neural_network::traits::{ApplyWeights, Layer, ParamGrad};
use crate::neural_network::{NnError, Tensor};
use ndarray::{Array2, IxDyn};
use rand::Rng;
use rayon::prelude::*;
use std::borrow::Cow;

/// Half-width of Keras's default `uniform` initializer for embeddings.
const INIT_LIMIT: f32 = 0.05;

/// Output `[..input shape, output_dim]`: every input element, truncated toward zero (as
/// Keras's integer cast does), selects one row of the `[input_dim, output_dim]` table.
#[derive(Debug)]
pub struct Embedding {
    /// `[input_dim, output_dim]`, C order.
    embeddings: Array2<f32>,
    /// Reused between steps and refilled by every backward pass.
    grad: Option<Array2<f32>>,
    /// Row indices and input shape of the last training pass.
    cache: Option<(Vec<usize>, Vec<usize>)>,
    /// Keras's `mask_zero`: index 0 is padding, masked for the layers after this one.
    mask_zero: bool,
}

impl Embedding {
    /// `input_dim` (vocabulary size) and `output_dim` (row width) must be >= 1 (else
    /// `InvalidParameter`). The table starts uniform in [-0.05, 0.05], drawn from the global
    /// seed stream when one is set.
    pub fn new(input_dim: usize, output_dim: usize) -> Result<Self> {
        for (name, value) in [("input_dim", input_dim), ("output_dim", output_dim)] {
            if value == 0 {
                return Err(Error::invalid_parameter(name, "must be >= 1"));
            }
        }
        crate::neural_network::layers::size_guard::check_f32_alloc(
            "Embedding",
            "embedding table",
            &[input_dim, output_dim],
        )?;
        Ok(Self {
            embeddings: Self::initial_table(input_dim, output_dim, None),
            grad: None,
            cache: None,
            mask_zero: false,
        })
    }

    /// Keras's `mask_zero`: the input value 0 marks padding; the layer's output then carries
    /// the mask `input != 0` to the layers after it (the recurrent layers skip those steps).
    /// As in Keras, index 0 keeps its row of the table, so `input_dim` counts it.
    pub fn with_mask_zero(mut self, mask_zero: bool) -> Self {
        self.mask_zero = mask_zero;
        self
    }

    pub fn mask_zero(&self) -> bool {
        self.mask_zero
    }

    /// Redraws the starting table from `random_state`.
    pub fn with_random_state(mut self, random_state: u64) -> Self {
        let (rows, cols) = self.embeddings.dim();
        self.embeddings = Self::initial_table(rows, cols, Some(random_state));
        self.grad = None;
        self
    }

    fn initial_table(rows: usize, cols: usize, random_state: Option<u64>) -> Array2<f32> {
        let mut rng = crate::random::rng_from(random_state);
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-INIT_LIMIT..=INIT_LIMIT))
    }

    /// Replaces the table; its shape must stay `[input_dim, output_dim]` (else
    /// `NnError::WeightShape { name: "embeddings", .. }`).
    pub fn set_weights(&mut self, embeddings: Array2<f32>) -> Result<()> {
        if embeddings.dim() != self.embeddings.dim() {
            return Err(NnError::WeightShape {
                name: "embeddings".to_string(),
                expected: self.embeddings.shape().to_vec(),
                found: embeddings.shape().to_vec(),
            }
            .into());
        }
        // `parameters()` hands the table out as one slice, so it is kept in C order.
        self.embeddings = embeddings.as_standard_layout().into_owned();
        Ok(())
    }

    /// The row each input element selects, in the input's logical (C) order.
    fn indices(&self, input: &Tensor) -> Result<Vec<usize>> {
        require_batched(input)?;
        let rows = self.embeddings.nrows();
        input
            .iter()
            .map(|&v| {
                let t = v.trunc();
                if t.is_finite() && t >= 0.0 && (t as usize) < rows {
                    Ok(t as usize)
                } else {
                    Err(Error::invalid_input(format!(
                        "embedding index {v} is outside the table (0..{rows})"
                    )))
                }
            })
            .collect()
    }

    /// The output (`input`'s shape plus the row width) must be allocatable.
    fn check_output(&self, input: &Tensor) -> Result<()> {
        let mut shape = input.shape().to_vec();
        shape.push(self.embeddings.ncols());
        crate::neural_network::layers::size_guard::check_f32_alloc("Embedding", "output", &shape)
            .map(drop)
    }

    /// Gathers one table row per index, rows in parallel behind [`CHEAP_MAP_F32`] (a copy, so
    /// the path never changes a bit).
    fn gather(&self, indices: &[usize], input_shape: &[usize]) -> Tensor {
        let width = self.embeddings.ncols();
        let table = self.embeddings.as_slice().expect("table kept in C order");
        let mut out = vec![0.0f32; indices.len() * width];
        let copy_row = |(dst, &i): (&mut [f32], &usize)| {
            dst.copy_from_slice(&table[i * width..(i + 1) * width]);
        };
        if CHEAP_MAP_F32.allows_parallel(out.len()) {
            out.par_chunks_mut(width)
                .zip(indices.par_iter())
                .with_min_len((MAP_TASK / width).max(1))
                .for_each(copy_row);
        } else {
            out.chunks_mut(width).zip(indices).for_each(copy_row);
        }
        let mut shape = input_shape.to_vec();
        shape.push(width);
        Tensor::from_shape_vec(IxDyn(&shape), out).expect("one row per index")
    }
}

impl Layer for Embedding {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.check_output(input)?;
        let indices = self.indices(input)?;
        let out = self.gather(&indices, input.shape());
        self.cache = Some((indices, input.shape().to_vec()));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.check_output(input)?;
        let indices = self.indices(input)?;
        Ok(self.gather(&indices, input.shape()))
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (indices, input_shape) = forward_cache(&self.cache, "Embedding")?;
        let width = self.embeddings.ncols();
        let mut out_shape = input_shape.clone();
        out_shape.push(width);
        require_shape(&out_shape, grad_output.shape())?;

        // Scatter-add in index order: a row selected several times sums its gradients in a
        // fixed order, so the result never depends on the thread count.
        let g = to_c_order(grad_output);
        let g = g.as_slice().expect("C order");
        let grad = self
            .grad
            .get_or_insert_with(|| Array2::zeros(self.embeddings.dim()));
        grad.fill(0.0);
        let acc = grad.as_slice_mut().expect("gradient kept in C order");
        for (k, &i) in indices.iter().enumerate() {
            acc[i * width..(i + 1) * width]
                .iter_mut()
                .zip(&g[k * width..(k + 1) * width])
                .for_each(|(a, &v)| *a += v);
        }
        // An index carries no derivative.
        Ok(Tensor::zeros(IxDyn(input_shape)))
    }

    fn compute_mask(
        &self,
        input: crate::neural_network::TensorView<'_>,
        _mask: Option<&crate::neural_network::traits::Mask>,
    ) -> Result<Option<crate::neural_network::traits::Mask>> {
        // Keras compares the raw input with zero (before its integer cast).
        Ok(self.mask_zero.then(|| input.mapv(|v| v != 0.0)))
    }

    fn layer_type(&self) -> &str {
        "Embedding"
    }

    fn output_shape(&self) -> String {
        match &self.cache {
            Some((_, input_shape)) => {
                let mut shape = input_shape.clone();
                shape.push(self.embeddings.ncols());
                batch_free_shape(&shape)
            }
            None => "Unknown".to_string(),
        }
    }

    fn param_count(&self) -> TrainingParameters {
        TrainingParameters::Trainable(self.embeddings.len())
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        match &self.grad {
            Some(grad) => vec![ParamGrad::weight(
                self.embeddings
                    .as_slice_mut()
                    .expect("table kept in C order"),
                grad.as_slice().expect("gradient kept in C order"),
            )],
            None => Vec::new(),
        }
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::Embedding(EmbeddingLayerWeight {
            embeddings: Cow::Borrowed(&self.embeddings),
        })
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match weights {
            LayerWeight::Embedding(w) => w.apply_to_layer(self),
            _ => Err(IoError::ModelStructureMismatch(
                "layer `Embedding` expects Embedding weights".to_string(),
            )
            .into()),
        }
    }
}

impl ApplyWeights<Embedding> for EmbeddingLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut Embedding) -> Result<()> {
        layer.set_weights(self.embeddings.clone().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    #[test]
    fn gather_and_scatter_follow_the_indices() {
        let mut layer = Embedding::new(3, 2).unwrap();
        layer
            .set_weights(
                Array2::from_shape_vec((3, 2), vec![0.0, 1.0, 10.0, 11.0, 20.0, 21.0]).unwrap(),
            )
            .unwrap();
        // 2.9 truncates to 2, -0.5 to 0.
        let x = Tensor::from_shape_vec(IxDyn(&[3]), vec![2.9, -0.5, 2.0]).unwrap();
        let y = layer.forward(&x).unwrap();
        assert_eq!(y.as_slice().unwrap(), &[20.0, 21.0, 0.0, 1.0, 20.0, 21.0]);
        let g = Tensor::from_shape_vec(IxDyn(&[3, 2]), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        layer.backward(&g).unwrap();
        let grad = layer.grad.as_ref().unwrap();
        assert_eq!(grad.as_slice().unwrap(), &[3.0, 4.0, 0.0, 0.0, 6.0, 8.0]);
    }

    #[test]
    fn cheap_map_gate_never_changes_a_bit() {
        let steps = 3 * MAP_TASK / 16 + 7;
        let x = Tensor::from_shape_vec(
            IxDyn(&[2, steps]),
            (0..2 * steps)
                .map(|k| ((k * 7919 + 13) % 50) as f32)
                .collect(),
        )
        .unwrap();
        let layer = Embedding::new(50, 16).unwrap().with_random_state(3);
        let (s, p) = serial_and_parallel(&CHEAP_MAP_F32, || layer.predict(&x).unwrap());
        assert_eq!(s.mapv(f32::to_bits), p.mapv(f32::to_bits));
    }
}
