//! Ladders of the network core's gates: fused optimizer slice updates and the f32 sum of
//! squares behind clip-by-global-norm.

use super::harness::{ladder, Family, Rung};
use crate::math::reduction;
use crate::neural_network::optimizers::kernels;
use std::hint::black_box;

const SIZES: [usize; 7] = [
    65_536, 262_144, 524_288, 1_000_000, 2_000_000, 4_000_000, 8_000_000,
];

fn gradient(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}

pub fn families(quick: bool) -> Vec<Family> {
    let adam_rungs = ladder(quick, SIZES)
        .map(|n| {
            Rung::new(format!("adam step n={n}"), n, move || {
                let grad = gradient(n);
                let mut param = vec![0.5f32; n];
                let (mut m, mut v) = (vec![0.0f32; n], vec![0.0f32; n]);
                move || {
                    kernels::adam_step(
                        &mut param, &grad, &mut m, &mut v, 1e-3, 0.9, 0.999, 1e-7, 10,
                    );
                    black_box(&param);
                }
            })
        })
        .collect();
    let sgd_rungs = ladder(quick, SIZES)
        .map(|n| {
            Rung::new(format!("sgd step n={n}"), n, move || {
                let grad = gradient(n);
                let mut param = vec![0.5f32; n];
                move || {
                    kernels::sgd_step(&mut param, &grad, 1e-3);
                    black_box(&param);
                }
            })
        })
        .collect();
    let sq_rungs = ladder(
        quick,
        [
            8_192usize, 16_384, 32_768, 65_536, 131_072, 262_144, 1_048_576,
        ],
    )
    .map(|n| {
        Rung::new(format!("sq sum f32 n={n}"), n, move || {
            let g = gradient(n);
            move || {
                black_box(reduction::sq_sum_f32(black_box(&g)));
            }
        })
    })
    .collect();
    vec![
        Family {
            title: "f32 optimizer slices: Adam (FUSED_SLICE)".into(),
            gate: &kernels::FUSED_SLICE,
            rungs: adam_rungs,
        },
        Family {
            title: "f32 optimizer slices: SGD (FUSED_SLICE)".into(),
            gate: &kernels::FUSED_SLICE,
            rungs: sgd_rungs,
        },
        Family {
            title: "f32 sum of squares (SQ_SUM_F32)".into(),
            gate: &reduction::SQ_SUM_F32,
            rungs: sq_rungs,
        },
    ]
}
