//! Ladder of the tiled-product strategy knob `matmul::cache_resident_max_bytes`.
//!
//! Here the harness's "serial" column is the knob at `usize::MAX` (every right operand counts
//! as cache resident: row chunks run as a rayon swarm of serial products) and its "parallel"
//! column the knob at `0` (chunks run one after another, each product parallel inside
//! gemmkit). The work column is the right operand's size in bytes, the unit the knob compares.

use super::harness::{by_index, ladders, Family, Rung};
use crate::math::matmul::{self, CACHE_RESIDENT_MAX_BYTES};
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "tiled product: swarm (serial column) vs sequential chunks (parallel column) (CACHE_RESIDENT_MAX_BYTES)":
            &CACHE_RESIDENT_MAX_BYTES,
            [(4_096, 64, 32), (8_192, 256, 32), (4_096, 1_024, 64), (2_048, 4_096, 64),
             (1_024, 16_384, 32)] => tiled;
    ]
}

fn tiled((m, n, d): (usize, usize, usize)) -> Rung {
    let operands = move || {
        (
            by_index(m, d, |t| (t * 0.13).sin()),
            by_index(d, n, |t| (t * 0.07).cos()),
        )
    };
    // small chunks so both strategies have several chunks to schedule
    let chunk = (m / 8).max(1) * n;
    Rung::on(
        format!("tiled {m}x{d} . {d}x{n}"),
        d * n * 8,
        operands,
        move |(a, b)| {
            crate::gate::with_gate(&matmul::CHUNK_ELEMS, chunk, || {
                matmul::tiled_product(a.view(), b.view(), |_, c| {
                    black_box(c[[0, 0]]);
                })
                .unwrap()
            })
        },
    )
}
