//! Keras's losses that reduce over the last axis by a sum or a maximum before averaging over
//! the samples (every position of the leading axes): KL divergence, cosine similarity and the
//! hinge family (hinge and squared hinge are elementwise means, kept here with their kin).

use super::{check_pair, elementwise_grad, elementwise_mean, EPSILON};
use crate::error::Result;
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// The row-major values of a tensor and its last-axis length.
fn rows(x: &Tensor) -> (Vec<f32>, usize) {
    let last = x.shape().last().copied().unwrap_or(1).max(1);
    (x.as_standard_layout().iter().copied().collect(), last)
}

/// Sites: positions of the leading axes (a rank-1 input is one site per element, as Keras
/// reduces its only axis).
fn sites(x: &Tensor) -> usize {
    let last = x.shape().last().copied().unwrap_or(1).max(1);
    (x.len() / last).max(1)
}

/// `Σ_k t_k ln(t_k / p_k)` over the last axis with both clipped to `[1e-7, 1]`; the gradient
/// `-t / p` passes where the clip leaves `p` alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KLDivergence;

impl Loss for KLDivergence {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        let mean = elementwise_mean(y_true, y_pred, |t, p| {
            let (t, p) = (t.clamp(EPSILON, 1.0), p.clamp(EPSILON, 1.0));
            t * (t / p).ln()
        })? as f64;
        // The element mean times the row length is the per-site sum's mean.
        Ok((mean * (y_pred.len() / sites(y_pred)) as f64) as f32)
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let per_row = (y_pred.len() / sites(y_pred)) as f64;
        elementwise_grad(y_true, y_pred, |t, p| {
            if (EPSILON..=1.0).contains(&p) {
                -t.clamp(EPSILON, 1.0) / p * per_row
            } else {
                0.0
            }
        })
    }
}

/// Keras's hinge labels: targets that are all 0 or 1 become -1 or 1; others are kept.
fn hinge_labels(y_true: &Tensor) -> Vec<f64> {
    let binary = y_true.iter().all(|&v| v == 0.0 || v == 1.0);
    y_true
        .as_standard_layout()
        .iter()
        .map(|&v| {
            if binary {
                2.0 * v as f64 - 1.0
            } else {
                v as f64
            }
        })
        .collect()
}

/// `max(1 - t p, 0)` averaged, targets in {-1, 1} (or {0, 1}, converted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hinge;

/// `max(1 - t p, 0)²` averaged, targets as for [`Hinge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SquaredHinge;

/// The hinge margins `max(1 - t p, 0)` with the converted targets, row-major.
fn margins(y_true: &Tensor, y_pred: &Tensor) -> Result<(Vec<f64>, Vec<f64>)> {
    check_pair(y_true, y_pred)?;
    let labels = hinge_labels(y_true);
    let margins = labels
        .iter()
        .zip(y_pred.as_standard_layout().iter())
        .map(|(&t, &p)| (1.0 - t * p as f64).max(0.0))
        .collect();
    Ok((labels, margins))
}

fn hinge_family(
    y_true: &Tensor,
    y_pred: &Tensor,
    squared: bool,
    grad: bool,
) -> Result<(f32, Option<Tensor>)> {
    let (labels, m) = margins(y_true, y_pred)?;
    let n = m.len() as f64;
    let label_tensor =
        Tensor::from_shape_vec(y_pred.raw_dim(), labels.iter().map(|&v| v as f32).collect())
            .expect("labels have the input's size");
    let value = if squared {
        elementwise_mean(&label_tensor, y_pred, |t, p| (1.0 - t * p).max(0.0).powi(2))?
    } else {
        elementwise_mean(&label_tensor, y_pred, |t, p| (1.0 - t * p).max(0.0))?
    };
    let gradient = grad.then(|| {
        let values: Vec<f32> = labels
            .iter()
            .zip(&m)
            .map(|(&t, &m)| {
                let dm = if m > 0.0 { -t } else { 0.0 };
                let g = if squared { 2.0 * m * dm } else { dm };
                (g / n) as f32
            })
            .collect();
        Tensor::from_shape_vec(y_pred.raw_dim(), values).expect("gradient has the input's size")
    });
    Ok((value, gradient))
}

/// `sum_i w_i L_i / batch` for the hinge family, the label conversion decided once for the
/// whole batch (as the unweighted loss decides it), `L_i` the mean over sample `i`'s elements.
fn weighted_hinge(y_true: &Tensor, y_pred: &Tensor, weights: &[f32], squared: bool) -> Result<f32> {
    use super::sample_weights::{all_unit, check_row_weights};
    check_row_weights(weights, y_pred)?;
    if all_unit(weights) {
        return Ok(hinge_family(y_true, y_pred, squared, false)?.0);
    }
    let (_, m) = margins(y_true, y_pred)?;
    let per_sample = m.len() / weights.len();
    let total: f64 = m
        .chunks_exact(per_sample)
        .zip(weights)
        .map(|(row, &w)| {
            let sum: f64 = if squared {
                row.iter().map(|v| v * v).sum()
            } else {
                row.iter().sum()
            };
            f64::from(w) * sum / per_sample as f64
        })
        .sum();
    Ok((total / weights.len() as f64) as f32)
}

/// `Loss` for a hinge-family type over [`hinge_family`] and [`weighted_hinge`]; `$squared`
/// picks the squared margin.
macro_rules! hinge_loss {
    ($name:ident, $squared:literal) => {
        impl Loss for $name {
            fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
                Ok(hinge_family(y_true, y_pred, $squared, false)?.0)
            }

            fn compute_weighted_loss(
                &self,
                y_true: &Tensor,
                y_pred: &Tensor,
                weights: &[f32],
            ) -> Result<f32> {
                weighted_hinge(y_true, y_pred, weights, $squared)
            }

            fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
                Ok(hinge_family(y_true, y_pred, $squared, true)?
                    .1
                    .expect("asked for"))
            }
        }
    };
}

hinge_loss!(Hinge, false);
hinge_loss!(SquaredHinge, true);

/// Per site `max(max_k (1 - t_k) p_k - Σ_k t_k p_k + 1, 0)`, averaged over sites; the
/// gradient of the maximum is shared equally among tied maxima (as autodiff's is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CategoricalHinge;

impl CategoricalHinge {
    fn run(y_true: &Tensor, y_pred: &Tensor, grad: bool) -> Result<(f32, Vec<f32>)> {
        check_pair(y_true, y_pred)?;
        let ((p, c), (t, _)) = (rows(y_pred), rows(y_true));
        let n_sites = p.len() / c;
        let mut total = 0.0f64;
        let mut out = if grad {
            vec![0.0f32; p.len()]
        } else {
            Vec::new()
        };
        for (site, (pr, tr)) in p.chunks_exact(c).zip(t.chunks_exact(c)).enumerate() {
            let pos: f64 = pr.iter().zip(tr).map(|(&p, &t)| t as f64 * p as f64).sum();
            let neg_terms: Vec<f64> = pr
                .iter()
                .zip(tr)
                .map(|(&p, &t)| (1.0 - t as f64) * p as f64)
                .collect();
            let neg = neg_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let margin = neg - pos + 1.0;
            total += margin.max(0.0);
            if grad && margin > 0.0 {
                let ties = neg_terms.iter().filter(|&&v| v == neg).count() as f64;
                let g = &mut out[site * c..(site + 1) * c];
                for k in 0..c {
                    let from_max = if neg_terms[k] == neg {
                        (1.0 - tr[k] as f64) / ties
                    } else {
                        0.0
                    };
                    g[k] = ((from_max - tr[k] as f64) / n_sites as f64) as f32;
                }
            }
        }
        Ok(((total / n_sites as f64) as f32, out))
    }
}

impl Loss for CategoricalHinge {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        Ok(Self::run(y_true, y_pred, false)?.0)
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let (_, g) = Self::run(y_true, y_pred, true)?;
        Ok(Tensor::from_shape_vec(y_pred.raw_dim(), g).expect("gradient has the input's size"))
    }
}

/// Per site `-Σ_k â_k b̂_k` with `x̂ = x min(1 / ||x||, 1e7)` over the last axis (Keras's L2
/// normalisation), averaged over sites: -1 for aligned vectors, 1 for opposite ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CosineSimilarity;

/// `min(1 / ||x||, 1 / eps)` and whether the cap is active.
fn inverse_norm(x: &[f32]) -> (f64, bool) {
    let sq: f64 = x.iter().map(|&v| v as f64 * v as f64).sum();
    let inv = 1.0 / sq.sqrt();
    if inv >= 1.0 / EPSILON {
        (1.0 / EPSILON, true)
    } else {
        (inv, false)
    }
}

impl CosineSimilarity {
    fn run(y_true: &Tensor, y_pred: &Tensor, grad: bool) -> Result<(f32, Vec<f32>)> {
        check_pair(y_true, y_pred)?;
        let ((p, c), (t, _)) = (rows(y_pred), rows(y_true));
        let n_sites = (p.len() / c) as f64;
        let mut total = 0.0f64;
        let mut out = if grad {
            vec![0.0f32; p.len()]
        } else {
            Vec::new()
        };
        for (site, (pr, tr)) in p.chunks_exact(c).zip(t.chunks_exact(c)).enumerate() {
            let (inv_t, _) = inverse_norm(tr);
            let (inv_p, capped) = inverse_norm(pr);
            let dot: f64 = pr
                .iter()
                .zip(tr)
                .map(|(&p, &t)| (t as f64 * inv_t) * (p as f64 * inv_p))
                .sum();
            total -= dot;
            if grad {
                let g = &mut out[site * c..(site + 1) * c];
                for k in 0..c {
                    let a = tr[k] as f64 * inv_t;
                    // d/dp of -Σ a (p inv_p): the norm's own derivative only where uncapped.
                    let d = if capped {
                        -a * inv_p
                    } else {
                        -inv_p * (a - pr[k] as f64 * inv_p * dot)
                    };
                    g[k] = (d / n_sites) as f32;
                }
            }
        }
        Ok(((total / n_sites) as f32, out))
    }
}

impl Loss for CosineSimilarity {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        Ok(Self::run(y_true, y_pred, false)?.0)
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let (_, g) = Self::run(y_true, y_pred, true)?;
        Ok(Tensor::from_shape_vec(y_pred.raw_dim(), g).expect("gradient has the input's size"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn values_by_hand_and_gradients_by_finite_differences() {
        let y = t(&[2, 3], &[0.2, 0.5, 0.3, 0.0, 1.0, 0.0]);
        let p = t(&[2, 3], &[0.3, 0.4, 0.3, 0.1, 0.7, 0.2]);
        let kld = (0.2f64 * (0.2f64 / 0.3).ln()
            + 0.5 * (0.5f64 / 0.4).ln()
            + 0.3 * 1.0f64.ln()
            + 1e-7 * (1e-7f64 / 0.1).ln()
            + 1.0 * (1.0f64 / 0.7).ln()
            + 1e-7 * (1e-7f64 / 0.2).ln())
            / 2.0;
        assert!((KLDivergence.compute_loss(&y, &p).unwrap() as f64 - kld).abs() < 1e-6);
        // Row 2 of y is one-hot: pos = 0.7, neg = max(0.1, 0, 0.2) = 0.2: margin 0.5.
        // Row 1: pos = 0.06 + 0.2 + 0.09 = 0.35, neg = max(0.24, 0.2, 0.21) = 0.24: 0.89.
        let ch = CategoricalHinge.compute_loss(&y, &p).unwrap() as f64;
        assert!((ch - (0.89 + 0.5) / 2.0).abs() < 1e-6);
        let cos = |a: [f64; 3], b: [f64; 3]| {
            let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
            let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
            dot / (na * nb)
        };
        let want =
            -(cos([0.2, 0.5, 0.3], [0.3, 0.4, 0.3]) + cos([0.0, 1.0, 0.0], [0.1, 0.7, 0.2])) / 2.0;
        assert!((CosineSimilarity.compute_loss(&y, &p).unwrap() as f64 - want).abs() < 1e-6);
        for loss in [
            &KLDivergence as &dyn Loss,
            &CategoricalHinge,
            &CosineSimilarity,
        ] {
            check_grad(loss, &y, &p, 2e-3);
        }

        // Hinge on {0, 1} targets converts them to {-1, 1}: margins of
        // (t, p) = (1, 0.3), (-1, -2), (-1, 0.5), (1, 1.5) are 0.7, 0, 1.5, 0.
        let yb = t(&[2, 2], &[1.0, 0.0, 0.0, 1.0]);
        let pb = t(&[2, 2], &[0.3, -2.0, 0.5, 1.5]);
        assert!((Hinge.compute_loss(&yb, &pb).unwrap() as f64 - 2.2 / 4.0).abs() < 1e-6);
        let sq = (0.49 + 2.25) / 4.0;
        assert!((SquaredHinge.compute_loss(&yb, &pb).unwrap() as f64 - sq).abs() < 1e-6);
        check_grad(&Hinge, &yb, &pb, 2e-3);
        check_grad(&SquaredHinge, &yb, &pb, 2e-3);
        // Targets already in {-1, 1} are kept.
        let ys = t(&[1, 2], &[-1.0, 1.0]);
        let ps = t(&[1, 2], &[0.5, 0.5]);
        assert!((Hinge.compute_loss(&ys, &ps).unwrap() as f64 - 1.0).abs() < 1e-6);
    }
}
