//! Convolution layers (channels-last, Keras's kernel shapes `[k.., in, filters]`) over one
//! im2col/GEMM engine and one direct depthwise engine.

use crate::error::{Error, Result};

/// Keras's padding modes: `Valid` keeps only full windows; `Same` pads so that the output has
/// `ceil(n / stride)` positions, the extra cell (if any) after the input, as Keras does;
/// `Causal` (Keras's Conv1D only) pads `dilation * (kernel - 1)` zeros before the input and
/// none after, so output `t` sees only inputs up to `t * stride` (`ceil(n / stride)`
/// positions: `Valid` over the left-padded input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaddingType {
    #[default]
    Valid,
    Same,
    Causal,
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
        // saturating: a span past usize::MAX is larger than any input (the layers refuse
        // such sizes before they get here)
        let span = dilation
            .saturating_mul(kernel.saturating_sub(1))
            .saturating_add(1);
        match self {
            PaddingType::Valid => (input >= span).then(|| (input - span) / stride + 1),
            // Causal: valid over `span - 1 + input` cells, `(input - 1) / stride + 1`.
            PaddingType::Same | PaddingType::Causal => (input > 0).then(|| input.div_ceil(stride)),
        }
    }

    /// Zero cells added before the input along one axis (`Same` puts the odd one after,
    /// `Causal` puts the whole dilated span less one before).
    pub fn pad_before(self, input: usize, kernel: usize, stride: usize, dilation: usize) -> usize {
        match self {
            PaddingType::Valid => 0,
            PaddingType::Causal => dilation.saturating_mul(kernel.saturating_sub(1)),
            PaddingType::Same => {
                let span = dilation
                    .saturating_mul(kernel.saturating_sub(1))
                    .saturating_add(1);
                let out = input.div_ceil(stride);
                (out.saturating_sub(1)
                    .saturating_mul(stride)
                    .saturating_add(span))
                .saturating_sub(input)
                    / 2
            }
        }
    }

    /// Keras's name (`"valid"` / `"same"` / `"causal"`).
    pub fn name(self) -> &'static str {
        match self {
            PaddingType::Valid => "valid",
            PaddingType::Same => "same",
            PaddingType::Causal => "causal",
        }
    }

    /// `InvalidParameter` naming `layer` for `Causal`, which Keras allows on Conv1D only.
    pub(crate) fn refuse_causal(self, layer: &str) -> Result<()> {
        if self == PaddingType::Causal {
            return Err(Error::invalid_parameter(
                "padding",
                format!("{layer}: padding must be 'valid' or 'same' ('causal' is Conv1D's only)"),
            ));
        }
        Ok(())
    }
}

// Depthwise and separable convolutions (nndepth), one folder; the original's per-rank modules
// and the depthwise engine keep their paths here.
pub mod depthwise;
pub use depthwise::engine as depthwise_engine;
pub use depthwise::{depthwise_conv_1d, depthwise_conv_2d, separable_conv_1d, separable_conv_2d};
pub use depthwise::{ConvRank, DepthwiseConv, SeparableConv};
pub use depthwise_conv_1d::*;
pub use depthwise_conv_2d::*;
pub use separable_conv_1d::*;
pub use separable_conv_2d::*;

/// The family's former single file, kept as a path to its public items.
pub mod depthwise_common {
    pub use super::depthwise::{ConvRank, DepthwiseConv, DepthwiseStage, SeparableConv};
}

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

    #[test]
    fn causal_is_valid_over_the_left_padded_input() {
        use super::PaddingType::Causal;
        for n in 1..12 {
            for k in 1..5 {
                for s in 1..4 {
                    for d in 1..4 {
                        let pad = Causal.pad_before(n, k, s, d);
                        assert_eq!(pad, d * (k - 1));
                        assert_eq!(
                            Causal.output_len(n, k, s, d),
                            Valid.output_len(n + pad, k, s, d),
                            "n={n} k={k} s={s} d={d}"
                        );
                    }
                }
            }
        }
        assert_eq!(Causal.output_len(7, 3, 2, 1), Some(4));
        assert_eq!(Causal.output_len(2, 3, 3, 1), Some(1));
        assert_eq!(Causal.output_len(0, 3, 1, 1), None);
        assert!(Causal
            .refuse_causal("Conv2D")
            .unwrap_err()
            .to_string()
            .contains("Conv2D"));
        assert!(Same.refuse_causal("Conv2D").is_ok());
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
