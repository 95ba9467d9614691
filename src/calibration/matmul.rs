//! Ladder of the tiled-product strategy knob `matmul::cache_resident_max_bytes`.
//!
//! Here the harness's "serial" column is the knob at `usize::MAX` (every right operand counts
//! as cache resident: row chunks run as a rayon swarm of serial products) and its "parallel"
//! column the knob at `0` (chunks run one after another, each product parallel inside
//! gemmkit). The work column is the right operand's size in bytes, the unit the knob compares.

use super::harness::{ladder, Family, Rung};
use crate::math::matmul;
use ndarray::Array2;
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let rungs = ladder(
        quick,
        [
            (4_096usize, 64usize, 32usize),
            (8_192, 256, 32),
            (4_096, 1_024, 64),
            (2_048, 4_096, 64),
            (1_024, 16_384, 32),
        ],
    )
    .map(|(m, n, d)| {
        Rung::new(format!("tiled {m}x{d} . {d}x{n}"), d * n * 8, move || {
            let a = Array2::from_shape_fn((m, d), |(i, j)| ((i * d + j) as f64 * 0.13).sin());
            let b = Array2::from_shape_fn((d, n), |(i, j)| ((i * n + j) as f64 * 0.07).cos());
            // small chunks so both strategies have several chunks to schedule
            let chunk = (m / 8).max(1) * n;
            move || {
                crate::gate::with_gate(&matmul::CHUNK_ELEMS, chunk, || {
                    matmul::tiled_product(a.view(), b.view(), |_, c| {
                        black_box(c[[0, 0]]);
                    })
                    .unwrap()
                })
            }
        })
    })
    .collect();
    vec![Family {
        title: "tiled product: swarm (serial column) vs sequential chunks (parallel column) (CACHE_RESIDENT_MAX_BYTES)".into(),
        gate: &matmul::CACHE_RESIDENT_MAX_BYTES,
        rungs,
    }]
}
