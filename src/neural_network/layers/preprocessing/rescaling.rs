//! The `Rescaling` layer: `x * scale + offset` on every element, as Keras's preprocessing
//! layer computes it in float32 (no weights; the gradient is the upstream one times `scale`).

use crate::error::{Error, Result};
use crate::neural_network::layers::activation::{map_f32, CHEAP_MAP_F32};
use crate::neural_network::layers::layer_util::{
    no_parameters, require_batched, seen_shape, shape_kept_grad, to_c_order,
};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;

/// `y = x * scale + offset` elementwise (one scalar scale and offset).
#[derive(Debug, Clone)]
pub struct Rescaling {
    scale: f32,
    offset: f32,
    /// The output shape of the last training pass (checked against the upstream gradient).
    shape: Option<Vec<usize>>,
}

impl Rescaling {
    /// `scale` and `offset` must be finite (else `InvalidParameter` naming them).
    pub fn new(scale: f32, offset: f32) -> Result<Self> {
        for (name, v) in [("scale", scale), ("offset", offset)] {
            if !v.is_finite() {
                return Err(Error::invalid_parameter(
                    name,
                    format!("Rescaling: {name} must be a finite number, got {v}"),
                ));
            }
        }
        Ok(Self {
            scale,
            offset,
            shape: None,
        })
    }

    pub fn scale(&self) -> f32 {
        self.scale
    }

    pub fn offset(&self) -> f32 {
        self.offset
    }

    fn apply(&self, input: &Tensor) -> Result<Tensor> {
        require_batched(input)?;
        let mut out = to_c_order(input);
        let (scale, offset) = (self.scale, self.offset);
        // Keras's order of operations: one rounding after the product, one after the sum.
        map_f32(
            &CHEAP_MAP_F32,
            out.as_slice_mut().expect("C order"),
            move |v| v * scale + offset,
        );
        Ok(out)
    }
}

impl Layer for Rescaling {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.apply(input)?;
        self.shape = Some(out.shape().to_vec());
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.apply(input)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let mut grad = shape_kept_grad(&self.shape, "Rescaling", grad_output)?;
        let scale = self.scale;
        map_f32(
            &CHEAP_MAP_F32,
            grad.as_slice_mut().expect("C order"),
            move |g| g * scale,
        );
        Ok(grad)
    }

    fn layer_type(&self) -> &str {
        "Rescaling"
    }

    fn output_shape(&self) -> String {
        seen_shape(self.shape.as_deref())
    }

    no_parameters!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::neural_network::layers::gradient_check::numeric_gradient;
    use ndarray::{ArrayD, IxDyn};

    fn wave(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (i as f32 * 0.61).sin() * 40.0 + 3.0)
            .collect()
    }

    #[test]
    fn forward_is_x_times_scale_plus_offset_in_f32() {
        let x = ArrayD::from_shape_vec(IxDyn(&[3, 2, 4]), wave(24)).unwrap();
        let scale = (1.0f64 / 127.5) as f32;
        let layer = Rescaling::new(scale, -1.0).unwrap();
        let y = layer.predict(&x).unwrap();
        for (a, b) in x.iter().zip(y.iter()) {
            assert_eq!(*b, *a * scale + -1.0f32);
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let (scale, offset) = (-2.5f32, 0.75f32);
        let x = ArrayD::from_shape_vec(IxDyn(&[2, 5]), wave(10)).unwrap();
        let w = ArrayD::from_shape_vec(IxDyn(&[2, 5]), wave(10).iter().map(|v| v / 7.0).collect())
            .unwrap();
        let mut layer = Rescaling::new(scale, offset).unwrap();
        layer.forward(&x).unwrap();
        let dx = layer.backward(&w).unwrap();
        // L = sum(w * (x * scale + offset)) in f64, central differences with step h
        let loss = |xs: &[f64]| -> f64 {
            xs.iter()
                .zip(w.iter())
                .map(|(&x, &w)| w as f64 * (x * scale as f64 + offset as f64))
                .sum()
        };
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let numeric = numeric_gradient(loss, &x64, 1e-4);
        for (i, &num) in numeric.iter().enumerate() {
            let got = dx.as_slice().unwrap()[i] as f64;
            assert!(
                (got - num).abs() <= 1e-6 * (1.0 + num.abs()),
                "{i}: {got} vs {num}"
            );
        }
    }

    #[test]
    fn serial_and_parallel_maps_agree_bitwise() {
        let x = ArrayD::from_shape_vec(IxDyn(&[7, 5000]), wave(35_000)).unwrap();
        let mut layer = Rescaling::new(0.3, 1.25).unwrap();
        let (a, b) = serial_and_parallel(&CHEAP_MAP_F32, || {
            let y = layer.predict(&x).unwrap();
            let mut l = layer.clone();
            l.forward(&x).unwrap();
            (y, l.backward(&x).unwrap())
        });
        assert_eq!(a, b);
        layer.forward(&x).unwrap();
    }

    #[test]
    fn refuses_non_finite_arguments_and_backward_before_forward() {
        assert!(Rescaling::new(f32::NAN, 0.0)
            .unwrap_err()
            .to_string()
            .contains("scale"));
        assert!(Rescaling::new(1.0, f32::INFINITY)
            .unwrap_err()
            .to_string()
            .contains("offset"));
        let mut layer = Rescaling::new(2.0, 0.0).unwrap();
        let g = ArrayD::zeros(IxDyn(&[1, 2]));
        assert!(layer.backward(&g).is_err());
        layer.forward(&ArrayD::zeros(IxDyn(&[1, 3]))).unwrap();
        assert!(layer.backward(&g).is_err());
    }
}
