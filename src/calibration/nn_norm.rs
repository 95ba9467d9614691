//! Ladders of the normalisation gates (`tuning::norm`): one training forward and backward of
//! the layer whose pass each gate governs, at sizes on both sides of the shipped 262_144.

use super::harness::{ladder, Family, Rung};
use crate::neural_network::layers::regularization::normalization::{
    BatchNormalization, GroupNormalization, LayerNormalization,
};
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, Dimension, IxDyn};
use std::hint::black_box;

const SIZES: [usize; 6] = [65_536, 131_072, 262_144, 524_288, 1_048_576, 4_194_304];

/// Builds the layer for an input shape.
type MakeLayer = fn(Vec<usize>) -> Box<dyn Layer>;

/// Rungs running `forward` + `backward` of the layer `make(shape)` on `[n / tail, tail..]`.
fn rungs(quick: bool, what: &str, tail: &'static [usize], make: MakeLayer) -> Vec<Rung> {
    ladder(quick, SIZES)
        .map(|n| {
            let mut shape = vec![n / tail.iter().product::<usize>()];
            shape.extend_from_slice(tail);
            Rung::new(format!("{what} {shape:?}"), n, move || {
                let x = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
                    (i.slice().iter().sum::<usize>() as f32 * 0.37).sin()
                });
                let g = x.mapv(|v| v * 0.5 + 0.1);
                let mut layer = make(shape);
                move || {
                    black_box(layer.forward(black_box(&x)).unwrap());
                    black_box(layer.backward(black_box(&g)).unwrap());
                }
            })
        })
        .collect()
}

fn bn(quick: bool) -> Vec<Rung> {
    rungs(quick, "batch norm", &[64], |s| {
        Box::new(BatchNormalization::new(s, 0.9, 1e-3).unwrap())
    })
}

fn ln(quick: bool) -> Vec<Rung> {
    rungs(quick, "layer norm", &[256], |s| {
        Box::new(LayerNormalization::new(s, 1e-3).unwrap())
    })
}

fn gn(quick: bool) -> Vec<Rung> {
    rungs(quick, "group norm", &[64, 32], |s| {
        Box::new(GroupNormalization::new(s, 8, 1e-3).unwrap())
    })
}

pub fn families(quick: bool) -> Vec<Family> {
    let gate = |name| crate::gate::find_gate("norm", name).expect("declared by the engine");
    let family = |title: &str, name, rungs| Family {
        title: format!("{title} (norm::{name})"),
        gate: gate(name),
        rungs,
    };
    vec![
        family(
            "BatchNormalization elementwise passes",
            "batch_norm",
            bn(quick),
        ),
        family("BatchNormalization statistics", "bn_col_stats", bn(quick)),
        family(
            "BatchNormalization gamma/beta gradients",
            "bn_plane_stats",
            bn(quick),
        ),
        family("LayerNormalization row passes", "ln_row", ln(quick)),
        family(
            "LayerNormalization gamma/beta gradients",
            "ln_col_stats",
            ln(quick),
        ),
        family("GroupNormalization per-group passes", "gn_row", gn(quick)),
        family(
            "GroupNormalization gamma/beta gradients",
            "gn_param_grad",
            gn(quick),
        ),
    ]
}
