//! The two generic pooling layers every pooling file names: [`Pooling`] (a window moved over
//! the input) and [`GlobalPooling`] (one window over the whole input), each for `N` = 1 to 3
//! channels-last spatial axes and either kind (`MAX` = max, otherwise average). They validate,
//! keep shapes and the backward cache; [`engine`](super::engine) computes.

use super::engine::{self, PoolGeometry};
use crate::error::{Error, Result};
use crate::neural_network::layers::convolution::PaddingType;
use crate::neural_network::layers::layer_util::{
    forward_cache, full_shape, no_parameters, require_non_empty, require_shape,
};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::IxDyn;

/// The layer's class name (Keras's and the original's).
const fn layer_name(n: usize, max: bool, global: bool) -> &'static str {
    match (global, max, n) {
        (false, true, 1) => "MaxPooling1D",
        (false, true, 2) => "MaxPooling2D",
        (false, true, 3) => "MaxPooling3D",
        (false, false, 1) => "AveragePooling1D",
        (false, false, 2) => "AveragePooling2D",
        (false, false, 3) => "AveragePooling3D",
        (true, true, 1) => "GlobalMaxPooling1D",
        (true, true, 2) => "GlobalMaxPooling2D",
        (true, true, 3) => "GlobalMaxPooling3D",
        (true, false, 1) => "GlobalAveragePooling1D",
        (true, false, 2) => "GlobalAveragePooling2D",
        (true, false, 3) => "GlobalAveragePooling3D",
        _ => panic!("pooling layers have 1 to 3 spatial axes"),
    }
}

/// How the input axes are laid out, for error messages.
const fn layout(n: usize) -> &'static str {
    match n {
        1 => "[batch, length, channels]",
        2 => "[batch, height, width, channels]",
        _ => "[batch, depth, height, width, channels]",
    }
}

/// `5` for one axis, `(5, 5)` for more.
fn dims_text(v: &[usize]) -> String {
    match v {
        [one] => one.to_string(),
        _ => format!(
            "({})",
            v.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An input of the right rank with at least one element.
fn check_input(name: &str, rank: usize, input: &Tensor) -> Result<()> {
    if input.ndim() != rank + 2 {
        return Err(Error::invalid_input(format!(
            "{name} expects a {}D input {}, got shape {:?}",
            rank + 2,
            layout(rank),
            input.shape()
        )));
    }
    require_non_empty(input)
}

/// Runs the engine's forward pass; the arg-max is empty for average pooling and when
/// `training` is false (inference keeps nothing for a backward pass).
fn pool_forward(
    max: bool,
    input: &Tensor,
    g: &PoolGeometry,
    training: bool,
) -> (Vec<f32>, Vec<engine::ArgMax>) {
    let x = input.as_standard_layout();
    let x = x.as_slice().expect("standard layout is contiguous");
    if max {
        engine::max_forward(x, g, training)
    } else {
        (engine::avg_forward(x, g), Vec::new())
    }
}

/// Runs the engine's backward pass for an upstream gradient in the output's element order.
fn pool_backward(
    max: bool,
    grad_output: &Tensor,
    g: &PoolGeometry,
    argmax: &[engine::ArgMax],
) -> Result<Tensor> {
    let d = grad_output.as_standard_layout();
    let d = d.as_slice().expect("standard layout is contiguous");
    let grad = if max {
        engine::max_backward(d, g, argmax)
    } else {
        engine::avg_backward(d, g)
    };
    Ok(Tensor::from_shape_vec(IxDyn(&g.input_shape()), grad).expect("engine sizes its output"))
}

/// What `backward` needs from the last `forward`.
#[derive(Debug)]
struct Cache {
    geometry: PoolGeometry,
    /// Max pooling's winning tap per output element (empty for average pooling).
    argmax: Vec<engine::ArgMax>,
}

/// Window pooling over `N` spatial axes: max when `MAX`, otherwise average. Used through its
/// aliases ([`MaxPooling2D`](super::MaxPooling2D), [`AveragePooling1D`](super::AveragePooling1D), ...).
#[derive(Debug)]
pub struct Pooling<const N: usize, const MAX: bool> {
    input_shape: Vec<usize>,
    pool: [usize; N],
    strides: [usize; N],
    padding: PaddingType,
    cache: Option<Cache>,
}

impl<const N: usize, const MAX: bool> Pooling<N, MAX> {
    /// The layer's class name.
    pub const NAME: &'static str = layer_name(N, MAX, false);

    /// The whole configuration at once (Keras's constructor): `strides` `None` means the pool
    /// size; under `Same` padding the pool may exceed the input. `input_shape` is
    /// `[batch, spatial.., channels]`.
    pub fn with_config(
        pool_size: [usize; N],
        strides: Option<[usize; N]>,
        padding: PaddingType,
        input_shape: Vec<usize>,
    ) -> Result<Self> {
        if input_shape.len() != N + 2 {
            return Err(Error::dimension_mismatch(N + 2, input_shape.len()));
        }
        if input_shape.contains(&0) {
            return Err(Error::invalid_input(format!(
                "{}: input_shape {input_shape:?} has a zero dimension",
                Self::NAME
            )));
        }
        if pool_size.contains(&0) {
            return Err(Error::invalid_parameter(
                "pool_size",
                format!(
                    "{}: pool size {} must be positive",
                    Self::NAME,
                    dims_text(&pool_size)
                ),
            ));
        }
        padding.refuse_causal(Self::NAME)?;
        let spatial = &input_shape[1..=N];
        if padding == PaddingType::Valid && pool_size.iter().zip(spatial).any(|(p, n)| p > n) {
            return Err(Error::invalid_parameter(
                "pool_size",
                format!(
                    "{}: pool {} larger than input {} under valid padding",
                    Self::NAME,
                    dims_text(&pool_size),
                    dims_text(spatial)
                ),
            ));
        }
        let layer = Self {
            input_shape,
            pool: pool_size,
            strides: pool_size,
            padding,
            cache: None,
        };
        match strides {
            Some(s) => layer.strides_checked(s),
            None => Ok(layer),
        }
    }

    fn strides_checked(mut self, strides: [usize; N]) -> Result<Self> {
        if strides.contains(&0) {
            return Err(Error::invalid_parameter(
                "strides",
                format!(
                    "{}: strides {} must be positive",
                    Self::NAME,
                    dims_text(&strides)
                ),
            ));
        }
        self.strides = strides;
        Ok(self)
    }

    /// Keras's padding (default `Valid`); `Same` keeps `ceil(n / stride)` positions.
    pub fn with_padding(mut self, padding: PaddingType) -> Self {
        self.padding = padding;
        self
    }

    pub fn pool_size(&self) -> [usize; N] {
        self.pool
    }

    pub fn strides(&self) -> [usize; N] {
        self.strides
    }

    pub fn padding(&self) -> PaddingType {
        self.padding
    }

    fn geometry(&self, shape: &[usize]) -> Result<PoolGeometry> {
        self.padding.refuse_causal(Self::NAME)?;
        PoolGeometry::new(shape, &self.pool, &self.strides, self.padding).ok_or_else(|| {
            Error::invalid_input(format!(
                "{}: pool {} larger than input {} under valid padding",
                Self::NAME,
                dims_text(&self.pool),
                dims_text(&shape[1..=N])
            ))
        })
    }

    /// The output shape on `g`, which the upstream gradient must have.
    fn out_shape(&self, g: &PoolGeometry) -> Vec<usize> {
        g.output_shape()
    }

    fn pass(&self, input: &Tensor, training: bool) -> Result<(Tensor, Cache)> {
        check_input(Self::NAME, N, input)?;
        let geometry = self.geometry(input.shape())?;
        let (out, argmax) = pool_forward(MAX, input, &geometry, training);
        let out = Tensor::from_shape_vec(IxDyn(&geometry.output_shape()), out)
            .expect("engine sizes its output");
        Ok((out, Cache { geometry, argmax }))
    }
}

impl<const MAX: bool> Pooling<1, MAX> {
    /// `input_shape` is `[batch, length, channels]`; the stride defaults to `pool_size`.
    pub fn new(pool_size: usize, input_shape: Vec<usize>) -> Result<Self> {
        Self::with_config([pool_size], None, PaddingType::Valid, input_shape)
    }

    pub fn with_stride(self, stride: usize) -> Result<Self> {
        self.strides_checked([stride])
    }
}

impl<const MAX: bool> Pooling<2, MAX> {
    /// `input_shape` is `[batch, height, width, channels]`; the strides default to `pool_size`.
    pub fn new(pool_size: (usize, usize), input_shape: Vec<usize>) -> Result<Self> {
        Self::with_config(
            [pool_size.0, pool_size.1],
            None,
            PaddingType::Valid,
            input_shape,
        )
    }

    pub fn with_strides(self, strides: (usize, usize)) -> Result<Self> {
        self.strides_checked([strides.0, strides.1])
    }
}

impl<const MAX: bool> Pooling<3, MAX> {
    /// `input_shape` is `[batch, depth, height, width, channels]`; the strides default to
    /// `pool_size`.
    pub fn new(pool_size: (usize, usize, usize), input_shape: Vec<usize>) -> Result<Self> {
        Self::with_config(
            [pool_size.0, pool_size.1, pool_size.2],
            None,
            PaddingType::Valid,
            input_shape,
        )
    }

    pub fn with_strides(self, strides: (usize, usize, usize)) -> Result<Self> {
        self.strides_checked([strides.0, strides.1, strides.2])
    }
}

/// Inside the `Layer` impl of [`Pooling`] and [`GlobalPooling`]: the passes over the layer's
/// `pass` (the forward pass keeps the geometry and arg-max in `cache`), the backward pass
/// expecting a gradient of `out_shape(geometry)`, and the name.
macro_rules! pooling_passes {
    () => {
        fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
            self.cache = None;
            let (out, cache) = self.pass(input, true)?;
            self.cache = Some(cache);
            Ok(out)
        }

        fn predict(&self, input: &Tensor) -> Result<Tensor> {
            self.pass(input, false).map(|(out, _)| out)
        }

        fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
            let cache = forward_cache(&self.cache, Self::NAME)?;
            require_shape(&self.out_shape(&cache.geometry), grad_output.shape())?;
            pool_backward(MAX, grad_output, &cache.geometry, &cache.argmax)
        }

        fn layer_type(&self) -> &str {
            Self::NAME
        }
    };
}

impl<const N: usize, const MAX: bool> Layer for Pooling<N, MAX> {
    pooling_passes!();

    fn output_shape(&self) -> String {
        match self.geometry(&self.input_shape) {
            Ok(g) => full_shape(&g.output_shape()),
            Err(_) => "Unknown".to_string(),
        }
    }

    no_parameters!();
}

/// Global pooling over `N` spatial axes (max when `MAX`, otherwise average): one value per
/// channel, output `[batch, channels]`, or `[batch, 1.., channels]` with `keepdims`.
#[derive(Debug, Default)]
pub struct GlobalPooling<const N: usize, const MAX: bool> {
    keepdims: bool,
    cache: Option<Cache>,
}

impl<const N: usize, const MAX: bool> GlobalPooling<N, MAX> {
    /// The layer's class name.
    pub const NAME: &'static str = layer_name(N, MAX, true);

    pub fn new() -> Self {
        Self {
            keepdims: false,
            cache: None,
        }
    }

    /// Keras's `keepdims`: keep the pooled spatial axes as size 1.
    pub fn with_keepdims(mut self, keepdims: bool) -> Self {
        self.keepdims = keepdims;
        self
    }

    pub fn keepdims(&self) -> bool {
        self.keepdims
    }

    /// The output shape on `g`, which the upstream gradient must have: `[batch, channels]` and
    /// `[batch, 1.., channels]` hold the same elements in the same order, so the backward pass
    /// reads either alike.
    fn out_shape(&self, g: &PoolGeometry) -> Vec<usize> {
        let full = g.output_shape();
        if self.keepdims {
            full
        } else {
            vec![full[0], full[N + 1]]
        }
    }

    fn pass(&self, input: &Tensor, training: bool) -> Result<(Tensor, Cache)> {
        check_input(Self::NAME, N, input)?;
        let geometry = PoolGeometry::global(input.shape())
            .expect("a non-empty input of the right rank has a global window");
        let (out, argmax) = pool_forward(MAX, input, &geometry, training);
        let out = Tensor::from_shape_vec(IxDyn(&self.out_shape(&geometry)), out)
            .expect("one value per (sample, channel)");
        Ok((out, Cache { geometry, argmax }))
    }
}

impl<const N: usize, const MAX: bool> Layer for GlobalPooling<N, MAX> {
    pooling_passes!();

    /// Known once a forward pass has seen an input (the layer has no configured shape).
    fn output_shape(&self) -> String {
        match &self.cache {
            Some(c) => full_shape(&self.out_shape(&c.geometry)),
            None => "Unknown".to_string(),
        }
    }

    no_parameters!();
}

#[cfg(test)]
mod tests {
    use super::super::engine::POOL_PARALLEL_MIN_OPS;
    use super::super::*;
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::neural_network::NnError;

    fn ramp(shape: &[usize]) -> Tensor {
        // distinct values (37 is invertible mod 1009 and every tensor here is smaller)
        let n: usize = shape.iter().product();
        Tensor::from_shape_vec(
            IxDyn(shape),
            (0..n).map(|i| ((i * 37) % 1009) as f32 * 0.1).collect(),
        )
        .unwrap()
    }

    #[test]
    fn constructors_reject_bad_configurations() {
        let dim = |r: Result<MaxPooling2D>| matches!(r, Err(Error::DimensionMismatch { .. }));
        let input = |r: Result<AveragePooling3D>| matches!(r, Err(Error::InvalidInput(_)));
        let param = |r: Result<MaxPooling1D>| matches!(r, Err(Error::InvalidParameter { .. }));
        assert!(dim(MaxPooling2D::new((2, 2), vec![1, 4, 4])));
        assert!(dim(MaxPooling2D::new((2, 2), vec![1, 1, 4, 4, 1])));
        assert!(input(AveragePooling3D::new((1, 1, 1), vec![1, 2, 0, 2, 1])));
        assert!(input(AveragePooling3D::new((1, 1, 1), vec![0, 2, 2, 2, 1])));
        assert!(param(MaxPooling1D::new(0, vec![1, 4, 1])));
        assert!(param(MaxPooling1D::new(5, vec![1, 4, 1])));
        assert!(param(
            MaxPooling1D::new(2, vec![1, 4, 1]).unwrap().with_stride(0)
        ));
        assert!(param(MaxPooling1D::with_config(
            [2],
            Some([0]),
            PaddingType::Same,
            vec![1, 4, 1]
        )));
        // a pool larger than the input is fine under same padding (Keras)
        let mut l = MaxPooling1D::with_config([5], None, PaddingType::Same, vec![1, 3, 1]).unwrap();
        assert_eq!(l.output_shape(), "(1, 1, 1)");
        let out = l.forward(&ramp(&[1, 3, 1])).unwrap();
        assert_eq!(out.as_slice().unwrap(), &[7.4]); // max(0, 3.7, 7.4)
        let msg = MaxPooling2D::new((5, 2), vec![1, 4, 4, 1])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("MaxPooling2D") && msg.contains("(5, 2)") && msg.contains("(4, 4)"),
            "{msg}"
        );
    }

    #[test]
    fn forward_and_backward_reject_bad_tensors() {
        let mut l = AveragePooling2D::new((2, 2), vec![1, 4, 4, 1]).unwrap();
        assert!(matches!(
            l.backward(&ramp(&[1, 2, 2, 1])),
            Err(Error::NeuralNetwork(NnError::ForwardPassNotRun(
                "AveragePooling2D"
            )))
        ));
        assert!(matches!(
            l.forward(&ramp(&[1, 4, 4])),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            l.forward(&ramp(&[0, 4, 4, 1])),
            Err(Error::EmptyInput(_))
        ));
        // the actual input may differ from the configured one, but must fit a window
        let err = l.forward(&ramp(&[2, 1, 6, 3])).unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)));
        assert!(err.to_string().contains("(1, 6)"), "{err}");
        let out = l.forward(&ramp(&[2, 6, 4, 3])).unwrap();
        assert_eq!(out.shape(), &[2, 3, 2, 3]);
        assert!(matches!(
            l.backward(&ramp(&[2, 3, 2, 2])),
            Err(Error::ShapeMismatch { .. })
        ));
        let mut gl = GlobalMaxPooling3D::new();
        assert!(matches!(
            gl.forward(&ramp(&[1, 2, 2, 2])),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            gl.forward(&ramp(&[1, 2, 0, 2, 3])),
            Err(Error::EmptyInput(_))
        ));
        gl.forward(&ramp(&[2, 2, 2, 2, 3])).unwrap();
        assert!(matches!(
            gl.backward(&ramp(&[2, 1, 1, 1, 3])),
            Err(Error::ShapeMismatch { .. })
        ));
    }

    #[test]
    fn names_and_shapes() {
        assert_eq!(
            MaxPooling3D::new((2, 2, 2), vec![1, 4, 4, 4, 1])
                .unwrap()
                .layer_type(),
            "MaxPooling3D"
        );
        assert_eq!(
            AveragePooling1D::new(2, vec![1, 4, 1])
                .unwrap()
                .layer_type(),
            "AveragePooling1D"
        );
        assert_eq!(GlobalMaxPooling2D::new().layer_type(), "GlobalMaxPooling2D");
        assert_eq!(
            GlobalAveragePooling3D::default().layer_type(),
            "GlobalAveragePooling3D"
        );
        let l = AveragePooling2D::new((3, 2), vec![2, 7, 5, 4])
            .unwrap()
            .with_strides((2, 2))
            .unwrap()
            .with_padding(PaddingType::Same);
        assert_eq!(l.output_shape(), "(2, 4, 3, 4)"); // ceil(7/2), ceil(5/2)
        let mut g = GlobalAveragePooling1D::new().with_keepdims(true);
        assert_eq!(g.output_shape(), "Unknown");
        let out = g.forward(&ramp(&[2, 5, 3])).unwrap();
        assert_eq!(out.shape(), &[2, 1, 3]);
        assert_eq!(g.output_shape(), "(2, 1, 3)");
        let grad = g.backward(&Tensor::ones(IxDyn(&[2, 1, 3]))).unwrap();
        assert!(grad.iter().all(|&v| v == 0.2));
    }

    #[test]
    fn global_max_routes_to_the_arg_max() {
        let mut g = GlobalMaxPooling2D::new();
        let x = ramp(&[2, 3, 4, 2]);
        let out = g.forward(&x).unwrap();
        let d = Tensor::from_shape_vec(IxDyn(&[2, 2]), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let grad = g.backward(&d).unwrap();
        for b in 0..2 {
            for c in 0..2 {
                let plane: Vec<f32> = (0..12).map(|s| x[[b, s / 4, s % 4, c]]).collect();
                let best = plane.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(out[[b, c]], best);
                for (s, &v) in plane.iter().enumerate() {
                    let want = if v == best { d[[b, c]] } else { 0.0 };
                    assert_eq!(grad[[b, s / 4, s % 4, c]], want);
                }
            }
        }
    }

    /// The gate at the layer level: forced serial vs forced parallel, forward and backward.
    #[test]
    fn layers_serial_and_parallel_agree_bitwise() {
        fn run(layer: &mut dyn Layer, x: &Tensor) -> (Vec<u32>, Vec<u32>) {
            let out = layer.forward(x).unwrap();
            let d = out.mapv(|v| v * 0.3 - 1.0);
            let grad = layer.backward(&d).unwrap();
            (
                out.iter().map(|v| v.to_bits()).collect(),
                grad.iter().map(|v| v.to_bits()).collect(),
            )
        }
        let x3 = ramp(&[1, 6, 7, 5, 40]);
        let x2 = ramp(&[1, 9, 9, 130]);
        let (s, p) = serial_and_parallel(&POOL_PARALLEL_MIN_OPS, || {
            let mut a = MaxPooling3D::new((2, 3, 2), vec![1, 6, 7, 5, 40])
                .unwrap()
                .with_strides((1, 2, 2))
                .unwrap()
                .with_padding(PaddingType::Same);
            let mut b = AveragePooling3D::new((3, 2, 2), vec![1, 6, 7, 5, 40]).unwrap();
            let mut c = GlobalMaxPooling2D::new();
            let mut d = GlobalAveragePooling2D::new();
            vec![
                run(&mut a, &x3),
                run(&mut b, &x3),
                run(&mut c, &x2),
                run(&mut d, &x2),
            ]
        });
        assert!(s == p);
    }
}
