//! Ladders of the f64 elementwise gates.

use super::harness::{ladder, Family, Rung};
use crate::math::elementwise;
use ndarray::Array2;
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let sigmoid_rungs = ladder(
        quick,
        [
            4_096usize, 16_384, 32_768, 65_536, 131_072, 262_144, 1_048_576,
        ],
    )
    .map(|n| {
        Rung::new(format!("sigmoid n={n}"), n, move || {
            let x =
                Array2::from_shape_fn((n / 8, 8), |(i, j)| ((i * 8 + j) as f64 * 0.37).sin() * 6.0);
            let mut y = x.clone();
            move || {
                y.assign(&x);
                elementwise::sigmoid_inplace(black_box(&mut y));
            }
        })
    })
    .collect();
    let softmax_rungs = ladder(
        quick,
        [
            (1_024usize, 10usize),
            (4_096, 10),
            (8_192, 8),
            (16_384, 4),
            (16_384, 10),
            (65_536, 10),
        ],
    )
    .map(|(n, k)| {
        Rung::new(format!("softmax rows {n}x{k}"), n * k, move || {
            let x = Array2::from_shape_fn((n, k), |(i, j)| ((i * k + j) as f64 * 0.11).cos() * 4.0);
            let mut y = x.clone();
            move || {
                y.assign(&x);
                elementwise::softmax_rows_inplace(black_box(y.view_mut()));
            }
        })
    })
    .collect();
    let rbf_rungs = ladder(
        quick,
        [
            (64usize, 64usize),
            (128, 128),
            (181, 181),
            (256, 256),
            (512, 512),
            (1024, 1024),
        ],
    )
    .map(|(m, n)| {
        Rung::new(format!("rbf map {m}x{n}"), m * n, move || {
            let x = Array2::from_shape_fn((m, n), |(i, j)| {
                ((i * n + j) as f64 * 0.05).sin().abs() * 10.0
            });
            let mut y = x.clone();
            move || {
                y.assign(&x);
                elementwise::exp_map_inplace(black_box(&mut y), |d2| (-0.3 * d2).exp());
            }
        })
    })
    .collect();
    // Centre-and-scale of an n x 20 matrix (the scalers' transform).
    let d = 20;
    let cheap_rungs = ladder(
        quick,
        [
            262_144usize,
            1_048_576,
            2_097_152,
            4_194_304,
            8_388_608,
            16_777_216,
        ],
    )
    .map(|elems| {
        let n = elems / d;
        Rung::new(format!("center+scale {n}x{d}"), n * d, move || {
            let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * d + j) as f64 * 0.37).sin());
            let center: Vec<f64> = (0..d).map(|j| j as f64 * 0.1).collect();
            let scale: Vec<f64> = (0..d).map(|j| 1.0 + j as f64).collect();
            move || {
                black_box(elementwise::center_scale_columns(
                    black_box(x.view()),
                    Some(&center),
                    Some(&scale),
                ));
            }
        })
    })
    .collect();
    vec![
        Family {
            title: "f64 sigmoid map (EXP_MAP_F64)".into(),
            gate: &elementwise::EXP_MAP_F64,
            rungs: sigmoid_rungs,
        },
        Family {
            title: "f64 row softmax (EXP_MAP_F64)".into(),
            gate: &elementwise::EXP_MAP_F64,
            rungs: softmax_rungs,
        },
        Family {
            title: "f64 RBF kernel map (EXP_MAP_F64)".into(),
            gate: &elementwise::EXP_MAP_F64,
            rungs: rbf_rungs,
        },
        Family {
            title: "f64 cheap map (CHEAP_MAP_F64)".into(),
            gate: &elementwise::CHEAP_MAP_F64,
            rungs: cheap_rungs,
        },
    ]
}
