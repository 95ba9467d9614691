//! One-shot standardisation of rows, columns or the whole matrix (the original crate's
//! `standardize`). Statistics come from the data itself on every call; fit a
//! [`StandardScaler`](super::StandardScaler) when several batches must share them.

use super::scaling::{checked_column_moments, std_scale};
use crate::error::Result;
use crate::math::elementwise;
use crate::math::reduction::Moments;
use ndarray::{Array2, ArrayBase, Data, Ix2};

/// What the mean and standard deviation are computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandardizationAxis {
    /// Each row (sample) separately.
    Row,
    /// Each column (feature) separately: `StandardScaler().fit_transform(x)`.
    Column,
    /// The whole matrix as one sample.
    Global,
}

/// Zero mean and unit (population) variance along `axis`. A constant lane (variance within
/// rounding of zero) is only centred, never divided by ~0.
pub fn standardize<S: Data<Elem = f64>>(
    x: &ArrayBase<S, Ix2>,
    axis: StandardizationAxis,
) -> Result<Array2<f64>> {
    let x = x.view();
    let columns = checked_column_moments(&x)?;
    Ok(match axis {
        StandardizationAxis::Column => {
            let mean: Vec<f64> = columns.iter().map(|m| m.mean).collect();
            let scale: Vec<f64> = columns.iter().map(std_scale).collect();
            elementwise::center_scale_columns(x, Some(&mean), Some(&scale))
        }
        StandardizationAxis::Global => {
            let all = columns.into_iter().fold(Moments::default(), Moments::merge);
            let (mean, scale) = (all.mean, std_scale(&all));
            elementwise::map_rows(x, |_, row, out| {
                out.iter_mut()
                    .zip(row)
                    .for_each(|(o, &v)| *o = (v - mean) / scale)
            })
        }
        StandardizationAxis::Row => elementwise::map_rows(x, |_, row, out| {
            let n = row.len() as f64;
            let mean = row.iter().sum::<f64>() / n;
            let m2: f64 = row.iter().map(|&v| (v - mean) * (v - mean)).sum();
            let scale = std_scale(&Moments {
                count: row.len(),
                mean,
                m2,
            });
            out.iter_mut()
                .zip(row)
                .for_each(|(o, &v)| *o = (v - mean) / scale);
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

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
        assert!(standardize(&arr2(&[[f64::NAN]]), StandardizationAxis::Row).is_err());
    }
}
