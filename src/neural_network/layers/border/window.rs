//! The one N-d routine behind every border layer: a copy through a box-shaped window.
//! Padding's forward and cropping's backward copy *into* a window of a zero tensor; cropping's
//! forward and padding's backward copy *out of* one, so each pass is the other's transpose.

use crate::error::{Error, Result};
use crate::neural_network::layers::layer_util::{forward_cache, require_shape, seen_shape};
use crate::neural_network::Tensor;
use ndarray::{AxisDescription, IxDyn, Slice};

/// Whether the layer grows or shrinks its spatial axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Pad,
    Crop,
}

/// Copies `src` into a new zero tensor of `dst_shape` through the window starting at
/// `starts`: into the window when `dst` is the larger tensor, out of it when `src` is.
fn transfer(src: &Tensor, dst_shape: &[usize], starts: &[usize], into_window: bool) -> Tensor {
    let mut dst = Tensor::zeros(IxDyn(dst_shape));
    let extent = if into_window { src.shape() } else { dst_shape }.to_vec();
    let window = |axis: AxisDescription| {
        let k = axis.axis.index();
        Slice::from(starts[k]..starts[k] + extent[k])
    };
    if into_window {
        dst.slice_each_axis_mut(window).assign(src);
    } else {
        dst.assign(&src.slice_each_axis(window));
    }
    dst
}

/// The state every border layer shares: its name, direction, amounts and the shapes of the
/// last training pass (the batch axis is free, so each pass records its own).
#[derive(Debug)]
pub(crate) struct BorderCore {
    name: &'static str,
    mode: Mode,
    /// `(before, after)` per spatial axis.
    border: Vec<(usize, usize)>,
    /// Input and output shapes of the last `forward`.
    shapes: Option<(Vec<usize>, Vec<usize>)>,
}

impl BorderCore {
    pub(crate) fn new(name: &'static str, mode: Mode, border: Vec<(usize, usize)>) -> Self {
        Self {
            name,
            mode,
            border,
            shapes: None,
        }
    }

    /// Window origin in the larger tensor: `before` on each spatial axis, 0 on batch/channels.
    fn starts(&self) -> Vec<usize> {
        let mut starts = vec![0];
        starts.extend(self.border.iter().map(|&(before, _)| before));
        starts.push(0);
        starts
    }

    /// Validates `input` and returns the output shape.
    fn output_for(&self, input: &Tensor) -> Result<Vec<usize>> {
        let spatial = self.border.len();
        if input.ndim() != spatial + 2 {
            return Err(Error::invalid_input(format!(
                "{} expects a {}D input [batch, {}channels], got shape {:?}",
                self.name,
                spatial + 2,
                "spatial, ".repeat(spatial),
                input.shape()
            )));
        }
        if input.is_empty() {
            return Err(Error::empty_input(format!(
                "{}: input of shape {:?} has no element",
                self.name,
                input.shape()
            )));
        }
        let mut shape = input.shape().to_vec();
        for (k, &(before, after)) in self.border.iter().enumerate() {
            let extent = shape[k + 1];
            let total = before.checked_add(after);
            shape[k + 1] = match (self.mode, total) {
                (Mode::Pad, Some(t)) if t.checked_add(extent).is_some() => extent + t,
                (Mode::Crop, Some(t)) if t < extent => extent - t,
                _ => {
                    return Err(Error::invalid_input(format!(
                        "{}: border ({before}, {after}) on spatial axis {k} {} extent {extent} of input {:?}",
                        self.name,
                        if self.mode == Mode::Pad {
                            "does not fit in usize with"
                        } else {
                            "leaves no position of"
                        },
                        input.shape()
                    )))
                }
            };
        }
        if shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .is_none()
        {
            return Err(Error::invalid_input(format!(
                "{}: output shape {shape:?} does not fit in usize",
                self.name
            )));
        }
        crate::neural_network::layers::size_guard::check_f32_alloc(self.name, "output", &shape)?;
        Ok(shape)
    }

    pub(crate) fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let out_shape = self.output_for(input)?;
        Ok(transfer(
            input,
            &out_shape,
            &self.starts(),
            self.mode == Mode::Pad,
        ))
    }

    pub(crate) fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.predict(input)?;
        self.shapes = Some((input.shape().to_vec(), out.shape().to_vec()));
        Ok(out)
    }

    pub(crate) fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (input_shape, output_shape) = forward_cache(&self.shapes, self.name)?;
        require_shape(output_shape, grad_output.shape())?;
        // The transpose of the forward copy: the window moves to the other side.
        Ok(transfer(
            grad_output,
            input_shape,
            &self.starts(),
            self.mode == Mode::Crop,
        ))
    }

    pub(crate) fn output_shape(&self) -> String {
        seen_shape(self.shapes.as_ref().map(|(_, out)| out.as_slice()))
    }
}
