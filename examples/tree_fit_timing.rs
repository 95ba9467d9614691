//! Fit time of the original-API decision tree on 20k x 10 random data (classification with
//! CART / ID3 / C4.5, regression with CART). Run with `cargo run --example tree_fit_timing`.

use ndarray::{Array1, Array2};
use rustyml::machine_learning::{Algorithm, DecisionTree};
use std::time::Instant;

/// A reproducible uniform value in [0, 1) (splitmix64), so the data need no RNG crate.
fn uniform(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as f64 / 2f64.powi(64)
}

fn main() {
    let (n, d) = (20_000, 10);
    let x = Array2::from_shape_fn((n, d), |(i, j)| uniform((i * d + j) as u64));
    let signal = |i: usize| x[[i, 0]] + 0.5 * x[[i, 1]] - x[[i, 2]] * x[[i, 3]];
    let yr = Array1::from_shape_fn(n, |i| signal(i) + 0.3 * uniform((n * d + i) as u64));
    let yc = yr.mapv(|v| (v * 2.0).floor().clamp(0.0, 2.0));
    for (alg, classify) in [
        (Algorithm::CART, true),
        (Algorithm::ID3, true),
        (Algorithm::C45, true),
        (Algorithm::CART, false),
    ] {
        let y = if classify { &yc } else { &yr };
        let mut best = f64::INFINITY;
        let mut preds = None;
        for _ in 0..3 {
            let mut t = DecisionTree::new(alg, classify).unwrap();
            let start = Instant::now();
            t.fit(&x, y).unwrap();
            best = best.min(start.elapsed().as_secs_f64());
            preds = Some(t.predict(&x).unwrap());
        }
        let checksum: f64 = preds.unwrap().sum();
        println!(
            "{alg:?} classifier={classify}: best of 3 fits {best:.3} s (prediction sum {checksum})"
        );
    }
}
