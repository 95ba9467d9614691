//! `Normalization` against an f64 reference: statistics (NumPy's two-pass mean and
//! population variance), forward values in both directions, the input gradient against
//! central finite differences, and every gated kernel forced serial and parallel.

use super::*;
use crate::gate::serial_and_parallel;
use crate::math::reduction::SUM_F64;
use crate::neural_network::layers::gradient_check::numeric_gradient;
use ndarray::Axis;

/// Deterministic, irregular values around an offset (a mean far from zero tests the
/// two-pass variance).
fn wave(n: usize, phase: f64, offset: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64) * 0.731 + phase).sin() * 2.3 + ((i % 7) as f64) * 0.4 + offset)
        .collect()
}

fn data(shape: &[usize], phase: f64) -> ArrayD<f64> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), wave(n, phase, 50.0)).unwrap()
}

/// Mean and population variance per kept position, straight from the definition.
fn reference_stats(data: &ArrayD<f64>, keep: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let rank = data.ndim();
    let order: Vec<usize> = (0..rank)
        .filter(|a| !keep.contains(a))
        .chain(keep.iter().copied())
        .collect();
    let p = data
        .view()
        .permuted_axes(IxDyn(&order))
        .as_standard_layout()
        .into_owned();
    let width: usize = keep.iter().map(|&a| data.shape()[a]).product();
    let rows = p.len() / width;
    let m = p.into_shape_with_order((rows, width)).unwrap();
    let mean: Vec<f64> = m.mean_axis(Axis(0)).unwrap().to_vec();
    let var: Vec<f64> = (0..width)
        .map(|j| {
            m.column(j)
                .iter()
                .map(|v| (v - mean[j]).powi(2))
                .sum::<f64>()
                / rows as f64
        })
        .collect();
    (mean, var)
}

fn assert_close(got: &[f32], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g as f64 - w).abs() <= rel * w.abs().max(1.0),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

#[test]
fn adapt_statistics_match_the_definition_for_every_axis_form() {
    let x = data(&[9, 4, 3], 0.3);
    for (axis, keep) in [
        (vec![-1i64], vec![2usize]),
        (vec![1], vec![1]),
        (vec![1, 2], vec![1, 2]),
        (vec![], vec![]),
    ] {
        let (mean, var) = adapt_statistics(&[x.view()], &axis).unwrap();
        let (rm, rv) = reference_stats(&x, &keep);
        let shape: Vec<usize> = keep.iter().map(|&a| x.shape()[a]).collect();
        assert_eq!(mean.shape(), shape.as_slice(), "{axis:?}");
        // f64 sums rounded once to f32: half an f32 ulp, relative
        assert_close(mean.as_slice().unwrap(), &rm, 1e-7, "mean");
        assert_close(var.as_slice().unwrap(), &rv, 1e-7, "variance");
    }
}

#[test]
fn batches_merge_to_the_statistics_of_their_concatenation() {
    let x = data(&[10, 3], 1.1);
    let (a, b) = (
        x.slice_axis(Axis(0), (0..3).into()),
        x.slice_axis(Axis(0), (3..10).into()),
    );
    let (m1, v1) = adapt_statistics(&[a.into_dyn(), b.into_dyn()], &[-1]).unwrap();
    let (rm, rv) = reference_stats(&x, &[1]);
    assert_close(m1.as_slice().unwrap(), &rm, 1e-7, "merged mean");
    assert_close(v1.as_slice().unwrap(), &rv, 1e-7, "merged variance");
}

#[test]
fn adapt_statistics_are_bitwise_equal_serial_and_parallel() {
    // several row blocks of column_moments (BLOCK / width rows each)
    let x = data(&[3000, 7, 5], 0.9);
    let (s, p) = serial_and_parallel(&SUM_F64, || adapt_statistics(&[x.view()], &[-1]).unwrap());
    assert_eq!(s, p);
    let (s, p) = serial_and_parallel(&SUM_F64, || adapt_statistics(&[x.view()], &[1]).unwrap());
    assert_eq!(s, p);
}

/// `(x - mean) / max(sqrt(var), eps)` in f64 (or its inverse) with statistics per kept
/// position.
fn reference_forward(
    x: &ArrayD<f64>,
    keep: &[usize],
    mean: &[f64],
    var: &[f64],
    invert: bool,
) -> Vec<f64> {
    let shape = x.shape().to_vec();
    let keep_dims: Vec<usize> = keep.iter().map(|&a| shape[a]).collect();
    x.indexed_iter()
        .map(|(idx, &v)| {
            let mut s = 0;
            for (k, &a) in keep.iter().enumerate() {
                s = s * keep_dims[k] + idx[a];
            }
            let std = var[s].sqrt().max(NORMALIZATION_EPSILON as f64);
            if invert {
                mean[s] + v * std
            } else {
                (v - mean[s]) / std
            }
        })
        .collect()
}

#[test]
fn forward_and_input_gradient_match_the_reference() {
    let shape = [3usize, 4, 2];
    let n: usize = shape.iter().product();
    for (axis, keep) in [
        (vec![-1i64], vec![2usize]),
        (vec![1, 2], vec![1, 2]),
        (vec![], vec![]),
    ] {
        for invert in [false, true] {
            let stats_shape: Vec<usize> = keep.iter().map(|&a| shape[a]).collect();
            let k: usize = stats_shape.iter().product();
            let mean: Vec<f32> = (0..k).map(|i| i as f32 * 0.5 - 1.0).collect();
            // one variance below eps^2: the floor applies
            let var: Vec<f32> = (0..k)
                .map(|i| if i == 0 { 1e-16 } else { 0.3 + i as f32 })
                .collect();
            let mut layer = Normalization::new(&shape, &axis, invert).unwrap();
            let weights = LayerWeight::Normalization(NormalizationLayerWeight {
                mean: Cow::Owned(
                    ArrayD::from_shape_vec(IxDyn(&stats_shape), mean.clone()).unwrap(),
                ),
                variance: Cow::Owned(
                    ArrayD::from_shape_vec(IxDyn(&stats_shape), var.clone()).unwrap(),
                ),
                count: Cow::Owned(ArrayD::zeros(IxDyn(&[]))),
            });
            layer.apply_weights(&weights).unwrap();
            let x64 = ArrayD::from_shape_vec(IxDyn(&shape), wave(n, 0.4, 0.0)).unwrap();
            let x = x64.mapv(|v| v as f32);
            let x64 = x.mapv(f64::from);
            let (m64, v64): (Vec<f64>, Vec<f64>) = (
                mean.iter().map(|&v| v as f64).collect(),
                var.iter().map(|&v| v as f64).collect(),
            );
            let y = layer.forward(&x).unwrap();
            let want = reference_forward(&x64, &keep, &m64, &v64, invert);
            // two f32 roundings of intermediates up to ~8 in size, plus the f32 square root:
            // a few ulps of 8 (~5e-7) against values of order 1
            assert_close(y.as_slice().unwrap(), &want, 1e-6, "forward");
            let w = ArrayD::from_shape_vec(
                IxDyn(&shape),
                wave(n, 2.0, 0.0).iter().map(|&v| v as f32).collect(),
            )
            .unwrap();
            let dx = layer.backward(&w).unwrap();
            let loss = |xs: &[f64]| -> f64 {
                let xa = ArrayD::from_shape_vec(IxDyn(&shape), xs.to_vec()).unwrap();
                reference_forward(&xa, &keep, &m64, &v64, invert)
                    .iter()
                    .zip(w.iter())
                    .map(|(a, &b)| a * b as f64)
                    .sum()
            };
            let xs: Vec<f64> = x64.iter().copied().collect();
            // the map is linear in x, so central differences have no truncation error at any
            // step; their rounding error is ~1e-16 * |L| / h, and |L| reaches ~1e7 through the
            // floored standard deviation (1e-7): h = 1 keeps it near 1e-9
            let h = 1.0;
            let num = numeric_gradient(loss, &xs, h);
            // dL/dx = w / std rounded once in f32: an ulp, relative
            assert_close(dx.as_slice().unwrap(), &num, 1e-6, "input gradient");
        }
    }
}

#[test]
fn forward_and_backward_are_bitwise_equal_serial_and_parallel() {
    let shape = [64usize, 300, 3];
    let x = data(&shape, 0.2).mapv(|v| v as f32);
    let mut layer = Normalization::new(&shape, &[-1], false).unwrap();
    layer.adapt(&x).unwrap();
    for invert in [false, true] {
        layer.invert = invert;
        let (s, p) = serial_and_parallel(&CHEAP_MAP_F32, || {
            let mut l = layer.clone();
            let y = l.forward(&x).unwrap();
            (y, l.backward(&x).unwrap())
        });
        assert_eq!(s, p);
    }
}

#[test]
fn fixed_statistics_broadcast_as_numpy_and_list_no_weights() {
    let layer = Normalization::new(&[1, 2, 3], &[1, 2], false)
        .unwrap()
        .with_statistics(
            ArrayD::from_shape_vec(IxDyn(&[3]), vec![1.0, 2.0, 3.0]).unwrap(),
            ArrayD::from_elem(IxDyn(&[3]), 4.0),
        )
        .unwrap();
    assert_eq!(layer.mean().shape(), &[2, 3]);
    assert_eq!(layer.mean()[&[1, 2][..]], 3.0);
    assert!(matches!(layer.get_weights(), LayerWeight::Empty));
    assert_eq!(layer.param_count(), TrainingParameters::NoTrainable);
    let x = ArrayD::from_elem(IxDyn(&[1, 2, 3]), 5.0f32);
    let y = layer.predict(&x).unwrap();
    assert_eq!(y[&[0, 1, 0][..]], (5.0 - 1.0) / 2.0);
    let bad = Normalization::new(&[1, 2, 3], &[-1], false)
        .unwrap()
        .with_statistics(ArrayD::zeros(IxDyn(&[2])), ArrayD::ones(IxDyn(&[2])));
    assert!(bad.unwrap_err().to_string().contains("mean"));
    let negative = Normalization::new(&[1, 3], &[-1], false)
        .unwrap()
        .with_statistics(
            ArrayD::zeros(IxDyn(&[])),
            ArrayD::from_elem(IxDyn(&[]), -1.0),
        );
    assert!(negative.unwrap_err().to_string().contains("variance"));
}

#[test]
fn bad_axes_and_data_are_refused_naming_them() {
    for axis in [vec![3i64], vec![-4], vec![0], vec![1, -2]] {
        let e = Normalization::new(&[1, 4, 2], &axis, false).unwrap_err();
        assert!(e.to_string().contains("axis"), "{axis:?}: {e}");
    }
    let e = adapt_statistics(&[], &[-1]).unwrap_err();
    assert!(e.to_string().contains("no data"), "{e}");
    let (a, b) = (data(&[3, 4], 0.0), data(&[3, 5], 0.0));
    let e = adapt_statistics(&[a.view(), b.view()], &[-1]).unwrap_err();
    assert!(e.to_string().contains("batch 1"), "{e}");
    let mut layer = Normalization::new(&[1, 4], &[-1], false).unwrap();
    let before = layer.mean().clone();
    assert!(layer.adapt(&ArrayD::zeros(IxDyn(&[5, 3]))).is_err());
    assert!(layer.adapt(&ArrayD::zeros(IxDyn(&[5, 4, 1]))).is_err());
    assert_eq!(layer.mean(), &before);
    let nan = ArrayD::from_elem(IxDyn(&[2, 4]), f64::NAN);
    assert!(adapt_statistics(&[nan.view()], &[-1])
        .unwrap_err()
        .to_string()
        .contains("NaN"));
}
