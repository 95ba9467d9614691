//! The original RustyML API (`TSNE::new`, `Init`, `TSNEMethod`, getters, `fit_transform` on
//! `&self`) as a thin layer over the scikit-learn estimator.

use super::estimator::{LearningRate, TsneMethod, TSNE};
use super::TsneInit;
use crate::error::{Error, Result};
use crate::machine_learning::validation::require_data;
use crate::math::distance::Metric;
use ndarray::{Array2, ArrayRef2};
use serde::{Deserialize, Serialize};

/// The original's initial embedding choice.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Init {
    #[default]
    PCA,
    Random,
}

/// The original's gradient method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum TSNEMethod {
    /// Barnes-Hut with opening angle `angle` in `[0, 1)`.
    BarnesHut {
        angle: f64,
    },
    Exact,
}

impl Default for TSNEMethod {
    fn default() -> Self {
        TSNEMethod::BarnesHut { angle: 0.5 }
    }
}

/// The original RustyML API: validated constructor and setters, getters, and `fit_transform`
/// on `&self` (the model keeps no embedding).
impl TSNE {
    /// `n_components` and `n_iter` >= 1, `perplexity` and `learning_rate` finite and > 0 (else
    /// `InvalidParameter`); PCA initialisation, early exaggeration 12, Barnes-Hut (angle 0.5)
    /// up to 3 components and exact above.
    pub fn new(
        n_components: usize,
        perplexity: f64,
        learning_rate: f64,
        n_iter: usize,
    ) -> Result<Self> {
        let mut model = Self::builder(n_components)
            .with_perplexity(perplexity)
            .with_learning_rate(LearningRate::Fixed(learning_rate))
            .with_max_iter(n_iter);
        if n_components > 3 {
            model.method = TsneMethod::Exact;
        }
        model.original_schedule = true;
        model.check_params()?;
        Ok(model)
    }

    crate::accessors::builder_setters! {
        with_random_state(random_state: Some(u64)),
    }

    pub fn with_init(mut self, init: Init) -> Self {
        self.init = match init {
            Init::PCA => TsneInit::Pca,
            Init::Random => TsneInit::Random,
        };
        self
    }

    /// Barnes-Hut needs `angle` in `[0, 1)` and at most 3 components (else
    /// `InvalidParameter`).
    pub fn with_method(mut self, method: TSNEMethod) -> Result<Self> {
        match method {
            TSNEMethod::BarnesHut { angle } => {
                // the original excludes angle 1 (scikit-learn takes it)
                if angle == 1.0 {
                    return Err(Error::invalid_parameter(
                        "angle",
                        "must lie in [0, 1), got 1",
                    ));
                }
                self.method = TsneMethod::BarnesHut;
                self.angle = angle;
            }
            TSNEMethod::Exact => self.method = TsneMethod::Exact,
        }
        self.check_params()?;
        Ok(self)
    }

    crate::accessors::field_getters! {
        get_n_components -> n_components: usize,
        get_perplexity -> perplexity: f64,
        get_n_iter -> max_iter: usize,
        get_random_state -> random_state: Option<u64>,
        get_min_grad_norm -> min_grad_norm: f64,
    }

    /// The fixed learning rate (`NaN` for scikit-learn's `Auto`, resolved only at fit).
    pub fn get_learning_rate(&self) -> f64 {
        match self.learning_rate {
            LearningRate::Fixed(lr) => lr,
            LearningRate::Auto => f64::NAN,
        }
    }

    pub fn get_init(&self) -> Init {
        match self.init {
            TsneInit::Pca => Init::PCA,
            TsneInit::Random => Init::Random,
        }
    }

    pub fn get_method(&self) -> TSNEMethod {
        match self.method {
            TsneMethod::BarnesHut => TSNEMethod::BarnesHut { angle: self.angle },
            TsneMethod::Exact => TSNEMethod::Exact,
        }
    }

    /// Embed `x`; empty -> `EmptyInput`, NaN/inf -> `NonFinite`, fewer than 2 samples ->
    /// `InvalidInput`, `perplexity >= n_samples` -> `InvalidParameter`.
    pub fn fit_transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        require_data(&x.view(), "TSNE data")?;
        Metric::Euclidean.check_range(&x.view(), "TSNE data")?;
        // The fitted state of this run is dropped with the copy.
        let mut run = self.clone();
        run.embedding = None;
        run.fit_transform_checked(x)
    }
}

crate::machine_learning::data_traits!(TSNE: FitTransform -> Array2<f64>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn original_api_short_runs_centered_output_and_error_kinds() {
        let x = ndarray::Array2::from_shape_fn((8, 3), |(i, j)| {
            ((i * 3 + j) as f64).sin() + (i / 4) as f64 * 5.0
        });
        let tsne = TSNE::new(2, 3.0, 100.0, 60)
            .unwrap()
            .with_method(TSNEMethod::Exact)
            .unwrap();
        let y = tsne.fit_transform(&x).unwrap();
        assert_eq!(y.dim(), (8, 2));
        let mean = y.mean_axis(ndarray::Axis(0)).unwrap();
        assert!(mean.iter().all(|m| m.abs() < 1e-12));
        assert_eq!(
            TSNE::default().get_method(),
            TSNEMethod::BarnesHut { angle: 0.5 }
        );
        assert_eq!(
            TSNE::new(4, 3.0, 1.0, 10).unwrap().get_method(),
            TSNEMethod::Exact
        );
        assert!(matches!(
            TSNE::new(4, 3.0, 1.0, 10)
                .unwrap()
                .with_method(TSNEMethod::BarnesHut { angle: 0.5 }),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            TSNE::new(2, 0.0, 1.0, 10),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            tsne.fit_transform(&x.slice(ndarray::s![..3, ..])),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            tsne.fit_transform(&x.slice(ndarray::s![..1, ..])),
            Err(Error::InvalidInput(_))
        ));
    }
}
