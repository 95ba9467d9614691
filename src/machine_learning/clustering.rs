//! The original crate's clustering category: `KMeans`, `DBSCAN`, `MeanShift` at their
//! original paths (`clustering::kmeans::KMeans`, `clustering::mean_shift::MeanShift`, ...).

/// `fit_predict` of a clusterer that keeps its training labels: fit, then hand them back.
macro_rules! fit_predict_labels {
    ($model:ty) => {
        impl $model {
            /// Cluster `data` and return its labels.
            pub fn fit_predict<S: ndarray::Data<Elem = f64>>(
                &mut self,
                data: &ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<ndarray::Array1<isize>> {
                self.fit(data)?;
                Ok(self.labels.clone().expect("fitted above"))
            }
        }
    };
}
pub(crate) use fit_predict_labels;

pub use super::dbscan::DBSCAN;
pub use super::kmeans::KMeans;
pub use super::meanshift::{estimate_bandwidth, MeanShift};

pub mod kmeans {
    pub use crate::machine_learning::kmeans::*;
}

pub mod dbscan {
    pub use crate::machine_learning::dbscan::*;
    pub use crate::math::DistanceCalculationMetric;
}

pub mod mean_shift {
    pub use crate::machine_learning::meanshift::*;
}
