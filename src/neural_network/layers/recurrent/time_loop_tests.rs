//! The time loop against Keras's equations unrolled by hand in f64, central differences,
//! and its own bits across threads and batch blocks, for every cell.

use super::*;
use crate::neural_network::layers::gradient_check::{check_central_differences, weighted_sum};
use crate::neural_network::test_support::on_threads;
use ndarray::{Array3, ArrayD};

fn sig(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

/// The recurrence written from Keras's equations, one scalar at a time, in f64 (tanh
/// activation, sigmoid gates).
fn reference(layer: &Recurrent, x: &Array3<f32>) -> ArrayD<f64> {
    reference_with(layer, x, None, None)
}

/// [`reference`] under Keras's mask `keep` (`[batch, steps]`, input order: a masked step
/// keeps the state and outputs it, or zeros under `zero_output_for_mask`) and dropout
/// masks (`x ⊙ m` into each gate's input product, `h ⊙ m_g` into its recurrent one).
fn reference_with(
    layer: &Recurrent,
    x: &Array3<f32>,
    keep: Option<&ndarray::Array2<bool>>,
    drop: Option<&DropoutMasks>,
) -> ArrayD<f64> {
    let (bsz, steps, d) = x.dim();
    let in_mask = drop.and_then(|m| m.input.as_ref());
    let rec_mask = drop.and_then(|m| m.recurrent.as_ref());
    let u = layer.units;
    let k = layer.gates.kernel.mapv(f64::from);
    let rk = layer.gates.recurrent_kernel.mapv(f64::from);
    let b = layer.gates.bias.mapv(f64::from);
    let mut out = Vec::new();
    for n in 0..bsz {
        let mut h = vec![0.0f64; u];
        let mut c = vec![0.0f64; u];
        let mut seq = Vec::new();
        for s in 0..steps {
            let t = if layer.go_backwards { steps - 1 - s } else { s };
            let c_before = c.clone();
            // xw[col] = Σ_i x_i K[i, col] + b[0, col]; hu[col] = Σ_i h_i U[i, col]
            let xw = |col: usize| {
                let fx = |i: usize| match in_mask {
                    Some(m) => m[[if m.dim().0 == 1 { 0 } else { col / u }, n, i]] as f64,
                    None => 1.0,
                };
                (0..d)
                    .map(|i| x[[n, t, i]] as f64 * fx(i) * k[[i, col]])
                    .sum::<f64>()
                    + b[[0, col]]
            };
            let hu = |h: &[f64], col: usize| {
                let fh = |i: usize| rec_mask.map_or(1.0, |m| m[[col / u, n, i]] as f64);
                (0..u).map(|i| h[i] * fh(i) * rk[[i, col]]).sum::<f64>()
            };
            let new_h: Vec<f64> = match layer.cell {
                Cell::Simple => (0..u).map(|j| (xw(j) + hu(&h, j)).tanh()).collect(),
                Cell::Lstm => {
                    let mut nh = vec![0.0; u];
                    for j in 0..u {
                        let i = sig(xw(j) + hu(&h, j));
                        let f = sig(xw(u + j) + hu(&h, u + j));
                        let g = (xw(2 * u + j) + hu(&h, 2 * u + j)).tanh();
                        let o = sig(xw(3 * u + j) + hu(&h, 3 * u + j));
                        c[j] = f * c[j] + i * g;
                        nh[j] = o * c[j].tanh();
                    }
                    nh
                }
                Cell::Gru { reset_after } => {
                    let z: Vec<f64> = (0..u)
                        .map(|j| {
                            let rb = if reset_after { b[[1, j]] } else { 0.0 };
                            sig(xw(j) + hu(&h, j) + rb)
                        })
                        .collect();
                    let r: Vec<f64> = (0..u)
                        .map(|j| {
                            let rb = if reset_after { b[[1, u + j]] } else { 0.0 };
                            sig(xw(u + j) + hu(&h, u + j) + rb)
                        })
                        .collect();
                    let rh: Vec<f64> = (0..u).map(|j| r[j] * h[j]).collect();
                    (0..u)
                        .map(|j| {
                            let hh = if reset_after {
                                (xw(2 * u + j) + r[j] * (hu(&h, 2 * u + j) + b[[1, 2 * u + j]]))
                                    .tanh()
                            } else {
                                (xw(2 * u + j) + hu(&rh, 2 * u + j)).tanh()
                            };
                            z[j] * h[j] + (1.0 - z[j]) * hh
                        })
                        .collect()
                }
            };
            let skipped = keep.is_some_and(|k| !k[[n, t]]);
            if skipped {
                c = c_before;
            } else {
                h = new_h;
            }
            if skipped && layer.zero_output_for_mask {
                seq.push(vec![0.0; u]);
            } else {
                seq.push(h.clone());
            }
        }
        out.push(seq);
    }
    if layer.return_sequences {
        ArrayD::from_shape_fn(vec![bsz, steps, u], |i| out[i[0]][i[1]][i[2]])
    } else {
        ArrayD::from_shape_fn(vec![bsz, u], |i| out[i[0]][steps - 1][i[1]])
    }
}

const CELLS: [Cell; 4] = [
    Cell::Simple,
    Cell::Lstm,
    Cell::Gru { reset_after: false },
    Cell::Gru { reset_after: true },
];

/// A layer with every weight (biases included) drawn non-trivially.
fn layer(cell: Cell, d: usize, u: usize, seq: bool, back: bool, seed: u64) -> Recurrent {
    let mut l = Recurrent::new(cell, d, u, Activation::Tanh, Some(seed)).unwrap();
    if let Cell::Gru { reset_after } = cell {
        l.set_reset_after(reset_after);
    }
    l.return_sequences = seq;
    l.go_backwards = back;
    let mut rng = layer_rng(Some(seed + 1));
    use rand::Rng;
    let b = Array2::from_shape_simple_fn(l.gates.bias.raw_dim(), || rng.random_range(-0.5..0.5));
    let k = l.gates.kernel.mapv(|v| v * 1.5);
    let rk = l.gates.recurrent_kernel.clone();
    l.set_weights(k, rk, b).unwrap();
    l
}

fn input(b: usize, t: usize, d: usize) -> Array3<f32> {
    Array3::from_shape_fn((b, t, d), |(i, j, k)| {
        ((i * 7 + j * 3 + k) as f32 * 0.37).sin()
    })
}

#[test]
fn forward_matches_the_unrolled_equations() {
    for cell in CELLS {
        for (seq, back) in [(false, false), (true, false), (false, true), (true, true)] {
            let l = layer(cell, 3, 4, seq, back, 11);
            let x = input(2, 5, 3);
            let out = l.predict(&x.clone().into_dyn()).unwrap();
            let want = reference(&l, &x);
            assert_eq!(out.shape(), want.shape());
            for (o, w) in out.iter().zip(want.iter()) {
                assert!(
                    (*o as f64 - w).abs() < 1e-5,
                    "{cell:?} seq={seq} back={back}: {o} vs {w}"
                );
            }
        }
    }
}

/// L = Σ c ⊙ out with fixed weights c; gradients against central differences of the
/// layer's own forward pass, accumulated in f64.
fn check_gradients(l: &mut Recurrent, x: &Array3<f32>) {
    check_gradients_with(l, x, None, None)
}

/// [`check_gradients`] under Keras's mask and fixed dropout masks (the same masks for
/// every evaluation of the loss).
fn check_gradients_with(
    l: &mut Recurrent,
    x: &Array3<f32>,
    mask: Option<&Mask>,
    drop: Option<DropoutMasks>,
) {
    let x = x.clone().into_dyn();
    let (out, cache) = l.run(&x, mask, drop.clone()).unwrap();
    l.cache = Some(cache);
    let c = ArrayD::from_shape_fn(out.raw_dim(), |i| {
        0.3 + 0.2 * (ndarray::Dimension::slice(&i).iter().sum::<usize>() % 5) as f32
    });
    let dx = l.backward(&c).unwrap();
    let loss = |l: &Recurrent, x: &Tensor| -> f64 {
        weighted_sum(&l.run(x, mask, drop.clone()).unwrap().0, &c)
    };
    let h = 1e-2f32;
    let tol = |num: f64| 2e-3 + 1e-2 * num.abs();
    let name = format!(
        "{:?} seq={} back={}",
        l.cell, l.return_sequences, l.go_backwards
    );
    let grads = check_central_differences(l, &x, &dx, &name, (h, tol), loss, Recurrent::parameters);
    assert_eq!(grads.len(), if l.use_bias { 3 } else { 2 });
}

#[test]
fn gradients_match_central_differences() {
    for cell in CELLS {
        for (seq, back) in [(false, false), (true, false), (true, true)] {
            let mut l = layer(cell, 2, 3, seq, back, 5);
            check_gradients(&mut l, &input(2, 4, 2));
        }
    }
}

#[test]
fn gradients_with_other_activations() {
    let mut l = layer(Cell::Lstm, 2, 3, true, false, 8);
    l.activation = Activation::Softsign;
    l.set_recurrent_activation(Activation::Tanh).unwrap();
    check_gradients(&mut l, &input(2, 3, 2));
    let mut g = layer(Cell::Gru { reset_after: false }, 2, 3, false, false, 9);
    g.activation = Activation::Sigmoid;
    check_gradients(&mut g, &input(3, 3, 2));
}

/// Bits of one forward and backward pass (output, input gradient, parameter gradients)
/// of the layer `make` builds, on a pool of `threads` workers.
#[allow(clippy::type_complexity)]
fn bits_on_threads(
    threads: usize,
    make: impl Fn() -> Recurrent + Send + Sync,
) -> (Vec<u32>, Vec<u32>, Vec<Vec<u32>>) {
    on_threads(threads, || {
        pass_bits(&mut make(), &input(64, 4, 32).into_dyn())
    })
}

/// An upstream gradient for `out` that varies along every axis.
fn upstream(out: &Tensor) -> Tensor {
    ArrayD::from_shape_fn(out.raw_dim(), |i| {
        0.5 - 0.1 * (ndarray::Dimension::slice(&i).iter().sum::<usize>() % 7) as f32
    })
}

/// Bits of one forward and backward pass of `l` on `x`: output, input gradient and
/// parameter gradients (the upstream gradient from [`upstream`]).
#[allow(clippy::type_complexity)]
fn pass_bits(l: &mut Recurrent, x: &Tensor) -> (Vec<u32>, Vec<u32>, Vec<Vec<u32>>) {
    let out = l.forward(x).unwrap();
    let dx = l.backward(&upstream(&out)).unwrap();
    let grads: Vec<Vec<u32>> = l
        .parameters()
        .iter()
        .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
        .collect();
    let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    (bits(&out), bits(&dx), grads)
}

/// A first layer skips the input gradient and stores the same weight gradients, bit for
/// bit.
#[test]
fn params_only_backward_stores_the_same_gradients() {
    for cell in CELLS {
        let x = input(19, 4, 3).into_dyn();
        let mut full = layer(cell, 3, 5, true, true, 8);
        let (_, _, want) = pass_bits(&mut full, &x);
        let mut first = layer(cell, 3, 5, true, true, 8);
        let out = first.forward(&x).unwrap();
        first.backward_params_only(&upstream(&out)).unwrap();
        let got: Vec<Vec<u32>> = first
            .parameters()
            .iter()
            .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
            .collect();
        assert!(got == want, "{cell:?}");
    }
}

/// Batches of one block, of several and of a short last block, every cell and direction:
/// the time loops forced serial and forced parallel give the same bits.
#[test]
fn blocks_serial_and_parallel_agree_bitwise() {
    use crate::gate::serial_and_parallel;
    for cell in CELLS {
        for (batch, seq, back) in [(5, true, false), (37, false, true), (48, true, true)] {
            let x = input(batch, 6, 7).into_dyn();
            let (serial, parallel) = serial_and_parallel(&RECURRENT_PARALLEL_MIN_FLOPS, || {
                pass_bits(&mut layer(cell, 7, 9, seq, back, 4), &x)
            });
            assert!(serial == parallel, "{cell:?} batch={batch} seq={seq}");
        }
    }
}

/// Rows of different blocks never mix: a batch spanning three blocks, run in parallel,
/// matches the equations row for row.
#[test]
fn blocks_match_the_equations() {
    use crate::gate::{with_gate, GATE_TEST_LOCK};
    let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for cell in CELLS {
        let l = layer(cell, 3, 4, true, false, 17);
        let x = input(2 * BLOCK_ROWS + 3, 5, 3);
        let out = with_gate(&RECURRENT_PARALLEL_MIN_FLOPS, 0, || {
            l.predict(&x.clone().into_dyn()).unwrap()
        });
        let want = reference(&l, &x);
        for (o, w) in out.iter().zip(want.iter()) {
            assert!((*o as f64 - w).abs() < 1e-5, "{cell:?}: {o} vs {w}");
        }
    }
}

#[test]
fn gradients_match_central_differences_across_blocks() {
    use crate::gate::{with_gate, GATE_TEST_LOCK};
    let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for cell in CELLS {
        let mut l = layer(cell, 2, 3, true, true, 12);
        with_gate(&RECURRENT_PARALLEL_MIN_FLOPS, 0, || {
            check_gradients(&mut l, &input(BLOCK_ROWS + 2, 3, 2))
        });
    }
}

#[test]
fn bitwise_equal_at_one_and_four_threads() {
    for cell in CELLS {
        let run = |threads| bits_on_threads(threads, || layer(cell, 32, 64, true, false, 3));
        assert!(run(1) == run(4), "{cell:?}");
    }
}

/// `layer(..)` rebuilt without a bias; `set_weights` is handed a non-zero bias, which
/// must be dropped.
fn layer_without_bias(
    cell: Cell,
    d: usize,
    u: usize,
    seq: bool,
    back: bool,
    seed: u64,
) -> Recurrent {
    let mut l = layer(cell, d, u, seq, back, seed);
    let (k, rk) = (l.gates.kernel.clone(), l.gates.recurrent_kernel.clone());
    let b = l.gates.bias.mapv(|v| v + 0.25);
    l.set_use_bias(false);
    assert!(l.gates.bias.iter().all(|&v| v == 0.0), "{cell:?}");
    l.set_weights(k, rk, b).unwrap();
    assert!(l.gates.bias.iter().all(|&v| v == 0.0), "{cell:?}");
    l
}

#[test]
fn without_bias_matches_the_equations_with_a_zero_bias() {
    for cell in CELLS {
        for (seq, back) in [(false, false), (true, true)] {
            let l = layer_without_bias(cell, 3, 4, seq, back, 13);
            let x = input(2, 5, 3);
            let out = l.predict(&x.clone().into_dyn()).unwrap();
            let want = reference(&l, &x);
            for (o, w) in out.iter().zip(want.iter()) {
                assert!((*o as f64 - w).abs() < 1e-5, "{cell:?}: {o} vs {w}");
            }
            // The same weights with a bias: the outputs differ, so the bias is really gone.
            let mut with = layer(cell, 3, 4, seq, back, 13);
            with.set_weights(
                l.gates.kernel.clone(),
                l.gates.recurrent_kernel.clone(),
                l.gates.bias.mapv(|v| v + 0.25),
            )
            .unwrap();
            assert_ne!(with.predict(&x.clone().into_dyn()).unwrap(), out);
            let bias_len = with.gates.bias.len();
            let weights = l.gates.kernel.len() + l.gates.recurrent_kernel.len();
            assert_eq!(l.param_count(), TrainingParameters::Trainable(weights));
            assert_eq!(
                with.param_count(),
                TrainingParameters::Trainable(weights + bias_len)
            );
        }
    }
}

#[test]
fn without_bias_gradients_match_central_differences() {
    for cell in CELLS {
        for (seq, back) in [(false, false), (true, true)] {
            let mut l = layer_without_bias(cell, 2, 3, seq, back, 6);
            check_gradients(&mut l, &input(2, 4, 2));
            // Training never moves the unused bias.
            assert!(l.gates.bias.iter().all(|&v| v == 0.0));
        }
    }
}

#[test]
fn without_bias_bitwise_equal_at_one_and_four_threads() {
    for cell in CELLS {
        let run =
            |threads| bits_on_threads(threads, || layer_without_bias(cell, 32, 64, true, false, 3));
        assert!(run(1) == run(4), "{cell:?}");
    }
}

#[test]
fn use_bias_and_unit_forget_bias_in_either_order() {
    let mut l = Recurrent::new(Cell::Lstm, 3, 2, Activation::Tanh, Some(1)).unwrap();
    l.set_use_bias(false);
    l.set_unit_forget_bias(true);
    assert!(l.gates.bias.iter().all(|&v| v == 0.0));
    l.set_use_bias(true);
    assert_eq!(
        l.gates.bias.row(0).to_vec(),
        [0., 0., 1., 1., 0., 0., 0., 0.]
    );
    l.set_unit_forget_bias(false);
    l.set_use_bias(false);
    l.set_use_bias(true);
    assert!(l.gates.bias.iter().all(|&v| v == 0.0));
    let twin = l.reversed_twin(Some(2)).unwrap();
    assert!(twin.use_bias && !twin.unit_forget_bias);
}

#[test]
fn bad_inputs_are_refused_with_the_layer_and_shapes() {
    let mut l = Recurrent::new(Cell::Lstm, 3, 2, Activation::Tanh, Some(1)).unwrap();
    for bad in [vec![2, 4], vec![2, 4, 5], vec![2, 0, 3], vec![1, 2, 3, 3]] {
        let err = l.forward(&Tensor::zeros(bad.clone())).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::InvalidInput(_)), "{bad:?}: {err:?}");
        assert!(
            msg.contains("LSTM") && msg.contains(&format!("{bad:?}")),
            "{msg}"
        );
    }
    l.forward(&Tensor::zeros(vec![2, 4, 3])).unwrap();
    let err = l.backward(&Tensor::zeros(vec![2, 4, 2])).unwrap_err();
    assert!(err.to_string().contains("[2, 2]"), "{err}");
    assert!(Recurrent::new(Cell::Simple, 3, 2, Activation::Softmax, None).is_err());
    assert!(l.set_recurrent_activation(Activation::Softmax).is_err());
}

/// A right-padded mask with a hole, different per sample (sample 2 fully masked).
fn padded_mask(b: usize, t: usize) -> ndarray::Array2<bool> {
    ndarray::Array2::from_shape_fn((b, t), |(i, j)| match i % 3 {
        0 => j < t - 1,
        1 => j != 1 && j < t - 2 + (i % 2),
        _ => false,
    })
}

#[test]
fn masked_steps_carry_the_state_as_the_equations_say() {
    for cell in CELLS {
        for (seq, back, zero) in [
            (false, false, false),
            (true, false, false),
            (true, true, false),
            (false, true, false),
            (true, false, true),
            (false, false, true),
            (true, true, true),
        ] {
            let mut l = layer(cell, 3, 4, seq, back, 11);
            l.zero_output_for_mask = zero;
            let x = input(5, 6, 3);
            let keep = padded_mask(5, 6);
            let mask = keep.clone().into_dyn();
            let out = l
                .predict_masked(&x.clone().into_dyn(), Some(&mask))
                .unwrap();
            let want = reference_with(&l, &x, Some(&keep), None);
            assert_eq!(out.shape(), want.shape());
            for (o, w) in out.iter().zip(want.iter()) {
                assert!(
                    (*o as f64 - w).abs() < 1e-5,
                    "{cell:?} seq={seq} back={back} zero={zero}: {o} vs {w}"
                );
            }
            // an all-true mask is no mask, bit for bit
            let all = ndarray::ArrayD::from_elem(vec![5, 6], true);
            let plain = l.predict(&x.clone().into_dyn()).unwrap();
            assert_eq!(
                l.predict_masked(&x.clone().into_dyn(), Some(&all)).unwrap(),
                plain
            );
        }
    }
}

#[test]
fn masked_gradients_match_central_differences() {
    for cell in CELLS {
        for (seq, back, zero) in [
            (false, false, false),
            (true, false, false),
            (true, true, true),
            (false, true, true),
        ] {
            let mut l = layer(cell, 2, 3, seq, back, 5);
            l.zero_output_for_mask = zero;
            let mask = padded_mask(3, 4).into_dyn();
            check_gradients_with(&mut l, &input(3, 4, 2), Some(&mask), None);
        }
    }
}

#[test]
fn a_mask_of_the_wrong_shape_is_refused() {
    let mut l = layer(Cell::Lstm, 3, 2, false, false, 1);
    let x = input(2, 4, 3).into_dyn();
    for bad in [vec![2, 3], vec![4, 2], vec![2, 4, 1]] {
        let m = ndarray::ArrayD::from_elem(bad, true);
        let err = l.forward_masked(&x, Some(&m)).unwrap_err().to_string();
        assert!(err.contains("LSTM") && err.contains("mask"), "{err}");
    }
    assert!(l.cache.is_none(), "a refused pass keeps nothing");
}

/// `layer(..)` with dropout rates, training.
fn dropout_layer(cell: Cell, rates: (f32, f32), seq: bool, back: bool) -> Recurrent {
    let mut l = layer(cell, 3, 4, seq, back, 7);
    l.set_dropout(rates.0, rates.1).unwrap();
    l.rng = dropout_rng(Some(99));
    l
}

const RATES: [(f32, f32); 3] = [(0.3, 0.0), (0.0, 0.4), (0.3, 0.4)];

#[test]
fn dropout_masks_enter_the_gates_as_keras_cells_apply_them() {
    for cell in CELLS {
        for rates in RATES {
            for (seq, back) in [(true, false), (false, true)] {
                let mut l = dropout_layer(cell, rates, seq, back);
                let x = input(5, 4, 3);
                let drop = l.draw_dropout(5).unwrap();
                let per_gate = rates.1 > 0.0;
                if let Some(m) = &drop.input {
                    assert_eq!(m.dim().0, if per_gate { cell.gates() } else { 1 });
                }
                assert_eq!(drop.input.is_some(), rates.0 > 0.0);
                assert_eq!(drop.recurrent.is_some(), per_gate);
                let keep = padded_mask(5, 4);
                let mask = keep.clone().into_dyn();
                let out = l
                    .run(&x.clone().into_dyn(), Some(&mask), Some(drop.clone()))
                    .unwrap()
                    .0;
                let want = reference_with(&l, &x, Some(&keep), Some(&drop));
                for (o, w) in out.iter().zip(want.iter()) {
                    assert!(
                        (*o as f64 - w).abs() < 1e-5,
                        "{cell:?} {rates:?}: {o} vs {w}"
                    );
                }
            }
        }
    }
}

#[test]
fn dropout_gradients_match_central_differences_with_fixed_masks() {
    for cell in CELLS {
        for rates in RATES {
            let mut l = dropout_layer(cell, rates, true, false);
            let drop = l.draw_dropout(3).unwrap();
            let mask = padded_mask(3, 3).into_dyn();
            let x = input(3, 3, 3);
            check_gradients_with(&mut l, &x, None, Some(drop.clone()));
            check_gradients_with(&mut l, &x, Some(&mask), Some(drop));
        }
    }
}

#[test]
fn rate_zero_and_inference_are_the_plain_layer_bit_for_bit() {
    for cell in CELLS {
        let x = input(4, 5, 3).into_dyn();
        let mut plain = layer(cell, 3, 4, true, false, 7);
        let (want, want_dx, want_grads) = pass_bits(&mut plain, &x);
        let mut zero = dropout_layer(cell, (0.0, 0.0), true, false);
        assert!(pass_bits(&mut zero, &x) == (want.clone(), want_dx, want_grads));
        let mut dropping = dropout_layer(cell, (0.5, 0.5), true, false);
        let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&dropping.predict(&x).unwrap()),
            want,
            "{cell:?} predict"
        );
        dropping.set_training(false);
        assert_eq!(
            bits(&dropping.forward(&x).unwrap()),
            want,
            "{cell:?} inference"
        );
        dropping.set_training(true);
        assert_ne!(
            bits(&dropping.forward(&x).unwrap()),
            want,
            "{cell:?} training"
        );
    }
}

#[test]
fn dropout_masks_keep_one_minus_rate_scaled_by_its_inverse() {
    let mut l = Recurrent::new(Cell::Lstm, 50, 40, Activation::Tanh, Some(3)).unwrap();
    l.set_dropout(0.25, 0.4).unwrap();
    let batch = 200;
    let drop = l.draw_dropout(batch).unwrap();
    for (m, rate) in [
        (drop.input.unwrap(), 0.25f64),
        (drop.recurrent.unwrap(), 0.4),
    ] {
        let n = m.len() as f64;
        let kept = m.iter().filter(|&&v| v != 0.0).count() as f64;
        // binomial: within 5 standard deviations
        let sd = (n * rate * (1.0 - rate)).sqrt();
        assert!((kept - n * (1.0 - rate)).abs() < 5.0 * sd, "{kept} of {n}");
        let scale = (1.0 / (1.0 - rate)) as f32;
        assert!(m.iter().all(|&v| v == 0.0 || v == scale));
        // one mask per gate, each its own draw
        assert_ne!(m.index_axis(Axis(0), 0), m.index_axis(Axis(0), 1));
        // the mean factor is one (the expectation dropout preserves)
        let mean = m.iter().map(|&v| v as f64).sum::<f64>() / n;
        assert!(
            (mean - 1.0).abs() < 5.0 * sd / n * f64::from(scale),
            "{mean}"
        );
    }
    assert!(l.set_dropout(1.0, 0.0).is_err());
    let err = l.set_dropout(0.1, -0.5).unwrap_err().to_string();
    assert!(err.contains("recurrent_dropout"), "{err}");
}

/// Masked, dropping passes: the time loops forced serial and forced parallel give the same
/// bits, and so do one and four threads.
#[test]
fn masked_dropout_blocks_serial_and_parallel_agree_bitwise() {
    use crate::gate::serial_and_parallel;
    for cell in CELLS {
        for (batch, seq, back) in [(37, false, true), (48, true, true)] {
            let x = input(batch, 6, 7).into_dyn();
            let mask = padded_mask(batch, 6).into_dyn();
            let make = || {
                let mut l = layer(cell, 7, 9, seq, back, 4);
                l.set_dropout(0.2, 0.3).unwrap();
                l.rng = dropout_rng(Some(5));
                l.zero_output_for_mask = seq;
                l
            };
            let run = |l: &mut Recurrent| {
                let out = l.forward_masked(&x, Some(&mask)).unwrap();
                let dx = l.backward(&upstream(&out)).unwrap();
                let grads: Vec<Vec<u32>> = l
                    .parameters()
                    .iter()
                    .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
                    .collect();
                let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                (bits(&out), bits(&dx), grads)
            };
            let (serial, parallel) =
                serial_and_parallel(&RECURRENT_PARALLEL_MIN_FLOPS, || run(&mut make()));
            assert!(serial == parallel, "{cell:?} batch={batch} seq={seq}");
            let on = |threads| on_threads(threads, || run(&mut make()));
            assert!(on(1) == on(4), "{cell:?} batch={batch} threads");
        }
    }
}

#[test]
fn the_mask_goes_on_with_sequences_only() {
    let mask = padded_mask(2, 3).into_dyn();
    let seq = layer(Cell::Simple, 3, 2, true, true, 1);
    assert_eq!(seq.output_mask(Some(&mask)), Some(mask.clone()));
    let last = layer(Cell::Simple, 3, 2, false, false, 1);
    assert_eq!(last.output_mask(Some(&mask)), None);
    assert_eq!(seq.output_mask(None), None);
}

#[test]
fn weights_round_trip_through_the_enum() {
    for cell in CELLS {
        let a = layer(cell, 3, 2, false, false, 21);
        let mut b = layer(cell, 3, 2, false, false, 22);
        b.apply_weights(&a.get_weights()).unwrap();
        let x = input(2, 3, 3).into_dyn();
        assert_eq!(a.predict(&x).unwrap(), b.predict(&x).unwrap());
    }
    let gru = layer(Cell::Gru { reset_after: true }, 3, 2, false, false, 1);
    let mut lstm = layer(Cell::Lstm, 3, 2, false, false, 1);
    assert!(lstm.apply_weights(&gru.get_weights()).is_err());
    let mut before = layer(Cell::Gru { reset_after: false }, 3, 2, false, false, 1);
    assert!(
        before.apply_weights(&gru.get_weights()).is_err(),
        "bias rows differ"
    );
}

/// An LSTM on the packed route: [`PACKED_MIN_UNITS`] units, a batch of `batch` rows.
fn packed_lstm_on(batch: usize, seq: bool, seed: u64) -> (Recurrent, Array3<f32>) {
    let l = layer(Cell::Lstm, 3, PACKED_MIN_UNITS, seq, false, seed);
    assert!(l.blocking(batch, false).packed && !l.blocking(batch, true).packed);
    (l, input(batch, 3, 3))
}

/// [`packed_lstm_on`] a batch of two full 32-row blocks and a short one.
fn packed_lstm(seq: bool, seed: u64) -> (Recurrent, Array3<f32>) {
    packed_lstm_on(2 * PACKED_BLOCK_ROWS + 5, seq, seed)
}

#[test]
fn the_packed_route_takes_wide_blocks_once_the_batch_fills_two() {
    let l = layer(Cell::Lstm, 3, PACKED_MIN_UNITS, false, false, 1);
    let rows = |batch| l.blocking(batch, false).rows;
    assert_eq!(
        (rows(32), rows(63), rows(64)),
        (BLOCK_ROWS, BLOCK_ROWS, PACKED_BLOCK_ROWS)
    );
    let narrower = layer(Cell::Lstm, 3, PACKED_MIN_UNITS - 1, false, false, 1);
    assert!(!narrower.blocking(256, false).packed);
    let gru = layer(
        Cell::Gru { reset_after: true },
        3,
        PACKED_MIN_UNITS,
        false,
        false,
        1,
    );
    assert!(!gru.blocking(256, false).packed);
}

/// The packed route against the equations in f64. Each gate pre-activation is an f32 dot
/// product of 515 terms (|h| < 1, orthogonal columns); its rounding error grows as
/// sqrt(515) * 2^-24 * sqrt(sum of squared terms) < 23 * 6e-8 * 1 ~ 1.4e-6 per step, and
/// tanh and sigmoid do not enlarge it: 1e-4 over three steps leaves a wide margin, while a
/// misplaced row or column of the packed product moves outputs by 1e-2 and more.
#[test]
fn packed_route_matches_the_equations() {
    use crate::gate::{with_gate, GATE_TEST_LOCK};
    let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for seq in [false, true] {
        let (l, x) = packed_lstm(seq, 21);
        let want = reference(&l, &x);
        for gate in [0, usize::MAX] {
            let out = with_gate(&RECURRENT_PARALLEL_MIN_FLOPS, gate, || {
                l.predict(&x.clone().into_dyn()).unwrap()
            });
            assert_eq!(out.shape(), want.shape());
            for (o, w) in out.iter().zip(want.iter()) {
                assert!((*o as f64 - w).abs() < 1e-4, "seq={seq}: {o} vs {w}");
            }
        }
    }
}

/// The packed route forced serial (blocks in turn, each step's product spread by gemmkit)
/// and forced parallel (blocks as tasks, serial products) gives the same bits.
#[test]
fn packed_route_serial_and_parallel_agree_bitwise() {
    use crate::gate::serial_and_parallel;
    for seq in [false, true] {
        let (_, x) = packed_lstm(seq, 22);
        let x = x.into_dyn();
        let (serial, parallel) = serial_and_parallel(&RECURRENT_PARALLEL_MIN_FLOPS, || {
            pass_bits(&mut packed_lstm(seq, 22).0, &x)
        });
        assert!(serial == parallel, "seq={seq}");
    }
    // a batch that keeps 16-row blocks on the packed route
    let (_, x) = packed_lstm_on(37, false, 24);
    let x = x.into_dyn();
    let (serial, parallel) = serial_and_parallel(&RECURRENT_PARALLEL_MIN_FLOPS, || {
        pass_bits(&mut packed_lstm_on(37, false, 24).0, &x)
    });
    assert!(serial == parallel, "batch 37");
}

/// Backpropagation on the packed route against central differences along random
/// directions of the input and of every weight (the full check of
/// [`check_gradients`] would take a million loss evaluations at this width).
#[test]
fn packed_route_gradients_match_directional_differences() {
    use rand::Rng;
    let (mut l, x) = packed_lstm(true, 23);
    let x = x.into_dyn();
    let out = l.forward(&x).unwrap();
    let c = upstream(&out);
    let dx = l.backward(&c).unwrap();
    let grads: Vec<Vec<f32>> = l.parameters().iter().map(|p| p.grad.to_vec()).collect();
    let loss = |l: &Recurrent, x: &Tensor| weighted_sum(&l.predict(x).unwrap(), &c);
    let mut rng = layer_rng(Some(99));
    let h = 1e-2f32;
    let tol = |num: f64| 2e-3 + 1e-2 * num.abs();
    for trial in 0..3 {
        // along the input
        let v = ArrayD::from_shape_simple_fn(x.raw_dim(), || rng.random_range(-1.0f32..1.0));
        let num = (loss(&l, &(&x + &(&v * h))) - loss(&l, &(&x - &(&v * h)))) / (2.0 * h as f64);
        let got: f64 = dx.iter().zip(&v).map(|(&g, &d)| g as f64 * d as f64).sum();
        assert!(
            (got - num).abs() < tol(num),
            "trial {trial} dx: {got} vs {num}"
        );
        // along every weight at once
        let dirs: Vec<Vec<f32>> = grads
            .iter()
            .map(|g| g.iter().map(|_| rng.random_range(-1.0f32..1.0)).collect())
            .collect();
        let shift = |l: &mut Recurrent, s: f32| {
            for (p, d) in l.parameters().into_iter().zip(&dirs) {
                p.value.iter_mut().zip(d).for_each(|(w, &d)| *w += s * d);
            }
        };
        shift(&mut l, h);
        let lp = loss(&l, &x);
        shift(&mut l, -2.0 * h);
        let lm = loss(&l, &x);
        shift(&mut l, h);
        let num = (lp - lm) / (2.0 * h as f64);
        let got: f64 = grads
            .iter()
            .zip(&dirs)
            .flat_map(|(g, d)| g.iter().zip(d))
            .map(|(&g, &d)| g as f64 * d as f64)
            .sum();
        assert!(
            (got - num).abs() < tol(num),
            "trial {trial} weights: {got} vs {num}"
        );
    }
}
