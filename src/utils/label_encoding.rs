//! Label encoding: integer codes for arbitrary labels ([`LabelEncoder`]), one-hot vectors
//! ([`to_categorical`], [`to_categorical_with_mapping`]) and back ([`to_sparse_categorical`]).

use crate::error::{Error, Result};
use crate::math::labels::{self, Label};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayRef1, ArrayRef2, ArrayView1};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::Hash;

/// Maps labels to `0..n_classes` in sorted label order (`classes_`), and back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabelEncoder<T> {
    classes: Option<Vec<T>>,
}

impl<T> Default for LabelEncoder<T> {
    fn default() -> Self {
        Self { classes: None }
    }
}

fn unseen_error<D: std::fmt::Debug>(values: &[D]) -> Error {
    const SHOWN: usize = 10;
    let more = if values.len() > SHOWN {
        format!(" and {} more", values.len() - SHOWN)
    } else {
        String::new()
    };
    Error::invalid_input(format!(
        "y contains previously unseen labels: {:?}{more}",
        &values[..values.len().min(SHOWN)]
    ))
}

impl<T: Label> LabelEncoder<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The sorted distinct labels seen at fit (`classes_`).
    pub fn classes(&self) -> Option<&[T]> {
        self.classes.as_deref()
    }

    fn fitted_classes(&self) -> Result<&[T]> {
        self.classes
            .as_deref()
            .ok_or_else(|| Error::not_fitted("LabelEncoder"))
    }

    /// Learn the distinct labels of `y`.
    pub fn fit(&mut self, y: ArrayView1<T>) -> Result<&mut Self> {
        if y.is_empty() {
            return Err(Error::invalid_input(
                "y is empty: a LabelEncoder needs at least one label",
            ));
        }
        self.classes = Some(labels::encode(y, "y")?.0);
        Ok(self)
    }

    /// Code of every label; labels not seen at fit are refused.
    pub fn transform(&self, y: ArrayView1<T>) -> Result<Array1<usize>> {
        let classes = self.fitted_classes()?;
        labels::check_labels(&y, "y")?;
        let codes: Vec<Option<usize>> = y.iter().map(|v| labels::position(classes, v)).collect();
        if codes.iter().any(Option::is_none) {
            let mut unseen: Vec<T> = y
                .iter()
                .zip(&codes)
                .filter(|(_, c)| c.is_none())
                .map(|(v, _)| v.clone())
                .collect();
            unseen.sort_by(|a, b| a.cmp_label(b));
            unseen.dedup_by(|a, b| labels::same(a, b));
            return Err(unseen_error(&unseen));
        }
        Ok(codes.into_iter().map(|c| c.unwrap_or_default()).collect())
    }

    /// [`fit`](Self::fit) then [`transform`](Self::transform), encoding once.
    pub fn fit_transform(&mut self, y: ArrayView1<T>) -> Result<Array1<usize>> {
        if y.is_empty() {
            return Err(Error::invalid_input(
                "y is empty: a LabelEncoder needs at least one label",
            ));
        }
        let (classes, codes) = labels::encode(y, "y")?;
        self.classes = Some(classes);
        Ok(Array1::from(codes))
    }

    /// Labels of the codes; codes outside `0..n_classes` are refused.
    pub fn inverse_transform(&self, codes: ArrayView1<i64>) -> Result<Vec<T>> {
        let classes = self.fitted_classes()?;
        let bad: Vec<i64> = codes
            .iter()
            .copied()
            .filter(|&c| c < 0 || c as usize >= classes.len())
            .collect();
        if !bad.is_empty() {
            let mut bad = bad;
            bad.sort_unstable();
            bad.dedup();
            return Err(unseen_error(&bad));
        }
        Ok(codes.iter().map(|&c| classes[c as usize].clone()).collect())
    }
}

impl<T: Label + Serialize + DeserializeOwned> Persist for LabelEncoder<T> {
    const MODEL_NAME: &'static str = "LabelEncoder";
}

/// Physical memory plus swap (Linux), the most any allocation can ever get; `None` where it
/// cannot be read, leaving the fallible allocation as the only guard.
fn memory_ceiling() -> Option<u128> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = |key: &str| -> Option<u128> {
        let line = info.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((kib("MemTotal:")? + kib("SwapTotal:").unwrap_or(0)) * 1024)
}

/// A zeroed `n_rows x n_classes` matrix with a 1 at `(i, codes[i])`. Sizes that cannot be
/// allocated are refused up front (`InvalidParameter` "num_classes") instead of aborting the
/// process: an element count or byte size that overflows, more bytes than the machine has,
/// or an allocation the allocator declines.
fn one_hot(codes: &[usize], n_classes: usize) -> Result<Array2<f64>> {
    let n = codes.len();
    let too_big = |bytes: String| {
        Error::invalid_parameter(
            "num_classes",
            format!(
                "a one-hot matrix of {n} x {n_classes} float64 values needs {bytes} bytes, more than can be allocated"
            ),
        )
    };
    let elems = n.checked_mul(n_classes);
    let bytes = elems.and_then(|e| e.checked_mul(std::mem::size_of::<f64>()));
    let Some((elems, bytes)) = elems.zip(bytes) else {
        return Err(too_big(format!("{}", n as u128 * n_classes as u128 * 8)));
    };
    if bytes > isize::MAX as usize || memory_ceiling().is_some_and(|m| bytes as u128 > m) {
        return Err(too_big(bytes.to_string()));
    }
    let mut data: Vec<f64> = Vec::new();
    data.try_reserve_exact(elems)
        .map_err(|_| too_big(bytes.to_string()))?;
    data.resize(elems, 0.0);
    for (i, &k) in codes.iter().enumerate() {
        data[i * n_classes + k] = 1.0;
    }
    Ok(Array2::from_shape_vec((n, n_classes), data).expect("n * n_classes elements"))
}

/// `num_classes` if it covers `needed` classes, else `InvalidParameter`.
fn class_count(num_classes: Option<usize>, needed: usize) -> Result<usize> {
    match num_classes {
        Some(k) if k < needed => Err(Error::invalid_parameter(
            "num_classes",
            format!("num_classes ({k}) must be at least the number of classes needed ({needed})"),
        )),
        Some(k) => Ok(k),
        None => Ok(needed),
    }
}

/// One-hot rows for non-negative integer labels (Keras's `to_categorical`): row `i` has a 1 in
/// column `labels[i]`. `num_classes` defaults to the largest label + 1 (1 for no labels).
///
/// Errors: a negative label -> `InvalidInput`; `num_classes` below the largest label + 1, or a
/// matrix too large to allocate -> `InvalidParameter`.
pub fn to_categorical(labels: &ArrayRef1<i32>, num_classes: Option<usize>) -> Result<Array2<f64>> {
    let mut codes = Vec::with_capacity(labels.len());
    for (i, &v) in labels.iter().enumerate() {
        match usize::try_from(v) {
            Ok(k) => codes.push(k),
            Err(_) => {
                return Err(Error::invalid_input(format!(
                    "to_categorical needs non-negative labels, got {v} at index {i}"
                )))
            }
        }
    }
    let needed = codes.iter().max().map_or(1, |&m| m + 1);
    one_hot(&codes, class_count(num_classes, needed)?)
}

/// [`to_categorical`] for the Python layer: any integer-valued labels (int64, or floats
/// holding integers), refusing empty labels without `num_classes` and `num_classes == 0`, as
/// Keras does.
#[cfg_attr(not(feature = "python"), allow(dead_code))] // used by the Python bindings
pub(crate) fn to_categorical_labels<T: Label>(
    labels: ArrayView1<T>,
    num_classes: Option<usize>,
) -> Result<Array2<f64>> {
    let mut codes = Vec::with_capacity(labels.len());
    for (i, v) in labels.iter().enumerate() {
        match v.as_int().and_then(|k| usize::try_from(k).ok()) {
            Some(k) => codes.push(k),
            None => {
                return Err(Error::invalid_input(format!(
                    "to_categorical needs non-negative integer labels, got {v:?} at index {i}"
                )))
            }
        }
    }
    if num_classes == Some(0) {
        return Err(Error::invalid_parameter(
            "num_classes",
            "num_classes must be at least 1",
        ));
    }
    let Some(&largest) = codes.iter().max() else {
        return match num_classes {
            Some(k) => one_hot(&codes, k),
            None => Err(Error::invalid_input(
                "labels is empty and num_classes is not given",
            )),
        };
    };
    let needed = largest.checked_add(1).ok_or_else(|| {
        Error::invalid_parameter("num_classes", "the largest label + 1 overflows")
    })?;
    one_hot(&codes, class_count(num_classes, needed)?)
}

/// One-hot rows for labels of any hashable type: classes are numbered in order of first
/// appearance, and the map from label to column is returned with the matrix. `num_classes`
/// defaults to the number of distinct labels (so no labels give a `0 x 0` matrix).
///
/// Errors: `num_classes` below the number of distinct labels -> `InvalidParameter`.
pub fn to_categorical_with_mapping<T: Clone + Eq + Hash>(
    labels: &[T],
    num_classes: Option<usize>,
) -> Result<(Array2<f64>, HashMap<T, usize>)> {
    let mut mapping: HashMap<T, usize> = HashMap::new();
    let codes: Vec<usize> = labels
        .iter()
        .map(|label| {
            let next = mapping.len();
            *mapping.entry(label.clone()).or_insert(next)
        })
        .collect();
    let matrix = one_hot(&codes, class_count(num_classes, mapping.len())?)?;
    Ok((matrix, mapping))
}

/// Index of the largest value of every row (the first on ties), undoing [`to_categorical`] and
/// turning class probabilities into labels.
///
/// Errors: NaN or infinity -> `NonFinite`; rows with no columns -> `EmptyInput`.
pub fn to_sparse_categorical(categorical: &ArrayRef2<f64>) -> Result<Array1<i32>> {
    let x = categorical.view();
    if x.ncols() == 0 && x.nrows() > 0 {
        return Err(Error::empty_input(
            "categorical has 0 columns, at least 1 is required",
        ));
    }
    if x.ncols() > i32::MAX as usize {
        return Err(Error::invalid_input(
            "categorical has more columns than an i32 label can index",
        ));
    }
    crate::utils::scaling::check_finite(&x, "categorical")?;
    Ok(x.rows()
        .into_iter()
        .map(|row| {
            let mut best = 0;
            for (j, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = j;
                }
            }
            best as i32
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2, Array1};

    #[test]
    fn encoder_round_trips_and_refuses_unseen() {
        let y = arr1(&["paris", "tokyo", "amsterdam", "paris"]);
        let mut enc = LabelEncoder::new();
        let codes = enc.fit_transform(y.view()).unwrap();
        assert_eq!(enc.classes().unwrap(), ["amsterdam", "paris", "tokyo"]);
        assert_eq!(codes.to_vec(), vec![1, 2, 0, 1]);
        let back = enc
            .inverse_transform(codes.mapv(|c| c as i64).view())
            .unwrap();
        assert_eq!(back, y.to_vec());
        let err = enc
            .transform(arr1(&["rome", "paris", "oslo"]).view())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unseen") && err.contains("oslo") && err.contains("rome"),
            "{err}"
        );
        assert!(enc.inverse_transform(arr1(&[3i64]).view()).is_err());
        let mut nums = LabelEncoder::<f64>::new();
        nums.fit(arr1(&[2.5, -1.0, 2.5]).view()).unwrap();
        assert_eq!(
            nums.transform(arr1(&[2.5, -1.0]).view()).unwrap().to_vec(),
            vec![1, 0]
        );
        assert!(LabelEncoder::<f64>::new()
            .transform(arr1(&[1.0]).view())
            .unwrap_err()
            .to_string()
            .contains("has not been fitted"));
        let restored = LabelEncoder::<f64>::from_bytes(&nums.to_bytes().unwrap()).unwrap();
        assert_eq!(restored.classes(), nums.classes());
        // a failed refit keeps the previous classes
        assert!(nums.fit(arr1(&[1.0, f64::NAN]).view()).is_err());
        assert!(nums.fit_transform(arr1(&[0.0; 0]).view()).is_err());
        assert_eq!(nums.classes().unwrap(), [-1.0, 2.5]);
    }

    #[test]
    fn one_hot_round_trip() {
        let y = arr1(&[0i32, 2, 1, 2]);
        let onehot = to_categorical(&y, None).unwrap();
        assert_eq!(
            onehot,
            arr2(&[
                [1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0]
            ])
        );
        assert_eq!(to_sparse_categorical(&onehot).unwrap(), y);
        assert_eq!(to_categorical(&y, Some(5)).unwrap().ncols(), 5);
        assert!(matches!(
            to_categorical(&y, Some(2)),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            to_categorical(&arr1(&[-1i32]), None),
            Err(Error::InvalidInput(_))
        ));
        assert_eq!(
            to_categorical(&arr1(&[0i32; 0]), None).unwrap().dim(),
            (0, 1)
        );
        assert!(to_categorical_labels(arr1(&[0.5]).view(), None).is_err());
        assert!(to_categorical_labels(arr1(&[0i64; 0]).view(), None).is_err());
        assert_eq!(
            to_categorical_labels(arr1(&[2.0, 0.0]).view(), None).unwrap(),
            arr2(&[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
        );
        // ties go to the first column
        assert_eq!(
            to_sparse_categorical(&arr2(&[[0.5, 0.5]]))
                .unwrap()
                .to_vec(),
            vec![0]
        );
        assert!(matches!(
            to_sparse_categorical(&arr2(&[[0.5, f64::NAN]])),
            Err(Error::NonFinite(_))
        ));
    }

    #[test]
    fn impossible_one_hot_sizes_are_refused_up_front() {
        // 10^12 + 1 classes: 8 TB for a single row; 2^62 + 1 classes: the byte count
        // overflows; i32::MAX + 1 classes for a million rows: 17 PB
        for big in [1_000_000_000_000i64, 1 << 62] {
            let err = to_categorical_labels(arr1(&[big]).view(), None).unwrap_err();
            assert!(matches!(err, Error::InvalidParameter { .. }), "{err:?}");
        }
        let many = Array1::from_elem(1_000_000, i32::MAX);
        assert!(matches!(
            to_categorical(&many, None),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(to_categorical_labels(arr1(&[i64::MAX]).view(), None).is_err());
        assert!(matches!(
            to_categorical_with_mapping(&[1u8, 2], Some(usize::MAX)),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn mapping_follows_first_appearance() {
        let (m, map) = to_categorical_with_mapping(&["b", "a", "b", "c"], None).unwrap();
        assert_eq!((map["b"], map["a"], map["c"]), (0, 1, 2));
        assert_eq!(
            to_sparse_categorical(&m).unwrap().to_vec(),
            vec![0, 1, 0, 2]
        );
        let (m, map) = to_categorical_with_mapping::<i32>(&[], None).unwrap();
        assert_eq!((m.dim(), map.len()), ((0, 0), 0));
        assert!(matches!(
            to_categorical_with_mapping(&[1, 2, 3], Some(2)),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
