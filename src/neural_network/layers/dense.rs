//! The fully connected layer.

use super::activation::{Activation, ActivationCache};
use super::layer_weight::{DenseLayerWeight, LayerWeight};
use super::TrainingParameters;
use crate::error::{Error, IoError, Result};
use crate::math::matmul::{self, dot_bias_act, dot_par, nested_parallelism};
use crate::neural_network::layers::initializers::glorot_uniform;
use crate::neural_network::traits::{ApplyWeights, Layer, ParamGrad};
use crate::neural_network::{NnError, Tensor, TensorView};
use ndarray::{Array2, ArrayView2, Axis, CowArray, Ix2, IxDyn};
use std::borrow::Cow;

/// `activation(x · W + b)` for `x` of shape `[batch, input_dim]`; with
/// [`Dense::applied_to_last_axis`] also `[batch, ..., input_dim]` as Keras applies it: the
/// kernel acts on the last axis, every leading position being one row of the same product
/// (so the result is the 2-D layer's on the flattened rows). RustyML 0.15's layer refuses
/// inputs of other ranks, so that stays the default.
///
/// The kernel `W` (`[input_dim, units]`) starts Glorot-uniform, the bias (`[1, units]`) at zero,
/// as in Keras. The product runs on gemmkit with the bias (and a ReLU / LeakyReLU activation)
/// fused into its epilogue; gemmkit's results do not depend on its worker count, so forward
/// and backward passes are bitwise reproducible at any thread count.
#[derive(Debug)]
pub struct Dense {
    input_dim: usize,
    units: usize,
    activation: Activation,
    weights: Array2<f32>,
    bias: Array2<f32>,
    /// Keras's `use_bias`: without it the bias stays zero, untrained and unlisted.
    use_bias: bool,
    /// The last forward's input as `[rows, input_dim]`, and what its activation's backward
    /// pass reads (`[rows, units]`).
    input_cache: Option<Array2<f32>>,
    activation_cache: Option<ActivationCache>,
    /// The last forward's input shape without its last axis (`[batch]` for 2-D input).
    leading_shape: Vec<usize>,
    /// Whether inputs of rank > 2 are taken (Keras's rule) or refused (RustyML 0.15's).
    any_rank: bool,
    grad_weights: Option<Array2<f32>>,
    grad_bias: Option<Array2<f32>>,
}

impl Dense {
    /// Stores dW = xᵀ dZ and db = the column sums of dZ (row order, serial); returns dZ.
    fn parameter_gradients(&mut self, grad_output: &Tensor) -> Result<Array2<f32>> {
        let (Some(x), Some(cache)) = (&self.input_cache, &self.activation_cache) else {
            return Err(Error::forward_pass_not_run("Dense"));
        };
        let expected = [&self.leading_shape[..], &[self.units]].concat();
        if grad_output.shape() != expected.as_slice() {
            return Err(Error::shape_mismatch(expected, grad_output.shape()));
        }
        let grad_rows = match grad_output.ndim() {
            2 => Cow::Borrowed(grad_output),
            _ => Cow::Owned(
                to_rows(grad_output.view(), self.units)
                    .into_owned()
                    .into_dyn(),
            ),
        };
        let dz = self.activation.backward_cached(cache, &grad_rows)?;
        let dz = dz
            .into_dimensionality::<Ix2>()
            .expect("the cached activation is 2D");
        self.grad_weights = Some(dot_par(x.t(), dz.view(), nested_parallelism())?);
        self.grad_bias = self
            .use_bias
            .then(|| dz.sum_axis(Axis(0)).insert_axis(Axis(0)));
        Ok(dz)
    }

    /// A layer mapping `input_dim` features to `units`, weights drawn from the global seed
    /// stream (or entropy); `with_random_state` fixes them.
    pub fn new(input_dim: usize, units: usize, activation: impl Into<Activation>) -> Result<Self> {
        if input_dim == 0 {
            return Err(Error::invalid_parameter("input_dim", "must be > 0"));
        }
        if units == 0 {
            return Err(Error::invalid_parameter("units", "must be > 0"));
        }
        let activation = activation.into();
        activation.validate()?;
        crate::neural_network::layers::size_guard::check_f32_alloc(
            "Dense",
            "kernel",
            &[input_dim, units],
        )?;
        Ok(Self {
            input_dim,
            units,
            activation,
            weights: glorot_uniform(Ix2(input_dim, units), &mut crate::random::rng_from(None)),
            bias: Array2::zeros((1, units)),
            use_bias: true,
            input_cache: None,
            activation_cache: None,
            leading_shape: Vec::new(),
            any_rank: false,
            grad_weights: None,
            grad_bias: None,
        })
    }

    /// Re-draws the kernel from `random_state`: equal seeds give equal layers.
    pub fn with_random_state(mut self, random_state: u64) -> Self {
        self.weights = glorot_uniform(
            Ix2(self.input_dim, self.units),
            &mut crate::random::rng_from(Some(random_state)),
        );
        self
    }

    /// Keras's `use_bias=False`: no bias term (it stays zero and is neither trained nor
    /// counted).
    /// Takes inputs `[batch, ..., input_dim]` and applies the kernel to the last axis, as
    /// Keras's `Dense` does.
    pub fn applied_to_last_axis(mut self) -> Self {
        self.any_rank = true;
        self
    }

    pub fn with_use_bias(mut self, use_bias: bool) -> Self {
        self.use_bias = use_bias;
        if !use_bias {
            self.bias.fill(0.0);
        }
        self
    }

    /// Replaces the kernel (`[input_dim, units]`) and bias (`[1, units]`).
    pub fn set_weights(&mut self, weights: Array2<f32>, bias: Array2<f32>) -> Result<()> {
        NnError::check_weight_shape("weights", &[self.input_dim, self.units], weights.shape())?;
        NnError::check_weight_shape("bias", &[1, self.units], bias.shape())?;
        self.weights = weights.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }

    /// The input as `[rows, input_dim]`: a 2-D input as it is, an N-D one with its leading
    /// axes flattened (copied only when it is not in standard layout).
    fn input_rows<'a>(&self, input: TensorView<'a>) -> Result<CowArray<'a, f32, Ix2>> {
        if input.ndim() < 2 || (input.ndim() > 2 && !self.any_rank) {
            let axes = if self.any_rank {
                "batch, ..., "
            } else {
                "batch, "
            };
            return Err(Error::invalid_input(format!(
                "Dense expects an input [{axes}{}], got shape {:?}",
                self.input_dim,
                input.shape()
            )));
        }
        let features = input.shape()[input.ndim() - 1];
        if features != self.input_dim {
            return Err(Error::dimension_mismatch(self.input_dim, features));
        }
        Ok(match input.ndim() {
            2 => CowArray::from(input.into_dimensionality::<Ix2>().expect("checked 2-D")),
            _ => to_rows(input, features),
        })
    }

    /// `compute` on `input`'s rows, shaped back to `input`'s leading axes.
    fn apply(&self, input: TensorView<'_>) -> Result<Tensor> {
        let leading = &input.shape()[..input.ndim().saturating_sub(1)].to_vec();
        let out = self.compute(self.input_rows(input)?.view())?;
        Ok(with_leading(out, leading, self.units))
    }

    fn compute(&self, x: ArrayView2<f32>) -> Result<Tensor> {
        let (mut z, fused) = self.product(x)?;
        if !fused {
            self.activation.forward_in_place(&mut z)?;
        }
        Ok(z)
    }

    /// `x · W + b`, with the activation applied in gemmkit's epilogue when it can be (ReLU,
    /// LeakyReLU: then the flag is true).
    fn product(&self, x: ArrayView2<f32>) -> Result<(Tensor, bool)> {
        let fused = match self.activation {
            Activation::ReLU => Some(matmul::Activation::Relu),
            Activation::LeakyReLU { negative_slope } => {
                Some(matmul::Activation::LeakyRelu(negative_slope))
            }
            _ => None,
        };
        let z = dot_bias_act(
            x,
            self.weights.view(),
            self.use_bias.then(|| self.bias.row(0)),
            fused,
            nested_parallelism(),
        )?;
        Ok((z.into_dyn(), fused.is_some()))
    }
}

/// `[..., last]` as `[rows, last]` (a view of standard-layout data, else a copy).
fn to_rows(a: TensorView<'_>, last: usize) -> CowArray<'_, f32, Ix2> {
    let rows = a.len() / last.max(1);
    if a.is_standard_layout() {
        CowArray::from(
            a.into_shape_with_order((rows, last))
                .expect("standard layout reshapes"),
        )
    } else {
        CowArray::from(
            a.as_standard_layout()
                .into_owned()
                .into_shape_with_order((rows, last))
                .expect("standard layout reshapes"),
        )
    }
}

/// `[rows, last]` back to `leading + [last]` (a 2-D result stays as it is).
fn with_leading(a: Tensor, leading: &[usize], last: usize) -> Tensor {
    if leading.len() <= 1 {
        return a;
    }
    let shape = [leading, &[last]].concat();
    a.into_shape_with_order(IxDyn(&shape))
        .expect("rows of a standard-layout product")
}

impl Layer for Dense {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.forward_owned(input.as_standard_layout().into_owned())
    }

    fn forward_owned(&mut self, input: Tensor) -> Result<Tensor> {
        let (z, fused) = self.product(self.input_rows(input.view())?.view())?;
        let (out, activation_cache) = self.activation.forward_training(z, fused)?;
        let leading = input.shape()[..input.ndim() - 1].to_vec();
        let x = match input.ndim() {
            2 => input
                .into_dimensionality::<Ix2>()
                .expect("checked by input_rows"),
            _ => {
                let rows = input.len() / self.input_dim;
                let input = if input.is_standard_layout() {
                    input
                } else {
                    input.as_standard_layout().into_owned()
                };
                input
                    .into_shape_with_order((rows, self.input_dim))
                    .expect("standard layout reshapes")
            }
        };
        self.input_cache = Some(x);
        self.activation_cache = Some(activation_cache);
        let out = with_leading(out, &leading, self.units);
        self.leading_shape = leading;
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.predict_view(input.view())
    }

    fn predict_view(&self, input: TensorView<'_>) -> Result<Tensor> {
        self.apply(input)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let dz = self.parameter_gradients(grad_output)?;
        // dX = dZ Wᵀ
        let dx = dot_par(dz.view(), self.weights.t(), nested_parallelism())?.into_dyn();
        Ok(with_leading(dx, &self.leading_shape, self.input_dim))
    }

    fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        self.parameter_gradients(grad_output).map(drop)
    }

    fn layer_type(&self) -> &str {
        "Dense"
    }

    fn output_shape(&self) -> String {
        format!("(None, {})", self.units)
    }

    fn param_count(&self) -> TrainingParameters {
        let bias = if self.use_bias { self.units } else { 0 };
        TrainingParameters::Trainable(self.input_dim * self.units + bias)
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let Some(gw) = &self.grad_weights else {
            return Vec::new();
        };
        let mut params = vec![ParamGrad::weight(
            self.weights
                .as_slice_mut()
                .expect("weights are standard layout"),
            gw.as_slice().expect("gradients are standard layout"),
        )];
        // without a bias no bias gradient is ever stored
        if let Some(gb) = &self.grad_bias {
            params.push(ParamGrad::no_decay(
                self.bias.as_slice_mut().expect("bias is standard layout"),
                gb.as_slice().expect("gradients are standard layout"),
            ));
        }
        params
    }

    fn uses_bias(&self) -> bool {
        self.use_bias
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::Dense(DenseLayerWeight {
            weight: Cow::Borrowed(&self.weights),
            bias: Cow::Borrowed(&self.bias),
        })
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match weights {
            LayerWeight::Dense(w) => w.apply_to_layer(self),
            _ => Err(IoError::ModelStructureMismatch(
                "expected Dense weights for a Dense layer".to_string(),
            )
            .into()),
        }
    }
}

impl ApplyWeights<Dense> for DenseLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut Dense) -> Result<()> {
        layer
            .set_weights(self.weight.as_ref().clone(), self.bias.as_ref().clone())
            .map_err(|e| IoError::ModelStructureMismatch(format!("Dense: {e}")).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural_network::layers::gradient_check::{check_central_differences, weighted_sum};
    use crate::neural_network::test_support::on_threads;

    fn layer(act: Activation) -> Dense {
        let mut d = Dense::new(3, 2, act).unwrap();
        let w = Array2::from_shape_vec((3, 2), vec![0.5, -1.0, 0.25, 0.75, -0.5, 1.5]).unwrap();
        let b = Array2::from_shape_vec((1, 2), vec![0.1, -0.2]).unwrap();
        d.set_weights(w, b).unwrap();
        d
    }

    #[test]
    fn without_bias_the_layer_lists_trains_and_counts_only_its_kernel() {
        let mut d = layer(Activation::Linear).with_use_bias(false);
        let x = input();
        let out = d.forward(&x).unwrap();
        let want = x
            .view()
            .into_dimensionality::<Ix2>()
            .unwrap()
            .dot(&d.weights);
        assert!(out
            .iter()
            .zip(want.iter())
            .all(|(a, b)| (a - b).abs() <= 1e-6));
        d.backward(&out).unwrap();
        let params = d.parameters();
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].value.len(), 6);
        drop(params);
        assert!(!d.uses_bias());
        assert!(matches!(d.param_count(), TrainingParameters::Trainable(6)));
    }

    fn input() -> Tensor {
        Tensor::from_shape_vec(vec![4, 3], (0..12).map(|v| 0.3 * v as f32 - 1.4).collect()).unwrap()
    }

    /// L = Σ c ⊙ out with fixed weights c, so dL/dout = c; gradients against central
    /// differences computed in f64 from the layer's own forward pass.
    fn check(act: Activation) {
        let mut d = layer(act);
        let x = input();
        let out = d.forward(&x).unwrap();
        let c = Tensor::from_shape_fn(out.raw_dim(), |i| 0.3 + 0.2 * (i[0] + 3 * i[1]) as f32);
        let mut twin = layer(act);
        twin.forward(&x).unwrap();
        twin.backward_params_only(&c).unwrap();
        let dx = d.backward(&c).unwrap();
        let loss = |d: &Dense, x: &Tensor| weighted_sum(&d.predict(x).unwrap(), &c);
        let name = format!("{act:?}");
        let tol = |_: f64| 2e-3;
        let grads = check_central_differences(
            &mut d,
            &x,
            &dx,
            &name,
            (1e-2, tol),
            loss,
            <Dense as Layer>::parameters,
        );
        // the first layer's pass (no input gradient) stores the same parameter gradients
        let twin_grads: Vec<Vec<f32>> = twin.parameters().iter().map(|p| p.grad.to_vec()).collect();
        assert_eq!(twin_grads, grads);
    }

    #[test]
    fn gradients_match_central_differences() {
        for act in [
            Activation::Linear,
            Activation::Tanh,
            Activation::Sigmoid,
            Activation::Softmax,
            Activation::LeakyReLU {
                negative_slope: 0.1,
            },
        ] {
            check(act);
        }
    }

    #[test]
    fn fused_relu_equals_product_then_relu() {
        let x = input();
        let relu = layer(Activation::ReLU).predict(&x).unwrap();
        let linear = layer(Activation::Linear).predict(&x).unwrap();
        for (r, l) in relu.iter().zip(linear.iter()) {
            let want = if *l < 0.0 { 0.0 } else { *l };
            assert_eq!(r.to_bits(), want.to_bits());
        }
    }

    #[test]
    fn fused_activations_keep_nan_like_the_activation_layers() {
        use crate::neural_network::layers::activation::{LeakyReLU, ReLU};
        let mut x = input();
        x[[0, 1]] = f32::NAN;
        let linear = layer(Activation::Linear).predict(&x).unwrap();
        let relu_layer: Box<dyn Layer> = Box::new(ReLU::new());
        let leaky_layer: Box<dyn Layer> = Box::new(LeakyReLU::new(0.1).unwrap());
        for (act, unfused) in [
            (Activation::ReLU, relu_layer.predict(&linear).unwrap()),
            (
                Activation::LeakyReLU {
                    negative_slope: 0.1,
                },
                leaky_layer.predict(&linear).unwrap(),
            ),
        ] {
            let fused = layer(act).predict(&x).unwrap();
            assert!(fused
                .index_axis(ndarray::Axis(0), 0)
                .iter()
                .all(|v| v.is_nan()));
            let f: Vec<u32> = fused.iter().map(|v| v.to_bits()).collect();
            let u: Vec<u32> = unfused.iter().map(|v| v.to_bits()).collect();
            assert_eq!(f, u, "{act:?}");
        }
    }

    #[test]
    fn glorot_limit_and_zero_bias() {
        let d = Dense::new(20, 30, Activation::Linear)
            .unwrap()
            .with_random_state(3);
        let limit = (6.0f32 / 50.0).sqrt();
        assert!(d.weights.iter().all(|w| w.abs() <= limit));
        assert!(d.weights.iter().any(|w| w.abs() > limit / 2.0));
        assert!(d.bias.iter().all(|&b| b == 0.0));
    }

    #[test]
    fn same_seed_same_weights_at_one_and_two_threads() {
        let build = |threads: usize| {
            on_threads(threads, || {
                let mut d = Dense::new(64, 48, Activation::Tanh)
                    .unwrap()
                    .with_random_state(9);
                let x = Tensor::from_shape_fn(vec![32, 64], |i| ((i[0] * 64 + i[1]) as f32).sin());
                let out = d.forward(&x).unwrap();
                let dx = d.backward(&Tensor::ones(out.raw_dim())).unwrap();
                (d.weights.clone(), out, dx, d.grad_weights.clone().unwrap())
            })
        };
        let (a, b) = (build(1), build(2));
        assert_eq!(a.0, b.0);
        let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.1), bits(&b.1));
        assert_eq!(bits(&a.2), bits(&b.2));
        assert_eq!(a.3, b.3);
    }

    /// On `[batch, steps, features]` input the layer is the 2-D layer on the flattened rows
    /// (Keras's definition): outputs, input gradients and parameter gradients bit for bit,
    /// each shaped back to the leading axes; a non-standard-layout input gives the same.
    #[test]
    fn n_d_input_is_the_same_product_on_flattened_rows() {
        for act in [Activation::Linear, Activation::Tanh, Activation::Softmax] {
            let x = Tensor::from_shape_fn(vec![2, 4, 3], |i| {
                ((i[0] * 12 + i[1] * 3 + i[2]) as f32 * 0.37).sin()
            });
            let g = Tensor::from_shape_fn(vec![2, 4, 2], |i| {
                ((i[0] * 8 + i[1] * 2 + i[2]) as f32 * 0.53).cos()
            });
            let flat = |t: &Tensor, last: usize| {
                t.clone()
                    .into_shape_with_order(IxDyn(&[t.len() / last, last]))
                    .unwrap()
            };
            let (mut nd, mut rows) = (layer(act).applied_to_last_axis(), layer(act));
            let out = nd.forward(&x).unwrap();
            let out_rows = rows.forward(&flat(&x, 3)).unwrap();
            assert_eq!(out.shape(), &[2, 4, 2]);
            assert_eq!(flat(&out, 2), out_rows);
            let dx = nd.backward(&g).unwrap();
            let dx_rows = rows.backward(&flat(&g, 2)).unwrap();
            assert_eq!(dx.shape(), &[2, 4, 3]);
            assert_eq!(flat(&dx, 3), dx_rows);
            let grads = |d: &mut Dense| -> Vec<Vec<f32>> {
                d.parameters().iter().map(|p| p.grad.to_vec()).collect()
            };
            assert_eq!(grads(&mut nd), grads(&mut rows));
            // a transposed (non-standard) view of the same values predicts the same
            let swapped = x
                .view()
                .permuted_axes(vec![1, 0, 2])
                .as_standard_layout()
                .into_owned();
            let back = swapped.view().permuted_axes(vec![1, 0, 2]);
            assert!(!back.is_standard_layout());
            assert_eq!(back, x.view());
            assert_eq!(nd.predict_view(back).unwrap(), out);
        }
        // RustyML 0.15's layer refuses them unless asked
        assert!(layer(Activation::Linear)
            .predict(&Tensor::zeros(vec![2, 4, 3]))
            .is_err());
        assert!(layer(Activation::Linear)
            .applied_to_last_axis()
            .predict(&Tensor::zeros(vec![2, 4, 5]))
            .is_err());
        assert!(layer(Activation::Linear)
            .predict(&Tensor::zeros(vec![3]))
            .is_err());
    }
}
