//! Ladders of the elementwise gates.

use crate::harness::{Family, Rung};
use ndarray::Array2;
use rustyml::math::elementwise;
use std::hint::black_box;

pub fn families() -> Vec<Family> {
    // Centre-and-scale of an n x 20 matrix (the scalers' transform).
    let d = 20;
    let rungs = [
        262_144usize,
        1_048_576,
        2_097_152,
        4_194_304,
        8_388_608,
        16_777_216,
    ]
    .into_iter()
    .map(|elems| {
        let n = elems / d;
        let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * d + j) as f64 * 0.37).sin());
        let center: Vec<f64> = (0..d).map(|j| j as f64 * 0.1).collect();
        let scale: Vec<f64> = (0..d).map(|j| 1.0 + j as f64).collect();
        Rung::new(format!("center+scale {n}x{d}"), n * d, move || {
            black_box(elementwise::center_scale_columns(
                black_box(x.view()),
                Some(&center),
                Some(&scale),
            ));
        })
    })
    .collect();
    vec![Family {
        title: "f64 cheap map (CHEAP_MAP_F64)".into(),
        gate: &elementwise::CHEAP_MAP_F64,
        rungs,
    }]
}
