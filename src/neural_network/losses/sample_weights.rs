//! Per-sample loss weights, as Keras applies `sample_weight` / `class_weight`: each sample's
//! loss (its own mean over the elements or sites it holds) is multiplied by its weight and the
//! products are summed and divided by the batch size (Keras's default `sum_over_batch_size`
//! reduction: the divisor is the number of samples, not the sum of the weights). Because an
//! unweighted loss is the mean of the samples' losses, each sample's gradient is its
//! unweighted gradient times its weight.
//!
//! Unit weights take the unweighted path itself (the same value, the same bits).

use crate::error::{Error, Result};
use crate::neural_network::Tensor;
use ndarray::Axis;

/// Weights are one finite number per sample of the batch (rows along axis 0); negative
/// weights are accepted, as Keras accepts them.
pub fn check_row_weights(weights: &[f32], y_pred: &Tensor) -> Result<()> {
    let batch = y_pred.shape().first().copied().unwrap_or(0);
    if weights.len() != batch {
        return Err(Error::invalid_input(format!(
            "sample weights: {} weights for a batch of {batch} samples",
            weights.len()
        )));
    }
    if let Some(w) = weights.iter().find(|w| !w.is_finite()) {
        return Err(Error::invalid_input(format!(
            "sample weights must be finite, got {w}"
        )));
    }
    Ok(())
}

/// Whether every weight is exactly 1 (the unweighted loss then applies unchanged).
pub fn all_unit(weights: &[f32]) -> bool {
    weights.iter().all(|&w| w == 1.0)
}

/// Sample `i` of `t` with its batch axis kept (length 1).
pub(crate) fn sample(t: &Tensor, i: usize) -> Tensor {
    t.index_axis(Axis(0), i).insert_axis(Axis(0)).to_owned()
}

/// `sum_i w_i L_i / batch` with `L_i` each sample's own loss, computed by `loss` on that
/// sample alone (exact for every loss whose batch value is the mean of its samples' values).
pub(crate) fn weighted_mean_of_samples(
    loss: impl Fn(&Tensor, &Tensor) -> Result<f32>,
    y_true: &Tensor,
    y_pred: &Tensor,
    weights: &[f32],
) -> Result<f32> {
    super::check_pair_batch(y_true, y_pred)?;
    check_row_weights(weights, y_pred)?;
    let mut total = 0.0f64;
    for (i, &w) in weights.iter().enumerate() {
        if w != 0.0 {
            let l = loss(&sample(y_true, i), &sample(y_pred, i))?;
            total += f64::from(w) * f64::from(l);
        }
    }
    Ok((total / weights.len() as f64) as f32)
}

/// `grad` with every sample's rows multiplied by its weight.
pub fn scale_samples(mut grad: Tensor, weights: &[f32]) -> Result<Tensor> {
    check_row_weights(weights, &grad)?;
    for (mut row, &w) in grad.axis_iter_mut(Axis(0)).zip(weights) {
        row.mapv_inplace(|g| g * w);
    }
    Ok(grad)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::t;
    use super::super::*;
    use super::sample;
    use crate::neural_network::traits::Loss;

    /// Every loss: weighted value by hand from single-sample losses, unit weights bit-equal
    /// to the unweighted loss and gradient, weighted gradient by finite differences.
    #[test]
    fn weighted_losses_by_hand_unit_weights_exact_and_gradients_by_finite_differences() {
        let y = t(&[3, 3], &[0.2, 0.5, 0.3, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0]);
        let p = t(&[3, 3], &[0.3, 0.4, 0.3, 0.1, 0.7, 0.2, 0.6, 0.3, 0.1]);
        let labels = t(&[3, 1], &[1.0, 2.0, 0.0]);
        let w = [2.0f32, 0.0, -0.5];
        let cases: Vec<(Box<dyn Loss>, &Tensor)> = vec![
            (Box::new(MeanSquaredError), &y),
            (Box::new(MeanAbsoluteError), &y),
            (Box::new(BinaryCrossEntropy), &y),
            (
                Box::new(BinaryCrossEntropy::configured().with_from_logits(true)),
                &y,
            ),
            (Box::new(CategoricalCrossEntropy::new(false)), &y),
            (Box::new(CategoricalCrossEntropy::new(true)), &y),
            (Box::new(SparseCategoricalCrossEntropy::new(false)), &labels),
            (Box::new(Huber::new(0.1).unwrap()), &y),
            (Box::new(LogCosh), &y),
            (Box::new(KLDivergence), &y),
            (Box::new(CategoricalHinge), &y),
            (Box::new(CosineSimilarity), &y),
        ];
        for (k, (loss, target)) in cases.iter().enumerate() {
            let by_hand: f64 = (0..3)
                .map(|i| {
                    let l = loss
                        .compute_loss(&sample(target, i), &sample(&p, i))
                        .unwrap();
                    f64::from(w[i]) * f64::from(l)
                })
                .sum::<f64>()
                / 3.0;
            let got = loss.compute_weighted_loss(target, &p, &w).unwrap();
            assert!((f64::from(got) - by_hand).abs() < 1e-6, "case {k}");
            let ones = [1.0f32; 3];
            assert_eq!(
                loss.compute_weighted_loss(target, &p, &ones)
                    .unwrap()
                    .to_bits(),
                loss.compute_loss(target, &p).unwrap().to_bits(),
                "case {k}"
            );
            let (a, b) = (
                loss.compute_weighted_grad(target, &p, &ones).unwrap(),
                loss.compute_grad(target, &p).unwrap(),
            );
            assert!(a.iter().zip(&b).all(|(a, b)| a.to_bits() == b.to_bits()));
            // d/dp of the weighted value, by central differences
            let g = loss.compute_weighted_grad(target, &p, &w).unwrap();
            let h = 1e-3f32;
            for e in 0..p.len() {
                let (mut plus, mut minus) = (p.clone(), p.clone());
                plus.as_slice_mut().unwrap()[e] += h;
                minus.as_slice_mut().unwrap()[e] -= h;
                let lp = loss.compute_weighted_loss(target, &plus, &w).unwrap() as f64;
                let lm = loss.compute_weighted_loss(target, &minus, &w).unwrap() as f64;
                let numeric = (lp - lm) / (2.0 * h as f64);
                let analytic = g.as_slice().unwrap()[e] as f64;
                assert!(
                    (numeric - analytic).abs() < 3e-3,
                    "case {k} element {e}: {analytic} vs {numeric}"
                );
            }
        }
    }

    /// Hinge converts {0, 1} labels to {-1, 1} when the whole batch is binary (Keras decides
    /// per batch): a weighted hinge keeps that decision for every sample.
    #[test]
    fn hinge_decides_label_conversion_on_the_whole_batch() {
        // not binary as a batch (a -1 is present): the row [0, 1] is used as it is
        let y = t(&[2, 2], &[0.0, 1.0, -1.0, 1.0]);
        let p = t(&[2, 2], &[0.5, -0.5, 0.25, 2.0]);
        // margins max(1 - t p, 0): row 0: 1, 1.5; row 1: 1.25, 0
        let w = [3.0f32, 1.0];
        let want = (3.0 * (1.0 + 1.5) / 2.0 + 1.25 / 2.0) / 2.0;
        let got = Hinge.compute_weighted_loss(&y, &p, &w).unwrap() as f64;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        let want_sq = (3.0 * (1.0 + 2.25) / 2.0 + 1.5625 / 2.0) / 2.0;
        let got = SquaredHinge.compute_weighted_loss(&y, &p, &w).unwrap() as f64;
        assert!((got - want_sq).abs() < 1e-6, "{got} vs {want_sq}");
        assert_eq!(
            Hinge.compute_weighted_loss(&y, &p, &[1.0, 1.0]).unwrap(),
            Hinge.compute_loss(&y, &p).unwrap()
        );
    }

    #[test]
    fn bad_weights_are_refused() {
        let y = t(&[2, 1], &[1.0, 2.0]);
        for bad in [&[1.0f32][..], &[1.0, f32::NAN], &[f32::INFINITY, 1.0]] {
            assert!(matches!(
                MeanSquaredError.compute_weighted_loss(&y, &y, bad),
                Err(Error::InvalidInput(_))
            ));
            assert!(MeanSquaredError.compute_weighted_grad(&y, &y, bad).is_err());
        }
    }
}
