//! What the normalisation layers share besides the engine: argument checks, the gamma/beta
//! pair with its gradients, the forward cache, and the axis bookkeeping of the layers that
//! normalise over chosen axes (LayerNormalization, UnitNormalization).

use super::engine::Saved;
use crate::error::{Error, IoError, Result};
use crate::neural_network::traits::ParamGrad;
use crate::neural_network::{NnError, Tensor};
use ndarray::{ArrayD, CowArray, IxDyn};

/// `epsilon` must be finite and positive.
pub(crate) fn check_epsilon(epsilon: f32) -> Result<()> {
    if epsilon.is_finite() && epsilon > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            "epsilon",
            format!("must be finite and > 0, got {epsilon}"),
        ))
    }
}

/// A weight of the wrong shape.
pub(crate) fn check_weight(name: &str, expected: &[usize], found: &Tensor) -> Result<()> {
    if found.shape() == expected {
        Ok(())
    } else {
        Err(NnError::WeightShape {
            name: name.to_string(),
            expected: expected.to_vec(),
            found: found.shape().to_vec(),
        }
        .into())
    }
}

/// The declared `input_shape` binds every axis but the batch axis (a mini-batch may be
/// smaller), plus any axis listed in `also` (an axis whose size the parameters carry). An empty
/// declared shape binds nothing.
pub(crate) fn check_input_shape(declared: &[usize], input: &[usize], also: &[usize]) -> Result<()> {
    if declared.is_empty() {
        return Ok(());
    }
    let fits = declared.len() == input.len()
        && (0..input.len()).all(|a| (a == 0 && !also.contains(&0)) || declared[a] == input[a]);
    if fits {
        Ok(())
    } else {
        let mut expected = declared.to_vec();
        if !also.contains(&0) && !input.is_empty() && expected.len() == input.len() {
            expected[0] = input[0];
        }
        Err(Error::shape_mismatch(expected, input.to_vec()))
    }
}

/// Keras-style summary shape: the batch axis as `None`.
pub(crate) fn summary_shape(shape: &[usize]) -> String {
    if shape.is_empty() {
        return "Unknown".to_string();
    }
    let rest: Vec<String> = shape[1..].iter().map(|d| d.to_string()).collect();
    match rest.len() {
        0 => "(None,)".to_string(),
        _ => format!("(None, {})", rest.join(", ")),
    }
}

/// A contiguous row-major copy (or borrow) of a tensor's elements.
pub(crate) fn contiguous(x: &Tensor) -> CowArray<'_, f32, IxDyn> {
    x.as_standard_layout()
}

/// The elements of a standard-layout array.
pub(crate) fn slice_of<'a>(x: &'a CowArray<'_, f32, IxDyn>) -> &'a [f32] {
    x.as_slice().expect("standard layout is contiguous")
}

/// What `forward` left for `backward`.
#[derive(Debug, Clone)]
pub(crate) enum Cache {
    /// Nothing yet: `backward` must refuse.
    Empty,
    /// An inference-mode forward: `backward` passes the gradient through unchanged.
    PassThrough,
    /// A training-mode forward on an input of `shape`.
    Train { saved: Saved, shape: Vec<usize> },
}

impl Cache {
    /// The saved state of a training forward (after checking that `grad` has the output's
    /// shape), `None` for a pass-through, or the not-run error.
    pub(crate) fn saved(&self, layer: &'static str, grad: &Tensor) -> Result<Option<&Saved>> {
        match self {
            Cache::Empty => Err(Error::forward_pass_not_run(layer)),
            Cache::PassThrough => Ok(None),
            Cache::Train { saved, shape } => {
                check_grad_shape(shape, grad)?;
                Ok(Some(saved))
            }
        }
    }
}

/// A gradient must have the shape of the forward output.
pub(crate) fn check_grad_shape(expected: &[usize], grad: &Tensor) -> Result<()> {
    if grad.shape() == expected {
        Ok(())
    } else {
        Err(Error::shape_mismatch(
            expected.to_vec(),
            grad.shape().to_vec(),
        ))
    }
}

/// `apply_weights` handed another layer kind's weights.
pub(crate) fn wrong_weights(layer: &str) -> Error {
    IoError::ModelStructureMismatch(format!("layer `{layer}` cannot load these weights")).into()
}

/// A weight load that does not fit the layer is a model-structure mismatch.
pub(crate) fn structure_mismatch(layer: &str, e: Error) -> Error {
    IoError::ModelStructureMismatch(format!("{layer}: {e}")).into()
}

/// Gamma and beta with their latest gradients.
#[derive(Debug, Clone)]
pub(crate) struct ScaleShift {
    pub gamma: Tensor,
    pub beta: Tensor,
    pub grad_gamma: Tensor,
    pub grad_beta: Tensor,
}

impl ScaleShift {
    /// Gamma ones, beta zeros (Keras's initialisers).
    pub(crate) fn new(shape: &[usize]) -> Self {
        Self {
            gamma: ArrayD::ones(IxDyn(shape)),
            beta: ArrayD::zeros(IxDyn(shape)),
            grad_gamma: ArrayD::zeros(IxDyn(shape)),
            grad_beta: ArrayD::zeros(IxDyn(shape)),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.gamma.len()
    }

    /// Replaces gamma and beta (both must have the parameters' shape).
    pub(crate) fn set(&mut self, gamma: Tensor, beta: Tensor) -> Result<()> {
        let shape = self.gamma.shape().to_vec();
        check_weight("gamma", &shape, &gamma)?;
        check_weight("beta", &shape, &beta)?;
        self.gamma = gamma.as_standard_layout().into_owned();
        self.beta = beta.as_standard_layout().into_owned();
        Ok(())
    }

    pub(crate) fn gamma_slice(&self) -> &[f32] {
        self.gamma
            .as_slice()
            .expect("parameters are standard layout")
    }

    pub(crate) fn beta_slice(&self) -> &[f32] {
        self.beta
            .as_slice()
            .expect("parameters are standard layout")
    }

    /// Stores gradients computed by the engine (flat, parameter order).
    pub(crate) fn store_grads(&mut self, grad_gamma: Vec<f32>, grad_beta: Vec<f32>) {
        let shape = self.gamma.raw_dim();
        self.grad_gamma = ArrayD::from_shape_vec(shape.clone(), grad_gamma)
            .expect("gradient has the parameters' length");
        self.grad_beta =
            ArrayD::from_shape_vec(shape, grad_beta).expect("gradient has the parameters' length");
    }

    /// Gamma then beta; neither is ever weight-decayed.
    pub(crate) fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let Self {
            gamma,
            beta,
            grad_gamma,
            grad_beta,
        } = self;
        vec![
            ParamGrad::no_decay(
                gamma.as_slice_mut().expect("standard layout"),
                grad_gamma.as_slice().expect("standard layout"),
            ),
            ParamGrad::no_decay(
                beta.as_slice_mut().expect("standard layout"),
                grad_beta.as_slice().expect("standard layout"),
            ),
        ]
    }
}

/// An axis list names a set: it must be non-empty and hold no axis twice.
pub(crate) fn check_axis_list(axes: &[usize]) -> Result<()> {
    if axes.is_empty() {
        return Err(Error::invalid_parameter("axis", "the axis list is empty"));
    }
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid_parameter(
            "axis",
            format!("the axis list {axes:?} names an axis twice"),
        ));
    }
    Ok(())
}

/// How an axis choice is spelled, for the layers that take one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AxisChoice<'a> {
    Last,
    Listed(&'a [usize]),
}

/// Declares a layer's public axis option (`LayerNormalizationAxis`, `UnitNormalizationAxis`):
/// the last axis by default, one axis, or several normalised jointly; `choice` reads it as an
/// [`AxisChoice`].
macro_rules! axis_option {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub enum $name {
            /// The last axis.
            #[default]
            Default,
            /// One axis.
            Custom(usize),
            /// Several axes, normalised jointly (a set: order does not matter).
            Multiple(Vec<usize>),
        }

        impl $name {
            fn choice(&self) -> super::common::AxisChoice<'_> {
                match self {
                    $name::Default => super::common::AxisChoice::Last,
                    $name::Custom(a) => super::common::AxisChoice::Listed(std::slice::from_ref(a)),
                    $name::Multiple(v) => super::common::AxisChoice::Listed(v),
                }
            }
        }
    };
}
pub(crate) use axis_option;

/// Inside the `Layer` impl of a normalisation layer with `input_shape` and affine `params`
/// fields (batch and layer normalisation): its name, summary shape and parameters.
macro_rules! affine_layer_basics {
    ($name:expr) => {
        fn layer_type(&self) -> &str {
            $name
        }

        fn output_shape(&self) -> String {
            super::common::summary_shape(&self.input_shape)
        }

        fn param_count(&self) -> $crate::neural_network::layers::TrainingParameters {
            $crate::neural_network::layers::TrainingParameters::Trainable(2 * self.params.len())
        }

        fn parameters(&mut self) -> Vec<$crate::neural_network::traits::ParamGrad<'_>> {
            self.params.parameters()
        }
    };
}
pub(crate) use affine_layer_basics;

/// The sorted axes `choice` names on a tensor of rank `ndim`; `out_of_bounds` builds the error
/// for an axis past the end.
pub(crate) fn resolve_axes(
    choice: AxisChoice<'_>,
    ndim: usize,
    out_of_bounds: impl Fn(String) -> Error,
) -> Result<Vec<usize>> {
    match choice {
        AxisChoice::Last => Ok(vec![ndim - 1]),
        AxisChoice::Listed(list) => {
            if let Some(&a) = list.iter().find(|&&a| a >= ndim) {
                return Err(out_of_bounds(format!(
                    "axis {a} is out of bounds for an input of rank {ndim}"
                )));
            }
            let mut axes = list.to_vec();
            axes.sort_unstable();
            Ok(axes)
        }
    }
}

/// Moves the chosen axes to the end (in ascending order), so that every group of values to
/// normalise together is one contiguous row, and back again.
#[derive(Debug, Clone)]
pub(crate) struct AxisPlan {
    perm: Vec<usize>,
    inverse: Vec<usize>,
    permuted_shape: Vec<usize>,
    /// Rows (groups) and their length.
    pub rows: usize,
    pub len: usize,
}

impl AxisPlan {
    /// `axes` sorted and in bounds for `shape`.
    pub(crate) fn new(shape: &[usize], axes: &[usize]) -> Self {
        let mut perm: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        perm.extend_from_slice(axes);
        let mut inverse = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        let permuted_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
        let len: usize = axes.iter().map(|&a| shape[a]).product();
        let total: usize = shape.iter().product();
        Self {
            perm,
            inverse,
            permuted_shape,
            rows: total.checked_div(len).unwrap_or(0),
            len,
        }
    }

    /// The tensor with the chosen axes last, row-major (borrowed when it already is).
    pub(crate) fn gather<'a>(&self, x: &'a Tensor) -> CowArray<'a, f32, IxDyn> {
        let permuted = x.view().permuted_axes(IxDyn(&self.perm));
        if permuted.is_standard_layout() {
            CowArray::from(permuted)
        } else {
            CowArray::from(permuted.as_standard_layout().into_owned())
        }
    }

    /// A row-major buffer in the permuted layout, back in the original axis order, row-major.
    pub(crate) fn scatter(&self, flat: Vec<f32>) -> Tensor {
        let permuted = ArrayD::from_shape_vec(IxDyn(&self.permuted_shape), flat)
            .expect("buffer has the tensor's length");
        let restored = permuted.permuted_axes(IxDyn(&self.inverse));
        if restored.is_standard_layout() {
            restored
        } else {
            restored.as_standard_layout().into_owned()
        }
    }
}
