//! Principal component analysis, numerically matching scikit-learn's `PCA`.
//!
//! The column means come from the blocked column sums of
//! [`crate::math::reduction::column_sums_map`], then the smaller of the two Gram matrices of
//! the centred data is eigen-decomposed:
//!
//! * `n_samples >= n_features`: the covariance `Xcᵀ Xc / (n - 1)` (`d x d`), centred block by
//!   block without a copy of the data ([`matmul::centered_gram`]), whose eigenvectors are the
//!   components (scikit-learn's `covariance_eigh` solver, which it picks for such data);
//! * wide data: `Xc Xcᵀ / (n - 1)` (`n x n`), components `Xcᵀ u / s`, re-orthonormalised, and
//!   components of a zero singular value completed to an orthonormal basis.
//!
//! Signs follow scikit-learn's `svd_flip(u_based_decision=False)`: in every component the entry
//! of largest absolute value (the first one on ties) is positive.

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::validation::{
    check_n_features, require_data, require_data_width, require_nonzero,
};
use crate::math::{linalg, matmul, reduction};
use crate::persistence::Persist;
use ndarray::{s, Array1, Array2, ArrayRef2, ArrayView2, Axis, Zip};
use serde::{Deserialize, Serialize};

/// The original's SVD solver choice. Every choice runs the exact decomposition below (the
/// randomized and power-iteration variants were approximations of it), so the choice is kept
/// for API compatibility and does not change the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum SVDSolver {
    #[default]
    Full,
    /// Randomized SVD with this seed.
    Randomized(u64),
    PowerIteration,
}

/// How many components to keep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum NComponents {
    /// `min(n_samples, n_features)` (scikit-learn's `n_components=None`).
    All,
    /// Exactly this many, `1 <= k <= min(n_samples, n_features)`.
    Count(usize),
    /// The fewest components whose explained-variance ratios add up to more than this
    /// fraction, in `(0, 1)`.
    VarianceRatio(f64),
}

/// State learned by [`PCA::fit`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    components: Array2<f64>,
    explained_variance: Array1<f64>,
    explained_variance_ratio: Array1<f64>,
    singular_values: Array1<f64>,
    mean: Array1<f64>,
    noise_variance: f64,
    n_samples: usize,
}

/// Principal component analysis (`components_`, `explained_variance_`, `transform`,
/// `inverse_transform`, ... as in scikit-learn).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PCA {
    pub n_components: NComponents,
    /// Scale the projections to unit variance.
    pub whiten: bool,
    #[serde(default)]
    svd_solver: SVDSolver,
    fitted: Option<Fitted>,
}

impl Default for PCA {
    /// The original's default: `new(2)`.
    fn default() -> Self {
        Self::builder(NComponents::Count(2))
    }
}

impl PCA {
    /// Unvalidated (checked at `fit`).
    pub fn builder(n_components: NComponents) -> Self {
        Self {
            n_components,
            whiten: false,
            svd_solver: SVDSolver::Full,
            fitted: None,
        }
    }

    crate::accessors::builder_setters! {
        with_whiten(whiten: bool),
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Principal axes, one per row (`components_`, `n_components_ x n_features`).
        components -> &components: Array2<f64>,
        /// Variance along each component (`explained_variance_`, `ddof = 1`).
        explained_variance -> &explained_variance: Array1<f64>,
        /// Fraction of the total variance along each component (`explained_variance_ratio_`).
        explained_variance_ratio -> &explained_variance_ratio: Array1<f64>,
        /// Singular values of the centered data (`singular_values_`).
        singular_values -> &singular_values: Array1<f64>,
        /// Per-feature training mean (`mean_`).
        mean -> &mean: Array1<f64>,
        /// Probabilistic-PCA noise variance (`noise_variance_`): mean of the discarded
        /// variances.
        noise_variance -> noise_variance: f64,
        /// Number of training samples (`n_samples_`).
        n_samples -> n_samples: usize,
    }

    /// Number of components kept (`n_components_`).
    pub fn n_components_(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.components.nrows())
    }

    /// Number of features seen at fit (`n_features_in_`).
    pub fn n_features_in(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.mean.len())
    }

    /// The one check of PCA's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        match self.n_components {
            NComponents::Count(count) => require_nonzero("n_components", count),
            NComponents::VarianceRatio(r) if !(r > 0.0 && r < 1.0) => {
                Err(Error::invalid_parameter(
                    "n_components",
                    format!("as a variance fraction must lie strictly between 0 and 1, got {r}"),
                ))
            }
            NComponents::VarianceRatio(_) | NComponents::All => Ok(()),
        }
    }

    /// A count of components `n x d` data can give.
    fn check_components_for(&self, n: usize, d: usize) -> Result<()> {
        match self.n_components {
            NComponents::Count(k) if k > n.min(d) => Err(Error::invalid_parameter(
                "n_components",
                format!(
                    "must be between 1 and min(n_samples, n_features)={}, got {k}",
                    n.min(d)
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Fit the components to `x` (`n_samples x n_features`) with scikit-learn's checks.
    pub fn fit_checked(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        self.fit_axes(x.view())?;
        Ok(self)
    }

    /// Fit, then project the training data (`fit_transform`), scikit-learn's checks.
    pub fn fit_transform_checked(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let mean = self.fit_axes(x.view())?;
        let fitted = self.fitted.as_ref().expect("just fitted");
        let centered = centered(x.view(), &mean);
        let mut out = matmul::dot(centered.view(), fitted.components.t())?;
        self.projection(fitted).whiten(&mut out);
        Ok(out)
    }

    /// Fit the components; returns the column means.
    fn fit_axes(&mut self, x: ArrayView2<f64>) -> Result<Array1<f64>> {
        crate::validation::check_shape(&x, "X")?;
        // Finite column sums mean finite values (an infinity or NaN leaves its column's sum
        // infinite or NaN), so the values are read once more only when a sum is not finite:
        // a non-finite value, or sums past f64's range (the range check below refuses those).
        let sums = reduction::column_sums_map(x, |v| v);
        if !sums.iter().all(|s| s.is_finite()) {
            crate::validation::check_finite_2d(&x, "X")?;
        }
        let (n, d) = x.dim();
        self.check_params()?;
        self.check_components_for(n, d)?;
        if n < 2 {
            return Err(Error::invalid_input(format!(
                "PCA needs at least 2 samples to estimate a variance, got n_samples = {n}"
            )));
        }
        let mean = Array1::from(sums) / n as f64;
        // the covariance sums squares of the centred values
        let check_range = |largest: f64| {
            crate::validation::check_power_sum_largest(
                largest,
                d,
                2.0,
                "X (centred)",
                "the covariance",
            )
        };
        let (variances, vt) = if n >= d {
            // tall data: the scatter matrix straight from x, centred block by block
            let (scatter, largest) = matmul::centered_gram(x, mean.view());
            check_range(largest)?;
            covariance_axes(scatter / (n - 1) as f64)?
        } else {
            let centered = centered(x, &mean);
            check_range(crate::validation::max_abs(&centered.view()))?;
            wide_axes(centered.view())?
        };
        let total: f64 = variances.iter().sum();
        let ratio = if total > 0.0 {
            variances.mapv(|v| v / total)
        } else {
            Array1::zeros(variances.len())
        };
        let r = variances.len();
        let k = match self.n_components {
            NComponents::All => r,
            NComponents::Count(k) => k,
            NComponents::VarianceRatio(t) => {
                // scikit-learn: searchsorted(cumsum(ratio), t, side="right") + 1.
                let mut cum = 0.0;
                let below = ratio
                    .iter()
                    .take_while(|&&v| {
                        cum += v;
                        cum <= t
                    })
                    .count();
                (below + 1).min(r)
            }
        };
        let noise_variance = if k < r {
            variances.slice(s![k..]).mean().unwrap_or(0.0)
        } else {
            0.0
        };
        let explained_variance = variances.slice(s![..k]).to_owned();
        self.fitted = Some(Fitted {
            components: vt.slice(s![..k, ..]).to_owned(),
            singular_values: explained_variance.mapv(|v| (v * (n - 1) as f64).sqrt()),
            explained_variance,
            explained_variance_ratio: ratio.slice(s![..k]).to_owned(),
            mean: mean.clone(),
            noise_variance,
            n_samples: n,
        });
        Ok(mean)
    }

    fn state(&self) -> Result<&Fitted> {
        fitted_state(&self.fitted, "PCA")
    }

    fn projection<'a>(&self, fitted: &'a Fitted) -> Projection<'a> {
        Projection {
            components: &fitted.components,
            mean: &fitted.mean,
            explained_variance: &fitted.explained_variance,
            whiten: self.whiten,
        }
    }

    /// Project `x` onto the components: `(x - mean) · componentsᵀ`, whitened if asked.
    pub fn transform_checked(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.projection(self.state()?).transform(x.view())
    }

    /// Map projections back to feature space: `z · components + mean` (undoing whitening).
    pub fn inverse_transform_checked(&self, z: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.projection(self.state()?).inverse_transform(z.view())
    }
}

/// The fitted map of [`PCA`] and [`IncrementalPCA`](crate::machine_learning::IncrementalPCA):
/// `components` (`k x d`), the training `mean`, and the variances whitening divides by.
pub(crate) struct Projection<'a> {
    pub(crate) components: &'a Array2<f64>,
    pub(crate) mean: &'a Array1<f64>,
    pub(crate) explained_variance: &'a Array1<f64>,
    pub(crate) whiten: bool,
}

impl Projection<'_> {
    /// `(x - mean) · componentsᵀ`, whitened if asked.
    pub(crate) fn transform(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        check_n_features(&x, self.mean.len(), "PCA")?;
        let par = matmul::nested_parallelism();
        // Center after projecting, so the input is never copied.
        let mut out = matmul::dot_par(x, self.components.t(), par)?;
        let offset = matmul::matvec(self.components.view(), self.mean.view(), par)?;
        Zip::from(out.rows_mut()).for_each(|mut row| row -= &offset);
        self.whiten(&mut out);
        Ok(out)
    }

    /// Divide projections by the components' standard deviations, if asked.
    pub(crate) fn whiten(&self, out: &mut Array2<f64>) {
        if !self.whiten {
            return;
        }
        // Clip the scale at machine epsilon like scikit-learn, so rank-deficient data stay finite.
        let scale = self.explained_variance.mapv(|v| v.sqrt().max(f64::EPSILON));
        Zip::from(out.rows_mut()).for_each(|mut row| row /= &scale);
    }

    /// `z · components + mean` (undoing whitening).
    pub(crate) fn inverse_transform(&self, z: ArrayView2<f64>) -> Result<Array2<f64>> {
        check_n_features(&z, self.components.nrows(), "PCA.inverse_transform")?;
        let par = matmul::nested_parallelism();
        let mut out = if self.whiten {
            let mut scaled = self.components.clone();
            Zip::from(scaled.rows_mut())
                .and(self.explained_variance)
                .for_each(|mut row, &v| row *= v.sqrt());
            matmul::dot_par(z, scaled.view(), par)?
        } else {
            matmul::dot_par(z, self.components.view(), par)?
        };
        Zip::from(out.rows_mut()).for_each(|mut row| row += self.mean);
        Ok(out)
    }
}

/// Variances (descending, clipped at 0) and principal axes (rows, sign-flipped) of centered
/// wide data (`n < d`): the `n x n` Gram matrix's spectrum, `n` of each.
fn wide_axes(xc: ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    let (n, d) = xc.dim();
    let mut gram = matmul::dot(xc, xc.t())?;
    gram /= (n - 1) as f64;
    let (values, u) = linalg::symmetric_eigen(gram.view())?;
    let values = values.mapv(|v| v.max(0.0));
    // v_k = Xcᵀ u_k / s_k; normalising the column gives the same direction without dividing
    // by a possibly tiny s_k.
    let raw = matmul::dot(u.t(), xc)?; // row k = (Xcᵀ u_k)ᵀ
    let top = values.first().copied().unwrap_or(0.0);
    let null_below = top * (n.max(d) as f64) * f64::EPSILON;
    let mut vt = orthonormal_rows(raw, values.view(), null_below);
    flip_rows(&mut vt);
    Ok((values, vt))
}

/// Variances (descending, clipped at 0) and principal axes (rows, sign-flipped) from the
/// covariance matrix.
fn covariance_axes(cov: Array2<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    let (values, vectors) = linalg::symmetric_eigen(cov.view())?;
    let mut vt = vectors.reversed_axes();
    flip_rows(&mut vt);
    Ok((values.mapv(|v| v.max(0.0)), vt))
}

/// `x` minus its column `mean`s, a copy.
fn centered(x: ArrayView2<f64>, mean: &Array1<f64>) -> Array2<f64> {
    let mut centered = x.to_owned();
    Zip::from(centered.rows_mut()).for_each(|mut row| row -= mean);
    centered
}

/// Orthonormalise the rows of `raw` in order (two passes of modified Gram-Schmidt); a row whose
/// variance is at most `null_below`, or that is (numerically) dependent on the rows before it,
/// is replaced by the first unit vector independent of them.
fn orthonormal_rows(
    raw: Array2<f64>,
    variances: ndarray::ArrayView1<f64>,
    null_below: f64,
) -> Array2<f64> {
    let (r, d) = raw.dim();
    let mut out = Array2::<f64>::zeros((r, d));
    let mut next_unit = 0usize;
    for k in 0..r {
        let mut v = raw.row(k).to_owned();
        let mut usable = variances[k] > null_below;
        if usable {
            usable = reorthogonalise(&mut v, &out, k);
        }
        while !usable && next_unit < d {
            v.fill(0.0);
            v[next_unit] = 1.0;
            next_unit += 1;
            usable = reorthogonalise(&mut v, &out, k);
        }
        out.row_mut(k).assign(&v);
    }
    out
}

/// Remove from `v` its projections on the first `k` rows of `basis` (twice), normalise it, and
/// report whether enough of it was left to be a new direction.
fn reorthogonalise(v: &mut Array1<f64>, basis: &Array2<f64>, k: usize) -> bool {
    let before = v.dot(v).sqrt();
    if before == 0.0 {
        return false;
    }
    for _ in 0..2 {
        for row in basis.outer_iter().take(k) {
            let p = row.dot(v);
            v.scaled_add(-p, &row);
        }
    }
    let after = v.dot(v).sqrt();
    if after <= 1e-8 * before {
        return false;
    }
    v.mapv_inplace(|x| x / after);
    true
}

/// scikit-learn's `svd_flip(u_based_decision=False)`: make the entry of largest absolute value
/// in each row positive (first maximum on ties).
pub(crate) fn flip_rows(vt: &mut Array2<f64>) {
    for mut row in vt.axis_iter_mut(Axis(0)) {
        flip_to_positive_max(row.view_mut());
    }
}

/// Negate `v` when its entry of largest absolute value (the first on ties) is negative.
pub(crate) fn flip_to_positive_max(mut v: ndarray::ArrayViewMut1<f64>) {
    let mut best = 0usize;
    for (i, x) in v.iter().enumerate() {
        if x.abs() > v[best].abs() {
            best = i;
        }
    }
    if !v.is_empty() && v[best] < 0.0 {
        v.mapv_inplace(|x| -x);
    }
}

/// The original RustyML API: validated constructor, getters, its error kinds.
impl PCA {
    /// Keep `n_components` (>= 1, else `InvalidParameter`) components, solver `Full`.
    pub fn new(n_components: usize) -> Result<Self> {
        let model = Self::builder(NComponents::Count(n_components));
        model.check_params()?;
        Ok(model)
    }

    crate::accessors::builder_setters! {
        with_svd_solver(svd_solver: SVDSolver),
    }

    crate::accessors::field_getters! {
        get_svd_solver -> svd_solver: SVDSolver,
    }

    /// Components requested (`min(n_samples, n_features)` when built without a count).
    pub fn get_n_components(&self) -> usize {
        match self.n_components {
            NComponents::Count(k) => k,
            _ => self.n_components_().unwrap_or(0),
        }
    }

    pub fn get_n_samples(&self) -> Option<usize> {
        self.n_samples()
    }

    pub fn get_n_features(&self) -> Option<usize> {
        self.n_features_in()
    }

    pub fn get_mean(&self) -> Option<&Array1<f64>> {
        self.mean()
    }

    pub fn get_explained_variance(&self) -> Option<&Array1<f64>> {
        self.explained_variance()
    }

    pub fn get_explained_variance_ratio(&self) -> Option<&Array1<f64>> {
        self.explained_variance_ratio()
    }

    pub fn get_singular_values(&self) -> Option<&Array1<f64>> {
        self.singular_values()
    }

    pub fn get_components(&self) -> Option<&Array2<f64>> {
        self.components()
    }

    /// The original's guards: empty -> `EmptyInput`, NaN/inf -> `NonFinite`, fewer than 2
    /// samples -> `InvalidInput`, more components than `min(n_samples, n_features)` ->
    /// `InvalidParameter`.
    fn check_fit_input(&self, x: &ArrayView2<f64>) -> Result<()> {
        require_data(x, "PCA data")?;
        let (n, d) = x.dim();
        if n < 2 {
            return Err(Error::invalid_input(format!(
                "PCA needs at least 2 samples, got {n}"
            )));
        }
        self.check_components_for(n, d)
    }

    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        self.check_fit_input(&x.view())?;
        self.fit_checked(x)
    }

    /// Project `x`; unfitted -> `NotFitted`, wrong width -> `DimensionMismatch`.
    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let fitted = self.state()?;
        require_data_width(&x.view(), fitted.mean.len(), "PCA input")?;
        self.transform_checked(x)
    }

    pub fn fit_transform(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.check_fit_input(&x.view())?;
        self.fit_transform_checked(x)
    }

    /// Map projections back; unfitted -> `NotFitted`, width other than the component count ->
    /// `DimensionMismatch`.
    pub fn inverse_transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let fitted = self.state()?;
        require_data_width(&x.view(), fitted.components.nrows(), "PCA projections")?;
        self.inverse_transform_checked(x)
    }
}

crate::machine_learning::data_traits!(
    PCA:
    Fit,
    Transform -> Array2<f64>,
    FitTransform -> Array2<f64>,
);

crate::machine_learning::path_persistence!(PCA);

impl Persist for PCA {
    const MODEL_NAME: &'static str = "PCA";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Correlated 3-D data with known structure.
    fn data(n: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, 3), |(i, j)| {
            let t = i as f64 * 0.37;
            let a = t.sin() * 3.0;
            let b = (t * 1.7).cos();
            match j {
                0 => a + 0.1 * b + 5.0,
                1 => 2.0 * a - b,
                _ => 0.5 * b + (t * 0.3).sin() * 0.2 - 1.0,
            }
        })
    }

    #[test]
    fn two_point_example_has_a_hand_derived_answer() {
        // Points (0,0) and (2,2): mean (1,1); one direction (1,1)/sqrt2 with variance
        // |(1,1)|^2 * 2 / (n-1) = 4; the second component has variance 0.
        let x = array![[0.0, 0.0], [2.0, 2.0]];
        let mut pca = PCA::builder(NComponents::Count(1));
        let z = pca.fit_transform(&x).unwrap();
        let c = pca.components().unwrap();
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((c[[0, 0]] - h).abs() < 1e-15 && (c[[0, 1]] - h).abs() < 1e-15);
        assert!((pca.explained_variance().unwrap()[0] - 4.0).abs() < 1e-12);
        assert!((pca.explained_variance_ratio().unwrap()[0] - 1.0).abs() < 1e-15);
        assert!((pca.singular_values().unwrap()[0] - 2.0).abs() < 1e-12);
        assert!((z[[0, 0]] + 2f64.sqrt()).abs() < 1e-12 && (z[[1, 0]] - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(pca.mean().unwrap(), &array![1.0, 1.0]);
    }

    /// Oracle: the covariance from a plain two-pass loop; each fitted component must be an
    /// eigenvector of it with its explained variance as eigenvalue, and components orthonormal.
    fn check_against_covariance(x: &Array2<f64>, pca: &PCA) {
        let (n, d) = x.dim();
        let mean: Vec<f64> = (0..d).map(|j| x.column(j).sum() / n as f64).collect();
        let mut cov = Array2::<f64>::zeros((d, d));
        for row in x.outer_iter() {
            for a in 0..d {
                for b in 0..d {
                    cov[[a, b]] += (row[a] - mean[a]) * (row[b] - mean[b]) / (n - 1) as f64;
                }
            }
        }
        let c = pca.components().unwrap();
        let ev = pca.explained_variance().unwrap();
        let scale = ev[0];
        for k in 0..c.nrows() {
            let v = c.row(k);
            let cv = cov.dot(&v);
            for j in 0..d {
                assert!(
                    (cv[j] - ev[k] * v[j]).abs() < 1e-10 * scale,
                    "component {k}"
                );
            }
            for l in 0..c.nrows() {
                let want = if k == l { 1.0 } else { 0.0 };
                assert!((v.dot(&c.row(l)) - want).abs() < 1e-12);
            }
            let (imax, _) = v.iter().enumerate().fold((0, 0.0f64), |(bi, bv), (i, &x)| {
                if x.abs() > bv {
                    (i, x.abs())
                } else {
                    (bi, bv)
                }
            });
            assert!(v[imax] > 0.0, "sign convention: largest entry positive");
        }
        for k in 1..ev.len() {
            assert!(ev[k - 1] >= ev[k]);
        }
    }

    #[test]
    fn components_diagonalise_the_covariance() {
        let x = data(200);
        let mut pca = PCA::builder(NComponents::All);
        let z = pca.fit_transform(&x).unwrap();
        check_against_covariance(&x, &pca);
        // Transform of the training data matches fit_transform, and the inverse restores x.
        let t = pca.transform(&x).unwrap();
        for (a, b) in z.iter().zip(t.iter()) {
            assert!((a - b).abs() < 1e-12);
        }
        let back = pca.inverse_transform(&z).unwrap();
        for (a, b) in back.iter().zip(x.iter()) {
            assert!((a - b).abs() < 1e-12);
        }
        // Projected variances equal the explained variances.
        for k in 0..3 {
            let col = z.column(k);
            let var = col.dot(&col) / 199.0;
            assert!((var - pca.explained_variance().unwrap()[k]).abs() < 1e-10);
        }
    }

    #[test]
    fn wide_data_use_the_sample_gram_and_agree_with_the_tall_route() {
        // 6 samples in 10 features: rank 5 after centering.
        let x = Array2::from_shape_fn((6, 10), |(i, j)| {
            ((i * i * 10 + j * j * 3 + i * j) as f64 * 0.61).sin() + (j as f64) * 0.1
        });
        let mut wide = PCA::builder(NComponents::All);
        wide.fit(&x).unwrap();
        assert_eq!(wide.n_components_(), Some(6));
        check_against_covariance(&x, &wide);
        // Oracle for the non-null components: the d x d covariance route on the same data,
        // reached by appending copies of the mean (adds samples without changing the scatter).
        let (n, d) = x.dim();
        let mean = x.mean_axis(Axis(0)).unwrap();
        let mut tall = Array2::<f64>::zeros((n + 10, d));
        tall.slice_mut(s![..n, ..]).assign(&x);
        for i in n..n + 10 {
            tall.row_mut(i).assign(&mean);
        }
        let mut reference = PCA::builder(NComponents::Count(5));
        reference.fit(&tall).unwrap();
        let scatter_ratio = (n + 10 - 1) as f64 / (n - 1) as f64;
        for k in 0..5 {
            let w = wide.explained_variance().unwrap()[k];
            let t = reference.explained_variance().unwrap()[k] * scatter_ratio;
            assert!((w - t).abs() < 1e-12 * w.max(1.0), "variance {k}");
            for j in 0..d {
                assert!(
                    (wide.components().unwrap()[[k, j]] - reference.components().unwrap()[[k, j]])
                        .abs()
                        < 1e-9,
                    "component {k}"
                );
            }
        }
        assert!(wide.explained_variance().unwrap()[5].abs() < 1e-12);
    }

    #[test]
    fn variance_fraction_picks_the_smallest_sufficient_count() {
        let x = data(300);
        let mut all = PCA::builder(NComponents::All);
        all.fit(&x).unwrap();
        let ratio = all.explained_variance_ratio().unwrap().clone();
        let first = ratio[0];
        let mut pca = PCA::builder(NComponents::VarianceRatio(first * 0.99));
        pca.fit(&x).unwrap();
        assert_eq!(pca.n_components_(), Some(1));
        let mut pca = PCA::builder(NComponents::VarianceRatio(
            (first + ratio[1] * 0.5).min(0.999),
        ));
        pca.fit(&x).unwrap();
        assert_eq!(pca.n_components_(), Some(2));
        assert!(
            (pca.noise_variance().unwrap() - all.explained_variance().unwrap()[2]).abs() < 1e-15
        );
    }

    #[test]
    fn whitening_gives_unit_variance_and_inverts() {
        let x = data(150);
        let mut pca = PCA::builder(NComponents::Count(2)).with_whiten(true);
        let z = pca.fit_transform(&x).unwrap();
        for k in 0..2 {
            let col = z.column(k);
            assert!((col.dot(&col) / 149.0 - 1.0).abs() < 1e-10);
        }
        let t = pca.transform(&x).unwrap();
        for (a, b) in z.iter().zip(t.iter()) {
            assert!((a - b).abs() < 1e-10);
        }
        // Inverse of whitened projections equals the unwhitened reconstruction.
        let mut plain = PCA::builder(NComponents::Count(2));
        let zp = plain.fit_transform(&x).unwrap();
        let a = pca.inverse_transform(&z).unwrap();
        let b = plain.inverse_transform(&zp).unwrap();
        for (u, v) in a.iter().zip(b.iter()) {
            assert!((u - v).abs() < 1e-10);
        }
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = data(10);
        assert!(matches!(
            PCA::builder(NComponents::All).transform(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(PCA::builder(NComponents::All)
            .fit(&Array2::<f64>::zeros((0, 3)))
            .is_err());
        assert!(PCA::builder(NComponents::All)
            .fit(&array![[1.0, f64::NAN], [2.0, 3.0]])
            .is_err());
        assert!(PCA::builder(NComponents::All)
            .fit(&array![[1.0, 2.0]])
            .is_err());
        assert!(PCA::builder(NComponents::Count(4)).fit(&x).is_err());
        assert!(PCA::builder(NComponents::Count(0)).fit(&x).is_err());
        assert!(PCA::builder(NComponents::VarianceRatio(1.0))
            .fit(&x)
            .is_err());
        assert!(PCA::builder(NComponents::VarianceRatio(f64::NAN))
            .fit(&x)
            .is_err());
        let mut pca = PCA::builder(NComponents::Count(2));
        pca.fit(&x).unwrap();
        assert!(pca.transform(&Array2::<f64>::zeros((2, 4))).is_err());
        assert!(pca
            .inverse_transform(&Array2::<f64>::zeros((2, 3)))
            .is_err());
    }

    /// Non-finite values are found from the column sums, and named with their place, in
    /// every form a sum can hide: one NaN, one infinity, two infinities of opposite signs
    /// (sum NaN), and, in a wide matrix, a value in the last column. Finite values whose
    /// sum overflows are not mistaken for them: the range check refuses those.
    #[test]
    fn non_finite_values_are_refused_by_name() {
        let message = |x: Array2<f64>| match PCA::builder(NComponents::All).fit_checked(&x) {
            Err(Error::InvalidInput(m)) => m,
            other => panic!("expected an input error, got {:?}", other.map(|_| ())),
        };
        let base = || Array2::from_shape_fn((6, 3), |(i, j)| (i * 3 + j) as f64 * 0.5 - 2.0);
        for (at, values) in [
            ((2, 1), vec![f64::NAN]),
            ((4, 0), vec![f64::INFINITY]),
            ((1, 2), vec![f64::INFINITY, f64::NEG_INFINITY]),
        ] {
            let mut x = base();
            x[at] = values[0];
            if let Some(&other) = values.get(1) {
                x[(at.0 + 2, at.1)] = other;
            }
            let m = message(x);
            assert!(
                m.contains("NaN or infinity")
                    && m.contains(&format!("row {}, column {}", at.0, at.1)),
                "{m}"
            );
        }
        let mut wide = Array2::from_shape_fn((3, 7), |(i, j)| (i + j) as f64);
        wide[(2, 6)] = f64::NEG_INFINITY;
        assert!(message(wide).contains("row 2, column 6"));
        let huge = Array2::from_elem((4, 2), f64::MAX / 2.0);
        match PCA::builder(NComponents::All).fit_checked(&huge) {
            Err(e) => assert!(!e.to_string().contains("NaN or infinity"), "{e}"),
            Ok(_) => panic!("sums past f64's range were fitted"),
        }
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let x = data(40);
        let mut pca = PCA::builder(NComponents::Count(2)).with_whiten(true);
        pca.fit(&x).unwrap();
        let back = PCA::from_bytes(&pca.to_bytes().unwrap()).unwrap();
        assert_eq!(back.transform(&x).unwrap(), pca.transform(&x).unwrap());
        assert!(back.whiten);
    }

    #[test]
    fn original_api_error_kinds() {
        let x = array![[1.0, 2.0], [2.0, 4.0], [3.0, 6.5]];
        assert!(matches!(PCA::new(0), Err(Error::InvalidParameter { .. })));
        assert!(matches!(
            PCA::new(3).unwrap().fit(&x),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            PCA::new(1).unwrap().fit(&array![[1.0, 2.0]]),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            PCA::new(1).unwrap().transform(&x),
            Err(Error::NotFitted(_))
        ));
        let mut pca = PCA::new(1)
            .unwrap()
            .with_svd_solver(SVDSolver::PowerIteration);
        pca.fit(&x).unwrap();
        assert_eq!(pca.get_svd_solver(), SVDSolver::PowerIteration);
        assert!(matches!(
            pca.inverse_transform(&array![[1.0, 2.0]]),
            Err(Error::DimensionMismatch {
                expected: 1,
                found: 2
            })
        ));
        assert!(matches!(
            pca.transform(&array![[f64::NAN, 1.0]]),
            Err(Error::NonFinite(_))
        ));
    }
}
