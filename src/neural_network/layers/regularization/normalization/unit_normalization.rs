//! Unit (L2) normalisation over chosen axes, as Keras's `UnitNormalization`.

use super::common::{
    axis_option, check_axis_list, resolve_axes, slice_of, summary_shape, AxisPlan,
};
use crate::error::{Error, Result};
use crate::neural_network::layers::layer_util::{forward_cache, no_parameters};
// A memory-bound per-row map: the crate's cheap f32 map gate, as in the original.
use crate::neural_network::layers::activation::CHEAP_MAP_F32 as ROW_GATE;
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use rayon::prelude::*;

const NAME: &str = "UnitNormalization";

/// A group's scale, and whether the cap set it.
type Scale = (f32, bool);

/// The largest scale a group receives: Keras's `x * min(rsqrt(sum(x^2)), 1e12)` keeps an
/// all-zero (or tiny) group finite.
const CAP: f32 = 1e12;

/// Values per task of the row passes (whole rows, at least one).
const ROW_CHUNK: usize = 16_384;

axis_option! {
    /// The axes UnitNormalization normalises over.
    UnitNormalizationAxis
}

/// What a forward keeps: the output in the permuted layout and each group's scale.
#[derive(Debug)]
struct Saved {
    plan: AxisPlan,
    shape: Vec<usize>,
    y: Vec<f32>,
    /// Per group: the scale applied, and whether the cap set it.
    scales: Vec<Scale>,
}

/// Scales every group of values along the chosen axes to unit L2 length:
/// `y = x * min(1 / sqrt(sum(x^2)), 1e12)`, the sum in f32 as Keras takes it (a sum that
/// overflows gives a scale of 0, a NaN spreads over its group). No parameters.
#[derive(Debug)]
pub struct UnitNormalization {
    axis: UnitNormalizationAxis,
    cache: Option<Saved>,
    last_shape: Option<Vec<usize>>,
}

/// A group's scale, and whether the cap set it.
fn group_scale(row: &[f32]) -> Scale {
    let sum_sq: f32 = row.iter().map(|v| v * v).sum();
    let r = 1.0 / sum_sq.sqrt();
    // `r > CAP` is false for NaN, which therefore passes through and spreads.
    if r > CAP {
        (CAP, true)
    } else {
        (r, false)
    }
}

/// `f(row, out_row, group_index)` over groups of `len` values, forking whole-row chunks when
/// the gate allows; each group depends on its own values only.
fn rows_mut(
    out: &mut [f32],
    len: usize,
    f: impl Fn(usize, &mut [f32]) -> Scale + Sync,
) -> Vec<Scale> {
    let rows = out.len() / len;
    let per_task = (ROW_CHUNK / len).max(1);
    let mut scales = vec![(0.0f32, false); rows];
    let task = |(k, (o, s)): (usize, (&mut [f32], &mut [Scale]))| {
        for (j, (orow, sc)) in o.chunks_exact_mut(len).zip(s.iter_mut()).enumerate() {
            *sc = f(k * per_task + j, orow);
        }
    };
    if ROW_GATE.allows_parallel(out.len()) {
        out.par_chunks_mut(per_task * len)
            .zip(scales.par_chunks_mut(per_task))
            .enumerate()
            .for_each(task);
    } else {
        out.chunks_mut(per_task * len)
            .zip(scales.chunks_mut(per_task))
            .enumerate()
            .for_each(task);
    }
    scales
}

impl UnitNormalization {
    /// An axis list must be non-empty and without repeats; axes are checked against each
    /// input's rank.
    pub fn new(axis: UnitNormalizationAxis) -> Result<Self> {
        if let UnitNormalizationAxis::Multiple(list) = &axis {
            check_axis_list(list)?;
        }
        Ok(Self {
            axis,
            cache: None,
            last_shape: None,
        })
    }

    /// Checks an input and normalises it (the output stays in the permuted layout).
    fn run(&self, input: &Tensor) -> Result<Saved> {
        let ndim = input.ndim();
        if ndim < 2 {
            return Err(Error::invalid_input(format!(
                "UnitNormalization needs an input of rank >= 2, got rank {ndim}"
            )));
        }
        let axes = resolve_axes(self.axis.choice(), ndim, Error::invalid_input)?;
        if input.is_empty() {
            return Err(Error::empty_input("UnitNormalization input"));
        }
        let plan = AxisPlan::new(input.shape(), &axes);
        let xp = plan.gather(input);
        let x = slice_of(&xp);
        let len = plan.len;
        let mut y = vec![0.0f32; x.len()];
        let scales = rows_mut(&mut y, len, |r, out| {
            let row = &x[r * len..(r + 1) * len];
            let (scale, capped) = group_scale(row);
            out.iter_mut().zip(row).for_each(|(o, &v)| *o = v * scale);
            (scale, capped)
        });
        Ok(Saved {
            plan,
            shape: input.shape().to_vec(),
            y,
            scales,
        })
    }
}

impl Layer for UnitNormalization {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let saved = self.run(input)?;
        let out = saved.plan.scatter(saved.y.clone());
        self.last_shape = Some(input.shape().to_vec());
        self.cache = Some(saved);
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let Saved { plan, y, .. } = self.run(input)?;
        Ok(plan.scatter(y))
    }

    /// Uncapped group: `dx = s * (g - y * <g, y>)`; capped group: the scale is a constant, so
    /// `dx = cap * g`.
    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let saved = forward_cache(&self.cache, NAME)?;
        if grad_output.shape() != saved.shape.as_slice() {
            return Err(Error::shape_mismatch(
                saved.shape.clone(),
                grad_output.shape().to_vec(),
            ));
        }
        let gp = saved.plan.gather(grad_output);
        let g = slice_of(&gp);
        let len = saved.plan.len;
        let mut dx = vec![0.0f32; g.len()];
        rows_mut(&mut dx, len, |r, out| {
            let span = r * len..(r + 1) * len;
            let (grow, yrow) = (&g[span.clone()], &saved.y[span]);
            let (scale, capped) = saved.scales[r];
            if capped {
                out.iter_mut().zip(grow).for_each(|(o, &gv)| *o = CAP * gv);
            } else {
                let dot: f32 = grow.iter().zip(yrow).map(|(a, b)| a * b).sum();
                out.iter_mut()
                    .zip(grow.iter().zip(yrow))
                    .for_each(|(o, (&gv, &yv))| *o = scale * (gv - yv * dot));
            }
            saved.scales[r]
        });
        Ok(saved.plan.scatter(dx))
    }

    fn layer_type(&self) -> &str {
        NAME
    }

    fn output_shape(&self) -> String {
        self.last_shape
            .as_deref()
            .map_or_else(|| "Unknown".to_string(), summary_shape)
    }

    no_parameters!();
}
