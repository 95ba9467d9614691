//! Scale each sample (row) to unit norm (scikit-learn's `Normalizer`).

use super::normalize::{normalize_checked, NormalizationAxis, NormalizationOrder};
use super::scaling::{check_batch, fitted};
use crate::error::{Result, RustymlError};
use crate::persistence::Persist;
use crate::validation;
use ndarray::{Array2, ArrayBase, Data, Ix2};
use serde::{Deserialize, Serialize};

/// Row norm of a [`Normalizer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Norm {
    L1,
    #[default]
    L2,
    Max,
}

impl Norm {
    /// `"l1"`, `"l2"` or `"max"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "l1" => Ok(Self::L1),
            "l2" => Ok(Self::L2),
            "max" => Ok(Self::Max),
            other => Err(RustymlError::invalid(format!(
                "unknown norm {other:?}: expected 'l1', 'l2' or 'max'"
            ))),
        }
    }

    fn order(self) -> NormalizationOrder {
        match self {
            Self::L1 => NormalizationOrder::L1,
            Self::L2 => NormalizationOrder::L2,
            Self::Max => NormalizationOrder::Max,
        }
    }
}

/// Divides every row by its norm; rows with a (near-)zero norm are left as they are. Stateless:
/// `fit` only records the feature count.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Normalizer {
    pub norm: Norm,
    n_features: Option<usize>,
}

impl Normalizer {
    pub fn new(norm: Norm) -> Self {
        Self {
            norm,
            n_features: None,
        }
    }

    pub fn n_features_in(&self) -> Option<usize> {
        self.n_features
    }

    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        validation::check_features(&x.view(), "X")?;
        self.n_features = Some(x.ncols());
        Ok(self)
    }

    /// Each row divided by its norm.
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "Normalizer")?;
        check_batch(&x.view(), d, "Normalizer")?;
        normalize_checked(x.view(), NormalizationAxis::Row, self.norm.order())
    }

    pub fn fit_transform<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        self.fit(x)?;
        normalize_checked(x.view(), NormalizationAxis::Row, self.norm.order())
    }
}

impl Persist for Normalizer {
    const MODEL_NAME: &'static str = "Normalizer";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

    #[test]
    fn rows_get_unit_norm_and_zero_rows_stay() {
        let x = arr2(&[[3.0, -4.0], [0.0, 0.0], [1.0, 1.0]]);
        let z = Normalizer::default().fit_transform(&x).unwrap();
        assert_eq!(z.row(0).to_vec(), vec![0.6, -0.8]);
        assert_eq!(z.row(1).to_vec(), vec![0.0, 0.0]);
        let l1 = Normalizer::new(Norm::L1).fit_transform(&x).unwrap();
        assert_eq!(l1.row(0).to_vec(), vec![3.0 / 7.0, -4.0 / 7.0]);
        let max = Normalizer::new(Norm::Max).fit_transform(&x).unwrap();
        assert_eq!(max.row(0).to_vec(), vec![0.75, -1.0]);
        assert!(Norm::parse("l3").is_err());
        assert!(Normalizer::default().transform(&x).is_err());
    }
}
