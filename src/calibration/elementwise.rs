//! Ladders of the f64 elementwise gates.

use super::harness::{by_index, ladders, Family, Rung, MEMORY_BOUND_SIZES};
use crate::math::elementwise::{self, CHEAP_MAP_F64, EXP_MAP_F64};

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "f64 sigmoid map (EXP_MAP_F64)": &EXP_MAP_F64,
            [4_096, 16_384, 32_768, 65_536, 131_072, 262_144, 1_048_576] => sigmoid;
        "f64 row softmax (EXP_MAP_F64)": &EXP_MAP_F64,
            [(1_024, 10), (4_096, 10), (8_192, 8), (16_384, 4), (16_384, 10), (65_536, 10)] => softmax;
        "f64 RBF kernel map (EXP_MAP_F64)": &EXP_MAP_F64,
            [(64, 64), (128, 128), (181, 181), (256, 256), (512, 512), (1024, 1024)] => rbf;
        "f64 cheap map (CHEAP_MAP_F64)": &CHEAP_MAP_F64, MEMORY_BOUND_SIZES => center_scale;
    ]
}

fn sigmoid(n: usize) -> Rung {
    let input = move || by_index(n / 8, 8, |t| (t * 0.37).sin() * 6.0);
    Rung::map_in_place(
        format!("sigmoid n={n}"),
        n,
        input,
        elementwise::sigmoid_inplace,
    )
}

fn softmax((n, k): (usize, usize)) -> Rung {
    let input = move || by_index(n, k, |t| (t * 0.11).cos() * 4.0);
    Rung::map_in_place(format!("softmax rows {n}x{k}"), n * k, input, |y| {
        elementwise::softmax_rows_inplace(y.view_mut())
    })
}

fn rbf((m, n): (usize, usize)) -> Rung {
    let squared_distances = move || by_index(m, n, |t| (t * 0.05).sin().abs() * 10.0);
    Rung::map_in_place(format!("rbf map {m}x{n}"), m * n, squared_distances, |y| {
        elementwise::exp_map_inplace(y, |d2| (-0.3 * d2).exp())
    })
}

/// Centre-and-scale of an n x 20 matrix (the scalers' transform).
fn center_scale(elems: usize) -> Rung {
    let d = 20;
    let n = elems / d;
    let setup = move || {
        let center: Vec<f64> = (0..d).map(|j| j as f64 * 0.1).collect();
        let scale: Vec<f64> = (0..d).map(|j| 1.0 + j as f64).collect();
        (by_index(n, d, |t| (t * 0.37).sin()), center, scale)
    };
    Rung::on(
        format!("center+scale {n}x{d}"),
        n * d,
        setup,
        |(x, center, scale)| elementwise::center_scale_columns(x.view(), Some(center), Some(scale)),
    )
}
