//! Classification losses of the linear models, each fused with its gradient.
//!
//! Each kernel computes the summed loss and, in the same pass, the loss's gradient with
//! respect to the scores. The sum goes through the crate's one reduction engine,
//! [`reduction::blocked_fold`], with blocks whose size depends only on the shape, so the
//! serial and parallel paths agree bit for bit.
//!
//! * logistic and softmax cross-entropy (one `exp` per score): gate [`EXP_REDUCE`];
//! * squared hinge (no transcendental, a sum-like reduction): gate [`reduction::SUM_F64`].

use crate::declare_gate;
use crate::math::reduction::{self, blocked_fold, blocked_fold_into};

declare_gate! {
    /// Exp reduction of the logistic / softmax cross-entropy loss (with its fused gradient).
    /// Work = scores read (`n` for binary, `n * k` for multinomial).
    pub EXP_REDUCE: reduction::exp_reduce = 32_768, "elements"
}

/// Scores per block of the binary loss (and about as many per block of the multinomial one).
const BLOCK: usize = reduction::BLOCK;

/// Loss of one sample, `log(1 + exp(z)) - y z`, and its derivative `sigmoid(z) - y`, from one
/// `exp` and one `ln_1p`, stable for scores of any size.
#[inline]
fn logistic_term(z: f64, y: f64) -> (f64, f64) {
    let e = (-z.abs()).exp();
    let softplus = z.max(0.0) + e.ln_1p();
    let p = if z >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    };
    (softplus - y * z, p - y)
}

/// Binary logistic loss over scores `z` and targets `y` in `{0, 1}`:
/// returns `(sum_i log(1 + exp(z_i)) - y_i z_i, sum_i r_i)` and writes `r_i = sigmoid(z_i) - y_i`
/// (the derivative of each term) into `grad`.
///
/// # Panics
/// If the three slices differ in length (a caller bug, not user input).
pub fn logistic_loss_grad(z: &[f64], y: &[f64], grad: &mut [f64]) -> (f64, f64) {
    logistic_loss_grad_weighted(z, y, None, grad)
}

/// [`logistic_loss_grad`] with a weight `s_i` per sample: each term and its derivative
/// are multiplied by `s_i` (`None`: all ones, the unweighted sums bit for bit).
///
/// # Panics
/// If the slices differ in length (a caller bug, not user input).
pub fn logistic_loss_grad_weighted(
    z: &[f64],
    y: &[f64],
    weights: Option<&[f64]>,
    grad: &mut [f64],
) -> (f64, f64) {
    assert!(
        z.len() == y.len() && z.len() == grad.len() && weights.is_none_or(|w| w.len() == z.len()),
        "logistic_loss_grad: length mismatch"
    );
    let n = z.len();
    blocked_fold_into(
        grad,
        BLOCK,
        &EXP_REDUCE,
        n,
        (0.0, 0.0),
        |range, out| {
            let (mut loss, mut rsum) = (0.0, 0.0);
            let start = range.start;
            for (j, ((o, &zi), &yi)) in out
                .iter_mut()
                .zip(&z[range.clone()])
                .zip(&y[range])
                .enumerate()
            {
                let (mut l, mut r) = logistic_term(zi, yi);
                if let Some(w) = weights {
                    l *= w[start + j];
                    r *= w[start + j];
                }
                *o = r;
                loss += l;
                rsum += r;
            }
            (loss, rsum)
        },
        |(a, b), (c, d)| (a + c, b + d),
    )
}

/// Binary logistic loss only (no gradient): `sum_i log(1 + exp(z_i)) - y_i z_i`.
pub fn logistic_loss(z: &[f64], y: &[f64]) -> f64 {
    assert_eq!(z.len(), y.len(), "logistic_loss: length mismatch");
    blocked_fold(
        z.len(),
        BLOCK,
        &EXP_REDUCE,
        z.len(),
        0.0,
        |range| {
            z[range.clone()]
                .iter()
                .zip(&y[range])
                .map(|(&zi, &yi)| logistic_term(zi, yi).0)
                .fold(0.0, |s, l| s + l)
        },
        |a, b| a + b,
    )
}

/// Multinomial (softmax) cross-entropy over a row-major `n x k` score matrix `z` and class
/// indices `labels` (`< k`): returns the summed loss `sum_i logsumexp(z_i) - z_i[label_i]`
/// and the column sums of the gradient, and writes the gradient with respect to the scores,
/// `softmax(z_i) - onehot(label_i)`, into `grad` (row-major `n x k`).
///
/// # Panics
/// If the shapes disagree or a label is `>= k` (caller bugs, not user input).
pub fn softmax_loss_grad(
    z: &[f64],
    k: usize,
    labels: &[usize],
    grad: &mut [f64],
) -> (f64, Vec<f64>) {
    softmax_loss_grad_weighted(z, k, labels, None, grad)
}

/// [`softmax_loss_grad`] with a weight `s_i` per sample (row): each row's loss and gradient
/// are multiplied by `s_i` (`None`: all ones, the unweighted sums bit for bit).
///
/// # Panics
/// If the shapes disagree or a label is `>= k` (caller bugs, not user input).
pub fn softmax_loss_grad_weighted(
    z: &[f64],
    k: usize,
    labels: &[usize],
    weights: Option<&[f64]>,
    grad: &mut [f64],
) -> (f64, Vec<f64>) {
    let n = labels.len();
    assert!(
        k > 0 && z.len() == n * k && grad.len() == n * k && weights.is_none_or(|w| w.len() == n),
        "softmax_loss_grad: shape mismatch"
    );
    let rows_per_block = (BLOCK / k).max(1);
    // Blocks of whole rows: each block's range of `grad` covers its rows' k scores each.
    blocked_fold_into(
        grad,
        rows_per_block * k,
        &EXP_REDUCE,
        n * k,
        (0.0, vec![0.0; k]),
        |range, out| {
            let rows = range.start / k..range.end / k;
            let mut loss = 0.0;
            let mut colsum = vec![0.0; k];
            for (local, i) in rows.enumerate() {
                let zi = &z[i * k..(i + 1) * k];
                let gi = &mut out[local * k..(local + 1) * k];
                let max = zi.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
                let mut total = 0.0;
                for (g, &v) in gi.iter_mut().zip(zi) {
                    *g = (v - max).exp();
                    total += *g;
                }
                let label = labels[i];
                assert!(label < k, "softmax_loss_grad: label {label} out of range");
                let weight = weights.map(|w| w[i]);
                let term = max + total.ln() - zi[label];
                loss += weight.map_or(term, |w| w * term);
                let inv = 1.0 / total;
                for (c, g) in gi.iter_mut().enumerate() {
                    *g *= inv;
                    if c == label {
                        *g -= 1.0;
                    }
                    if let Some(w) = weight {
                        *g *= w;
                    }
                    colsum[c] += *g;
                }
            }
            (loss, colsum)
        },
        |(la, mut ca), (lb, cb)| {
            for (a, b) in ca.iter_mut().zip(cb) {
                *a += b;
            }
            (la + lb, ca)
        },
    )
}

/// Squared hinge loss over scores `z` and targets `y` in `{-1, +1}`:
/// returns `sum_i max(0, 1 - y_i z_i)^2` and writes its derivative
/// `-2 y_i max(0, 1 - y_i z_i)` into `grad`.
///
/// # Panics
/// If the three slices differ in length (a caller bug, not user input).
pub fn squared_hinge_loss_grad(z: &[f64], y: &[f64], grad: &mut [f64]) -> f64 {
    assert!(
        z.len() == y.len() && z.len() == grad.len(),
        "squared_hinge_loss_grad: length mismatch"
    );
    let n = z.len();
    blocked_fold_into(
        grad,
        BLOCK,
        &reduction::SUM_F64,
        n,
        0.0,
        |range, out| {
            let mut loss = 0.0;
            for ((o, &zi), &yi) in out.iter_mut().zip(&z[range.clone()]).zip(&y[range]) {
                let margin = (1.0 - yi * zi).max(0.0);
                *o = -2.0 * yi * margin;
                loss += margin * margin;
            }
            loss
        },
        |a, b| a + b,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::bits;

    fn scores(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i as f64) * 0.731).sin() * 12.0 + if i % 97 == 0 { 800.0 } else { 0.0 })
            .collect()
    }

    #[test]
    fn binary_loss_matches_the_textbook_formula() {
        let z = [-3.0, -0.5, 0.0, 0.5, 2.0];
        let y = [0.0, 1.0, 1.0, 0.0, 1.0];
        let mut g = [0.0; 5];
        let (loss, rsum) = logistic_loss_grad(&z, &y, &mut g);
        // Independent oracle: -[y log p + (1-y) log(1-p)] with p = 1 / (1 + e^-z).
        let mut want = 0.0;
        let mut want_r = 0.0;
        for i in 0..5 {
            let p = 1.0 / (1.0 + (-z[i]).exp());
            want -= y[i] * p.ln() + (1.0 - y[i]) * (1.0 - p).ln();
            assert!((g[i] - (p - y[i])).abs() < 1e-15);
            want_r += p - y[i];
        }
        assert!((loss - want).abs() < 1e-14, "{loss} vs {want}");
        assert!((rsum - want_r).abs() < 1e-14);
        assert_eq!(logistic_loss(&z, &y).to_bits(), loss.to_bits());
        // Huge scores stay finite: log(1 + e^800) - 0 = 800 (to rounding).
        let (big, _) = logistic_loss_grad(&[800.0, -800.0], &[0.0, 1.0], &mut [0.0; 2]);
        assert_eq!(big, 1600.0);
    }

    #[test]
    fn softmax_loss_matches_the_textbook_formula() {
        let z = [1.0, 2.0, 0.5, -1.0, 0.0, 3.0];
        let labels = [1, 0];
        let mut g = [0.0; 6];
        let (loss, colsum) = softmax_loss_grad(&z, 3, &labels, &mut g);
        let mut want = 0.0;
        let mut want_col = [0.0; 3];
        for i in 0..2 {
            let row = &z[i * 3..i * 3 + 3];
            let denom: f64 = row.iter().map(|v| v.exp()).sum();
            want -= (row[labels[i]].exp() / denom).ln();
            for c in 0..3 {
                let want_g = row[c].exp() / denom - if c == labels[i] { 1.0 } else { 0.0 };
                assert!((g[i * 3 + c] - want_g).abs() < 1e-15);
                want_col[c] += want_g;
            }
        }
        assert!((loss - want).abs() < 1e-14);
        for c in 0..3 {
            assert!((colsum[c] - want_col[c]).abs() < 1e-15);
        }
    }

    /// Integer weights count samples: weight 2 is the sample twice, weight 0 drops it; all
    /// ones is the unweighted kernel bit for bit.
    #[test]
    fn weighted_losses_count_repeated_samples() {
        let z = [1.0, -0.5, 2.0, 0.25, -3.0, 0.5];
        let y = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0];
        let w = [2.0, 0.0, 1.0, 3.0, 1.0, 2.0];
        let (mut zr, mut yr) = (Vec::new(), Vec::new());
        for i in 0..z.len() {
            for _ in 0..w[i] as usize {
                zr.push(z[i]);
                yr.push(y[i]);
            }
        }
        let mut g = [0.0; 6];
        let (loss, rsum) = logistic_loss_grad_weighted(&z, &y, Some(&w), &mut g);
        let mut gr = vec![0.0; zr.len()];
        let (want_loss, want_rsum) = logistic_loss_grad(&zr, &yr, &mut gr);
        // Sums of a dozen O(1) terms in another order: a few ulps apart.
        assert!((loss - want_loss).abs() < 1e-13 && (rsum - want_rsum).abs() < 1e-13);
        let mut g1 = [0.0; 6];
        let (l1, r1) = logistic_loss_grad_weighted(&z, &y, Some(&[1.0; 6]), &mut g1);
        let mut g0 = [0.0; 6];
        let (l0, r0) = logistic_loss_grad(&z, &y, &mut g0);
        assert_eq!((l1.to_bits(), r1.to_bits()), (l0.to_bits(), r0.to_bits()));
        assert_eq!(bits(&g1), bits(&g0));
        for i in 0..6 {
            let mut one = [0.0];
            logistic_loss_grad(&z[i..=i], &y[i..=i], &mut one);
            assert_eq!(g[i], w[i] * one[0]);
        }

        // Softmax, 3 classes, two rows: weights 2 and 0 equal the first row twice.
        let zs = [1.0, 2.0, 0.5, -1.0, 0.0, 3.0];
        let labels = [1, 0];
        let mut gs = [0.0; 6];
        let (ls, cs) = softmax_loss_grad_weighted(&zs, 3, &labels, Some(&[2.0, 0.0]), &mut gs);
        let twice = [1.0, 2.0, 0.5, 1.0, 2.0, 0.5];
        let mut gt = [0.0; 6];
        let (lt, ct) = softmax_loss_grad(&twice, 3, &[1, 1], &mut gt);
        assert!((ls - lt).abs() < 1e-14);
        for c in 0..3 {
            assert!((cs[c] - ct[c]).abs() < 1e-15);
            assert!((gs[c] - 2.0 * gt[c]).abs() < 1e-15);
            assert_eq!(gs[3 + c], 0.0);
        }
        let mut gu = [0.0; 6];
        let mut gw = [0.0; 6];
        let unweighted = softmax_loss_grad(&zs, 3, &labels, &mut gu);
        let ones = softmax_loss_grad_weighted(&zs, 3, &labels, Some(&[1.0, 1.0]), &mut gw);
        assert_eq!(unweighted.0.to_bits(), ones.0.to_bits());
        assert_eq!(bits(&gu), bits(&gw));
    }

    #[test]
    fn squared_hinge_matches_hand_values_and_agrees_bitwise() {
        // margins 1 - y z: 3, 0.5, -1 (inactive), 1  => loss 9 + 0.25 + 0 + 1
        let z = [2.0, 0.5, -2.0, 0.0];
        let y = [-1.0, 1.0, -1.0, 1.0];
        let mut g = [0.0; 4];
        assert_eq!(squared_hinge_loss_grad(&z, &y, &mut g), 10.25);
        assert_eq!(g, [6.0, -1.0, 0.0, -2.0]);
        for n in [4097, 300_001] {
            let z = scores(n);
            let y: Vec<f64> = (0..n)
                .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
                .collect();
            let (s, p) = serial_and_parallel(&reduction::SUM_F64, || {
                let mut g = vec![0.0; n];
                (squared_hinge_loss_grad(&z, &y, &mut g), g)
            });
            assert_eq!(s.0.to_bits(), p.0.to_bits(), "n={n}");
            assert_eq!(bits(&s.1), bits(&p.1), "n={n}");
        }
    }

    #[test]
    fn exp_reduce_serial_and_parallel_agree_bitwise() {
        for n in [0, 1, 4095, 4096, 4097, 50_001] {
            let z = scores(n);
            let y: Vec<f64> = (0..n).map(|i| (i % 3 == 0) as u8 as f64).collect();
            let (s, p) = serial_and_parallel(&EXP_REDUCE, || {
                let mut g = vec![0.0; n];
                let out = logistic_loss_grad(&z, &y, &mut g);
                (out, g, logistic_loss(&z, &y))
            });
            assert_eq!(
                (s.0 .0.to_bits(), s.0 .1.to_bits()),
                (p.0 .0.to_bits(), p.0 .1.to_bits()),
                "n={n}"
            );
            assert_eq!(bits(&s.1), bits(&p.1), "n={n}");
            assert_eq!(s.2.to_bits(), p.2.to_bits(), "n={n}");
            for k in [2, 3, 10] {
                let z = scores(n * k);
                let labels: Vec<usize> = (0..n).map(|i| (i * 7) % k).collect();
                let (s, p) = serial_and_parallel(&EXP_REDUCE, || {
                    let mut g = vec![0.0; n * k];
                    let out = softmax_loss_grad(&z, k, &labels, &mut g);
                    (out, g)
                });
                assert_eq!(s.0 .0.to_bits(), p.0 .0.to_bits(), "n={n} k={k}");
                assert_eq!(bits(&s.0 .1), bits(&p.0 .1), "n={n} k={k}");
                assert_eq!(bits(&s.1), bits(&p.1), "n={n} k={k}");
            }
        }
    }
}
