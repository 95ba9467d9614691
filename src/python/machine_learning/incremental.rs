//! Native incremental models behind `KMeans.partial_fit` and `PCA.partial_fit`; `fit` is one
//! `partial_fit` step (the wrappers call `partial_fit`).

use super::kmeans::parse_init;
use crate::machine_learning::{IncrementalPCA, MiniBatchKMeans};
use crate::python::model::native_estimator;
use crate::python::params;
use pyo3::prelude::*;

native_estimator! {
    PyMiniBatchKMeans(MiniBatchKMeans, "MiniBatchKMeans");
    new(n_clusters: usize, init: &Bound<'_, PyAny>, random_state: Option<&Bound<'_, PyAny>>) {
        Ok(MiniBatchKMeans::new(n_clusters, parse_init(init)?, params::random_state(random_state)?))
    }
    fit(x) => |m, x| m.partial_fit(&x);
    read predict => |m, x| m.predict(&x).map(|l| l.mapv(|l| l as i32));
    read transform => |m, x| m.transform(&x);
    read score => |m, x| m.score(&x);
    write partial_fit => |m, x| m.partial_fit(&x);
    fitted cluster_centers_ => |m| m.cluster_centers().cloned();
    fitted labels_ => |m| m.labels().map(|l| l.mapv(|l| l as i32));
    fitted inertia_ => |m| m.inertia();
    fitted n_iter_ => |m| m.n_steps();
    fitted n_steps_ => |m| m.n_steps();
    fitted counts_ => |m| m.counts().cloned();
}

native_estimator! {
    PyIncrementalPCA(IncrementalPCA, "IncrementalPCA");
    new(n_components: Option<usize>, whiten: bool) {
        Ok(IncrementalPCA::new(n_components, whiten))
    }
    fit(x) => |m, x| m.partial_fit(&x);
    read transform => |m, x| m.transform(&x);
    read inverse_transform => |m, x| m.inverse_transform(&x);
    write partial_fit => |m, x| m.partial_fit(&x);
    fitted components_ => |m| m.components().cloned();
    fitted explained_variance_ => |m| m.explained_variance().cloned();
    fitted explained_variance_ratio_ => |m| m.explained_variance_ratio().cloned();
    fitted singular_values_ => |m| m.singular_values().cloned();
    fitted mean_ => |m| m.mean().cloned();
    fitted var_ => |m| m.var().cloned();
    fitted n_components_ => |m| m.n_components_();
    fitted noise_variance_ => |m| m.noise_variance();
    fitted n_samples_ => |m| m.n_samples_seen();
    fitted n_samples_seen_ => |m| m.n_samples_seen();
}
