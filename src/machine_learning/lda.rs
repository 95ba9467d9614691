//! Linear discriminant analysis: a classifier with a shared within-class covariance, and a
//! supervised projection onto at most `n_classes - 1` discriminant directions.
//!
//! * `SVD`: whiten the class-centred data by its singular values, then take the SVD of the
//!   weighted class means in that space (scikit-learn's `svd` solver). Works with singular
//!   covariances. The singular values come from a Householder QR of the scaled data and the
//!   SVD of its `d x d` triangle: never from the Gram matrix `XᵀX`, whose eigen-decomposition
//!   squares the condition number and so loses the small singular values (and with them the
//!   whitening) to rounding on ill-conditioned, badly scaled data.
//! * `Eigen` (and `LSQR`, the same closed form here): the generalised eigenproblem
//!   `S_b v = λ S_w v` through a Cholesky factor of `S_w` (optionally shrunk); fails when
//!   `S_w` is singular.
//!
//! Two options ([`LdaOptions`]) tell the original API's LDA from scikit-learn's
//! `LinearDiscriminantAnalysis`. The original ([`LDA::new`]) pools the within-class covariance
//! over `n - n_classes` (projected classes have unit within-class variance with that
//! denominator) and centres every solver's `transform` on the overall mean; scikit-learn
//! ([`LDA::with_defaults`]) weights the class covariances by the priors (over `n` in the `svd`
//! solver) and centres only the `svd` projection. Each door has its own fit and class methods:
//! [`LDA::fit`] takes integer labels, `decision_function` gives one column per class;
//! [`LDA::fit_labels`] takes any numeric labels in scikit-learn's terms, `decision_scores`
//! gives binary problems one column.
//!
//! The per-class sums are one blocked scan over the rows behind `tuning::reduction::scan_f64`.

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::labels;
#[cfg(test)]
use crate::machine_learning::logistic_regression::accuracy;
use crate::machine_learning::validation::{
    check_xy, require_data, require_data_width, require_non_negative, require_nonzero,
};
use crate::math::distance::SCAN_F64;
use crate::math::{elementwise, linalg, matmul, reduction};
use crate::persistence::Persist;
use nalgebra::DMatrix;
use ndarray::{s, Array1, Array2, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2, Axis, Zip};
use serde::{Deserialize, Serialize};

/// How the discriminant directions are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum DiscriminantSolver {
    /// SVD of the scaled class-centred data (no covariance matrix is formed).
    #[default]
    SVD,
    /// Generalised eigenproblem of the between- and within-class covariances.
    Eigen,
    /// Least-squares closed form `S_w⁻¹ μ` (computed like `Eigen`).
    LSQR,
}

/// How the within-class covariance is pooled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScatterPooling {
    /// The class scatter over `n - n_classes` degrees of freedom (the original API).
    DegreesOfFreedom,
    /// The class covariances weighted by the priors; the `svd` solver scales over `n`
    /// (scikit-learn).
    Priors,
}

/// Which solvers' projections `transform` centres on the overall mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectionCentring {
    /// Every solver's (the original API).
    Always,
    /// The `svd` solver's only (scikit-learn).
    SvdOnly,
}

crate::machine_learning::options::paired_options! {
    /// The options that tell the original API's LDA from scikit-learn's; saved as one byte
    /// (see [`crate::machine_learning::options`]).
    pub struct LdaOptions ("LDA") {
        pub pooling: ScatterPooling { DegreesOfFreedom, Priors },
        pub centring: ProjectionCentring { Always, SvdOnly },
    }
    /// The original API's: pooled over `n - n_classes`, every projection centred.
    ORIGINAL;
    /// scikit-learn's: prior-weighted covariances, only the `svd` projection centred.
    SCIKIT_LEARN;
}

/// Shrinkage of the within-class covariance towards `(trace / d) I`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
pub enum Shrinkage {
    /// The Ledoit-Wolf intensity (on standardised features, as scikit-learn).
    Auto,
    /// A fixed intensity in `[0, 1]`.
    Manual(f64),
}

/// Linear discriminant analysis.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LDA {
    /// Components kept by `transform` (`None`: `min(n_classes - 1, n_features)`).
    n_components: Option<usize>,
    solver: DiscriminantSolver,
    shrinkage: Option<Shrinkage>,
    /// Class priors (`None`: the class proportions); normalised to sum to one.
    priors: Option<Vec<f64>>,
    /// Singular values below this are treated as zero (`SVD` solver).
    tol: f64,
    options: LdaOptions,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    classes: Array1<f64>,
    /// The labels as given to the original API's `fit`.
    int_classes: Option<Array1<i32>>,
    priors: Array1<f64>,
    means: Array2<f64>,
    xbar: Array1<f64>,
    scalings: Array2<f64>,
    explained_variance_ratio: Array1<f64>,
    /// Per class: `k x d` and `k` (the decision function's columns).
    class_coef: Array2<f64>,
    class_intercept: Array1<f64>,
    /// scikit-learn's `coef_`: `1 x d` for two classes (class 1 minus class 0), else `k x d`.
    coef: Array2<f64>,
    intercept: Array1<f64>,
    max_components: usize,
}

impl Default for LDA {
    /// All components, `SVD`, no shrinkage.
    fn default() -> Self {
        Self {
            n_components: None,
            solver: DiscriminantSolver::SVD,
            shrinkage: None,
            priors: None,
            tol: 1e-4,
            options: LdaOptions::ORIGINAL,
            fitted: None,
        }
    }
}

impl LDA {
    /// Keep `n_components` discriminant directions (0 -> `InvalidParameter`; more than
    /// `min(n_classes - 1, n_features)` is refused at `fit` with `InvalidInput`).
    pub fn new(n_components: usize) -> Result<Self> {
        let model = Self {
            n_components: Some(n_components),
            ..Self::default()
        };
        model.check_params()?;
        Ok(model)
    }

    crate::accessors::builder_setters! {
        with_solver(solver: DiscriminantSolver),
        with_options(options: LdaOptions),
        with_n_components(n_components: Option<usize>),
        with_priors(priors: Option<Vec<f64>>),
        with_tol(tol: f64),
    }

    crate::accessors::field_getters! {
        get_n_components -> n_components: Option<usize>,
        get_solver -> solver: DiscriminantSolver,
        get_shrinkage -> shrinkage: Option<Shrinkage>,
        get_options -> options: LdaOptions,
    }

    crate::accessors::checked_setters! {
        /// Shrink the within-class covariance (`Manual` intensity outside `[0, 1]` or not
        /// finite -> `InvalidParameter`). With the `SVD` solver a non-zero shrinkage uses the
        /// covariance (eigen) path, since the SVD never forms the covariance.
        with_shrinkage(shrinkage: Some(Shrinkage)),
    }

    /// scikit-learn's `LinearDiscriminantAnalysis` defaults (its [`LdaOptions`], `svd`, all
    /// components, empirical priors, `tol = 1e-4`); parameters are checked at `fit`.
    pub fn with_defaults() -> Self {
        Self {
            options: LdaOptions::SCIKIT_LEARN,
            ..Self::default()
        }
    }

    /// The distinct training labels, sorted (original API fits).
    pub fn get_classes(&self) -> Option<&Array1<i32>> {
        self.fitted.as_ref().and_then(|f| f.int_classes.as_ref())
    }

    pub fn get_priors(&self) -> Option<&Array1<f64>> {
        self.priors()
    }

    pub fn get_means(&self) -> Option<&Array2<f64>> {
        self.means()
    }

    /// The prior-weighted overall mean (scikit-learn's `xbar_`).
    pub fn get_overall_mean(&self) -> Option<&Array1<f64>> {
        self.xbar()
    }

    /// The projection matrix (`n_features x rank`; scikit-learn's `scalings_`).
    pub fn get_projection(&self) -> Option<&Array2<f64>> {
        self.scalings()
    }

    fn fitted(&self) -> Result<&Fitted> {
        fitted_state(&self.fitted, "LDA")
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Sorted distinct training labels (`classes_`).
        classes -> &classes: Array1<f64>,
        /// Class means (`means_`, `n_classes x n_features`).
        means -> &means: Array2<f64>,
        /// Class priors (`priors_`).
        priors -> &priors: Array1<f64>,
        /// Overall (prior-weighted) mean (`xbar_`).
        xbar -> &xbar: Array1<f64>,
        /// Projection matrix (`scalings_`, `n_features x rank`).
        scalings -> &scalings: Array2<f64>,
        /// Share of the between-class variance per component (`explained_variance_ratio_`).
        explained_variance_ratio -> &explained_variance_ratio: Array1<f64>,
        /// Linear decision weights (`coef_`): `1 x d` for two classes, `n_classes x d` otherwise.
        coefficients -> &coef: Array2<f64>,
        /// Intercepts (`intercept_`), one per row of the weights.
        intercept -> &intercept: Array1<f64>,
    }

    /// The one check of LDA's hyper-parameters, for every door (a component count the data
    /// cannot give is the data's fault, refused at `fit`).
    pub fn check_params(&self) -> Result<()> {
        if let Some(count) = self.n_components {
            require_nonzero("n_components", count)?;
        }
        if let Some(Shrinkage::Manual(alpha)) = self.shrinkage {
            if !(alpha.is_finite() && (0.0..=1.0).contains(&alpha)) {
                return Err(Error::invalid_parameter(
                    "shrinkage",
                    format!("must be a finite number in [0, 1], got {alpha}"),
                ));
            }
        }
        require_non_negative("tol", self.tol)?;
        if let Some(p) = &self.priors {
            if p.iter().any(|v| !(v.is_finite() && *v >= 0.0)) || p.iter().sum::<f64>() <= 0.0 {
                return Err(Error::invalid_parameter(
                    "priors",
                    "must be finite, non-negative and not all zero",
                ));
            }
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and integer labels `y`.
    ///
    /// Errors: empty `x` -> `EmptyInput`; NaN/inf -> `NonFinite`; `y` of another length ->
    /// `DimensionMismatch`; fewer than two classes, no more samples than classes, a class
    /// with a single sample, or too many components -> `InvalidInput`.
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<i32>) -> Result<&mut Self> {
        let x = x.view();
        require_data(&x, "x")?;
        if y.len() != x.nrows() {
            return Err(Error::dimension_mismatch(x.nrows(), y.len()));
        }
        let mut counts = std::collections::BTreeMap::<i32, usize>::new();
        for &label in y.iter() {
            *counts.entry(label).or_default() += 1;
        }
        if counts.len() < 2 {
            return Err(Error::invalid_input(
                "LDA needs at least 2 distinct classes",
            ));
        }
        if let Some((label, _)) = counts.iter().find(|(_, &c)| c < 2) {
            return Err(Error::invalid_input(format!(
                "class {label} has a single sample; every class needs at least 2"
            )));
        }
        let yf = y.mapv(f64::from);
        self.fit_impl(x, yf.view())?;
        if let Some(f) = self.fitted.as_mut() {
            f.int_classes = Some(counts.keys().copied().collect());
        }
        Ok(self)
    }

    /// scikit-learn's fit: any numeric labels, its checks and messages.
    pub fn fit_labels(&mut self, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Result<()> {
        self.check_params()?;
        check_xy(&x, &y)?;
        self.fit_impl(x, y)
    }

    fn fit_impl(&mut self, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Result<()> {
        let (classes, index) = labels::encode(y, "LDA")?;
        let (n, d, k) = (x.nrows(), x.ncols(), classes.len());
        if n == k {
            return Err(Error::invalid_input(
                "The number of samples must be more than the number of classes.",
            ));
        }
        let max_components = (k - 1).min(d);
        let max_components = match self.n_components {
            None => max_components,
            Some(c) if c <= max_components => c,
            Some(c) => {
                return Err(Error::invalid_input(format!(
                    "n_components ({c}) cannot be larger than min(n_features, n_classes - 1) = {max_components}"
                )))
            }
        };
        let (sums, counts) = class_sums(x, &index, k);
        let priors = match &self.priors {
            None => Array1::from_iter(counts.iter().map(|&c| c as f64 / n as f64)),
            Some(p) if p.len() != k => {
                return Err(Error::invalid_input(format!(
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
        let pool = match self.options.pooling {
            ScatterPooling::Priors => n,
            ScatterPooling::DegreesOfFreedom => n - k,
        } as f64;
        let shrink = match self.shrinkage {
            Some(Shrinkage::Manual(0.0)) => None,
            other => other,
        };
        let (scalings, evr, class_coef, class_intercept) =
            if self.solver == DiscriminantSolver::SVD && shrink.is_none() {
                self.solve_svd(x, &index, &means, &priors, &xbar, pool, max_components)?
            } else {
                solve_eigen(
                    x,
                    &index,
                    &means,
                    &priors,
                    (self.options.pooling == ScatterPooling::DegreesOfFreedom).then_some(pool),
                    shrink,
                    max_components,
                )?
            };
        let (coef, intercept) = if k == 2 {
            let c = (&class_coef.row(1) - &class_coef.row(0)).insert_axis(Axis(0));
            (
                c,
                Array1::from_elem(1, class_intercept[1] - class_intercept[0]),
            )
        } else {
            (class_coef.clone(), class_intercept.clone())
        };
        self.fitted = Some(Fitted {
            classes,
            int_classes: None,
            priors,
            means,
            xbar,
            scalings,
            explained_variance_ratio: evr,
            class_coef,
            class_intercept,
            coef,
            intercept,
            max_components,
        });
        Ok(())
    }

    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn solve_svd(
        &self,
        x: ArrayView2<f64>,
        index: &[usize],
        means: &Array2<f64>,
        priors: &Array1<f64>,
        xbar: &Array1<f64>,
        pool: f64,
        max_components: usize,
    ) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>)> {
        let (n, k) = (x.nrows(), means.nrows());
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
        // Singular values and right vectors of sqrt(1 / pool) * xc / std, from the data
        // itself (QR, then the SVD of the triangle), not from its Gram matrix.
        let fac = (1.0 / pool).sqrt();
        Zip::from(xc.rows_mut()).for_each(|mut row| {
            Zip::from(&mut row)
                .and(&std)
                .for_each(|v, &s| *v *= fac / s);
        });
        let (sing, vt) = right_singular(xc)?;
        let rank = sing.iter().filter(|&&s| s > self.tol).count();
        if rank == 0 {
            return Err(Error::invalid_input(
                "LDA: every feature is constant within each class",
            ));
        }
        // scalings = (V[:, :rank] / std) / S[:rank]
        let d = std.len();
        let scalings = Array2::from_shape_fn((d, rank), |(i, j)| vt[[j, i]] / std[i] / sing[j]);
        // Weighted class means in the whitened space, then their SVD.
        let fac2 = if k == 1 { 1.0 } else { 1.0 / (k - 1) as f64 };
        let mut centred = means - xbar;
        for (mut row, &p) in centred.rows_mut().into_iter().zip(priors) {
            row *= (n as f64 * p * fac2).sqrt();
        }
        let xm = matmul::dot(centred.view(), scalings.view())?;
        let (sing2, vt2) = right_singular(xm)?;
        let s2: Vec<f64> = sing2.iter().map(|s| s * s).collect();
        let total: f64 = s2.iter().sum();
        let evr = Array1::from_iter(s2.iter().take(max_components).map(|v| v / total));
        let s0 = sing2.first().copied().unwrap_or(0.0);
        let rank2 = sing2.iter().filter(|&&s| s > self.tol * s0).count();
        let scalings = matmul::dot(scalings.view(), vt2.slice(s![..rank2, ..]).t())?;
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

    /// The class scores of the original API: `n x n_classes`, `x · coefᵀ + intercept` per
    /// class (the posterior log-odds up to a per-sample constant).
    pub fn decision_function(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        let x = x.view();
        self.check_width(&x, f)?;
        Ok(crate::machine_learning::logistic_regression::scores(
            x,
            f.class_coef.view(),
            f.class_intercept.view(),
        ))
    }

    fn check_width(&self, x: &ArrayView2<f64>, f: &Fitted) -> Result<()> {
        require_data_width(x, f.means.ncols(), "x")
    }

    /// scikit-learn's `decision_function`: `n x 1` for two classes (positive favours
    /// `classes[1]`), `n x n_classes` otherwise.
    pub fn decision_scores(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        self.check_width(&x, f)?;
        Ok(crate::machine_learning::logistic_regression::scores(
            x,
            f.coef.view(),
            f.intercept.view(),
        ))
    }

    /// Class probabilities (`n x n_classes`): the softmax of the class scores.
    pub fn predict_proba(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let mut z = self.decision_function(x)?;
        elementwise::softmax_rows_inplace(z.view_mut());
        Ok(z)
    }

    /// scikit-learn's `predict_proba`: the logistic of the binary score, the softmax of the
    /// class scores otherwise.
    pub fn class_probabilities(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let mut z = self.decision_scores(x)?;
        if z.ncols() == 1 {
            elementwise::sigmoid_inplace(&mut z);
            let p = z.column(0);
            Ok(ndarray::stack![Axis(1), p.mapv(|v| 1.0 - v), p])
        } else {
            elementwise::softmax_rows_inplace(z.view_mut());
            Ok(z)
        }
    }

    /// Predicted labels (the class with the largest score).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<i32>> {
        let z = self.decision_function(x)?;
        let f = self.fitted()?;
        let idx = labels::row_argmax(z.view());
        match &f.int_classes {
            Some(c) => Ok(idx.iter().map(|&i| c[i]).collect()),
            None => Ok(labels::decode(&f.classes, &idx).mapv(|v| v as i32)),
        }
    }

    /// scikit-learn's `predict` (labels as given to the Python layer's fit).
    pub fn predict_labels(&self, x: ArrayView2<f64>) -> Result<Array1<f64>> {
        let z = self.decision_scores(x)?;
        Ok(labels::from_scores(
            &self.fitted()?.classes,
            z.view(),
            false,
        ))
    }

    /// Project onto the discriminant directions (`n x n_components`).
    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        let x = x.view();
        self.check_width(&x, f)?;
        let keep = f.max_components.min(f.scalings.ncols());
        let w = f.scalings.slice(s![.., ..keep]);
        let projected = matmul::dot_par(x, w, matmul::nested_parallelism())?;
        let centred = self.options.centring == ProjectionCentring::Always
            || self.solver == DiscriminantSolver::SVD;
        Ok(if centred {
            // (x - xbar) W = x W - xbar W
            projected - &f.xbar.dot(&w)
        } else {
            projected
        })
    }

    /// Fit, then project the training data.
    pub fn fit_transform(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<i32>) -> Result<Array2<f64>> {
        self.fit(x, y)?;
        self.transform(x)
    }

    /// Mean accuracy on `x` against `y` (the unit tests' check).
    #[cfg(test)]
    pub fn score(&self, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Result<f64> {
        accuracy(self.predict_labels(x)?.view(), y)
    }
}

crate::machine_learning::linear_model::supervised_traits!(LDA, i32, Array1<i32>);
crate::machine_learning::path_persistence!(LDA);

/// Singular values (descending) and right singular vectors (rows of `Vᵀ`, `min(n, d) x d`)
/// of `a`. A tall `a` is first reduced to the triangle of its Householder QR (same singular
/// values and right vectors), so the SVD runs on a `d x d` matrix.
fn right_singular(a: Array2<f64>) -> Result<(Vec<f64>, Array2<f64>)> {
    let (n, d) = a.dim();
    // nalgebra's unbounded SVD spins forever on NaN/inf (an overflowed scatter): refuse
    // non-finite input here and bound the iterations below.
    if a.iter().any(|v| !v.is_finite()) {
        return Err(overflow());
    }
    let m = linalg::to_nalgebra(a.view());
    // Reduce to a small square problem first: the SVD then only ever sees an n x n or d x d
    // triangle. A wide input (the k x rank class-mean matrix, rank-deficient by construction
    // since the weighted means sum to zero) goes through the QR of its transpose: a = RᵀQᵀ and
    // svd(Rᵀ) = U S Wᵀ give Vᵀ = Wᵀ Qᵀ. Handing the wide, rank-deficient matrix to the SVD
    // directly returned right vectors off by percents (the Intel/AMD LDA discrepancy).
    let bounded_svd = |r: DMatrix<f64>| {
        let max_niter = linalg::max_iterations(r.nrows().max(r.ncols()));
        nalgebra::SVD::try_new(r, false, true, f64::EPSILON, max_niter)
            .filter(|svd| svd.singular_values.iter().all(|v| v.is_finite()))
            .ok_or_else(overflow)
    };
    let (sv, vt) = if n >= d {
        let r = if n > d { m.qr().r() } else { m };
        let svd = bounded_svd(r)?;
        let vt = svd.v_t.expect("v_t requested");
        (svd.singular_values, vt)
    } else {
        let qr = m.transpose().qr();
        let (q, r) = (qr.q(), qr.r());
        let svd = bounded_svd(r.transpose())?;
        let wt = svd.v_t.expect("v_t requested");
        (svd.singular_values, wt * q.transpose())
    };
    if vt.iter().any(|v| !v.is_finite()) {
        return Err(overflow());
    }
    let mut order: Vec<usize> = (0..sv.len()).collect();
    order.sort_by(|&i, &j| sv[j].total_cmp(&sv[i]));
    let sing = order.iter().map(|&i| sv[i]).collect();
    let vt = Array2::from_shape_fn((order.len(), d), |(r, c)| vt[(order[r], c)]);
    Ok((sing, vt))
}

/// The scatter of the data (or a decomposition of it) is not finite: values so large that
/// their squares overflow f64.
fn overflow() -> Error {
    Error::invalid_input(
        "LDA: X has values too large for float64: the class scatter overflows (non-finite \
         intermediate results); rescale X",
    )
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

/// The generalised eigenproblem `S_b v = λ S_w v`, `vᵀ S_w v = I`. `S_w` is the
/// prior-weighted biased class covariance (scikit-learn), or with `pool = Some(m)` the class
/// scatter over `m` (the original); `shrink` moves it towards `(trace / d) I`.
#[allow(clippy::type_complexity)]
fn solve_eigen(
    x: ArrayView2<f64>,
    index: &[usize],
    means: &Array2<f64>,
    priors: &Array1<f64>,
    pool: Option<f64>,
    shrink: Option<Shrinkage>,
    max_components: usize,
) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>)> {
    let (d, k) = (x.ncols(), means.nrows());
    // Within-class scatter: prior-weighted class covariances.
    let mut sw_biased = Array2::<f64>::zeros((d, d));
    let mut scatter_sum = Array2::<f64>::zeros((d, d));
    for c in 0..k {
        let rows: Vec<usize> = (0..index.len()).filter(|&i| index[i] == c).collect();
        let xg = x.select(Axis(0), &rows);
        let cov = scatter(xg.view(), means.row(c))?;
        sw_biased.scaled_add(priors[c], &cov);
        scatter_sum.scaled_add(rows.len() as f64, &cov);
    }
    let overall = Array1::from_iter(reduction::column_moments(x).iter().map(|m| m.mean));
    let st = scatter(x, overall.view())?;
    let sb = &st - &sw_biased;
    let mut sw = match pool {
        Some(m) => scatter_sum / m,
        None => sw_biased,
    };
    if let Some(shrink) = shrink {
        let alpha = match shrink {
            Shrinkage::Manual(a) => a,
            Shrinkage::Auto => ledoit_wolf_intensity(x, index, means)?,
        };
        let mu = sw.diag().sum() / d as f64;
        sw *= 1.0 - alpha;
        sw.diag_mut().mapv_inplace(|v| v + alpha * mu);
    }
    if sw.iter().chain(sb.iter()).any(|v| !v.is_finite()) {
        return Err(overflow());
    }
    // S_b v = λ S_w v  =>  (L⁻¹ S_b L⁻ᵀ) u = λ u,  v = L⁻ᵀ u  (so vᵀ S_w v = I).
    let chol = nalgebra::Cholesky::new(linalg::to_nalgebra(sw.view())).ok_or_else(|| {
        Error::computation(
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

/// Ledoit-Wolf shrinkage intensity of the class-centred data, standardised per feature (as
/// scikit-learn's `shrinkage='auto'`): `min(1, β / δ)` with `δ = |S - μI|²_F` and
/// `β = (1/n²) Σ_i |x_i x_iᵀ - S|²_F`.
fn ledoit_wolf_intensity(x: ArrayView2<f64>, index: &[usize], means: &Array2<f64>) -> Result<f64> {
    let (n, d) = x.dim();
    let mut z = x.to_owned();
    for (mut row, &c) in z.rows_mut().into_iter().zip(index) {
        row -= &means.row(c);
    }
    let moments = reduction::column_moments(z.view());
    for (mut col, m) in z.columns_mut().into_iter().zip(&moments) {
        let sd = m.variance().sqrt();
        col.mapv_inplace(|v| (v - m.mean) / if sd > 0.0 { sd } else { 1.0 });
    }
    let mut s = matmul::dot(z.t(), z.view())?;
    s /= n as f64;
    let mu = s.diag().sum() / d as f64;
    let mut delta = 0.0;
    Zip::indexed(&s).for_each(|(i, j), &v| {
        let t = if i == j { v - mu } else { v };
        delta += t * t;
    });
    // Σ_i |x_i x_iᵀ - S|²_F = Σ_i |x_i|⁴ - n |S|²_F
    let s_norm2: f64 = s.iter().map(|v| v * v).sum();
    let fourth: f64 = z.rows().into_iter().map(|r| r.dot(&r).powi(2)).sum();
    let beta = ((fourth - n as f64 * s_norm2) / (n as f64 * n as f64)).max(0.0);
    Ok(if delta > 0.0 {
        (beta / delta).min(1.0)
    } else {
        1.0
    })
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
    /// Right singular vectors of wide, rank-deficient matrices (the LDA class-mean stage):
    /// `aᵀa = V S² Vᵀ` and orthonormal rows, to rounding of O(1) entries (1e-12 leaves
    /// room for the few hundred operations of a 13-column reduction).
    #[test]
    fn right_singular_of_wide_rank_deficient_matrices() {
        for (n, d, seed) in [
            (3usize, 13usize, 1u64),
            (3, 13, 2),
            (4, 30, 3),
            (2, 5, 4),
            (6, 4, 5),
        ] {
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
            let mut a =
                Array2::from_shape_fn((n, d), |_| rand::Rng::random_range(&mut rng, -2.0..2.0));
            // Make the rows sum to zero, as weighted centred class means do: rank n - 1.
            let mean = a.mean_axis(ndarray::Axis(0)).unwrap();
            a -= &mean;
            let (s, vt) = right_singular(a.clone()).unwrap();
            let ata = a.t().dot(&a);
            let mut recon = Array2::<f64>::zeros((d, d));
            for (r, &sv) in s.iter().enumerate() {
                let v = vt.row(r);
                for i in 0..d {
                    for j in 0..d {
                        recon[[i, j]] += sv * sv * v[i] * v[j];
                    }
                }
            }
            let err = (&ata - &recon).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(err < 1e-12, "n={n} d={d}: |aᵀa - V S² Vᵀ| = {err}");
            let gram = vt.dot(&vt.t());
            for r in 0..s.len() {
                if s[r] > 1e-12 {
                    assert!((gram[[r, r]] - 1.0).abs() < 1e-12);
                }
            }
            assert!(s.windows(2).all(|w| w[0] >= w[1]));
        }
    }

    #[test]
    fn decision_functions_match_the_textbook_discriminant() {
        let (x, y) = data(40);
        let n = 120.0;
        let overall = x.mean_axis(Axis(0)).unwrap();
        for (solver, denom, centred) in [
            (DiscriminantSolver::SVD, n, true),
            (DiscriminantSolver::Eigen, n, false),
        ] {
            let shift = if centred {
                overall.clone()
            } else {
                Array1::zeros(3)
            };
            let mut m = LDA::with_defaults().with_solver(solver);
            m.fit_labels(x.view(), y.view()).unwrap();
            let means = m.means().unwrap();
            let mut sigma = Array2::<f64>::zeros((3, 3));
            for c in 0..3 {
                let rows: Vec<usize> = (0..x.nrows()).filter(|&i| y[i] == c as f64).collect();
                let xc = x.select(Axis(0), &rows) - means.row(c);
                sigma += &(xc.t().dot(&xc) / denom);
            }
            let dec = m.decision_scores(x.view()).unwrap();
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
            assert!(m.score(x.view(), y.view()).unwrap() > 0.9);
        }
    }

    #[test]
    fn svd_and_eigen_solvers_agree() {
        // With empirical priors both solvers pool the same covariance, so they describe the
        // same model; the svd form is centred on xbar, which shifts all class scores of a
        // sample by one amount. Score differences between classes therefore agree.
        let (x, y) = data(60);
        let mut a = LDA::with_defaults();
        a.fit_labels(x.view(), y.view()).unwrap();
        let mut b = LDA::with_defaults().with_solver(DiscriminantSolver::Eigen);
        b.fit_labels(x.view(), y.view()).unwrap();
        let (da, db) = (
            a.decision_scores(x.view()).unwrap(),
            b.decision_scores(x.view()).unwrap(),
        );
        for i in 0..x.nrows() {
            for c in 1..3 {
                let (u, v) = (da[[i, c]] - da[[i, 0]], db[[i, c]] - db[[i, 0]]);
                // O(10) scores from well-conditioned 3x3 factorisations.
                assert!((u - v).abs() < 1e-9, "{u} vs {v}");
            }
        }
        assert_eq!(
            a.predict_labels(x.view()).unwrap(),
            b.predict_labels(x.view()).unwrap()
        );
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
        let mut m = LDA::with_defaults();
        m.fit_labels(x.view(), y.view()).unwrap();
        let z = m.transform(&x).unwrap();
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
        let mut one = LDA::with_defaults().with_n_components(Some(1));
        one.fit_labels(x.view(), y.view()).unwrap();
        let one = one.transform(&x).unwrap();
        assert_eq!(one.ncols(), 1);
    }

    #[test]
    fn binary_problem_has_one_weight_row_and_probabilities() {
        let (x, y) = data(30);
        let keep: Vec<usize> = (0..x.nrows()).filter(|&i| y[i] != 2.0).collect();
        let (xb, yb) = (x.select(Axis(0), &keep), y.select(Axis(0), &keep));
        let mut m = LDA::with_defaults();
        m.fit_labels(xb.view(), yb.view()).unwrap();
        assert_eq!(m.coefficients().unwrap().dim(), (1, 3));
        let p = m.class_probabilities(xb.view()).unwrap();
        let pred = m.predict_labels(xb.view()).unwrap();
        for i in 0..xb.nrows() {
            assert!((p.row(i).sum() - 1.0).abs() < 1e-12);
            assert_eq!(pred[i], if p[[i, 1]] > 0.5 { 1.0 } else { 0.0 });
        }
    }

    #[test]
    fn singular_covariance_works_with_svd_and_is_refused_by_eigen() {
        let (x, y) = data(20);
        let x4 = ndarray::concatenate![Axis(1), x, Array2::<f64>::zeros((60, 1))];
        let mut m = LDA::with_defaults();
        m.fit_labels(x4.view(), y.view()).unwrap();
        assert!(m.score(x4.view(), y.view()).unwrap() > 0.9);
        let err = LDA::with_defaults()
            .with_solver(DiscriminantSolver::Eigen)
            .fit_labels(x4.view(), y.view())
            .unwrap_err();
        assert!(matches!(err, Error::Computation { .. }));
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
            LDA::with_defaults().transform(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(LDA::with_defaults()
            .with_n_components(Some(3))
            .fit_labels(x.view(), y.view())
            .is_err());
        assert!(LDA::with_defaults()
            .fit_labels(x.view(), Array1::from_elem(15, 1.0).view())
            .is_err());
        assert!(LDA::with_defaults()
            .fit_labels(array![[1.0], [2.0]].view(), array![0.0, 1.0].view())
            .is_err());
        assert!(LDA::with_defaults()
            .with_priors(Some(vec![0.5, 0.5]))
            .fit_labels(x.view(), y.view())
            .is_err());
        assert!(LDA::with_defaults()
            .with_priors(Some(vec![-1.0, 1.0, 1.0]))
            .fit_labels(x.view(), y.view())
            .is_err());
        assert!(LDA::with_defaults()
            .fit_labels(x.view(), y.slice(s![..14]).view())
            .is_err());
        let mut m = LDA::with_defaults();
        m.fit_labels(x.view(), y.view()).unwrap();
        assert!(m.transform(&array![[1.0, 2.0]]).is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y) = data(10);
        let mut m = LDA::with_defaults();
        m.fit_labels(x.view(), y.view()).unwrap();
        let back = LDA::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(back.transform(&x).unwrap(), m.transform(&x).unwrap());
        assert_eq!(
            back.predict_labels(x.view()).unwrap(),
            m.predict_labels(x.view()).unwrap()
        );
    }

    /// Two classes whose within-class data is nearly collinear (condition number ~ 2/ε with
    /// ε = 2^-20) and badly scaled (feature 1 is 2^20 times feature 0), built so every
    /// quantity is exact in binary: the class deviations are (1, 1+ε), (-1, -1-ε), (1, 1-ε),
    /// (-1, -1+ε) (feature 1 then times 2^20) and the class means are (0, 0) and (0, ε·2^20).
    ///
    /// Hand derivation (feature 1 in unscaled units): the pooled scatter is
    /// S = [[8, 8], [8, 8 + 8ε²]], the original API pools over n - k = 6, so
    /// Σ⁻¹ = 6 S⁻¹ = (3 / (4ε²)) [[1 + ε², -1], [-1, 1]], and with equal priors the binary
    /// log-odds are δ(x) = (μ₁ - μ₀)ᵀ Σ⁻¹ x - ½ μ₁ᵀ Σ⁻¹ μ₁ = (3 / (4ε)) (x₁ - x₀) - 3/8.
    ///
    /// The answer is O(1) while the whitening needs the smallest singular value of the
    /// scaled data, ~8e-7 (so the rank cut `tol` is lowered below it). A Gram/normal-equations
    /// route squares the condition number (κ ~ 2e6, κ² ~ 3e12) and gets that singular value
    /// with relative error ~eps·κ² ~ 1e-4 (measured: 1.2e-4), moving δ by ~1e-4 on any CPU;
    /// an SVD of the data itself (QR, then the SVD of R) keeps it to ~eps·κ ~ 1e-10. The
    /// 1e-7 tolerance sits well between the two.
    #[test]
    fn ill_conditioned_badly_scaled_data_match_the_hand_derived_discriminant() {
        let s = 1_048_576.0; // 2^20
        let x = array![
            [1.0, s + 1.0],
            [-1.0, -s - 1.0],
            [1.0, s - 1.0],
            [-1.0, -s + 1.0],
            [1.0, s + 2.0],
            [-1.0, -s],
            [1.0, s],
            [-1.0, -s + 2.0],
        ];
        let y = array![0, 0, 0, 0, 1, 1, 1, 1];
        let mut m = LDA::new(1).unwrap().with_tol(1e-12);
        m.fit(&x, &y).unwrap();
        let probes = array![[0.0, 1.0], [0.0, 0.0], [1.0, s + 0.5], [-1.0, -s + 2.0]];
        let want = [3.0 / 8.0, -3.0 / 8.0, 0.0, 9.0 / 8.0];
        let z = m.decision_function(&probes).unwrap();
        let p = m.predict_proba(&probes).unwrap();
        for (i, &w) in want.iter().enumerate() {
            let got = z[[i, 1]] - z[[i, 0]];
            assert!((got - w).abs() < 1e-7, "probe {i}: log-odds {got} vs {w}");
            let sigmoid = 1.0 / (1.0 + (-w).exp());
            assert!(
                (p[[i, 1]] - sigmoid).abs() < 1e-7,
                "probe {i}: {}",
                p[[i, 1]]
            );
        }
    }

    #[test]
    fn original_api_validates_and_uses_integer_labels() {
        assert!(matches!(LDA::new(0), Err(Error::InvalidParameter { .. })));
        assert!(LDA::default()
            .with_shrinkage(Shrinkage::Manual(1.5))
            .is_err());
        let x = array![[1.0], [2.0], [3.0], [7.0], [8.0], [9.0]];
        let y = array![4, 4, 4, -2, -2, -2];
        let mut m = LDA::default();
        assert!(matches!(
            m.fit(&x, &array![1, 2]),
            Err(Error::DimensionMismatch { .. })
        ));
        assert!(matches!(
            m.fit(&x, &array![1, 1, 1, 1, 1, 2]),
            Err(Error::InvalidInput(_))
        ));
        m.fit(&x, &y).unwrap();
        assert_eq!(m.get_classes().unwrap(), &array![-2, 4]);
        assert_eq!(m.predict(&x).unwrap(), y);
        // Class means 2 and 8, pooled variance 2 * (1 + 0 + 1) / (6 - 2) = 1: the
        // projection is whitened with the n - k denominator and centred on xbar = 5.
        let z = m.transform(&x).unwrap();
        assert!((z[[0, 0]].abs() - 4.0).abs() < 1e-12, "{z}");
        assert!((z[[1, 0]].abs() - 3.0).abs() < 1e-12, "{z}");
    }

    #[test]
    fn an_overflowing_scatter_is_refused_not_a_hang() {
        // the unbounded SVD spun forever on the non-finite scatter of such data
        let x = Array2::from_shape_fn((30, 4), |(i, j)| {
            (0.3 + ((i * 7 + j * 13) % 17) as f64 / 20.0) * 1e308
        });
        let y = Array1::from_iter((0..30).map(|i| (i % 3) as f64));
        for solver in [DiscriminantSolver::SVD, DiscriminantSolver::Eigen] {
            let mut lda = LDA::with_defaults().with_solver(solver);
            let err = lda.fit_labels(x.view(), y.view()).unwrap_err();
            assert!(err.to_string().contains("too large"), "{solver:?}: {err}");
        }
    }
}
