//! Label encoding: integer codes for arbitrary labels ([`LabelEncoder`]), one-hot vectors
//! ([`to_categorical`]) and back ([`to_sparse_categorical`]).

use crate::error::{Result, RustymlError};
use crate::math::labels::{self, Label};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

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

fn unseen_error<D: std::fmt::Debug>(values: &[D]) -> RustymlError {
    const SHOWN: usize = 10;
    let more = if values.len() > SHOWN {
        format!(" and {} more", values.len() - SHOWN)
    } else {
        String::new()
    };
    RustymlError::invalid(format!(
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
            .ok_or_else(|| RustymlError::not_fitted("LabelEncoder"))
    }

    /// Learn the distinct labels of `y`.
    pub fn fit(&mut self, y: ArrayView1<T>) -> Result<&mut Self> {
        if y.is_empty() {
            return Err(RustymlError::invalid(
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
            return Err(RustymlError::invalid(
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

/// One-hot rows for non-negative integer labels (Keras's `to_categorical`): row `i` has a 1 in
/// column `labels[i]`. `num_classes` defaults to the largest label + 1.
pub fn to_categorical<T: Label>(
    labels: ArrayView1<T>,
    num_classes: Option<usize>,
) -> Result<Array2<f64>> {
    let mut ints = Vec::with_capacity(labels.len());
    for (i, v) in labels.iter().enumerate() {
        match v.as_int() {
            Some(k) if k >= 0 => ints.push(k as usize),
            _ => {
                return Err(RustymlError::invalid(format!(
                    "to_categorical needs non-negative integer labels, got {v:?} at index {i}"
                )))
            }
        }
    }
    let needed = ints.iter().max().map(|&m| m + 1);
    let n_classes = match (num_classes, needed) {
        (Some(k), Some(need)) if k < need => {
            return Err(RustymlError::invalid(format!(
                "num_classes ({k}) must be at least the largest label + 1 ({need})"
            )))
        }
        (Some(0), None) => return Err(RustymlError::invalid("num_classes must be at least 1")),
        (Some(k), _) => k,
        (None, Some(need)) => need,
        (None, None) => {
            return Err(RustymlError::invalid(
                "labels is empty and num_classes is not given",
            ))
        }
    };
    let mut out = Array2::<f64>::zeros((ints.len(), n_classes));
    for (i, k) in ints.into_iter().enumerate() {
        out[[i, k]] = 1.0;
    }
    Ok(out)
}

/// Index of the largest value of every row (the first on ties), undoing [`to_categorical`] and
/// turning class probabilities into labels.
pub fn to_sparse_categorical(categorical: ArrayView2<f64>) -> Result<Array1<i64>> {
    if categorical.ncols() == 0 {
        return Err(RustymlError::invalid(
            "categorical has 0 columns, at least 1 is required",
        ));
    }
    crate::validation::check_finite_2d(&categorical, "categorical")?;
    Ok(categorical
        .rows()
        .into_iter()
        .map(|row| {
            let mut best = 0;
            for (j, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = j;
                }
            }
            best as i64
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2};

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
    }

    #[test]
    fn one_hot_round_trip() {
        let y = arr1(&[0i64, 2, 1, 2]);
        let onehot = to_categorical(y.view(), None).unwrap();
        assert_eq!(
            onehot,
            arr2(&[
                [1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0]
            ])
        );
        assert_eq!(to_sparse_categorical(onehot.view()).unwrap(), y);
        assert_eq!(to_categorical(y.view(), Some(5)).unwrap().ncols(), 5);
        assert!(to_categorical(y.view(), Some(2)).is_err());
        assert!(to_categorical(arr1(&[-1i64]).view(), None).is_err());
        assert!(to_categorical(arr1(&[0.5]).view(), None).is_err());
        // ties go to the first column
        assert_eq!(
            to_sparse_categorical(arr2(&[[0.5, 0.5]]).view())
                .unwrap()
                .to_vec(),
            vec![0]
        );
    }
}
