//! One-shot standardisation of rows, columns or the whole array (the original crate's
//! `standardize`), for arrays of any rank. Statistics come from the data itself on every
//! call; fit a [`StandardScaler`](super::StandardScaler) when several batches must share them.

use super::scaling::{as_stack, check_nd, checked_column_moments, stack_rows, std_scale, unstack};
use crate::error::Result;
use crate::math::elementwise;
use crate::math::reduction::Moments;
use ndarray::{Array, Array2, Array3, ArrayBase, ArrayView2, Axis, Data, Dimension};

/// What the mean and standard deviation are computed over. For an N-d array a row is a lane
/// along the last axis and a column a lane along the second to last; `Global` takes every
/// element at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandardizationAxis {
    Row,
    Column,
    Global,
}

/// Zero mean and unit (population) variance along `axis`. A constant lane (variance within
/// rounding of zero, scikit-learn's rule) is only centred, never divided by ~0.
///
/// Errors: empty data -> `EmptyInput`; a row / column axis on data of fewer than 2 dimensions
/// -> `InvalidInput`; NaN or infinity -> `NonFinite`.
pub fn standardize<S, D>(data: &ArrayBase<S, D>, axis: StandardizationAxis) -> Result<Array<f64, D>>
where
    S: Data<Elem = f64>,
    D: Dimension,
{
    check_nd(data, axis != StandardizationAxis::Global)?;
    let stack = as_stack(data);
    if axis == StandardizationAxis::Column && stack.len_of(Axis(0)) > 1 {
        let mut out = Array3::<f64>::zeros(stack.dim());
        for (m, mut o) in stack.outer_iter().zip(out.outer_iter_mut()) {
            o.assign(&standardize_2d(m, axis)?);
        }
        return Ok(unstack(out, data.raw_dim()));
    }
    Ok(unstack(
        standardize_2d(stack_rows(&stack), axis)?,
        data.raw_dim(),
    ))
}

/// [`standardize`] of a checked matrix. The column case is exactly
/// `StandardScaler::new().fit_transform(x)`.
fn standardize_2d(x: ArrayView2<f64>, axis: StandardizationAxis) -> Result<Array2<f64>> {
    Ok(match axis {
        StandardizationAxis::Column => {
            let columns = checked_column_moments(&x)?;
            let mean: Vec<f64> = columns.iter().map(|m| m.mean).collect();
            let scale: Vec<f64> = columns.iter().map(std_scale).collect();
            elementwise::center_scale_columns(x, Some(&mean), Some(&scale))
        }
        StandardizationAxis::Global => {
            let columns = checked_column_moments(&x)?;
            let all = columns.into_iter().fold(Moments::default(), Moments::merge);
            check_lane(&all, "the array's")?;
            let (mean, scale) = (all.mean, std_scale(&all));
            elementwise::map_rows(x, |_, row, out| {
                out.iter_mut()
                    .zip(row)
                    .for_each(|(o, &v)| *o = (v - mean) / scale)
            })
        }
        StandardizationAxis::Row => {
            // The row statistics first, so that a row whose sums overflow is refused (as the
            // column axis refuses a column) instead of coming back as infinities.
            let stats = x
                .rows()
                .into_iter()
                .map(|row| {
                    let n = row.len() as f64;
                    let mean = row.iter().sum::<f64>() / n;
                    let m2: f64 = row.iter().map(|&v| (v - mean) * (v - mean)).sum();
                    let m = Moments {
                        count: row.len(),
                        mean,
                        m2,
                    };
                    check_lane(&m, "a row's")?;
                    Ok((mean, std_scale(&m)))
                })
                .collect::<Result<Vec<(f64, f64)>>>()?;
            elementwise::map_rows(x, |i, row, out| {
                let (mean, scale) = stats[i];
                out.iter_mut()
                    .zip(row)
                    .for_each(|(o, &v)| *o = (v - mean) / scale);
            })
        }
    })
}

/// Finite input whose mean or variance overflows f64 is refused, as
/// [`checked_column_moments`] refuses a column.
fn check_lane(m: &Moments, which: &str) -> Result<()> {
    if m.mean.is_finite() && m.m2.is_finite() {
        Ok(())
    } else {
        Err(crate::error::Error::invalid_input(format!(
            "X has values too large for float64: {which} variance overflows"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use ndarray::{arr1, arr2, arr3, Array2};

    #[test]
    fn each_axis_by_hand() {
        let x = arr2(&[[1.0, 3.0], [5.0, 5.0]]);
        // columns: [1,5] mean 3 std 2; [3,5] mean 4 std 1
        assert_eq!(
            standardize(&x, StandardizationAxis::Column).unwrap(),
            arr2(&[[-1.0, -1.0], [1.0, 1.0]])
        );
        // rows: [1,3] mean 2 std 1; [5,5] constant -> centred only
        assert_eq!(
            standardize(&x, StandardizationAxis::Row).unwrap(),
            arr2(&[[-1.0, 1.0], [0.0, 0.0]])
        );
        // global: mean 3.5, var (6.25 + 0.25 + 2.25 + 2.25) / 4 = 2.75
        let g = standardize(&x, StandardizationAxis::Global).unwrap();
        let s = 2.75f64.sqrt();
        for (got, v) in g.iter().zip([1.0, 3.0, 5.0, 5.0]) {
            assert!((got - (v - 3.5) / s).abs() < 1e-15);
        }
        assert!(matches!(
            standardize(&arr2(&[[f64::NAN]]), StandardizationAxis::Row),
            Err(Error::NonFinite(_))
        ));
        assert!(matches!(
            standardize(&Array2::<f64>::zeros((0, 2)), StandardizationAxis::Column),
            Err(Error::EmptyInput(_))
        ));
    }

    #[test]
    fn any_rank() {
        // 1-D global: [1, 3] -> mean 2, std 1
        assert_eq!(
            standardize(&arr1(&[1.0, 3.0]), StandardizationAxis::Global).unwrap(),
            arr1(&[-1.0, 1.0])
        );
        assert!(matches!(
            standardize(&arr1(&[1.0, 3.0]), StandardizationAxis::Column),
            Err(Error::InvalidInput(_))
        ));
        // 3-D: columns of each matrix separately, rows along the last axis
        let x = arr3(&[[[1.0, 0.0], [3.0, 0.0]], [[5.0, 2.0], [5.0, 6.0]]]);
        assert_eq!(
            standardize(&x, StandardizationAxis::Column).unwrap(),
            arr3(&[[[-1.0, 0.0], [1.0, 0.0]], [[0.0, -1.0], [0.0, 1.0]]])
        );
        assert_eq!(
            standardize(&x, StandardizationAxis::Row).unwrap(),
            arr3(&[[[1.0, -1.0], [1.0, -1.0]], [[1.0, -1.0], [-1.0, 1.0]]])
        );
    }

    #[test]
    fn overflowing_rows_are_refused_like_columns() {
        let x = Array2::from_shape_fn((3, 4), |(i, j)| (1.0 + (i * 4 + j) as f64 / 16.0) * 1e308);
        for axis in [
            StandardizationAxis::Row,
            StandardizationAxis::Column,
            StandardizationAxis::Global,
        ] {
            assert!(
                matches!(standardize(&x, axis), Err(Error::InvalidInput(_))),
                "{axis:?}"
            );
            let small = standardize(&(&x * 1e-160), axis).unwrap();
            assert!(small.iter().all(|v| v.is_finite()));
        }
    }
}
