//! What differs between the ranks of the depthwise family: the [`ConvRank`] trait over the
//! kernel's array dimension (`Ix3` for one spatial axis, `Ix4` for two), implemented for both by
//! one macro: the spatial axes, the layers' names and their weight containers.

use crate::neural_network::layers::layer_weight::LayerWeight;
use ndarray::{Array, Array1, Dimension};
use std::borrow::Cow;

/// What differs between the 1-D and 2-D layers: the kernel rank, the names, the weight
/// containers.
pub trait ConvRank: Dimension + 'static {
    /// Spatial axes of the input (`kernel rank - 2`).
    const SPATIAL: usize;
    const DEPTHWISE: &'static str;
    const SEPARABLE: &'static str;
    fn depthwise_weights<'a>(
        kernel: &'a Array<f32, Self>,
        bias: &'a Array1<f32>,
    ) -> LayerWeight<'a>;
    fn separable_weights<'a>(
        depthwise: &'a Array<f32, Self>,
        pointwise: &'a Array<f32, Self>,
        bias: &'a Array1<f32>,
    ) -> LayerWeight<'a>;
    /// The kernel and bias if `w` is this rank's depthwise container.
    fn depthwise_parts<'b>(
        w: &'b LayerWeight<'_>,
    ) -> Option<(&'b Array<f32, Self>, &'b Array1<f32>)>;
    /// The three arrays if `w` is this rank's separable container.
    #[allow(clippy::type_complexity)]
    fn separable_parts<'b>(
        w: &'b LayerWeight<'_>,
    ) -> Option<(&'b Array<f32, Self>, &'b Array<f32, Self>, &'b Array1<f32>)>;
}

macro_rules! conv_rank {
    ($dim:ty, $spatial:expr, $dw:ident, $dwst:ident, $sep:ident, $sepst:ident) => {
        impl ConvRank for $dim {
            const SPATIAL: usize = $spatial;
            const DEPTHWISE: &'static str = stringify!($dw);
            const SEPARABLE: &'static str = stringify!($sep);
            fn depthwise_weights<'a>(
                kernel: &'a Array<f32, Self>,
                bias: &'a Array1<f32>,
            ) -> LayerWeight<'a> {
                LayerWeight::$dw(crate::neural_network::layers::layer_weight::$dwst {
                    weight: Cow::Borrowed(kernel),
                    bias: Cow::Borrowed(bias),
                })
            }
            fn separable_weights<'a>(
                depthwise: &'a Array<f32, Self>,
                pointwise: &'a Array<f32, Self>,
                bias: &'a Array1<f32>,
            ) -> LayerWeight<'a> {
                LayerWeight::$sep(crate::neural_network::layers::layer_weight::$sepst {
                    depthwise_weight: Cow::Borrowed(depthwise),
                    pointwise_weight: Cow::Borrowed(pointwise),
                    bias: Cow::Borrowed(bias),
                })
            }
            fn depthwise_parts<'b>(
                w: &'b LayerWeight<'_>,
            ) -> Option<(&'b Array<f32, Self>, &'b Array1<f32>)> {
                match w {
                    LayerWeight::$dw(w) => Some((w.weight.as_ref(), w.bias.as_ref())),
                    _ => None,
                }
            }
            fn separable_parts<'b>(
                w: &'b LayerWeight<'_>,
            ) -> Option<(&'b Array<f32, Self>, &'b Array<f32, Self>, &'b Array1<f32>)> {
                match w {
                    LayerWeight::$sep(w) => Some((
                        w.depthwise_weight.as_ref(),
                        w.pointwise_weight.as_ref(),
                        w.bias.as_ref(),
                    )),
                    _ => None,
                }
            }
        }
    };
}

conv_rank!(
    ndarray::Ix3,
    1,
    DepthwiseConv1D,
    DepthwiseConv1DLayerWeight,
    SeparableConv1D,
    SeparableConv1DLayerWeight
);
conv_rank!(
    ndarray::Ix4,
    2,
    DepthwiseConv2D,
    DepthwiseConv2DLayerWeight,
    SeparableConv2D,
    SeparableConv2DLayerWeight
);
