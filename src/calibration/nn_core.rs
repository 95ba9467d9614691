//! Ladders of the network core's gates: fused optimizer slice updates and the f32 sum of
//! squares behind clip-by-global-norm.

use super::harness::{ladders, Family, Rung};
use crate::math::reduction::{self, SQ_SUM_F32};
use crate::neural_network::optimizers::kernels::{self, FUSED_SLICE};

const SIZES: [usize; 7] = [
    65_536, 262_144, 524_288, 1_000_000, 2_000_000, 4_000_000, 8_000_000,
];

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "f32 optimizer slices: Adam (FUSED_SLICE)": &FUSED_SLICE, SIZES => adam;
        "f32 optimizer slices: SGD (FUSED_SLICE)": &FUSED_SLICE, SIZES => sgd;
        "f32 sum of squares (SQ_SUM_F32)": &SQ_SUM_F32,
            [8_192, 16_384, 32_768, 65_536, 131_072, 262_144, 1_048_576] => sq_sum;
    ]
}

fn gradient(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}

fn adam(n: usize) -> Rung {
    let setup = move || {
        (
            gradient(n),
            vec![0.5f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
        )
    };
    Rung::on(
        format!("adam step n={n}"),
        n,
        setup,
        |(grad, param, m, v)| {
            kernels::adam_step(param, grad, m, v, 1e-3, 0.9, 0.999, 1e-7, 10);
        },
    )
}

fn sgd(n: usize) -> Rung {
    let setup = move || (gradient(n), vec![0.5f32; n]);
    Rung::on(format!("sgd step n={n}"), n, setup, |(grad, param)| {
        kernels::sgd_step(param, grad, 1e-3)
    })
}

fn sq_sum(n: usize) -> Rung {
    Rung::on(
        format!("sq sum f32 n={n}"),
        n,
        move || gradient(n),
        |g| reduction::sq_sum_f32(g),
    )
}
