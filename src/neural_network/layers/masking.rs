//! Keras's `Masking` layer: marks the steps whose features all equal `mask_value` as padding.

use super::layer_util::{forward_cache, no_parameters, require_shape, seen_shape};
use crate::error::{Error, Result};
use crate::neural_network::traits::{Layer, Mask};
use crate::neural_network::{Tensor, TensorView};
use ndarray::{ArrayD, Axis};

/// Over `[batch, ..., features]`: a position is kept when any of its features differs from
/// `mask_value` (`mask = any(x != mask_value, last axis)`, Keras's mask for the layers after
/// it); the output is the input there and zero elsewhere, and the gradient follows the same
/// mask.
#[derive(Debug)]
pub struct Masking {
    mask_value: f32,
    /// The last training pass's kept positions and input shape.
    cache: Option<(Mask, Vec<usize>)>,
}

impl Masking {
    /// Any finite or infinite `mask_value` (NaN is refused: nothing would ever equal it).
    pub fn new(mask_value: f32) -> Result<Self> {
        if mask_value.is_nan() {
            return Err(Error::invalid_parameter(
                "mask_value",
                "Masking: mask_value must be a number (NaN equals nothing, so nothing would be masked)",
            ));
        }
        Ok(Self {
            mask_value,
            cache: None,
        })
    }

    pub fn mask_value(&self) -> f32 {
        self.mask_value
    }

    /// `any(x != mask_value)` over the last axis, for an input of rank >= 2.
    fn keep(&self, input: TensorView<'_>) -> Result<Mask> {
        if input.ndim() < 2 {
            return Err(Error::invalid_input(format!(
                "Masking expects inputs of shape (batch, ..., features), got shape {:?}",
                input.shape()
            )));
        }
        let last = Axis(input.ndim() - 1);
        let v = self.mask_value;
        Ok(input.map_axis(last, |lane| lane.iter().any(|&x| x != v)))
    }

    /// `x` where `keep`, else zero (Keras's `where(mask, x, 0)`).
    fn apply(input: TensorView<'_>, keep: &Mask) -> Tensor {
        let mut out = ArrayD::zeros(input.raw_dim());
        let last = Axis(input.ndim() - 1);
        for ((mut o, x), &k) in out
            .lanes_mut(last)
            .into_iter()
            .zip(input.lanes(last))
            .zip(keep.iter())
        {
            if k {
                o.assign(&x);
            }
        }
        out
    }
}

impl Layer for Masking {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let keep = self.keep(input.view())?;
        let out = Self::apply(input.view(), &keep);
        self.cache = Some((keep, input.shape().to_vec()));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let keep = self.keep(input.view())?;
        Ok(Self::apply(input.view(), &keep))
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (keep, shape) = forward_cache(&self.cache, "Masking")?;
        require_shape(shape, grad_output.shape())?;
        Ok(Self::apply(grad_output.view(), keep))
    }

    fn compute_mask(&self, input: TensorView<'_>, _mask: Option<&Mask>) -> Result<Option<Mask>> {
        self.keep(input).map(Some)
    }

    fn layer_type(&self) -> &str {
        "Masking"
    }

    fn output_shape(&self) -> String {
        seen_shape(self.cache.as_ref().map(|(_, s)| s.as_slice()))
    }

    no_parameters!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    #[test]
    fn masks_steps_whose_features_all_equal_the_value() {
        let mut x = Array3::from_shape_fn((2, 3, 2), |(i, j, k)| (i + j + k) as f32 + 1.0);
        x[[0, 1, 0]] = 0.5;
        x[[0, 1, 1]] = 0.5; // step (0, 1): every feature is the mask value
        x[[1, 2, 0]] = 0.5; // step (1, 2): only one is
        let x = x.into_dyn();
        let mut layer = Masking::new(0.5).unwrap();
        let mask = layer.compute_mask(x.view(), None).unwrap().unwrap();
        assert_eq!(mask.shape(), &[2, 3]);
        let want = [true, false, true, true, true, true];
        assert_eq!(mask.iter().copied().collect::<Vec<_>>(), want);
        let out = layer.forward(&x).unwrap();
        for ((i, j, k), &v) in out
            .view()
            .into_dimensionality::<ndarray::Ix3>()
            .unwrap()
            .indexed_iter()
        {
            let expect = if (i, j) == (0, 1) { 0.0 } else { x[[i, j, k]] };
            assert_eq!(v, expect);
        }
        let g = Tensor::ones(x.raw_dim());
        let dx = layer.backward(&g).unwrap();
        assert_eq!(dx[[0, 1, 0]], 0.0);
        assert_eq!(dx[[1, 2, 0]], 1.0);
        assert_eq!(layer.predict(&x).unwrap(), out);
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(Masking::new(f32::NAN)
            .unwrap_err()
            .to_string()
            .contains("mask_value"));
        let layer = Masking::new(0.0).unwrap();
        assert!(layer.predict(&Tensor::zeros(vec![3])).is_err());
    }
}
