//! Ladder of the upsampling resize gate (`tuning::upsampling::parallel_min_ops`), at batch 1
//! so the rungs measure the split over output rows rather than over samples.

use super::harness::{ladder, Family, Rung};
use crate::neural_network::layers::upsampling::{Interpolation, UpSampling2D};
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, IxDyn};
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let channels = 8usize;
    let rungs = ladder(quick, [16usize, 32, 64, 128, 181, 256, 362])
        .map(|side| {
            // The column pass is the larger one: (2 side)^2 x channels outputs, ~2 taps each.
            let work = (2 * side) * (2 * side) * channels * 2;
            Rung::new(
                format!("bilinear 2x [1, {side}, {side}, {channels}]"),
                work,
                move || {
                    let shape = [1, side, side, channels];
                    let x =
                        ArrayD::from_shape_fn(IxDyn(&shape), |i| ((i[1] * 3 + i[2]) % 17) as f32);
                    let layer = UpSampling2D::new(2, Interpolation::Bilinear).unwrap();
                    move || {
                        black_box(layer.predict(black_box(&x)).unwrap());
                    }
                },
            )
        })
        .collect();
    vec![Family {
        title: "upsampling resize (UPSAMPLING_PARALLEL_MIN_OPS)".into(),
        gate: crate::gate::find_gate("upsampling", "parallel_min_ops")
            .expect("declared with the upsampling engine"),
        rungs,
    }]
}
