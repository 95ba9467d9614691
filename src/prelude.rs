//! One import for the common types: `use rustyml::prelude::*;` (the original crate's prelude).

/// Estimators, their hyper-parameter types and the estimator traits.
#[cfg(feature = "machine_learning")]
pub mod machine_learning {
    pub use crate::machine_learning::{
        estimate_bandwidth, generate_polynomial_features, Algorithm, Contamination, DecisionTree,
        DecisionTreeParams, DiscriminantSolver, DistanceCalculationMetric, EigenSolver, Fit,
        FitTransform, Init, IsolationForest, KMeans, KernelPCA, KernelType, LeastSquaresSolver,
        LinearRegression, LinearSVC, LogisticRegression, MeanShift, Predict, RegularizationType,
        SVDSolver, Shrinkage, TSNEMethod, Transform, WeightingStrategy, DBSCAN, KNN, LDA, PCA, SVC,
        TSNE,
    };
}

/// Metrics.
#[cfg(feature = "metrics")]
pub mod metrics {
    pub use crate::metrics::{
        accuracy, adjusted_mutual_info, adjusted_rand_index, average_precision,
        calinski_harabasz_score, cohen_kappa, completeness_score, davies_bouldin_score,
        explained_variance_score, fowlkes_mallows_score, homogeneity_score, log_loss,
        mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
        median_absolute_error, normalized_mutual_info, precision_recall_curve, r2_score, roc_auc,
        roc_curve, root_mean_squared_error, silhouette_score, top_k_accuracy, v_measure_score,
        Average, ConfusionMatrix, MulticlassConfusionMatrix,
    };
}

/// Network layers, losses, optimizers and the model.
#[cfg(feature = "neural_network")]
pub mod neural_network {
    pub use crate::neural_network::layers::activation::*;
    pub use crate::neural_network::layers::border::*;
    pub use crate::neural_network::layers::convolution::*;
    pub use crate::neural_network::layers::pooling::*;
    pub use crate::neural_network::layers::recurrent::*;
    pub use crate::neural_network::layers::regularization::*;
    pub use crate::neural_network::layers::upsampling::*;
    pub use crate::neural_network::layers::{
        Dense, Embedding, Flatten, Identity, Permute, RepeatVector, Reshape,
    };
    pub use crate::neural_network::losses::*;
    pub use crate::neural_network::optimizers::*;
    pub use crate::neural_network::sequential::{History, Sequential};
    pub use crate::neural_network::Tensor;
}

/// Preprocessing and data splitting.
#[cfg(feature = "utils")]
pub mod utils {
    pub use crate::utils::{
        normalize, standardize, to_categorical, to_categorical_with_mapping, to_sparse_categorical,
        train_test_split, train_test_split_stratified, Fit, FitTransform, MaxAbsScaler,
        MinMaxScaler, NormalizationAxis, NormalizationOrder, Normalizer, Predict, RobustScaler,
        StandardScaler, StandardizationAxis, Transform,
    };
}

#[cfg(feature = "machine_learning")]
pub use self::machine_learning::*;
#[cfg(feature = "metrics")]
pub use self::metrics::*;
#[cfg(feature = "neural_network")]
pub use self::neural_network::*;
#[cfg(feature = "utils")]
pub use self::utils::*;
