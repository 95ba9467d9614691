//! Ladders of the normalisation gates (`tuning::norm`): one training forward and backward of
//! the layer whose pass each gate governs, at sizes on both sides of the shipped 262_144.

use crate::harness::{Family, Rung};
use ndarray::{ArrayD, Dimension, IxDyn};
use rustyml::neural_network::layers::regularization::normalization::{
    BatchNormalization, GroupNormalization, LayerNormalization,
};
use rustyml::neural_network::traits::Layer;
use std::hint::black_box;

const SIZES: [usize; 6] = [65_536, 131_072, 262_144, 524_288, 1_048_576, 4_194_304];

/// Rungs running `forward` + `backward` of the layer `make(shape)` on `[n / tail, tail..]`.
fn rungs(what: &str, tail: &[usize], make: impl Fn(Vec<usize>) -> Box<dyn Layer>) -> Vec<Rung> {
    SIZES
        .into_iter()
        .map(|n| {
            let mut shape = vec![n / tail.iter().product::<usize>()];
            shape.extend_from_slice(tail);
            let x = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
                (i.slice().iter().sum::<usize>() as f32 * 0.37).sin()
            });
            let g = x.mapv(|v| v * 0.5 + 0.1);
            let mut layer = make(shape.clone());
            Rung::new(format!("{what} {shape:?}"), n, move || {
                black_box(layer.forward(black_box(&x)).unwrap());
                black_box(layer.backward(black_box(&g)).unwrap());
            })
        })
        .collect()
}

fn bn() -> Vec<Rung> {
    rungs("batch norm", &[64], |s| {
        Box::new(BatchNormalization::new(s, 0.9, 1e-3).unwrap())
    })
}

fn ln() -> Vec<Rung> {
    rungs("layer norm", &[256], |s| {
        Box::new(LayerNormalization::new(s, 1e-3).unwrap())
    })
}

fn gn() -> Vec<Rung> {
    rungs("group norm", &[64, 32], |s| {
        Box::new(GroupNormalization::new(s, 8, 1e-3).unwrap())
    })
}

pub fn families() -> Vec<Family> {
    let gate = |name| rustyml::gate::find_gate("norm", name).expect("declared by the engine");
    let family = |title: &str, name, rungs| Family {
        title: format!("{title} (norm::{name})"),
        gate: gate(name),
        rungs,
    };
    vec![
        family("BatchNormalization elementwise passes", "batch_norm", bn()),
        family("BatchNormalization statistics", "bn_col_stats", bn()),
        family(
            "BatchNormalization gamma/beta gradients",
            "bn_plane_stats",
            bn(),
        ),
        family("LayerNormalization row passes", "ln_row", ln()),
        family(
            "LayerNormalization gamma/beta gradients",
            "ln_col_stats",
            ln(),
        ),
        family("GroupNormalization per-group passes", "gn_row", gn()),
        family(
            "GroupNormalization gamma/beta gradients",
            "gn_param_grad",
            gn(),
        ),
    ]
}
