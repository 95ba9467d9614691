//! Unit tests of the upsampling layers and their resize engine. Oracles: hand-derived values,
//! a direct (non-separable, f64) evaluation of the resize definition, the transpose identity
//! `<F x, g> = <x, F^T g>`, finite differences, and serial-versus-parallel bit equality.

use super::engine::UPSAMPLING_PARALLEL_MIN_OPS;
use super::*;
use crate::error::Error;
use crate::gate::serial_and_parallel;
use crate::neural_network::layers::gradient_check::weighted_sum;
use crate::neural_network::traits::Layer;
use crate::neural_network::{NnError, Tensor};
use ndarray::IxDyn;

const MODES: [Interpolation; 5] = [
    Interpolation::Nearest,
    Interpolation::Bilinear,
    Interpolation::Bicubic,
    Interpolation::Lanczos3,
    Interpolation::Lanczos5,
];

fn varied(shape: &[usize], seed: usize) -> Tensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|k| (((k * 7 + seed * 13) % 29) as f32 - 14.0) * 0.25)
        .collect();
    Tensor::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// The kernels written from their definitions, independently of the engine.
fn reference_kernel(mode: Interpolation, x: f64) -> f64 {
    let sinc = |t: f64| {
        if t == 0.0 {
            1.0
        } else {
            (std::f64::consts::PI * t).sin() / (std::f64::consts::PI * t)
        }
    };
    match mode {
        Interpolation::Nearest => unreachable!(),
        Interpolation::Bilinear => f64::max(0.0, 1.0 - x),
        Interpolation::Bicubic => {
            let a = -0.5;
            if x <= 1.0 {
                (a + 2.0) * x.powi(3) - (a + 3.0) * x * x + 1.0
            } else if x < 2.0 {
                a * x.powi(3) - 5.0 * a * x * x + 8.0 * a * x - 4.0 * a
            } else {
                0.0
            }
        }
        Interpolation::Lanczos3 if x < 3.0 => sinc(x) * sinc(x / 3.0),
        Interpolation::Lanczos5 if x < 5.0 => sinc(x) * sinc(x / 5.0),
        _ => 0.0,
    }
}

/// Normalised weights of every input position for output `o` of an axis `n -> n * f`.
fn reference_weights(mode: Interpolation, n: usize, f: usize, o: usize) -> Vec<f64> {
    if mode == Interpolation::Nearest || f == 1 {
        return (0..n).map(|i| f64::from(u8::from(i == o / f))).collect();
    }
    let s = (o as f64 + 0.5) / f as f64 - 0.5;
    let raw: Vec<f64> = (0..n)
        .map(|i| reference_kernel(mode, (s - i as f64).abs()))
        .collect();
    let total: f64 = raw.iter().sum();
    raw.iter().map(|w| w / total).collect()
}

/// Direct evaluation of a 2D resize: every output sums every input with the product weight.
fn reference_2d(x: &Tensor, (fr, fc): (usize, usize), mode: Interpolation) -> Tensor {
    let s = x.shape();
    let (b, h, w, c) = (s[0], s[1], s[2], s[3]);
    Tensor::from_shape_fn(IxDyn(&[b, h * fr, w * fc, c]), |idx| {
        let wr = reference_weights(mode, h, fr, idx[1]);
        let wc = reference_weights(mode, w, fc, idx[2]);
        let mut acc = 0.0f64;
        for i in 0..h {
            for j in 0..w {
                acc += wr[i] * wc[j] * f64::from(x[[idx[0], i, j, idx[3]]]);
            }
        }
        acc as f32
    })
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f32::max)
}

#[test]
fn bilinear_matches_hand_derived_half_pixel_values() {
    // Row [1, 2] doubled: centres -0.25, 0.25, 0.75, 1.25 -> clamp, 1.25, 1.75, clamp.
    let x = Tensor::from_shape_vec(IxDyn(&[1, 1, 2, 1]), vec![1.0, 2.0]).unwrap();
    let mut layer = UpSampling2D::new((1, 2), Interpolation::Bilinear).unwrap();
    let out = layer.forward(&x).unwrap();
    assert_eq!(out.as_slice().unwrap(), &[1.0, 1.25, 1.75, 2.0]);
}

#[test]
fn bicubic_corner_matches_hand_derived_value() {
    // Corner centre -0.25: Keys weights 0.8671875 (d=0.25) and -0.0703125 (d=1.25) over the
    // in-range taps, renormalised: the offset along each axis is -0.0703125/0.796875.
    let x = Tensor::from_shape_vec(IxDyn(&[1, 2, 2, 1]), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let mut layer = UpSampling2D::new(2, Interpolation::Bicubic).unwrap();
    let out = layer.forward(&x).unwrap();
    let offset = -0.0703125f64 / 0.796875;
    let want = 1.0 + offset + 2.0 * offset;
    assert!((f64::from(out[[0, 0, 0, 0]]) - want).abs() < 1e-6);
}

#[test]
fn every_mode_matches_the_direct_reference() {
    for mode in MODES {
        for (shape, factors) in [
            (vec![2, 3, 4, 2], (2, 3)),
            (vec![1, 7, 2, 1], (3, 1)),
            (vec![1, 1, 1, 3], (4, 5)),
            (vec![1, 12, 5, 1], (2, 2)),
        ] {
            let x = varied(&shape, 1);
            let mut layer = UpSampling2D::new(factors, mode).unwrap();
            let out = layer.forward(&x).unwrap();
            let want = reference_2d(&x, factors, mode);
            // Each output is a <= 11x11-term sum of |x| <= 3.5 with weights summing to ~1
            // in absolute value (lobes < 1.3): rounding stays far below 1e-5.
            let err = max_abs_diff(&out, &want);
            assert!(err < 1e-5, "{mode:?} {shape:?} {factors:?}: {err}");
        }
    }
}

#[test]
fn nearest_modes_repeat_exactly() {
    let x = varied(&[2, 3, 2], 0);
    let out = UpSampling1D::new(3).unwrap().predict(&x).unwrap();
    for b in 0..2 {
        for o in 0..9 {
            for c in 0..2 {
                assert_eq!(out[[b, o, c]], x[[b, o / 3, c]]);
            }
        }
    }
    let x = varied(&[1, 2, 3, 2, 2], 0);
    let out = UpSampling3D::new((2, 1, 3)).unwrap().predict(&x).unwrap();
    assert_eq!(out.shape(), &[1, 4, 3, 6, 2]);
    for (idx, &v) in out.indexed_iter() {
        assert_eq!(v, x[[0, idx[1] / 2, idx[2], idx[3] / 3, idx[4]]]);
    }
}

#[test]
fn backward_is_the_transpose_of_forward() {
    let cases: Vec<(Box<dyn Layer>, Vec<usize>)> = MODES
        .iter()
        .map(|&m| {
            (
                Box::new(UpSampling2D::new((3, 2), m).unwrap()) as Box<dyn Layer>,
                vec![2, 4, 3, 2],
            )
        })
        .chain([
            (
                Box::new(UpSampling1D::new(4).unwrap()) as Box<dyn Layer>,
                vec![2, 3, 3],
            ),
            (
                Box::new(UpSampling3D::new((2, 3, 1)).unwrap()) as Box<dyn Layer>,
                vec![1, 2, 2, 3, 2],
            ),
        ])
        .collect();
    for (mut layer, shape) in cases {
        let x = varied(&shape, 2);
        let out = layer.forward(&x).unwrap();
        let g = varied(out.shape(), 5);
        let grad = layer.backward(&g).unwrap();
        assert_eq!(grad.shape(), x.shape());
        let fwd: f64 = out.iter().zip(&g).map(|(&a, &b)| f64::from(a * b)).sum();
        let bwd: f64 = x.iter().zip(&grad).map(|(&a, &b)| f64::from(a * b)).sum();
        // Both sides round each of ~|out| products once: bound by n * eps * sum|terms|.
        let scale: f64 = out
            .iter()
            .zip(&g)
            .map(|(&a, &b)| f64::from((a * b).abs()))
            .sum();
        let tol = out.len() as f64 * f64::from(f32::EPSILON) * scale.max(1.0);
        assert!(
            (fwd - bwd).abs() <= tol,
            "{}: {fwd} vs {bwd}",
            layer.layer_type()
        );
    }
}

#[test]
fn gradient_matches_finite_differences() {
    for mode in MODES {
        let mut layer = UpSampling2D::new((2, 3), mode).unwrap();
        let x = varied(&[1, 3, 4, 1], 3);
        let out = layer.forward(&x).unwrap();
        let w = varied(out.shape(), 9);
        let grad = layer.backward(&w).unwrap();
        let loss = |t: &Tensor| weighted_sum(&layer.predict(t).unwrap(), &w);
        // The layer is linear, so a wide step has no truncation error; f32 rounding of the
        // outputs (~1e-7 relative, |loss terms| <= ~50) bounds the numeric error.
        let eps = 0.5f32;
        for k in 0..x.len() {
            let mut xp = x.clone();
            let mut xm = x.clone();
            xp.as_slice_mut().unwrap()[k] += eps;
            xm.as_slice_mut().unwrap()[k] -= eps;
            let numeric = (loss(&xp) - loss(&xm)) / (2.0 * f64::from(eps));
            let analytic = f64::from(grad.as_slice().unwrap()[k]);
            assert!(
                (numeric - analytic).abs() < 1e-3,
                "{mode:?} {k}: {numeric} vs {analytic}"
            );
        }
    }
}

#[test]
fn serial_and_parallel_agree_bitwise_forward_and_backward() {
    for mode in MODES {
        for shape in [vec![1, 9, 7, 3], vec![3, 5, 6, 1]] {
            let x = varied(&shape, 4);
            let (s, p) = serial_and_parallel(&UPSAMPLING_PARALLEL_MIN_OPS, || {
                let mut layer = UpSampling2D::new((2, 3), mode).unwrap();
                let out = layer.forward(&x).unwrap();
                let g = varied(out.shape(), 6);
                (out, layer.backward(&g).unwrap())
            });
            assert_eq!(s.0.as_slice().unwrap(), p.0.as_slice().unwrap());
            assert_eq!(s.1.as_slice().unwrap(), p.1.as_slice().unwrap());
        }
    }
    let x = varied(&[1, 3, 4, 5, 2], 7);
    let (s, p) = serial_and_parallel(&UPSAMPLING_PARALLEL_MIN_OPS, || {
        let mut layer = UpSampling3D::new((2, 3, 2)).unwrap();
        let out = layer.forward(&x).unwrap();
        let g = varied(out.shape(), 8);
        (out, layer.backward(&g).unwrap())
    });
    assert_eq!(s, p);
}

#[test]
fn non_c_order_input_gives_c_order_output() {
    let base = varied(&[2, 4, 3, 2], 1);
    let permuted = base.view().permuted_axes(IxDyn(&[0, 2, 1, 3])).to_owned();
    let contiguous = permuted.as_standard_layout().into_owned();
    let layer = UpSampling2D::new(2, Interpolation::Lanczos3).unwrap();
    let a = layer.predict(&permuted).unwrap();
    assert!(a.is_standard_layout());
    assert_eq!(a, layer.predict(&contiguous).unwrap());
}

#[test]
fn bad_configurations_and_inputs_are_errors() {
    assert!(matches!(
        UpSampling2D::new((0, 2), Interpolation::Nearest),
        Err(Error::InvalidParameter { ref name, .. }) if name == "size"
    ));
    assert!(matches!(
        UpSampling1D::new(0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        UpSampling3D::new((1, 1, 0)),
        Err(Error::InvalidParameter { .. })
    ));

    let mut layer = UpSampling2D::new(2, Interpolation::Bilinear).unwrap();
    match layer.forward(&varied(&[2, 3, 4], 0)) {
        Err(Error::InvalidInput(m)) => {
            assert!(m.contains("UpSampling2D") && m.contains("[2, 3, 4]"))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        layer.forward(&Tensor::zeros(IxDyn(&[1, 0, 2, 1]))),
        Err(Error::EmptyInput(_))
    ));
    assert!(matches!(
        layer.backward(&varied(&[1, 4, 4, 1], 0)),
        Err(Error::NeuralNetwork(NnError::ForwardPassNotRun(_)))
    ));
    layer.forward(&varied(&[1, 2, 2, 1], 0)).unwrap();
    assert!(matches!(
        layer.backward(&varied(&[1, 4, 3, 1], 0)),
        Err(Error::ShapeMismatch { .. })
    ));
    let mut huge = UpSampling3D::new((usize::MAX / 2, 1, 1)).unwrap();
    match huge.forward(&varied(&[1, 3, 1, 1, 1], 0)) {
        Err(Error::InvalidInput(m)) => assert!(m.contains("does not fit")),
        other => panic!("{other:?}"),
    }
}
