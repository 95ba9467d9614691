//! Linear discriminant analysis: a classifier with a shared within-class covariance, and a
//! supervised projection onto at most `n_classes - 1` discriminant directions. Follows
//! scikit-learn's `LinearDiscriminantAnalysis` (solvers `"svd"` and `"eigen"`, no
//! shrinkage).
//!
//! * `svd`: whiten the class-centred data by its singular values (computed here from the
//!   `d x d` Gram matrix through gemmkit, then a symmetric eigen-decomposition), then take the
//!   SVD of the weighted class means in that space. Works with singular covariances.
//! * `eigen`: the generalised eigenproblem `S_b v = λ S_w v` (between- and within-class
//!   scatter) through a Cholesky factor of `S_w`; fails when `S_w` is singular.
//!
//! The per-class sums are one blocked scan over the rows behind `tuning::reduction::scan_f64`.

use crate::error::{Result, RustymlError};
use crate::machine_learning::labels;
use crate::machine_learning::logistic_regression::accuracy;
use crate::machine_learning::validation::{check_n_features, check_xy};
use crate::math::distance::SCAN_F64;
use crate::math::{elementwise, linalg, matmul, reduction};
use crate::persistence::Persist;
use nalgebra::DMatrix;
use ndarray::{s, Array1, Array2, ArrayBase, ArrayView2, Axis, Data, Ix1, Ix2, Zip};
use serde::{Deserialize, Serialize};

/// How the discriminant directions are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LdaSolver {
    Svd,
    Eigen,
}

impl LdaSolver {
    /// `"svd"` or `"eigen"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "svd" => Ok(LdaSolver::Svd),
            "eigen" => Ok(LdaSolver::Eigen),
            other => Err(RustymlError::invalid(format!(
                "solver must be 'svd' or 'eigen', got {other:?}"
            ))),
        }
    }
}

/// Linear discriminant analysis with scikit-learn's hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LDA {
    /// Components kept by `transform` (`None`: `min(n_classes - 1, n_features)`).
    pub n_components: Option<usize>,
    pub solver: LdaSolver,
    /// Class priors (`None`: the class proportions); normalised to sum to one.
    pub priors: Option<Vec<f64>>,
    /// Singular values below this are treated as zero (`svd` solver).
    pub tol: f64,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    classes: Array1<f64>,
    priors: Array1<f64>,
    means: Array2<f64>,
    xbar: Array1<f64>,
    scalings: Array2<f64>,
    explained_variance_ratio: Array1<f64>,
    /// `1 x d` for two classes, `k x d` otherwise.
    coef: Array2<f64>,
    intercept: Array1<f64>,
    max_components: usize,
}

impl Default for LDA {
    fn default() -> Self {
        Self::new()
    }
}

impl LDA {
    /// scikit-learn's defaults: `svd` solver, all components, empirical priors, `tol = 1e-4`.
    pub fn new() -> Self {
        Self {
            n_components: None,
            solver: LdaSolver::Svd,
            priors: None,
            tol: 1e-4,
            fitted: None,
        }
    }

    pub fn with_n_components(mut self, n_components: Option<usize>) -> Self {
        self.n_components = n_components;
        self
    }

    pub fn with_solver(mut self, solver: LdaSolver) -> Self {
        self.solver = solver;
        self
    }

    pub fn with_priors(mut self, priors: Option<Vec<f64>>) -> Self {
        self.priors = priors;
        self
    }

    pub fn with_tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    fn fitted(&self) -> Result<&Fitted> {
        self.fitted
            .as_ref()
            .ok_or_else(|| RustymlError::not_fitted("LDA"))
    }

    /// Sorted distinct training labels (`classes_`).
    pub fn classes(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.classes)
    }

    /// Class means (`means_`, `n_classes x n_features`).
    pub fn means(&self) -> Option<&Array2<f64>> {
        self.fitted.as_ref().map(|f| &f.means)
    }

    /// Class priors (`priors_`).
    pub fn priors(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.priors)
    }

    /// Overall (prior-weighted) mean (`xbar_`).
    pub fn xbar(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.xbar)
    }

    /// Projection matrix (`scalings_`, `n_features x rank`).
    pub fn scalings(&self) -> Option<&Array2<f64>> {
        self.fitted.as_ref().map(|f| &f.scalings)
    }

    /// Share of the between-class variance per component (`explained_variance_ratio_`).
    pub fn explained_variance_ratio(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.explained_variance_ratio)
    }

    /// Linear decision weights (`coef_`): `1 x d` for two classes, `n_classes x d` otherwise.
    pub fn coefficients(&self) -> Option<&Array2<f64>> {
        self.fitted.as_ref().map(|f| &f.coef)
    }

    /// Intercepts (`intercept_`), one per row of the weights.
    pub fn intercept(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.intercept)
    }

    fn check_params(&self) -> Result<()> {
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            return Err(RustymlError::invalid(format!(
                "tol must be a finite number >= 0, got {}",
                self.tol
            )));
        }
        if let Some(p) = &self.priors {
            if p.iter().any(|v| !(v.is_finite() && *v >= 0.0)) || p.iter().sum::<f64>() <= 0.0 {
                return Err(RustymlError::invalid(
                    "priors must be finite, non-negative and not all zero",
                ));
            }
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and labels `y` (at least two distinct classes and
    /// more samples than classes).
    pub fn fit<S1, S2>(
        &mut self,
        x: &ArrayBase<S1, Ix2>,
        y: &ArrayBase<S2, Ix1>,
    ) -> Result<&mut Self>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        let (x, y) = (x.view(), y.view());
        self.check_params()?;
        check_xy(&x, &y)?;
        let (classes, index) = labels::encode(y, "LDA")?;
        let (n, d, k) = (x.nrows(), x.ncols(), classes.len());
        if n == k {
            return Err(RustymlError::invalid(
                "The number of samples must be more than the number of classes.",
            ));
        }
        let max_components = (k - 1).min(d);
        let max_components = match self.n_components {
            None => max_components,
            Some(c) if c <= max_components => c,
            Some(c) => {
                return Err(RustymlError::invalid(format!(
                    "n_components ({c}) cannot be larger than min(n_features, n_classes - 1) = {max_components}"
                )))
            }
        };
        let (sums, counts) = class_sums(x, &index, k);
        let priors = match &self.priors {
            None => Array1::from_iter(counts.iter().map(|&c| c as f64 / n as f64)),
            Some(p) if p.len() != k => {
                return Err(RustymlError::invalid(format!(
                    "priors has {} entries, but y has {k} classes",
                    p.len()
                )));
            }
            Some(p) => {
                let total: f64 = p.iter().sum();
                Array1::from_iter(p.iter().map(|v| v / total))
            }
        };
        let mut means = sums;
        for (mut row, &c) in means.rows_mut().into_iter().zip(&counts) {
            row /= c as f64;
        }
        let xbar = priors.dot(&means);
        let (scalings, evr, coef, intercept) = match self.solver {
            LdaSolver::Svd => self.solve_svd(x, &index, &means, &priors, &xbar, max_components)?,
            LdaSolver::Eigen => solve_eigen(x, &index, &means, &priors, max_components)?,
        };
        let (coef, intercept) = if k == 2 {
            let c = (&coef.row(1) - &coef.row(0)).insert_axis(Axis(0));
            (c, Array1::from_elem(1, intercept[1] - intercept[0]))
        } else {
            (coef, intercept)
        };
        self.fitted = Some(Fitted {
            classes,
            priors,
            means,
            xbar,
            scalings,
            explained_variance_ratio: evr,
            coef,
            intercept,
            max_components,
        });
        Ok(self)
    }

    #[allow(clippy::type_complexity)]
    fn solve_svd(
        &self,
        x: ArrayView2<f64>,
        index: &[usize],
        means: &Array2<f64>,
        priors: &Array1<f64>,
        xbar: &Array1<f64>,
        max_components: usize,
    ) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>)> {
        let (n, d, k) = (x.nrows(), x.ncols(), means.nrows());
        // Class-centred data and its per-feature spread.
        let mut xc = x.to_owned();
        for (mut row, &c) in xc.rows_mut().into_iter().zip(index) {
            row -= &means.row(c);
        }
        let std: Array1<f64> =
            Array1::from_iter(reduction::column_moments(xc.view()).iter().map(|m| {
                let s = m.variance().sqrt();
                if s == 0.0 {
                    1.0
                } else {
                    s
                }
            }));
        // Singular values and right vectors of sqrt(fac) * xc / std from its Gram matrix.
        // scikit-learn (>= 1.2) pools the within-class scatter over n, not n - k.
        let fac = 1.0 / n as f64;
        let mut gram = matmul::dot(xc.t(), xc.view())?;
        Zip::indexed(&mut gram).for_each(|(i, j), g| *g *= fac / (std[i] * std[j]));
        let (lambda, v) = linalg::symmetric_eigen(gram.view())?;
        let sing: Vec<f64> = lambda.iter().map(|&l| l.max(0.0).sqrt()).collect();
        let rank = sing.iter().filter(|&&s| s > self.tol).count();
        if rank == 0 {
            return Err(RustymlError::invalid(
                "LDA: every feature is constant within each class",
            ));
        }
        // scalings = (V[:, :rank] / std) / S[:rank]
        let scalings = Array2::from_shape_fn((d, rank), |(i, j)| v[[i, j]] / std[i] / sing[j]);
        // Weighted class means in the whitened space, then their SVD.
        let fac2 = if k == 1 { 1.0 } else { 1.0 / (k - 1) as f64 };
        let mut centred = means - xbar;
        for (mut row, &p) in centred.rows_mut().into_iter().zip(priors) {
            row *= (n as f64 * p * fac2).sqrt();
        }
        let xm = matmul::dot(centred.view(), scalings.view())?;
        let svd = nalgebra::SVD::new(linalg::to_nalgebra(xm.view()), false, true);
        let s2: Vec<f64> = svd.singular_values.iter().map(|s| s * s).collect();
        let total: f64 = s2.iter().sum();
        let evr = Array1::from_iter(s2.iter().take(max_components).map(|v| v / total));
        let s0 = svd.singular_values.iter().copied().fold(0.0f64, f64::max);
        let rank2 = svd
            .singular_values
            .iter()
            .filter(|&&s| s > self.tol * s0)
            .count();
        let vt = linalg::from_nalgebra(svd.v_t.as_ref().expect("v_t requested"));
        let scalings = matmul::dot(scalings.view(), vt.slice(s![..rank2, ..]).t())?;
        let coef_small = matmul::dot((means - xbar).view(), scalings.view())?;
        let mut intercept = Array1::from_iter(
            coef_small
                .rows()
                .into_iter()
                .zip(priors)
                .map(|(r, &p)| -0.5 * r.dot(&r) + p.ln()),
        );
        let coef = matmul::dot(coef_small.view(), scalings.t())?;
        intercept -= &coef.dot(xbar);
        Ok((scalings, evr, coef, intercept))
    }

    /// Class scores (`decision_function`): `n x 1` for two classes (positive favours
    /// `classes[1]`), `n x n_classes` otherwise.
    pub fn decision_function<S: Data<Elem = f64>>(
        &self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        let x = x.view();
        check_n_features(&x, f.coef.ncols(), "LDA")?;
        Ok(crate::machine_learning::logistic_regression::scores(
            x,
            f.coef.view(),
            f.intercept.view(),
        ))
    }

    /// Class probabilities (`n x n_classes`): the logistic of the binary score, the softmax of
    /// the class scores otherwise.
    pub fn predict_proba<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let mut z = self.decision_function(x)?;
        if z.ncols() == 1 {
            elementwise::sigmoid_inplace(&mut z);
            let p = z.column(0);
            Ok(ndarray::stack![Axis(1), p.mapv(|v| 1.0 - v), p])
        } else {
            elementwise::softmax_rows_inplace(z.view_mut());
            Ok(z)
        }
    }

    /// Predicted labels.
    pub fn predict<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array1<f64>> {
        let z = self.decision_function(x)?;
        let classes = &self.fitted()?.classes;
        if z.ncols() == 1 {
            Ok(z.column(0)
                .mapv(|v| if v > 0.0 { classes[1] } else { classes[0] }))
        } else {
            Ok(labels::decode(classes, &labels::row_argmax(z.view())))
        }
    }

    /// Project onto the discriminant directions (`n x n_components`).
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        let x = x.view();
        check_n_features(&x, f.means.ncols(), "LDA")?;
        let keep = f.max_components.min(f.scalings.ncols());
        let w = f.scalings.slice(s![.., ..keep]);
        let projected = matmul::dot_par(x, w, matmul::nested_parallelism())?;
        Ok(match self.solver {
            // (x - xbar) W = x W - xbar W
            LdaSolver::Svd => projected - &f.xbar.dot(&w),
            LdaSolver::Eigen => projected,
        })
    }

    /// Fit, then project the training data.
    pub fn fit_transform<S1, S2>(
        &mut self,
        x: &ArrayBase<S1, Ix2>,
        y: &ArrayBase<S2, Ix1>,
    ) -> Result<Array2<f64>>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        self.fit(x, y)?;
        self.transform(x)
    }

    /// Mean accuracy on `x` against `y`.
    pub fn score<S1, S2>(&self, x: &ArrayBase<S1, Ix2>, y: &ArrayBase<S2, Ix1>) -> Result<f64>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        accuracy(self.predict(x)?.view(), y.view())
    }
}

/// Per-class row sums (`k x d`) and counts: one blocked scan over the rows, in parallel behind
/// [`SCAN_F64`] (work = `n * d`); blocks depend only on the shape, so the bits do not depend on
/// the path.
fn class_sums(x: ArrayView2<f64>, index: &[usize], k: usize) -> (Array2<f64>, Vec<usize>) {
    let (n, d) = x.dim();
    let rows_per_block = (reduction::BLOCK / d.max(1)).max(1);
    reduction::blocked_fold(
        n,
        rows_per_block,
        &SCAN_F64,
        n.saturating_mul(d),
        (Array2::zeros((k, d)), vec![0usize; k]),
        |rows| {
            let mut sums = Array2::<f64>::zeros((k, d));
            let mut counts = vec![0usize; k];
            for i in rows {
                let c = index[i];
                let mut acc = sums.row_mut(c);
                acc += &x.row(i);
                counts[c] += 1;
            }
            (sums, counts)
        },
        |(mut s, mut c), (s2, c2)| {
            s += &s2;
            for (a, b) in c.iter_mut().zip(c2) {
                *a += b;
            }
            (s, c)
        },
    )
}

/// Biased covariance of the rows of `x` around `mean`, through the product.
fn scatter(x: ArrayView2<f64>, mean: ndarray::ArrayView1<f64>) -> Result<Array2<f64>> {
    let centred = &x - &mean;
    let mut c = matmul::dot(centred.t(), centred.view())?;
    c /= x.nrows() as f64;
    Ok(c)
}

#[allow(clippy::type_complexity)]
fn solve_eigen(
    x: ArrayView2<f64>,
    index: &[usize],
    means: &Array2<f64>,
    priors: &Array1<f64>,
    max_components: usize,
) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>)> {
    let (d, k) = (x.ncols(), means.nrows());
    // Within-class scatter: prior-weighted class covariances.
    let mut sw = Array2::<f64>::zeros((d, d));
    for c in 0..k {
        let rows: Vec<usize> = (0..index.len()).filter(|&i| index[i] == c).collect();
        let xg = x.select(Axis(0), &rows);
        sw.scaled_add(priors[c], &scatter(xg.view(), means.row(c))?);
    }
    let overall = Array1::from_iter(reduction::column_moments(x).iter().map(|m| m.mean));
    let st = scatter(x, overall.view())?;
    let sb = &st - &sw;
    // S_b v = λ S_w v  =>  (L⁻¹ S_b L⁻ᵀ) u = λ u,  v = L⁻ᵀ u  (so vᵀ S_w v = I).
    let chol = nalgebra::Cholesky::new(linalg::to_nalgebra(sw.view())).ok_or_else(|| {
        RustymlError::computation(
            "LDA eigen solver: the within-class covariance is singular (a feature is constant within classes \
             or features are collinear); use solver='svd'",
        )
    })?;
    let l = chol.l();
    let a = l
        .solve_lower_triangular(&linalg::to_nalgebra(sb.view()))
        .expect("Cholesky factor is invertible");
    let m: DMatrix<f64> = l
        .solve_lower_triangular(&a.transpose())
        .expect("Cholesky factor is invertible");
    let m = linalg::from_nalgebra(&((&m + &m.transpose()) * 0.5));
    let (evals, u) = linalg::symmetric_eigen(m.view())?;
    let evecs = linalg::from_nalgebra(
        &l.tr_solve_lower_triangular(&linalg::to_nalgebra(u.view()))
            .expect("Cholesky factor is invertible"),
    );
    let total: f64 = evals.sum();
    let evr = Array1::from_iter(evals.iter().take(max_components).map(|v| v / total));
    // coef = means V Vᵀ, intercept = -0.5 diag(means coefᵀ) + log(priors)
    let mv = matmul::dot(means.view(), evecs.view())?;
    let coef = matmul::dot(mv.view(), evecs.t())?;
    let intercept =
        Array1::from_iter((0..k).map(|c| -0.5 * means.row(c).dot(&coef.row(c)) + priors[c].ln()));
    Ok((evecs, evr, coef, intercept))
}

impl Persist for LDA {
    const MODEL_NAME: &'static str = "LDA";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::array;

    /// Three Gaussian-like classes in 3-D with a shared, correlated spread.
    fn data(per_class: usize) -> (Array2<f64>, Array1<f64>) {
        let centers = [[0.0, 0.0, 0.0], [3.0, 1.0, -1.0], [1.0, 4.0, 2.0]];
        let n = per_class * 3;
        let x = Array2::from_shape_fn((n, 3), |(i, j)| {
            let u = ((i * 7919 + 13) % 1009) as f64 / 1009.0 - 0.5;
            let v = ((i * 104_729 + 7) % 997) as f64 / 997.0 - 0.5;
            let w = ((i * 31 + 3) % 101) as f64 / 101.0 - 0.5;
            let noise = [u + 0.5 * v, v - 0.3 * w, w + 0.2 * u][j];
            centers[i % 3][j] + 2.0 * noise
        });
        let y = Array1::from_iter((0..n).map(|i| (i % 3) as f64));
        (x, y)
    }

    /// Independent oracle: the textbook LDA discriminant with a pooled covariance,
    /// `delta_c(x) = xᵀ Σ⁻¹ μ_c - 0.5 μ_cᵀ Σ⁻¹ μ_c + log π_c`, where, as in scikit-learn, the
    /// `svd` solver pools the class scatter over `n` and the `eigen` solver averages the
    /// biased class covariances with the priors (the same matrix for empirical priors). The
    /// `svd` solver writes the discriminant around the overall mean `xbar` (x and μ_c shifted
    /// by it), which moves every class score of a sample by the same amount.
    #[test]
    fn decision_functions_match_the_textbook_discriminant() {
        let (x, y) = data(40);
        let n = 120.0;
        let overall = x.mean_axis(Axis(0)).unwrap();
        for (solver, denom, centred) in [(LdaSolver::Svd, n, true), (LdaSolver::Eigen, n, false)] {
            let shift = if centred {
                overall.clone()
            } else {
                Array1::zeros(3)
            };
            let mut m = LDA::new().with_solver(solver);
            m.fit(&x, &y).unwrap();
            let means = m.means().unwrap();
            let mut sigma = Array2::<f64>::zeros((3, 3));
            for c in 0..3 {
                let rows: Vec<usize> = (0..x.nrows()).filter(|&i| y[i] == c as f64).collect();
                let xc = x.select(Axis(0), &rows) - means.row(c);
                sigma += &(xc.t().dot(&xc) / denom);
            }
            let dec = m.decision_function(&x).unwrap();
            for c in 0..3 {
                let mu = &means.row(c) - &shift;
                let sinv_mu = linalg::solve_symmetric(sigma.view(), mu.view()).unwrap();
                for i in 0..10 {
                    let xi = &x.row(i) - &shift;
                    let want = xi.dot(&sinv_mu) - 0.5 * mu.dot(&sinv_mu) + (1.0f64 / 3.0).ln();
                    // Both sides are O(10) sums of well-conditioned 3x3 solves.
                    assert!(
                        (dec[[i, c]] - want).abs() < 1e-9,
                        "{solver:?}: {} vs {want}",
                        dec[[i, c]]
                    );
                }
            }
            assert!(m.score(&x, &y).unwrap() > 0.9);
        }
    }

    #[test]
    fn svd_and_eigen_solvers_agree() {
        // With empirical priors both solvers pool the same covariance, so they describe the
        // same model; the svd form is centred on xbar, which shifts all class scores of a
        // sample by one amount. Score differences between classes therefore agree.
        let (x, y) = data(60);
        let mut a = LDA::new();
        a.fit(&x, &y).unwrap();
        let mut b = LDA::new().with_solver(LdaSolver::Eigen);
        b.fit(&x, &y).unwrap();
        let (da, db) = (
            a.decision_function(&x).unwrap(),
            b.decision_function(&x).unwrap(),
        );
        for i in 0..x.nrows() {
            for c in 1..3 {
                let (u, v) = (da[[i, c]] - da[[i, 0]], db[[i, c]] - db[[i, 0]]);
                // O(10) scores from well-conditioned 3x3 factorisations.
                assert!((u - v).abs() < 1e-9, "{u} vs {v}");
            }
        }
        assert_eq!(a.predict(&x).unwrap(), b.predict(&x).unwrap());
        let (ra, rb) = (
            a.explained_variance_ratio().unwrap(),
            b.explained_variance_ratio().unwrap(),
        );
        assert_eq!(ra.len(), 2);
        for (u, v) in ra.iter().zip(rb) {
            assert!((u - v).abs() < 1e-10, "{ra} vs {rb}");
        }
    }

    #[test]
    fn transform_whitens_the_within_class_spread() {
        let (x, y) = data(50);
        let mut m = LDA::new();
        let z = m.fit_transform(&x, &y).unwrap();
        assert_eq!(z.dim(), (150, 2));
        // In the projected space the pooled within-class covariance (normalised by n) is
        // the identity, and the projected overall mean is zero.
        let mut within = Array2::<f64>::zeros((2, 2));
        for c in 0..3 {
            let rows: Vec<usize> = (0..150).filter(|&i| y[i] == c as f64).collect();
            let zc = z.select(Axis(0), &rows);
            let mean = zc.mean_axis(Axis(0)).unwrap();
            let centred = zc - &mean;
            within += &centred.t().dot(&centred);
        }
        within /= 150.0;
        for i in 0..2 {
            for j in 0..2 {
                assert!(
                    (within[[i, j]] - if i == j { 1.0 } else { 0.0 }).abs() < 1e-9,
                    "{within}"
                );
            }
        }
        assert!(z.mean_axis(Axis(0)).unwrap().iter().all(|v| v.abs() < 1e-9));
        let ratio = m.explained_variance_ratio().unwrap();
        assert!((ratio.sum() - 1.0).abs() < 1e-12 && ratio[0] >= ratio[1]);
        let one = LDA::new()
            .with_n_components(Some(1))
            .fit_transform(&x, &y)
            .unwrap();
        assert_eq!(one.ncols(), 1);
    }

    #[test]
    fn binary_problem_has_one_weight_row_and_probabilities() {
        let (x, y) = data(30);
        let keep: Vec<usize> = (0..x.nrows()).filter(|&i| y[i] != 2.0).collect();
        let (xb, yb) = (x.select(Axis(0), &keep), y.select(Axis(0), &keep));
        let mut m = LDA::new();
        m.fit(&xb, &yb).unwrap();
        assert_eq!(m.coefficients().unwrap().dim(), (1, 3));
        let p = m.predict_proba(&xb).unwrap();
        let pred = m.predict(&xb).unwrap();
        for i in 0..xb.nrows() {
            assert!((p.row(i).sum() - 1.0).abs() < 1e-12);
            assert_eq!(pred[i], if p[[i, 1]] > 0.5 { 1.0 } else { 0.0 });
        }
    }

    #[test]
    fn singular_covariance_works_with_svd_and_is_refused_by_eigen() {
        let (x, y) = data(20);
        let x4 = ndarray::concatenate![Axis(1), x, Array2::<f64>::zeros((60, 1))];
        let mut m = LDA::new();
        m.fit(&x4, &y).unwrap();
        assert!(m.score(&x4, &y).unwrap() > 0.9);
        let err = LDA::new()
            .with_solver(LdaSolver::Eigen)
            .fit(&x4, &y)
            .unwrap_err();
        assert!(matches!(err, RustymlError::Computation { .. }));
    }

    #[test]
    fn class_sums_agree_bitwise_serial_and_parallel() {
        let x = Array2::from_shape_fn((30_000, 12), |(i, j)| {
            ((i * 12 + j) as f64 * 0.61).sin() * 1e3f64.powi((j % 3) as i32)
        });
        let index: Vec<usize> = (0..30_000).map(|i| (i * 7) % 5).collect();
        let (s, p) = serial_and_parallel(&SCAN_F64, || class_sums(x.view(), &index, 5));
        assert_eq!(s.1, p.1);
        assert_eq!(
            s.0.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.0.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let (x, y) = data(5);
        assert!(matches!(
            LDA::new().transform(&x),
            Err(RustymlError::NotFitted(_))
        ));
        assert!(LDA::new().with_n_components(Some(3)).fit(&x, &y).is_err());
        assert!(LDA::new().fit(&x, &Array1::from_elem(15, 1.0)).is_err());
        assert!(LDA::new()
            .fit(&array![[1.0], [2.0]], &array![0.0, 1.0])
            .is_err());
        assert!(LDA::new()
            .with_priors(Some(vec![0.5, 0.5]))
            .fit(&x, &y)
            .is_err());
        assert!(LDA::new()
            .with_priors(Some(vec![-1.0, 1.0, 1.0]))
            .fit(&x, &y)
            .is_err());
        assert!(LDA::new().fit(&x, &y.slice(s![..14])).is_err());
        let mut m = LDA::new();
        m.fit(&x, &y).unwrap();
        assert!(m.transform(&array![[1.0, 2.0]]).is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y) = data(10);
        let mut m = LDA::new();
        m.fit(&x, &y).unwrap();
        let back = LDA::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(back.transform(&x).unwrap(), m.transform(&x).unwrap());
        assert_eq!(back.predict(&x).unwrap(), m.predict(&x).unwrap());
    }
}
