//! Scale each sample (row) to unit norm (scikit-learn's `Normalizer`).

use crate::error::Result;
use crate::persistence::Persist;
use crate::utils::normalize::{normalize_2d, NormalizationAxis, NormalizationOrder};
use crate::utils::scaling::{
    check_batch, check_input, corrupt, fitted, scaler_common, CheckedPersist,
};
use ndarray::{Array2, ArrayRef2};
use serde::{Deserialize, Serialize};

/// Divides every row by its norm (`order`, L2 by default); rows with a (near-)zero norm are
/// left as they are. Stateless apart from the feature count `fit` records.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Normalizer {
    order: NormalizationOrder,
    n_features: Option<usize>,
}

impl Default for Normalizer {
    fn default() -> Self {
        Self {
            order: NormalizationOrder::L2,
            n_features: None,
        }
    }
}

const NAME: &str = "Normalizer";

impl Normalizer {
    /// A normalizer for `order`; `Lp(p)` needs a finite `p > 0` (`InvalidParameter` "p").
    pub fn new(order: NormalizationOrder) -> Result<Self> {
        order.check()?;
        Ok(Self {
            order,
            n_features: None,
        })
    }

    crate::accessors::field_getters! {
        get_order -> order: NormalizationOrder,
        get_n_features -> n_features: Option<usize>,
    }

    /// Check `x` and record its feature count.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        check_input(&x.view(), "X")?;
        self.n_features = Some(x.ncols());
        Ok(self)
    }

    /// Each row divided by its norm.
    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let d = *fitted(&self.n_features, NAME)?;
        check_batch(&x.view(), d)?;
        normalize_2d(x.view(), NormalizationAxis::Row, self.order)
    }

    /// Fit, then transform the same data (validated once).
    pub fn fit_transform(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.fit(x)?;
        normalize_2d(x.view(), NormalizationAxis::Row, self.order)
    }
}

impl Persist for Normalizer {
    const MODEL_NAME: &'static str = NAME;
}

impl CheckedPersist for Normalizer {
    fn validate(&self) -> Result<()> {
        self.order
            .check()
            .map_err(|_| corrupt(NAME, "invalid norm order"))?;
        if self.n_features == Some(0) {
            return Err(corrupt(NAME, "fitted on no features"));
        }
        Ok(())
    }
}

scaler_common!(Normalizer);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use ndarray::arr2;

    #[test]
    fn rows_get_unit_norm_and_zero_rows_stay() {
        let x = arr2(&[[3.0, -4.0], [0.0, 0.0], [1.0, 1.0]]);
        let z = Normalizer::default().fit_transform(&x).unwrap();
        assert_eq!(z.row(0).to_vec(), vec![0.6, -0.8]);
        assert_eq!(z.row(1).to_vec(), vec![0.0, 0.0]);
        let l1 = Normalizer::new(NormalizationOrder::L1)
            .unwrap()
            .fit_transform(&x)
            .unwrap();
        assert_eq!(l1.row(0).to_vec(), vec![3.0 / 7.0, -4.0 / 7.0]);
        let max = Normalizer::new(NormalizationOrder::Max)
            .unwrap()
            .fit_transform(&x)
            .unwrap();
        assert_eq!(max.row(0).to_vec(), vec![0.75, -1.0]);
        assert!(matches!(
            Normalizer::new(NormalizationOrder::Lp(0.0)),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            Normalizer::default().transform(&x),
            Err(Error::NotFitted("Normalizer"))
        ));
    }
}
