//! One-shot normalisation of rows, columns or the whole array to unit norm (the original
//! crate's `normalize`), for arrays of any rank.

use super::scaling::{as_stack, check_nd, handle_zero_scale, stack_rows, unstack};
use crate::error::{Error, Result};
use crate::math::{elementwise, reduction};
use ndarray::{Array, Array2, Array3, ArrayBase, ArrayView2, Axis, Data, Dimension};
use serde::{Deserialize, Serialize};

/// What one norm is computed over. For an N-d array a row is a lane along the last axis and
/// a column a lane along the second to last; `Global` takes every element at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormalizationAxis {
    Row,
    Column,
    Global,
}

/// Which norm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
                Err(_) => Err(Error::invalid_parameter(
                    "order",
                    format!(
                        "unknown norm order {other:?}: expected 'l1', 'l2', 'max' or a number p > 0"
                    ),
                )),
            },
        }
    }

    /// `Lp(p)` needs a finite `p > 0` (`InvalidParameter` named "p").
    pub(crate) fn check(self) -> Result<()> {
        if let Self::Lp(p) = self {
            if !(p.is_finite() && p > 0.0) {
                return Err(Error::invalid_parameter(
                    "p",
                    format!("the Lp norm needs a positive, finite p, got {p}"),
                ));
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

    /// Norm of a lane, summing in order. When the sum of terms overflows although the norm
    /// itself is finite, the lane is summed again divided by its largest magnitude `m`
    /// (`norm = m * norm(v / m)`), so huge finite values still normalise.
    fn of_lane<'a>(self, lane: impl Iterator<Item = &'a f64> + Clone) -> f64 {
        let largest = || lane.clone().fold(0.0f64, |m, v| m.max(v.abs()));
        if self == Self::Max {
            return largest();
        }
        let norm = self.finish(lane.clone().map(|&v| self.term(v)).sum());
        if norm.is_finite() {
            return norm;
        }
        let m = largest();
        m * self.finish(lane.map(|&v| self.term(v / m)).sum())
    }
}

/// Divide each row, each column, or the whole of `data` by its norm. A norm below `10 eps` (a
/// zero lane) counts as 1, so such lanes come back unchanged, as in scikit-learn.
///
/// Errors: empty data -> `EmptyInput`; `Lp(p)` with `p <= 0` or non-finite -> `InvalidParameter`;
/// a row / column axis on data of fewer than 2 dimensions -> `InvalidInput`; NaN or infinity ->
/// `NonFinite`.
pub fn normalize<S, D>(
    data: &ArrayBase<S, D>,
    axis: NormalizationAxis,
    order: NormalizationOrder,
) -> Result<Array<f64, D>>
where
    S: Data<Elem = f64>,
    D: Dimension,
{
    order.check()?;
    check_nd(data, axis != NormalizationAxis::Global)?;
    let stack = as_stack(data);
    let out = match axis {
        NormalizationAxis::Column if stack.len_of(Axis(0)) > 1 => {
            let mut out = Array3::<f64>::zeros(stack.dim());
            for (m, mut o) in stack.outer_iter().zip(out.outer_iter_mut()) {
                o.assign(&normalize_2d(m, axis, order)?);
            }
            return Ok(unstack(out, data.raw_dim()));
        }
        _ => normalize_2d(stack_rows(&stack), axis, order)?,
    };
    Ok(unstack(out, data.raw_dim()))
}

fn overflow() -> Error {
    Error::invalid_input("data has values too large for float64: a norm overflows")
}

/// [`normalize`] of a checked matrix (non-empty, finite, valid order).
pub(crate) fn normalize_2d(
    x: ArrayView2<f64>,
    axis: NormalizationAxis,
    order: NormalizationOrder,
) -> Result<Array2<f64>> {
    match axis {
        NormalizationAxis::Row => {
            let overflowed = std::sync::atomic::AtomicBool::new(false);
            let out = elementwise::map_rows(x, |_, row, out| {
                let norm = order.of_lane(row.iter());
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
            let mut norms: Vec<f64> = if axis == NormalizationAxis::Column {
                per_column.iter().map(|&acc| order.finish(acc)).collect()
            } else {
                let total = match order {
                    NormalizationOrder::Max => per_column.iter().fold(0.0f64, |m, &v| m.max(v)),
                    _ => order.finish(per_column.iter().sum()),
                };
                vec![total; x.ncols()]
            };
            // the rare overflowing sums are redone lane by lane with rescaling
            if norms.iter().any(|n| !n.is_finite()) {
                if axis == NormalizationAxis::Column {
                    for (n, col) in norms.iter_mut().zip(x.columns()) {
                        if !n.is_finite() {
                            *n = order.of_lane(col.into_iter());
                        }
                    }
                } else {
                    let total = order.of_lane(x.iter());
                    norms.iter_mut().for_each(|n| *n = total);
                }
            }
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
    use ndarray::{arr1, arr2, arr3, Array1, IxDyn};

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
        assert!(matches!(
            normalize(&x, NormalizationAxis::Row, NormalizationOrder::Lp(-1.0)),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(NormalizationOrder::parse("l7").is_err());
        assert_eq!(
            NormalizationOrder::parse("2.5").unwrap(),
            NormalizationOrder::Lp(2.5)
        );
    }

    #[test]
    fn huge_finite_values_are_rescaled_not_refused() {
        // [3e300, 4e300] has L2 norm 5e300 although the sum of squares overflows
        let x = arr2(&[[3e300, 4e300]]);
        for axis in [NormalizationAxis::Row, NormalizationAxis::Global] {
            let z = normalize(&x, axis, NormalizationOrder::L2).unwrap();
            assert!((z[[0, 0]] - 0.6).abs() < 1e-15 && (z[[0, 1]] - 0.8).abs() < 1e-15);
        }
        let col = normalize(&x.t(), NormalizationAxis::Column, NormalizationOrder::L2).unwrap();
        assert!((col[[1, 0]] - 0.8).abs() < 1e-15);
        // an L1 norm that really is above f64::MAX cannot be represented
        assert!(normalize(
            &arr2(&[[1.5e308, 1.5e308]]),
            NormalizationAxis::Row,
            NormalizationOrder::L1
        )
        .is_err());
    }

    #[test]
    fn any_rank_with_lanes_on_the_last_two_axes() {
        // rank 3: rows along axis 2, columns along axis 1 of each matrix
        let x = arr3(&[[[3.0, 1.0], [4.0, 1.0]], [[0.0, 6.0], [0.0, 8.0]]]);
        let rows = normalize(&x, NormalizationAxis::Row, NormalizationOrder::Max).unwrap();
        assert_eq!(
            rows,
            arr3(&[[[1.0, 1.0 / 3.0], [1.0, 0.25]], [[0.0, 1.0], [0.0, 1.0]]])
        );
        let cols = normalize(&x, NormalizationAxis::Column, NormalizationOrder::L1).unwrap();
        assert_eq!(
            cols,
            arr3(&[
                [[3.0 / 7.0, 0.5], [4.0 / 7.0, 0.5]],
                [[0.0, 6.0 / 14.0], [0.0, 8.0 / 14.0]]
            ])
        );
        // a column-major 3-D input gives the same answer
        let f = x.t().as_standard_layout().into_owned();
        let f = f.t();
        assert_eq!(
            normalize(&f, NormalizationAxis::Column, NormalizationOrder::L1).unwrap(),
            cols
        );
        let v = arr1(&[3.0, 4.0]);
        assert_eq!(
            normalize(&v, NormalizationAxis::Global, NormalizationOrder::L2).unwrap(),
            arr1(&[0.6, 0.8])
        );
        assert!(matches!(
            normalize(&v, NormalizationAxis::Row, NormalizationOrder::L2),
            Err(Error::InvalidInput(_))
        ));
        let dynamic = v.clone().into_dyn();
        let out: Array<f64, IxDyn> =
            normalize(&dynamic, NormalizationAxis::Global, NormalizationOrder::L1).unwrap();
        assert_eq!(out, arr1(&[3.0 / 7.0, 4.0 / 7.0]).into_dyn());
        assert!(matches!(
            normalize(
                &Array1::<f64>::zeros(0),
                NormalizationAxis::Global,
                NormalizationOrder::L2
            ),
            Err(Error::EmptyInput(_))
        ));
        assert!(matches!(
            normalize(
                &arr2(&[[f64::NAN]]),
                NormalizationAxis::Row,
                NormalizationOrder::L2
            ),
            Err(Error::NonFinite(_))
        ));
    }
}
