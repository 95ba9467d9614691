//! Impurity measures. Two scales live here because the two front doors observe different
//! numbers: the scikit-learn door ranks splits by cheap monotone proxies of the decrease in
//! nats (computed in the splitter's running sums, see `xlogx_table`), while the original API
//! scores each split by its exact impurity decrease in bits (or the gain ratio), which its
//! `min_impurity_decrease` threshold is compared against.

/// What a node's impurity is measured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Criterion {
    Gini,
    Entropy,
    /// Entropy for the impurity; splits compared by gain ratio.
    GainRatio,
    /// Variance (regression).
    Mse,
}

impl Criterion {
    pub(super) fn uses_entropy(self) -> bool {
        matches!(self, Criterion::Entropy | Criterion::GainRatio)
    }
}

/// `c ln c` for `c` in `0..=n` (0 for 0): the entropy proxies' running terms.
pub(super) fn xlogx_table(n: usize) -> Vec<f64> {
    (0..=n)
        .map(|c| {
            if c == 0 {
                0.0
            } else {
                c as f64 * (c as f64).ln()
            }
        })
        .collect()
}

/// Gini impurity, or entropy in bits, of `n` samples with class `counts`.
pub(super) fn class_impurity(criterion: Criterion, counts: &[usize], n: usize) -> f64 {
    let n = n as f64;
    let fractions = counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n);
    if criterion == Criterion::Gini {
        1.0 - fractions.map(|p| p * p).sum::<f64>()
    } else {
        -fractions.map(|p| p * p.log2()).sum::<f64>()
    }
}

/// Variance of `n` targets from their running sum and sum of squares (clamped at 0, since the
/// one-pass form can round below it).
pub(super) fn variance_from_sums(sum: f64, sum_sq: f64, n: usize) -> f64 {
    let n = n as f64;
    (sum_sq / n - (sum / n).powi(2)).max(0.0)
}

/// The original API's split score: the impurity decrease, or for a gain-ratio tree the
/// decrease over the entropy (bits) of the part sizes (0 when that entropy is 0).
pub(super) fn split_score(
    criterion: Criterion,
    decrease: f64,
    sizes: impl Iterator<Item = usize>,
    n: usize,
) -> f64 {
    if criterion != Criterion::GainRatio {
        return decrease;
    }
    let split_info: f64 = -sizes
        .map(|m| m as f64 / n as f64)
        .map(|w| w * w.log2())
        .sum::<f64>();
    if split_info > 0.0 {
        decrease / split_info
    } else {
        0.0
    }
}
