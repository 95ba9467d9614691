//! Ladder of the im2col/GEMM convolution gate (`conv::parallel_min_flops`): Conv2D forward
//! passes, 3x3 and 1x1 kernels, a few channel counts and sizes, batch 1 and 32.

use super::harness::{ladder, Family, Rung};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::convolution::{Conv2D, PaddingType};
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, IxDyn};
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let gate = crate::gate::find_gate("conv", "parallel_min_flops")
        .expect("the conv engine declares its gate");
    // (batch, side, channels in, filters, kernel)
    let shapes = [
        (1usize, 8usize, 8usize, 8usize, 3usize),
        (1, 16, 16, 16, 3),
        (1, 32, 16, 32, 3),
        (1, 32, 64, 64, 1),
        (1, 32, 64, 64, 3),
        (1, 64, 64, 64, 3),
        (32, 8, 8, 16, 3),
        (32, 16, 16, 32, 3),
        (32, 16, 64, 64, 1),
        (32, 32, 32, 64, 3),
    ];
    let rungs = ladder(quick, shapes)
        .map(|(batch, side, cin, filters, k)| {
            let flops = 2 * batch * side * side * k * k * cin * filters;
            Rung::new(
                format!("conv2d {k}x{k} b={batch} {side}x{side} {cin}->{filters}"),
                flops,
                move || {
                    let x = ArrayD::from_shape_fn(IxDyn(&[batch, side, side, cin]), |i| {
                        ((i[1] * 7 + i[2] * 3 + i[3]) % 17) as f32 * 0.1 - 0.8
                    });
                    let layer = Conv2D::new(
                        filters,
                        (k, k),
                        vec![batch, side, side, cin],
                        (1, 1),
                        Activation::ReLU,
                    )
                    .unwrap()
                    .with_padding(PaddingType::Same)
                    .with_random_state(3);
                    move || {
                        black_box(layer.predict(black_box(&x)).unwrap());
                    }
                },
            )
        })
        .collect();
    vec![Family {
        title: "Conv2D forward, im2col + GEMM (CONV_PARALLEL_MIN_FLOPS)".into(),
        gate,
        rungs,
    }]
}
