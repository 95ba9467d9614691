//! Class labels of the classifiers: arbitrary (finite) float labels mapped to sorted class
//! indices, and the per-row arg-max that turns class scores back into labels.

use crate::error::{Error, Result};
use crate::math::distance::SCAN_F64;
use ndarray::{Array1, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;

/// The sorted distinct labels of `y` (`classes_`) and each sample's index into them.
///
/// `y` must already be checked finite. Fails when `y` holds fewer than two classes, naming
/// `model`.
pub fn encode(y: ArrayView1<f64>, model: &str) -> Result<(Array1<f64>, Vec<usize>)> {
    // The crate's one label encoder (sorted classes; -0.0 and 0.0 are one label).
    let (classes, index) = crate::math::labels::encode(y, "y")?;
    if classes.len() < 2 {
        return Err(Error::invalid_input(format!(
            "{model} needs samples of at least 2 classes in the data, but the data contains only one class: {}",
            classes.first().copied().unwrap_or(f64::NAN)
        )));
    }
    Ok((Array1::from(classes), index))
}

/// Index of the largest entry of every row (the first one on ties, as numpy's `argmax`).
/// Rows are scanned in parallel behind [`SCAN_F64`] (work = `n * k`).
pub fn row_argmax(scores: ArrayView2<f64>) -> Vec<usize> {
    let argmax = |row: ArrayView1<f64>| {
        let mut best = 0;
        for (j, &v) in row.iter().enumerate() {
            if v > row[best] {
                best = j;
            }
        }
        best
    };
    if SCAN_F64.allows_parallel(scores.len()) {
        scores
            .axis_iter(Axis(0))
            .into_par_iter()
            .with_min_len(1024)
            .map(argmax)
            .collect()
    } else {
        scores.axis_iter(Axis(0)).map(argmax).collect()
    }
}

/// Labels for class indices.
pub fn decode(classes: &Array1<f64>, index: &[usize]) -> Array1<f64> {
    Array1::from_iter(index.iter().map(|&i| classes[i]))
}

/// Labels from a linear classifier's decision scores: one column is a binary score
/// (positive: `classes[1]`, else `classes[0]`; with `zero_is_positive` a score of exactly 0
/// is `classes[1]` too), more columns one score per class (the arg-max).
pub fn from_scores(
    classes: &Array1<f64>,
    scores: ArrayView2<f64>,
    zero_is_positive: bool,
) -> Array1<f64> {
    if scores.ncols() == 1 {
        scores.column(0).mapv(|v| {
            if v > 0.0 || (zero_is_positive && v == 0.0) {
                classes[1]
            } else {
                classes[0]
            }
        })
    } else {
        decode(classes, &row_argmax(scores))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::{array, Array2};

    #[test]
    fn encodes_arbitrary_labels_in_sorted_order() {
        let (classes, idx) = encode(array![3.5, -1.0, 3.5, 0.0, -0.0, 7.0].view(), "M").unwrap();
        assert_eq!(classes.to_vec(), vec![-1.0, 0.0, 3.5, 7.0]);
        assert_eq!(idx, vec![2, 0, 2, 1, 1, 3]);
        assert_eq!(
            decode(&classes, &idx).to_vec(),
            vec![3.5, -1.0, 3.5, 0.0, 0.0, 7.0]
        );
        let err = encode(array![2.0, 2.0].view(), "Model")
            .unwrap_err()
            .to_string();
        assert!(err.contains("only one class"), "{err}");
    }

    #[test]
    fn row_argmax_takes_the_first_maximum_and_agrees_bitwise() {
        let s = array![[1.0, 3.0, 3.0], [5.0, -1.0, 0.0], [0.0, 0.0, 0.5]];
        assert_eq!(row_argmax(s.view()), vec![1, 0, 2]);
        let big = Array2::from_shape_fn((40_000, 7), |(i, j)| ((i * 7 + j) as f64 * 0.91).sin());
        let (a, b) = serial_and_parallel(&SCAN_F64, || row_argmax(big.view()));
        assert_eq!(a, b);
    }
}
