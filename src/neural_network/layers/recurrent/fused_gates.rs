//! Building blocks shared by the recurrent layers: the fused gate parameters (every gate's
//! kernel side by side in one matrix, so one product serves all gates), Keras's initialisers,
//! the batched input projection and small cache / shape helpers.

use crate::error::{Error, Result};
use crate::math::matmul::{dot_bias_act, nested_parallelism};
use crate::neural_network::layers::initializers::{glorot_uniform, orthogonal};
use crate::neural_network::traits::ParamGrad;
use crate::neural_network::NnError;
use ndarray::{Array2, Array3, ArrayView1, ArrayView2, ArrayView3, Ix2};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// The weights of all gates of a recurrent cell, fused along the columns: `kernel`
/// `[input_dim, gates * units]`, `recurrent_kernel` `[units, gates * units]`, `bias`
/// `[1, gates * units]` (Keras's GRU with `reset_after` keeps two bias rows, input and
/// recurrent). Column block `g` belongs to gate `g` in Keras's order.
#[derive(Debug, Clone)]
pub struct FusedGates {
    pub kernel: Array2<f32>,
    pub recurrent_kernel: Array2<f32>,
    pub bias: Array2<f32>,
    pub grad_kernel: Option<Array2<f32>>,
    pub grad_recurrent_kernel: Option<Array2<f32>>,
    pub grad_bias: Option<Array2<f32>>,
}

impl FusedGates {
    /// Keras's initialisation: Glorot-uniform kernel (fans `input_dim` and `gates * units`),
    /// orthogonal recurrent kernel, bias block `g` filled with `bias_init[g]` (one gate per
    /// entry, so `bias_init.len()` is the gate count).
    pub fn new(
        input_dim: usize,
        units: usize,
        bias_init: &[f32],
        rng: &mut StdRng,
    ) -> Result<Self> {
        validate_dimensions(input_dim, units)?;
        if bias_init.is_empty() {
            return Err(Error::invalid_parameter(
                "bias_init",
                "needs one entry per gate, got none",
            ));
        }
        use crate::neural_network::layers::size_guard::{
            check_alloc_bytes, check_f32_alloc, mul_size,
        };
        let width = mul_size("recurrent layer", "gates * units", bias_init.len(), units)?;
        check_f32_alloc("recurrent layer", "kernel", &[input_dim, width])?;
        // the orthogonal draw works in f64
        check_alloc_bytes("recurrent layer", "recurrent kernel", &[units, width], 8)?;
        let kernel = glorot_uniform(Ix2(input_dim, width), rng);
        let recurrent_kernel = orthogonal(units, width, rng);
        let bias = Array2::from_shape_fn((1, width), |(_, j)| bias_init[j / units]);
        Ok(Self {
            kernel,
            recurrent_kernel,
            bias,
            grad_kernel: None,
            grad_recurrent_kernel: None,
            grad_bias: None,
        })
    }

    /// Kernel, recurrent kernel and bias with their latest gradients (empty before the first
    /// backward pass).
    pub fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        match (
            &self.grad_kernel,
            &self.grad_recurrent_kernel,
            &self.grad_bias,
        ) {
            (Some(gk), Some(grk), Some(gb)) => vec![
                ParamGrad::weight(
                    self.kernel
                        .as_slice_mut()
                        .expect("kernel is standard layout"),
                    gk.as_slice().expect("gradients are standard layout"),
                ),
                ParamGrad::weight(
                    self.recurrent_kernel
                        .as_slice_mut()
                        .expect("recurrent kernel is standard layout"),
                    grk.as_slice().expect("gradients are standard layout"),
                ),
                ParamGrad::no_decay(
                    self.bias.as_slice_mut().expect("bias is standard layout"),
                    gb.as_slice().expect("gradients are standard layout"),
                ),
            ],
            _ => Vec::new(),
        }
    }

    /// Keeps the gradients of the last backward pass (standard layout, so `parameters` can
    /// hand them out as flat slices).
    pub fn store_gradients(
        &mut self,
        grad_kernel: Array2<f32>,
        grad_recurrent_kernel: Array2<f32>,
        grad_bias: Array2<f32>,
    ) {
        let std = |a: Array2<f32>| {
            if a.is_standard_layout() {
                a
            } else {
                a.as_standard_layout().into_owned()
            }
        };
        self.grad_kernel = Some(std(grad_kernel));
        self.grad_recurrent_kernel = Some(std(grad_recurrent_kernel));
        self.grad_bias = Some(std(grad_bias));
    }

    /// Replaces the three arrays after checking each against the current shape.
    pub(crate) fn replace(
        &mut self,
        kernel: Array2<f32>,
        recurrent_kernel: Array2<f32>,
        bias: Array2<f32>,
    ) -> Result<()> {
        NnError::check_weight_shape("kernel", self.kernel.shape(), kernel.shape())?;
        NnError::check_weight_shape(
            "recurrent_kernel",
            self.recurrent_kernel.shape(),
            recurrent_kernel.shape(),
        )?;
        NnError::check_weight_shape("bias", self.bias.shape(), bias.shape())?;
        self.kernel = kernel.as_standard_layout().into_owned();
        self.recurrent_kernel = recurrent_kernel.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }
}

/// `units == 0` or `input_dim == 0` is an `InvalidParameter`.
pub(crate) fn validate_dimensions(input_dim: usize, units: usize) -> Result<()> {
    if input_dim == 0 {
        return Err(Error::invalid_parameter("input_dim", "must be > 0"));
    }
    if units == 0 {
        return Err(Error::invalid_parameter("units", "must be > 0"));
    }
    Ok(())
}

/// The layer's random stream: `random_state`, else the global seed, else entropy.
pub(crate) fn layer_rng(random_state: Option<u64>) -> StdRng {
    StdRng::seed_from_u64(crate::random::resolve_seed(random_state))
}

/// `x · kernel` for every `(a, b)` position of a 3-D `x` `[a, b, input_dim]`, as one product
/// over the `a * b` rows: `[a, b, kernel columns]`.
pub fn project_input(kernel: &Array2<f32>, x: &ArrayView3<f32>) -> Array3<f32> {
    let (a, b, _) = x.dim();
    let rows = project_rows(kernel.view(), x, None);
    reshape_2d_to_3d(rows, (a, b, kernel.ncols()))
}

/// `x · kernel (+ bias)` over the rows of `x` `[a, b, d]` flattened to `[a * b, d]`.
pub(crate) fn project_rows(
    kernel: ArrayView2<f32>,
    x: &ArrayView3<f32>,
    bias: Option<ArrayView1<f32>>,
) -> Array2<f32> {
    let (a, b, d) = x.dim();
    let flat = x.as_standard_layout();
    let flat = flat
        .view()
        .into_shape_with_order((a * b, d))
        .expect("a standard-layout array reshapes freely");
    dot_bias_act(flat, kernel, bias, None, nested_parallelism())
        .expect("inner dimensions were validated by the caller")
}

/// A `[a * b, c]` array as `[a, b, c]`, whatever its memory order (a product may hand back
/// a column-major result).
pub fn reshape_2d_to_3d(array: Array2<f32>, shape: (usize, usize, usize)) -> Array3<f32> {
    let array = if array.is_standard_layout() {
        array
    } else {
        array.as_standard_layout().into_owned()
    };
    array
        .into_shape_with_order(shape)
        .expect("the caller passes a shape with the same element count")
}

/// Takes what `forward` cached for `backward`, or `ForwardPassNotRun(layer)`.
pub fn take_cache<T>(cache: &mut Option<T>, layer: &'static str) -> Result<T> {
    cache
        .take()
        .ok_or_else(|| Error::forward_pass_not_run(layer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_follows_keras() {
        let mut rng = StdRng::seed_from_u64(5);
        let g = FusedGates::new(6, 4, &[0.0, 1.0, 0.0, 0.0], &mut rng).unwrap();
        assert_eq!(g.kernel.shape(), &[6, 16]);
        let limit = (6.0f32 / 22.0).sqrt();
        assert!(g.kernel.iter().all(|v| v.abs() <= limit));
        // Orthonormal rows: U Uᵀ = I.
        let uut = g.recurrent_kernel.dot(&g.recurrent_kernel.t());
        for i in 0..4 {
            for j in 0..4 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!(
                    (uut[[i, j]] - want).abs() < 1e-5,
                    "{i},{j}: {}",
                    uut[[i, j]]
                );
            }
        }
        for (j, &b) in g.bias.iter().enumerate() {
            assert_eq!(b, if (4..8).contains(&j) { 1.0 } else { 0.0 });
        }
        assert!(g.clone().parameters().is_empty());
    }

    #[test]
    fn projection_and_reshape() {
        let k = Array2::from_shape_vec((2, 3), vec![1.0, 0.0, 2.0, 0.0, 1.0, -1.0]).unwrap();
        let x = Array3::from_shape_fn((2, 3, 2), |(a, b, c)| (a * 6 + b * 2 + c) as f32);
        let p = project_input(&k, &x.view());
        assert_eq!(p.shape(), &[2, 3, 3]);
        for ((a, b, j), &v) in p.indexed_iter() {
            let want = x[[a, b, 0]] * k[[0, j]] + x[[a, b, 1]] * k[[1, j]];
            assert_eq!(v, want);
        }
        let f = Array2::from_shape_vec((3, 2), vec![1., 2., 3., 4., 5., 6.])
            .unwrap()
            .reversed_axes();
        let r = reshape_2d_to_3d(f, (1, 2, 3));
        assert_eq!(r.as_slice().unwrap(), &[1., 3., 5., 2., 4., 6.]);
        let mut none: Option<u8> = None;
        assert!(take_cache(&mut none, "LSTM").is_err());
    }
}
