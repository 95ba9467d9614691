//! Class labels: the sorted distinct classes of one or more label arrays and each sample's
//! dense code (its class's index). One encoder serves the classification and clustering
//! metrics, `LabelEncoder`, one-hot encoding and stratified splits.
//!
//! Classes sort ascending, as NumPy's `np.unique` does, so class `k` here is class `k` in
//! scikit-learn. Integer-valued labels over a small range take a counting path (no sort);
//! anything else sorts the distinct values once and looks each sample up by binary search.

use crate::error::{Error, Result};
use ndarray::ArrayView1;
use std::cmp::Ordering;
use std::fmt::Debug;

/// A value usable as a class label: totally ordered among valid values.
pub trait Label: Clone + Debug + Send + Sync {
    /// Order of two valid labels (`0.0` and `-0.0` compare equal, as in NumPy).
    fn cmp_label(&self, other: &Self) -> Ordering;

    /// Whether the value can be a label (floats: finite).
    fn is_valid_label(&self) -> bool {
        true
    }

    /// The label as an integer, when it is one exactly (enables the counting path).
    fn as_int(&self) -> Option<i64> {
        None
    }

    /// A float with a fractional part: a continuous target, not a class label.
    fn is_fractional(&self) -> bool {
        false
    }
}

macro_rules! int_label {
    ($($t:ty),*) => {$(
        impl Label for $t {
            #[inline]
            fn cmp_label(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            #[inline]
            fn as_int(&self) -> Option<i64> {
                i64::try_from(*self).ok()
            }
        }
    )*};
}
int_label!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl Label for bool {
    fn cmp_label(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn as_int(&self) -> Option<i64> {
        Some(*self as i64)
    }
}

macro_rules! float_label {
    ($($t:ty),*) => {$(
        impl Label for $t {
            #[inline]
            fn cmp_label(&self, other: &Self) -> Ordering {
                // Valid labels are finite, so `partial_cmp` is total here; `0.0 == -0.0`.
                self.partial_cmp(other).unwrap_or(Ordering::Equal)
            }
            #[inline]
            fn is_valid_label(&self) -> bool {
                self.is_finite()
            }
            #[inline]
            fn is_fractional(&self) -> bool {
                self.fract() != 0.0
            }
            #[inline]
            fn as_int(&self) -> Option<i64> {
                // Exactly integral and well inside i64 (2^53: every such float is exact).
                (self.fract() == 0.0 && self.abs() <= 9_007_199_254_740_992.0).then(|| *self as i64)
            }
        }
    )*};
}
float_label!(f32, f64);

impl Label for String {
    fn cmp_label(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

impl Label for &str {
    fn cmp_label(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

/// Whether two labels are the same class.
#[inline]
pub fn same<T: Label>(a: &T, b: &T) -> bool {
    a.cmp_label(b) == Ordering::Equal
}

/// Index of `value` in the sorted `classes`, if present.
pub fn position<T: Label>(classes: &[T], value: &T) -> Option<usize> {
    classes.binary_search_by(|c| c.cmp_label(value)).ok()
}

/// Sorted distinct classes of the given arrays and, per array, each sample's class index.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoding<T> {
    pub classes: Vec<T>,
    pub codes: Vec<Vec<usize>>,
}

impl<T> Encoding<T> {
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }
}

/// Refuse invalid labels (NaN or infinity), naming the array and the first position.
pub fn check_labels<T: Label>(y: &ArrayView1<T>, name: &str) -> Result<()> {
    if let Some(i) = y.iter().position(|v| !v.is_valid_label()) {
        return Err(Error::invalid_input(format!(
            "{name} contains NaN or infinity (first at index {i})"
        )));
    }
    Ok(())
}

/// Encode several label arrays against their common sorted classes.
pub fn encode_all<T: Label>(arrays: &[(ArrayView1<T>, &str)]) -> Result<Encoding<T>> {
    for (y, name) in arrays {
        check_labels(y, name)?;
    }
    let total: usize = arrays.iter().map(|(y, _)| y.len()).sum();
    if let Some(enc) = encode_small_ints(arrays, total) {
        return Ok(enc);
    }
    let mut distinct: Vec<&T> = arrays.iter().flat_map(|(y, _)| y.iter()).collect();
    distinct.sort_unstable_by(|a, b| a.cmp_label(b));
    distinct.dedup_by(|a, b| same(*a, *b));
    let classes: Vec<T> = distinct.into_iter().cloned().collect();
    let codes = arrays
        .iter()
        .map(|(y, _)| {
            y.iter()
                .map(|v| position(&classes, v).expect("every value is a class"))
                .collect()
        })
        .collect();
    Ok(Encoding { classes, codes })
}

/// Encode one label array.
pub fn encode<T: Label>(y: ArrayView1<T>, name: &str) -> Result<(Vec<T>, Vec<usize>)> {
    let mut enc = encode_all(&[(y, name)])?;
    Ok((enc.classes, enc.codes.pop().unwrap_or_default()))
}

/// Counting path: every label an integer and the value range at most a few times the sample
/// count, so a direct table replaces the sort.
fn encode_small_ints<T: Label>(
    arrays: &[(ArrayView1<T>, &str)],
    total: usize,
) -> Option<Encoding<T>> {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (y, _) in arrays {
        for v in y.iter() {
            let k = v.as_int()?;
            lo = lo.min(k);
            hi = hi.max(k);
        }
    }
    if total == 0 {
        return Some(Encoding {
            classes: Vec::new(),
            codes: arrays.iter().map(|_| Vec::new()).collect(),
        });
    }
    let span = u64::try_from(i128::from(hi) - i128::from(lo) + 1).ok()?;
    if span > (4 * total as u64).max(1 << 12) {
        return None;
    }
    // slot -> (array, index) of the first sample holding that value
    let mut first: Vec<Option<(usize, usize)>> = vec![None; span as usize];
    for (a, (y, _)) in arrays.iter().enumerate() {
        for (i, v) in y.iter().enumerate() {
            let slot = (v.as_int()? - lo) as usize;
            first[slot].get_or_insert((a, i));
        }
    }
    let mut code_of_slot = vec![usize::MAX; span as usize];
    let mut classes = Vec::new();
    for (slot, f) in first.iter().enumerate() {
        if let Some((a, i)) = f {
            code_of_slot[slot] = classes.len();
            classes.push(arrays[*a].0[*i].clone());
        }
    }
    let codes = arrays
        .iter()
        .map(|(y, _)| {
            y.iter()
                .map(|v| code_of_slot[(v.as_int().unwrap_or(lo) - lo) as usize])
                .collect()
        })
        .collect();
    Some(Encoding { classes, codes })
}

/// Per-class counts of dense codes.
pub fn bincount(codes: &[usize], n_classes: usize) -> Vec<usize> {
    let mut counts = vec![0usize; n_classes];
    for &c in codes {
        counts[c] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    #[test]
    fn classes_are_sorted_and_codes_index_them() {
        for (vals, classes) in [
            (vec![3i64, -1, 3, 7, -1], vec![-1i64, 3, 7]),
            (vec![1_000_000_000_000i64, 5, 5], vec![5, 1_000_000_000_000]), // sort path
        ] {
            let (c, codes) = encode(arr1(&vals).view(), "y").unwrap();
            assert_eq!(c, classes);
            for (v, code) in vals.iter().zip(codes) {
                assert_eq!(c[code], *v);
            }
        }
        let (c, codes) = encode(arr1(&[0.5, -0.0, 2.0, 0.0, 0.5]).view(), "y").unwrap();
        assert_eq!(c, vec![0.0, 0.5, 2.0]);
        assert_eq!(codes, vec![1, 0, 2, 0, 1]);
        let names = ["b".to_string(), "a".into(), "c".into(), "a".into()];
        let (c, codes) = encode(ndarray::ArrayView1::from(&names[..]), "y").unwrap();
        assert_eq!(c, vec!["a", "b", "c"]);
        assert_eq!(codes, vec![1, 0, 2, 0]);
    }

    #[test]
    fn pairs_share_the_union_of_classes() {
        let a = arr1(&[1i32, 2, 2]);
        let b = arr1(&[5i32, 1, 2]);
        let enc = encode_all(&[(a.view(), "y_true"), (b.view(), "y_pred")]).unwrap();
        assert_eq!(enc.classes, vec![1, 2, 5]);
        assert_eq!(enc.codes, vec![vec![0, 1, 1], vec![2, 0, 1]]);
        assert_eq!(bincount(&enc.codes[1], 3), vec![1, 1, 1]);
    }

    #[test]
    fn nan_labels_are_refused_by_name() {
        let err = encode(arr1(&[1.0, f64::NAN]).view(), "labels_pred")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("labels_pred") && err.contains("index 1"),
            "{err}"
        );
        assert_eq!(
            encode(arr1(&[0u8; 0]).view(), "y").unwrap(),
            (vec![], vec![])
        );
    }
}
