//! Classical machine learning estimators.

/// `save_to_path` / `load_from_path`, the original API's names for [`Persist::save`] and
/// [`Persist::load`](crate::persistence::Persist::load), on a model (`Model` or `Model<T>`).
///
/// [`Persist::save`]: crate::persistence::Persist::save
macro_rules! path_persistence {
    ($model:ident $(<$g:ident>)?) => {
        impl$(<$g>)? $model$(<$g>)? where $model$(<$g>)?: $crate::persistence::Persist {
            /// Write the model to `path` (postcard).
            pub fn save_to_path(&self, path: &str) -> $crate::error::Result<()> {
                $crate::persistence::Persist::save(self, path)
            }

            /// Read a model written by [`save_to_path`](Self::save_to_path).
            pub fn load_from_path(path: &str) -> $crate::error::Result<Self> {
                <Self as $crate::persistence::Persist>::load(path)
            }
        }
    };
}
pub(crate) use path_persistence;

/// The original API's traits on 2-D data (`Fit`, and `Predict`, `Transform`, `FitTransform`
/// with their output type), each forwarding to the model's inherent method of its name:
/// `data_traits!(Model: Fit where Send + Sync, Predict -> Array1<isize>)`. The bounds named
/// after `where` are added to the array storage's, as the original's impls had them.
macro_rules! data_traits {
    ($model:ident: $($trait:ident $(-> $out:ty)? $(where $first:ident $(+ $bound:ident)*)?),+ $(,)?) => {
        $($crate::machine_learning::data_traits!(@$trait $model [$($first $($bound)*)?] $($out)?);)+
    };
    (@Fit $model:ident [$($bound:ident)*]) => {
        impl<'a, S: ndarray::Data<Elem = f64> $(+ $bound)*>
            $crate::traits::Fit<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        {
            fn fit(
                &mut self,
                x: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<&mut Self> {
                $model::fit(self, x)
            }
        }
    };
    (@FitTransform $model:ident [$($bound:ident)*] $out:ty) => {
        impl<'a, S: ndarray::Data<Elem = f64> $(+ $bound)*>
            $crate::traits::FitTransform<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        {
            type Output = $out;
            fn fit_transform(
                &mut self,
                x: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<$out> {
                $model::fit_transform(self, x)
            }
        }
    };
    (@Predict $model:ident [$($bound:ident)*] $out:ty) => {
        $crate::machine_learning::data_traits!(@read Predict::predict $model [$($bound)*] $out);
    };
    (@Transform $model:ident [$($bound:ident)*] $out:ty) => {
        $crate::machine_learning::data_traits!(@read Transform::transform $model [$($bound)*] $out);
    };
    (@read $trait:ident::$method:ident $model:ident [$($bound:ident)*] $out:ty) => {
        impl<'a, S: ndarray::Data<Elem = f64> $(+ $bound)*>
            $crate::traits::$trait<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        {
            type Output = $out;
            fn $method(
                &self,
                x: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<$out> {
                $model::$method(self, x)
            }
        }
    };
}
pub(crate) use data_traits;

pub mod dbscan;
pub mod decision_tree;
pub mod error;
pub mod incremental_pca;
pub mod isolation_forest;
pub mod kernel_pca;
pub mod kmeans;
pub mod knn;
pub mod labels;
pub mod lda;
pub mod linear_regression;
pub mod linear_svc;
pub mod logistic_lbfgs;
pub mod logistic_newton;
pub mod logistic_regression;
pub mod meanshift;
pub mod mini_batch_kmeans;
pub mod options;
#[cfg(test)]
mod parameter_checks;
pub mod pca;
pub mod sklearn_liblinear;
pub mod sklearn_sag;
pub mod sklearn_svm;
pub mod sklearn_tree;
pub mod svc;
pub mod tree;
pub mod tsne;
pub mod types;
/// Input checks, shared crate-wide (re-exported here for the models).
pub use crate::validation;

/// A model's fitted state, or `NotFitted` naming the model.
pub(crate) fn fitted_state<'a, T>(
    state: &'a Option<T>,
    model: &'static str,
) -> crate::error::Result<&'a T> {
    state
        .as_ref()
        .ok_or_else(|| crate::error::Error::not_fitted(model))
}

pub use crate::math::DistanceCalculationMetric;
pub use crate::traits::{Fit, FitTransform, Predict, Transform};
pub use dbscan::DBSCAN;
pub use decision_tree::{Algorithm, DecisionTree};
pub use error::TreeError;
pub use incremental_pca::IncrementalPCA;
pub use isolation_forest::{Contamination, IsolationForest, MaxSamples};
pub use kernel_pca::KernelPCA;
pub use kmeans::{KMeans, KMeansInit, NInit};
pub use knn::{Weights, KNN};
pub use lda::{LdaOptions, ProjectionCentring, ScatterPooling, LDA};
pub use linear_regression::LinearRegression;
pub use linear_svc::{LinearSVC, LinearSvcSolver};
pub use logistic_regression::{
    LogisticOptions, LogisticRegression, LogisticSolver, Penalty, ZeroScoreClass,
};
pub use meanshift::{estimate_bandwidth, MeanShift};
pub use mini_batch_kmeans::MiniBatchKMeans;
pub use options::ClassLabels;
pub use pca::{NComponents, PCA};
pub use svc::{DecisionShape, IterationCap, SvcOptions, SVC};
pub use tsne::{LearningRate, TsneInit, TsneMethod, TSNE};
pub use types::{Gamma, KernelType, RegularizationType};
pub mod discriminant_analysis;
pub mod linear_model;
pub mod svm;
pub use discriminant_analysis::{DiscriminantSolver, Shrinkage};
pub use linear_model::{generate_polynomial_features, LeastSquaresSolver};
pub use svm::Loss;
pub use tree::{DecisionTreeParams, Node, NodeType};
pub mod clustering;
pub mod decomposition;
pub mod ensemble;
pub mod manifold;
pub mod neighbors;
pub use decomposition::{EigenSolver, SVDSolver};
pub use ensemble::IsolationTree;
pub use knn::WeightingStrategy;
pub use manifold::{Init, TSNEMethod};
