//! Convolution layers (channels-last, Keras's kernel shapes `[k.., in, filters]`) over one
//! im2col/GEMM engine and one direct depthwise engine.

/// Keras's padding modes: `Valid` keeps only full windows; `Same` pads so that the output has
/// `ceil(n / stride)` positions, the extra cell (if any) after the input, as Keras does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaddingType {
    #[default]
    Valid,
    Same,
}

impl PaddingType {
    /// Output positions along one axis of length `input` for a window of `kernel` taps spaced
    /// `dilation` apart, moved `stride` cells at a time; `None` when `Valid` leaves no full window.
    pub fn output_len(
        self,
        input: usize,
        kernel: usize,
        stride: usize,
        dilation: usize,
    ) -> Option<usize> {
        let span = dilation * (kernel - 1) + 1;
        match self {
            PaddingType::Valid => (input >= span).then(|| (input - span) / stride + 1),
            PaddingType::Same => (input > 0).then(|| input.div_ceil(stride)),
        }
    }

    /// Zero cells added before the input along one axis (`Same` puts the odd one after).
    pub fn pad_before(self, input: usize, kernel: usize, stride: usize, dilation: usize) -> usize {
        match self {
            PaddingType::Valid => 0,
            PaddingType::Same => {
                let span = dilation * (kernel - 1) + 1;
                let out = input.div_ceil(stride);
                ((out.saturating_sub(1)) * stride + span).saturating_sub(input) / 2
            }
        }
    }

    /// Keras's name (`"valid"` / `"same"`).
    pub fn name(self) -> &'static str {
        match self {
            PaddingType::Valid => "valid",
            PaddingType::Same => "same",
        }
    }
}

// Depthwise and separable convolutions (nndepth).
pub mod depthwise_common;
pub mod depthwise_conv_1d;
pub mod depthwise_conv_2d;
pub mod depthwise_engine;
pub mod separable_conv_1d;
pub mod separable_conv_2d;
pub use depthwise_common::{ConvRank, DepthwiseConv, SeparableConv};
pub use depthwise_conv_1d::*;
pub use depthwise_conv_2d::*;
pub use separable_conv_1d::*;
pub use separable_conv_2d::*;

#[cfg(test)]
mod padding_tests {
    use super::PaddingType::{Same, Valid};

    #[test]
    fn lengths_follow_keras_rules() {
        // valid: floor((n - span) / s) + 1
        assert_eq!(Valid.output_len(7, 3, 1, 1), Some(5));
        assert_eq!(Valid.output_len(7, 3, 2, 1), Some(3));
        assert_eq!(Valid.output_len(7, 3, 1, 3), Some(1)); // span 7
        assert_eq!(Valid.output_len(2, 3, 1, 1), None);
        // same: ceil(n / s), total padding (out-1)s + span - n split with the odd cell after
        assert_eq!(Same.output_len(7, 3, 2, 1), Some(4));
        assert_eq!(Same.pad_before(7, 3, 2, 1), 1); // total 2
        assert_eq!(Same.pad_before(6, 3, 2, 1), 0); // total 1: after only
        assert_eq!(Same.pad_before(5, 4, 1, 1), 1); // total 3
        assert_eq!(Same.pad_before(5, 3, 1, 2), 2); // span 5, total 4
        assert_eq!(Same.output_len(1, 5, 3, 1), Some(1));
    }
}

// nnconv: the im2col/GEMM engine and the standard (and transposed) convolutions
pub mod conv_1d;
pub mod conv_1d_transpose;
pub mod conv_2d;
pub mod conv_2d_transpose;
pub mod conv_3d;
pub mod conv_3d_transpose;
pub(crate) mod conv_nd;
pub(crate) mod engine;
pub use conv_1d::*;
pub use conv_1d_transpose::*;
pub use conv_2d::*;
pub use conv_2d_transpose::*;
pub use conv_3d::*;
pub use conv_3d_transpose::*;
