//! PCA fitted batch by batch, as scikit-learn's `IncrementalPCA.partial_fit`: each call sees
//! one batch; the state kept between calls is the components, singular values and running
//! moments, never the data.
//!
//! Ross, Lim, Lin and Yang's incremental SVD: the running column means and variances are
//! merged with the batch's (Chan et al.'s update); the SVD is taken of the previous components
//! scaled by their singular values, the batch centred on its own mean, and one row correcting
//! for the shift of the mean.

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::pca::Projection;
use crate::math::linalg;
use crate::persistence::Persist;
use crate::validation::{check_features, check_n_features};
use ndarray::{s, Array1, Array2, ArrayRef2, ArrayView2, Axis, Zip};
use serde::{Deserialize, Serialize};

/// What an incremental PCA has learned so far.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ComponentsSoFar {
    components: Array2<f64>,
    singular_values: Array1<f64>,
    explained_variance: Array1<f64>,
    explained_variance_ratio: Array1<f64>,
    noise_variance: f64,
    mean: Array1<f64>,
    var: Array1<f64>,
    n_samples_seen: usize,
}

/// PCA fitted batch by batch (scikit-learn's `IncrementalPCA.partial_fit`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IncrementalPCA {
    /// `None`: the first batch's `min(n_samples, n_features)`.
    pub n_components: Option<usize>,
    pub whiten: bool,
    state: Option<ComponentsSoFar>,
}

impl IncrementalPCA {
    pub fn new(n_components: Option<usize>, whiten: bool) -> Self {
        Self {
            n_components,
            whiten,
            state: None,
        }
    }

    /// One incremental update with the batch `x`.
    pub fn partial_fit(&mut self, x: &ArrayRef2<f64>) -> Result<()> {
        let x = x.view();
        match &self.state {
            None => check_features(&x, "X")?,
            Some(st) => check_n_features(&x, st.mean.len(), "PCA")?,
        }
        crate::validation::check_power_sum_range(&x, 2.0, "X", "the variances")?;
        let (n, d) = x.dim();
        let k = match (self.n_components, &self.state) {
            (Some(k), _) => k,
            (None, None) => n.min(d),
            (None, Some(st)) => st.components.nrows(),
        };
        if k == 0 || k > d {
            return Err(Error::invalid_input(format!(
                "n_components={k} invalid for n_features={d}, need more rows than columns for \
                 IncrementalPCA processing"
            )));
        }
        if k > n {
            return Err(Error::invalid_input(format!(
                "n_components={k} must be less or equal to the batch number of samples {n}."
            )));
        }
        if let Some(st) = &self.state {
            if st.components.nrows() != k {
                return Err(Error::invalid_input(format!(
                    "Number of input features has changed from {} to {k} between calls to \
                     partial_fit! Try setting n_components to a fixed value.",
                    st.components.nrows()
                )));
            }
        }
        let seen = self.state.as_ref().map_or(0, |s| s.n_samples_seen);
        let total = seen + n;
        if total < 2 {
            return Err(Error::invalid_input(
                "IncrementalPCA needs at least 2 samples in all to estimate a variance, got 1",
            ));
        }
        // the batch's column sums and its sum of squares about its own mean, in row order
        let nf = n as f64;
        let batch_sum = x.sum_axis(Axis(0));
        let batch_mean = &batch_sum / nf;
        let mut centred = x.to_owned();
        Zip::from(centred.rows_mut()).for_each(|mut row| row -= &batch_mean);
        let correction = centred.sum_axis(Axis(0));
        let sq = centred.mapv(|v| v * v).sum_axis(Axis(0));
        let batch_unnorm = &sq - &correction.mapv(|c| c * c / nf);
        let (mean, var) = match &self.state {
            None => (batch_mean.clone(), &batch_unnorm / nf),
            Some(st) => {
                let (sf, tf) = (seen as f64, total as f64);
                let last_sum = &st.mean * sf;
                let mean = (&last_sum + &batch_sum) / tf;
                let ratio = sf / nf;
                let mut unnorm = &st.var * sf + &batch_unnorm;
                Zip::from(&mut unnorm)
                    .and(&last_sum)
                    .and(&batch_sum)
                    .for_each(|u, &ls, &bs| {
                        let gap = ls / ratio - bs;
                        *u += ratio / tf * gap * gap;
                    });
                (mean, unnorm / tf)
            }
        };
        let stacked = match &self.state {
            None => centred,
            Some(st) => {
                let scale = ((seen as f64 / total as f64) * nf).sqrt();
                let mut m = Array2::<f64>::zeros((k + n + 1, d));
                Zip::from(m.slice_mut(s![..k, ..]).rows_mut())
                    .and(st.components.rows())
                    .and(&st.singular_values)
                    .for_each(|mut out, comp, &sv| out.assign(&comp.mapv(|v| v * sv)));
                m.slice_mut(s![k..k + n, ..]).assign(&centred);
                m.row_mut(k + n).assign(&((&st.mean - &batch_mean) * scale));
                m
            }
        };
        let (singular, vt) = thin_svd_right(stacked.view())?;
        let denom = (total - 1) as f64;
        let explained_all = singular.mapv(|v| v * v / denom);
        let total_var: f64 = var.iter().sum::<f64>() * total as f64;
        let ratio_all = singular.mapv(|v| v * v / total_var);
        let noise_variance = if k != n && k != d && explained_all.len() > k {
            explained_all.slice(s![k..]).mean().unwrap_or(0.0)
        } else {
            0.0
        };
        self.state = Some(ComponentsSoFar {
            components: vt.slice(s![..k, ..]).to_owned(),
            singular_values: singular.slice(s![..k]).to_owned(),
            explained_variance: explained_all.slice(s![..k]).to_owned(),
            explained_variance_ratio: ratio_all.slice(s![..k]).to_owned(),
            noise_variance,
            mean,
            var,
            n_samples_seen: total,
        });
        Ok(())
    }

    fn fitted(&self) -> Result<&ComponentsSoFar> {
        fitted_state(&self.state, "PCA")
    }

    /// The batch PCA's projection over the components so far.
    fn projection(&self) -> Result<Projection<'_>> {
        let st = self.fitted()?;
        Ok(Projection {
            components: &st.components,
            mean: &st.mean,
            explained_variance: &st.explained_variance,
            whiten: self.whiten,
        })
    }

    /// `(x - mean) · componentsᵀ`, whitened if asked.
    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.projection()?.transform(x.view())
    }

    /// `z · components + mean` (undoing whitening).
    pub fn inverse_transform(&self, z: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.projection()?.inverse_transform(z.view())
    }

    crate::accessors::fitted_getters! {
        state;
        components -> &components: Array2<f64>,
        singular_values -> &singular_values: Array1<f64>,
        explained_variance -> &explained_variance: Array1<f64>,
        explained_variance_ratio -> &explained_variance_ratio: Array1<f64>,
        noise_variance -> noise_variance: f64,
        mean -> &mean: Array1<f64>,
        var -> &var: Array1<f64>,
        n_samples_seen -> n_samples_seen: usize,
    }
    pub fn n_components_(&self) -> Option<usize> {
        self.state.as_ref().map(|s| s.components.nrows())
    }
}

impl Persist for IncrementalPCA {
    const MODEL_NAME: &'static str = "IncrementalPCA";
}

/// Singular values (descending) and right singular vectors (rows, signs as scikit-learn's
/// `svd_flip(u_based_decision=False)`) of `m`, `min(rows, cols)` of each.
fn thin_svd_right(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    let svd = nalgebra::linalg::SVD::try_new(
        linalg::to_nalgebra(m),
        false,
        true,
        f64::EPSILON,
        linalg::max_iterations(m.ncols()),
    )
    .ok_or_else(|| Error::computation("IncrementalPCA: the SVD did not converge"))?;
    let v_t = svd.v_t.expect("asked for V");
    let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
    order.sort_by(|&i, &j| svd.singular_values[j].total_cmp(&svd.singular_values[i]));
    let values = Array1::from_iter(order.iter().map(|&i| svd.singular_values[i]));
    let mut vt = Array2::from_shape_fn((order.len(), m.ncols()), |(r, c)| v_t[(order[r], c)]);
    crate::machine_learning::pca::flip_rows(&mut vt);
    Ok((values, vt))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn incremental_mean_and_variance_match_the_whole_data() {
        // Two batches of a line y = 2x: the merged mean and (population) variance are those
        // of the four points, and the only component is (1, 2)/sqrt(5).
        let mut p = IncrementalPCA::new(Some(1), false);
        p.partial_fit(&array![[0.0, 0.0], [1.0, 2.0]]).unwrap();
        p.partial_fit(&array![[2.0, 4.0], [3.0, 6.0]]).unwrap();
        let mean = p.mean().unwrap();
        assert!((mean[0] - 1.5).abs() < 1e-15 && (mean[1] - 3.0).abs() < 1e-15);
        let var = p.var().unwrap();
        assert!((var[0] - 1.25).abs() < 1e-14 && (var[1] - 5.0).abs() < 1e-13);
        let c = p.components().unwrap();
        let s5 = 5f64.sqrt();
        assert!((c[[0, 0]] - 1.0 / s5).abs() < 1e-12 && (c[[0, 1]] - 2.0 / s5).abs() < 1e-12);
        assert_eq!(p.n_samples_seen(), Some(4));
    }
}
