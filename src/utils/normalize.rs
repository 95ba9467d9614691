//! One-shot normalisation of rows, columns or the whole matrix to unit norm (the original
//! crate's `normalize`).

use super::scaling::handle_zero_scale;
use crate::error::{Result, RustymlError};
use crate::math::{elementwise, reduction};
use crate::validation;
use ndarray::{Array2, ArrayBase, ArrayView2, Data, Ix2};

/// What one norm is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormalizationAxis {
    /// Each row (sample) separately.
    Row,
    /// Each column (feature) separately.
    Column,
    /// The whole matrix as one vector.
    Global,
}

/// Which norm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NormalizationOrder {
    /// Sum of absolute values.
    L1,
    /// Euclidean norm.
    L2,
    /// Largest absolute value.
    Max,
    /// `(sum |v|^p)^(1/p)` for a finite `p > 0`.
    Lp(f64),
}

impl NormalizationOrder {
    /// `"l1"`, `"l2"`, `"max"`, or a number `p` for the `Lp` norm.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "l1" => Ok(Self::L1),
            "l2" => Ok(Self::L2),
            "max" | "inf" => Ok(Self::Max),
            other => match other.parse::<f64>() {
                Ok(p) => Ok(Self::Lp(p)),
                Err(_) => Err(RustymlError::invalid(format!(
                    "unknown norm order {other:?}: expected 'l1', 'l2', 'max' or a number p > 0"
                ))),
            },
        }
    }

    fn check(self) -> Result<()> {
        if let Self::Lp(p) = self {
            if !(p.is_finite() && p > 0.0) {
                return Err(RustymlError::invalid(format!(
                    "Lp norm parameter p must be positive and finite, got {p}"
                )));
            }
        }
        Ok(())
    }

    /// Per-element contribution before the final root (`|v|`, `v^2`, `|v|^p`).
    fn term(self, v: f64) -> f64 {
        match self {
            Self::L1 | Self::Max => v.abs(),
            Self::L2 => v * v,
            Self::Lp(p) => v.abs().powf(p),
        }
    }

    /// Norm from the accumulated terms.
    fn finish(self, acc: f64) -> f64 {
        match self {
            Self::L2 => acc.sqrt(),
            Self::Lp(p) => acc.powf(1.0 / p),
            Self::L1 | Self::Max => acc,
        }
    }

    /// Norm of a slice, summing in order.
    fn of_slice(self, s: &[f64]) -> f64 {
        match self {
            Self::Max => s.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            _ => self.finish(s.iter().map(|&v| self.term(v)).sum()),
        }
    }
}

/// Divide each row, column, or the whole of `x` by its norm. A norm below `10 eps` (a zero
/// lane) is treated as 1, so such lanes come back unchanged, as in scikit-learn.
pub fn normalize<S: Data<Elem = f64>>(
    x: &ArrayBase<S, Ix2>,
    axis: NormalizationAxis,
    order: NormalizationOrder,
) -> Result<Array2<f64>> {
    let x = x.view();
    validation::check_features(&x, "X")?;
    normalize_checked(x, axis, order)
}

fn overflow() -> RustymlError {
    RustymlError::invalid("X has values too large for float64: a norm overflows")
}

/// [`normalize`] on input already checked (shape, finiteness).
pub(crate) fn normalize_checked(
    x: ArrayView2<f64>,
    axis: NormalizationAxis,
    order: NormalizationOrder,
) -> Result<Array2<f64>> {
    order.check()?;
    match axis {
        NormalizationAxis::Row => {
            let overflowed = std::sync::atomic::AtomicBool::new(false);
            let out = elementwise::map_rows(x, |_, row, out| {
                let norm = order.of_slice(row);
                if !norm.is_finite() {
                    overflowed.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                let norm = handle_zero_scale(norm);
                out.iter_mut().zip(row).for_each(|(o, &v)| *o = v / norm);
            });
            if overflowed.into_inner() {
                return Err(overflow());
            }
            Ok(out)
        }
        NormalizationAxis::Column | NormalizationAxis::Global => {
            let per_column: Vec<f64> = match order {
                NormalizationOrder::Max => reduction::column_max_abs(x),
                _ => reduction::column_sums_map(x, |v| order.term(v)),
            };
            let norms: Vec<f64> = if axis == NormalizationAxis::Column {
                per_column.iter().map(|&acc| order.finish(acc)).collect()
            } else {
                let total = match order {
                    NormalizationOrder::Max => per_column.iter().fold(0.0f64, |m, &v| m.max(v)),
                    _ => order.finish(per_column.iter().sum()),
                };
                vec![total; x.ncols()]
            };
            if norms.iter().any(|n| !n.is_finite()) {
                return Err(overflow());
            }
            let scale: Vec<f64> = norms.into_iter().map(handle_zero_scale).collect();
            Ok(elementwise::center_scale_columns(x, None, Some(&scale)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

    #[test]
    fn every_axis_and_order_by_hand() {
        let x = arr2(&[[3.0, 0.0], [4.0, 0.0]]);
        let rows = normalize(&x, NormalizationAxis::Row, NormalizationOrder::L2).unwrap();
        assert_eq!(rows, arr2(&[[1.0, 0.0], [1.0, 0.0]]));
        // column 0 has L2 norm 5; column 1 is all zero and stays
        let cols = normalize(&x, NormalizationAxis::Column, NormalizationOrder::L2).unwrap();
        assert_eq!(cols, arr2(&[[0.6, 0.0], [0.8, 0.0]]));
        let global = normalize(&x, NormalizationAxis::Global, NormalizationOrder::L1).unwrap();
        assert_eq!(global, arr2(&[[3.0 / 7.0, 0.0], [4.0 / 7.0, 0.0]]));
        let max = normalize(&x, NormalizationAxis::Global, NormalizationOrder::Max).unwrap();
        assert_eq!(max, arr2(&[[0.75, 0.0], [1.0, 0.0]]));
        // p = 3: (27 + 64)^(1/3)
        let lp = normalize(&x, NormalizationAxis::Column, NormalizationOrder::Lp(3.0)).unwrap();
        assert!((lp[[0, 0]] - 3.0 / 91f64.powf(1.0 / 3.0)).abs() < 1e-15);
        assert!(normalize(&x, NormalizationAxis::Row, NormalizationOrder::Lp(-1.0)).is_err());
        assert!(normalize(
            &arr2(&[[1e300, 1e300]]),
            NormalizationAxis::Row,
            NormalizationOrder::L2
        )
        .is_err());
        assert!(NormalizationOrder::parse("l7").is_err());
        assert_eq!(
            NormalizationOrder::parse("2.5").unwrap(),
            NormalizationOrder::Lp(2.5)
        );
    }
}
