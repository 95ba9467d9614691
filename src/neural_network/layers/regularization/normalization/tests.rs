//! Normalisation layers against a hand-written f64 reference: forward values, and input /
//! gamma / beta gradients against central finite differences of that reference; every gate
//! forced serial and parallel must agree bit for bit.

use super::engine::{
    BATCH_NORM, BN_COL_STATS, BN_PLANE_STATS, GN_PARAM_GRAD, GN_ROW, LN_COL_STATS, LN_ROW,
};
use super::*;
use crate::error::{Error, IoError};
use crate::gate::{serial_and_parallel, Gate};
use crate::neural_network::layers::gradient_check::numeric_gradient;
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::traits::Layer;
use crate::neural_network::{NnError, Tensor};
use ndarray::{ArrayD, IxDyn};

const EPS: f32 = 1e-3;

/// Deterministic, irregular values.
fn wave(n: usize, phase: f32) -> Vec<f32> {
    (0..n)
        .map(|i| (i as f32 * 0.731 + phase).sin() * 1.7 + (i % 5) as f32 * 0.3)
        .collect()
}

fn tensor(shape: &[usize], data: Vec<f32>) -> Tensor {
    ArrayD::from_shape_vec(IxDyn(shape), data).unwrap()
}

/// Row-major multi-index of flat position `i`.
fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for a in (0..shape.len()).rev() {
        idx[a] = i % shape[a];
        i /= shape[a];
    }
    idx
}

/// Which statistic and which parameter each element uses.
struct Grouping {
    group: Vec<usize>,
    param: Vec<usize>,
}

/// Statistics over `axes` (layer norm): the group is the index of the other axes, the
/// parameter the index of the chosen axes (in ascending axis order).
fn axes_grouping(shape: &[usize], axes: &[usize]) -> Grouping {
    let n: usize = shape.iter().product();
    let (mut group, mut param) = (Vec::new(), Vec::new());
    for i in 0..n {
        let idx = unravel(i, shape);
        let (mut g, mut p) = (0, 0);
        for a in 0..shape.len() {
            if axes.contains(&a) {
                p = p * shape[a] + idx[a];
            } else {
                g = g * shape[a] + idx[a];
            }
        }
        group.push(g);
        param.push(p);
    }
    Grouping { group, param }
}

/// Channels-last group norm: group = (sample, channel group), parameter = channel.
fn channel_grouping(shape: &[usize], groups: usize) -> Grouping {
    let n: usize = shape.iter().product();
    let c = shape[shape.len() - 1];
    let per_sample = n / shape[0];
    let (mut group, mut param) = (Vec::new(), Vec::new());
    for i in 0..n {
        let ch = i % c;
        group.push((i / per_sample) * groups + ch / (c / groups));
        param.push(ch);
    }
    Grouping { group, param }
}

/// Batch norm: group = parameter = channel.
fn column_grouping(shape: &[usize]) -> Grouping {
    let n: usize = shape.iter().product();
    let c = if shape.len() < 2 {
        1
    } else {
        shape[shape.len() - 1]
    };
    let ch: Vec<usize> = (0..n).map(|i| i % c).collect();
    Grouping {
        group: ch.clone(),
        param: ch,
    }
}

/// The definition: `(x - mean) / sqrt(var + eps) * gamma + beta`, population variance, f64.
fn reference(x: &[f64], gamma: &[f64], beta: &[f64], grouping: &Grouping, eps: f64) -> Vec<f64> {
    let groups = grouping.group.iter().max().unwrap() + 1;
    let mut sum = vec![0.0; groups];
    let mut count = vec![0.0; groups];
    for (&v, &g) in x.iter().zip(&grouping.group) {
        sum[g] += v;
        count[g] += 1.0;
    }
    let mean: Vec<f64> = sum.iter().zip(&count).map(|(s, c)| s / c).collect();
    let mut var = vec![0.0; groups];
    for (&v, &g) in x.iter().zip(&grouping.group) {
        var[g] += (v - mean[g]) * (v - mean[g]) / count[g];
    }
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            let (g, p) = (grouping.group[i], grouping.param[i]);
            (v - mean[g]) / (var[g] + eps).sqrt() * gamma[p] + beta[p]
        })
        .collect()
}

/// Central finite differences of `f` at `at`.
fn numeric_grad(f: impl Fn(&[f64]) -> f64, at: &[f64]) -> Vec<f64> {
    numeric_gradient(f, at, 1e-5)
}

fn to64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn assert_close(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g as f64 - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

/// Forward against the reference, then input, gamma and beta gradients of
/// `L = sum(w * y)` against finite differences of the reference. Gamma and beta are set to
/// non-trivial values first through `parameters()`.
fn check_layer(layer: &mut dyn Layer, shape: &[usize], grouping: &Grouping) {
    let n: usize = shape.iter().product();
    let x = wave(n, 0.2);
    let w = wave(n, 1.9);
    {
        let mut params = layer.parameters();
        let k = params[0].value.len();
        params[0].value.copy_from_slice(&wave(k, 3.1));
        params[1].value.copy_from_slice(&wave(k, 0.7));
    }
    let (gamma, beta) = {
        let params = layer.parameters();
        (to64(params[0].value), to64(params[1].value))
    };
    let eps = EPS as f64;
    let y = layer.forward(&tensor(shape, x.clone())).unwrap();
    let x64 = to64(&x);
    assert_close(
        y.as_slice().unwrap(),
        &reference(&x64, &gamma, &beta, grouping, eps),
        1e-5,
        "forward",
    );

    let dx = layer.backward(&tensor(shape, w.clone())).unwrap();
    let w64 = to64(&w);
    let loss = |y: Vec<f64>| y.iter().zip(&w64).map(|(a, b)| a * b).sum::<f64>();
    let num_dx = numeric_grad(|x| loss(reference(x, &gamma, &beta, grouping, eps)), &x64);
    assert_close(dx.as_slice().unwrap(), &num_dx, 1e-3, "input gradient");
    let num_dg = numeric_grad(|g| loss(reference(&x64, g, &beta, grouping, eps)), &gamma);
    let num_db = numeric_grad(|b| loss(reference(&x64, &gamma, b, grouping, eps)), &beta);
    let params = layer.parameters();
    assert_close(params[0].grad, &num_dg, 1e-3, "gamma gradient");
    assert_close(params[1].grad, &num_db, 1e-3, "beta gradient");
    assert!(
        params.iter().all(|p| !p.decays),
        "gamma and beta never decay"
    );
}

#[test]
fn batch_norm_matches_reference_rank_2_and_4() {
    for shape in [vec![6, 3], vec![2, 3, 2, 4]] {
        let mut bn = BatchNormalization::new(shape.clone(), 0.9, EPS).unwrap();
        check_layer(&mut bn, &shape, &column_grouping(&shape));
    }
}

#[test]
fn layer_norm_matches_reference_on_every_axis_form() {
    let cases = [
        (vec![3, 5], LayerNormalizationAxis::Default, vec![1]),
        (vec![4, 3], LayerNormalizationAxis::Custom(0), vec![0]),
        (
            vec![2, 3, 4],
            LayerNormalizationAxis::Multiple(vec![2, 0]),
            vec![0, 2],
        ),
        (
            vec![2, 3, 4],
            LayerNormalizationAxis::Multiple(vec![1, 2]),
            vec![1, 2],
        ),
    ];
    for (shape, axis, axes) in cases {
        let mut ln = LayerNormalization::new(shape.clone(), EPS)
            .unwrap()
            .with_normalized_axis(axis)
            .unwrap();
        check_layer(&mut ln, &shape, &axes_grouping(&shape, &axes));
    }
}

#[test]
fn group_and_instance_norm_match_reference() {
    let shape = [2, 3, 2, 6];
    for groups in [1, 2, 3, 6] {
        let mut gn = GroupNormalization::new(shape.to_vec(), groups, EPS).unwrap();
        check_layer(&mut gn, &shape, &channel_grouping(&shape, groups));
    }
    let mut inn = InstanceNormalization::new(shape.to_vec(), EPS).unwrap();
    check_layer(&mut inn, &shape, &channel_grouping(&shape, 6));
}

#[test]
fn batch_norm_running_statistics_follow_keras() {
    // Column {1, 2, 3, 6}: mean 3, population variance 3.5.
    let mut bn = BatchNormalization::new(vec![4, 1], 0.75, EPS).unwrap();
    bn.forward(&tensor(&[4, 1], vec![1.0, 2.0, 3.0, 6.0]))
        .unwrap();
    let (mean, var) = (0.25 * 3.0, 0.75 + 0.25 * 3.5);
    match bn.get_weights() {
        LayerWeight::BatchNormalization(w) => {
            assert!((w.running_mean[[0]] - mean).abs() < 1e-6);
            assert!((w.running_var[[0]] - var).abs() < 1e-6);
        }
        _ => panic!("BatchNormalization weights expected"),
    }
    // Inference uses them, in `predict` and in an inference-mode `forward` alike.
    let x = tensor(&[2, 1], vec![0.5, 4.0]);
    let want: Vec<f64> = [0.5f64, 4.0]
        .iter()
        .map(|v| (v - mean as f64) / (var as f64 + EPS as f64).sqrt())
        .collect();
    assert_close(
        bn.predict(&x).unwrap().as_slice().unwrap(),
        &want,
        1e-6,
        "predict",
    );
    bn.set_training(false);
    let y = bn.forward(&x).unwrap();
    assert_close(y.as_slice().unwrap(), &want, 1e-6, "inference forward");
    // An inference forward passes the gradient through and leaves the statistics alone.
    let g = tensor(&[2, 1], vec![0.3, -2.0]);
    assert_eq!(bn.backward(&g).unwrap(), g);
}

#[test]
fn weights_round_trip_and_reject_other_kinds() {
    let mut a = LayerNormalization::new(vec![2, 3], EPS).unwrap();
    a.set_weights(
        tensor(&[3], vec![1.0, 2.0, 3.0]),
        tensor(&[3], vec![0.5, 0.0, -1.0]),
    )
    .unwrap();
    let mut b = LayerNormalization::new(vec![2, 3], EPS).unwrap();
    b.apply_weights(&a.get_weights().into_owned()).unwrap();
    let x = tensor(&[2, 3], wave(6, 0.0));
    assert_eq!(a.predict(&x).unwrap(), b.predict(&x).unwrap());

    let mut gn = GroupNormalization::new(vec![1, 2, 3], 1, EPS).unwrap();
    let err = gn.apply_weights(&a.get_weights()).unwrap_err();
    assert!(matches!(err, Error::Io(IoError::ModelStructureMismatch(_))));
    let mut small = LayerNormalization::new(vec![2, 2], EPS).unwrap();
    let err = small.apply_weights(&a.get_weights()).unwrap_err();
    assert!(matches!(err, Error::Io(IoError::ModelStructureMismatch(_))));
    let err = small
        .set_weights(tensor(&[3], vec![1.0; 3]), tensor(&[3], vec![0.0; 3]))
        .unwrap_err();
    assert!(matches!(
        err,
        Error::NeuralNetwork(NnError::WeightShape { .. })
    ));
}

#[test]
fn backward_checks_the_gradient_shape() {
    let mut gn = GroupNormalization::new(vec![1, 2, 4], 2, EPS).unwrap();
    gn.forward(&tensor(&[1, 2, 4], wave(8, 0.0))).unwrap();
    let err = gn.backward(&tensor(&[1, 4, 2], vec![1.0; 8])).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }));
}

/// `x * min(1/||x||, 1e12)` over rows of the permuted layout, in f64.
fn unit_reference(x: &[f64], grouping: &Grouping) -> Vec<f64> {
    let groups = grouping.group.iter().max().unwrap() + 1;
    let mut ss = vec![0.0; groups];
    for (&v, &g) in x.iter().zip(&grouping.group) {
        ss[g] += v * v;
    }
    x.iter()
        .zip(&grouping.group)
        .map(|(&v, &g)| v * (1.0 / ss[g].sqrt()).min(1e12))
        .collect()
}

#[test]
fn unit_norm_matches_reference_and_finite_differences() {
    let cases = [
        (vec![3, 4], UnitNormalizationAxis::Default, vec![1]),
        (vec![2, 3, 4], UnitNormalizationAxis::Custom(1), vec![1]),
        (
            vec![2, 3, 4],
            UnitNormalizationAxis::Multiple(vec![2, 0]),
            vec![0, 2],
        ),
    ];
    for (shape, axis, axes) in cases {
        let grouping = axes_grouping(&shape, &axes);
        let n: usize = shape.iter().product();
        let (x, w) = (wave(n, 0.4), wave(n, 2.2));
        let mut layer = UnitNormalization::new(axis).unwrap();
        let y = layer.forward(&tensor(&shape, x.clone())).unwrap();
        let x64 = to64(&x);
        assert_close(
            y.as_slice().unwrap(),
            &unit_reference(&x64, &grouping),
            1e-5,
            "forward",
        );
        let dx = layer.backward(&tensor(&shape, w.clone())).unwrap();
        let w64 = to64(&w);
        let num = numeric_grad(
            |x| {
                unit_reference(x, &grouping)
                    .iter()
                    .zip(&w64)
                    .map(|(a, b)| a * b)
                    .sum()
            },
            &x64,
        );
        assert_close(dx.as_slice().unwrap(), &num, 1e-3, "input gradient");
    }
}

/// One training forward and backward: output, input gradient and parameter gradients.
fn run_bits(layer: &mut dyn Layer, shape: &[usize]) -> Vec<u32> {
    let n: usize = shape.iter().product();
    let y = layer.forward(&tensor(shape, wave(n, 0.3))).unwrap();
    let dx = layer.backward(&tensor(shape, wave(n, 1.1))).unwrap();
    let mut bits: Vec<u32> = y.iter().chain(dx.iter()).map(|v| v.to_bits()).collect();
    for p in layer.parameters() {
        bits.extend(p.grad.iter().map(|v| v.to_bits()));
    }
    bits
}

/// Forced serial and forced parallel give the same bits for every layer built by `make`.
fn gate_agrees(gate: &Gate, shape: &[usize], make: impl Fn() -> Box<dyn Layer>) {
    let (serial, parallel) = serial_and_parallel(gate, || run_bits(make().as_mut(), shape));
    assert_eq!(serial, parallel, "gate {} moved a bit", gate.name);
}

fn bn(shape: &[usize]) -> Box<dyn Layer> {
    Box::new(BatchNormalization::new(shape.to_vec(), 0.9, EPS).unwrap())
}

fn ln(shape: &[usize], axis: LayerNormalizationAxis) -> Box<dyn Layer> {
    Box::new(
        LayerNormalization::new(shape.to_vec(), EPS)
            .unwrap()
            .with_normalized_axis(axis)
            .unwrap(),
    )
}

fn gn(shape: &[usize], groups: usize) -> Box<dyn Layer> {
    Box::new(GroupNormalization::new(shape.to_vec(), groups, EPS).unwrap())
}

// Shapes below span several fold blocks (4096 values) and several elementwise chunks.

#[test]
fn gate_batch_norm_never_changes_a_bit() {
    gate_agrees(&BATCH_NORM, &[100, 50, 11], || bn(&[100, 50, 11]));
}

#[test]
fn gate_bn_col_stats_never_changes_a_bit() {
    gate_agrees(&BN_COL_STATS, &[100, 50, 11], || bn(&[100, 50, 11]));
}

#[test]
fn gate_bn_plane_stats_never_changes_a_bit() {
    gate_agrees(&BN_PLANE_STATS, &[100, 50, 11], || bn(&[100, 50, 11]));
}

#[test]
fn gate_ln_row_never_changes_a_bit() {
    gate_agrees(&LN_ROW, &[700, 37], || ln(&[700, 37], Default::default()));
    let axes = LayerNormalizationAxis::Multiple(vec![0, 2]);
    gate_agrees(&LN_ROW, &[30, 5, 200], || ln(&[30, 5, 200], axes.clone()));
}

#[test]
fn gate_cheap_map_f32_never_changes_a_unit_norm_bit() {
    use crate::neural_network::layers::activation::CHEAP_MAP_F32;
    gate_agrees(&CHEAP_MAP_F32, &[700, 37], || {
        Box::new(UnitNormalization::new(UnitNormalizationAxis::Default).unwrap())
    });
    let axes = UnitNormalizationAxis::Multiple(vec![0, 2]);
    gate_agrees(&CHEAP_MAP_F32, &[30, 5, 200], || {
        Box::new(UnitNormalization::new(axes.clone()).unwrap())
    });
}

#[test]
fn gate_ln_col_stats_never_changes_a_bit() {
    gate_agrees(&LN_COL_STATS, &[700, 37], || {
        ln(&[700, 37], Default::default())
    });
}

#[test]
fn gate_gn_row_never_changes_a_bit() {
    gate_agrees(&GN_ROW, &[3, 400, 12], || gn(&[3, 400, 12], 4));
    // One sample: the per-sample fold itself forks.
    gate_agrees(&GN_ROW, &[1, 2000, 6], || gn(&[1, 2000, 6], 2));
}

#[test]
fn gate_gn_param_grad_never_changes_a_bit() {
    gate_agrees(&GN_PARAM_GRAD, &[3, 400, 12], || gn(&[3, 400, 12], 4));
}

#[test]
fn tuning_knobs_cover_their_gates() {
    use crate::tuning::norm;
    let _lock = crate::gate::GATE_TEST_LOCK
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    norm::set_col_fold(123);
    norm::set_row_pass(456);
    let col = [
        norm::get_bn_col_stats(),
        norm::get_bn_plane_stats(),
        norm::get_ln_col_stats(),
        norm::get_gn_param_grad(),
    ];
    let row = [norm::get_ln_row(), norm::get_gn_row()];
    assert_eq!((norm::get_col_fold(), norm::get_row_pass()), (123, 456));
    for gate in [
        &BN_COL_STATS,
        &BN_PLANE_STATS,
        &LN_COL_STATS,
        &GN_PARAM_GRAD,
        &LN_ROW,
        &GN_ROW,
    ] {
        gate.set(gate.default);
    }
    assert_eq!(col, [123; 4]);
    assert_eq!(row, [456; 2]);
}
