//! Kernel principal component analysis, following scikit-learn's `KernelPCA`.
//!
//! The training kernel (one of the shared [`Kernel`]s, or cosine similarity: the linear kernel
//! of the rows scaled to unit norm) is centered in feature space (scikit-learn's
//! `KernelCenterer`), its top eigenpairs are found by [`linalg::symmetric_eigen_top`] (block
//! Krylov for a few pairs of a large kernel, dense otherwise),
//! eigenvalues are cleaned like scikit-learn's `_check_psd_eigenvalues` (significantly
//! negative ones refused, small negative ones and those below `1e-12 * max` set to zero) and
//! eigenvector signs follow `svd_flip(u_based_decision=True)` (largest-magnitude entry of each
//! eigenvector positive).

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::pca::flip_to_positive_max;
use crate::machine_learning::types::{Gamma, KernelType};
use crate::machine_learning::validation::{
    check_features, check_n_features, require_data, require_data_width, require_nonzero,
};
use crate::math::kernels::Kernel;
use crate::math::{linalg, matmul};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayRef2, ArrayView2, Axis, Zip};
use serde::{Deserialize, Serialize};

/// The kernel names KernelPCA accepts.
const KERNEL_NAMES: &str = "'linear', 'poly', 'rbf', 'sigmoid', 'cosine'";

/// The original's eigen-solver choice. Every choice runs [`linalg::symmetric_eigen_top`]
/// (which already picks block Krylov or a dense decomposition by size), so the choice is kept
/// for API compatibility and does not change the result beyond rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum EigenSolver {
    #[default]
    Dense,
    Lanczos,
    PowerIteration,
}

/// A kernel with its parameters resolved on the training data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
enum FittedKernel {
    Shared(Kernel),
    /// `x·y / (|x| |y|)`, 0 when either row is zero (scikit-learn's `cosine_similarity`).
    Cosine,
}

impl FittedKernel {
    fn gram(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        match self {
            FittedKernel::Shared(k) => k.gram(x),
            FittedKernel::Cosine => {
                let u = unit_rows(x);
                Kernel::Linear.gram(u.view())
            }
        }
    }

    fn matrix(&self, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
        match self {
            FittedKernel::Shared(k) => k.kernel_matrix(a, b),
            FittedKernel::Cosine => {
                Kernel::Linear.kernel_matrix(unit_rows(a).view(), unit_rows(b).view())
            }
        }
    }
}

/// Rows scaled to unit euclidean norm; zero rows stay zero (scikit-learn's `normalize`).
fn unit_rows(x: ArrayView2<f64>) -> Array2<f64> {
    let mut out = x.to_owned();
    for mut row in out.axis_iter_mut(Axis(0)) {
        let norm = row.dot(&row).sqrt();
        if norm > 0.0 {
            row.mapv_inplace(|v| v / norm);
        }
    }
    out
}

/// Center a kernel matrix in feature space, as scikit-learn's `KernelCenterer`:
/// `k - col_mean[None, :] - row_sum[:, None] / n_fit + all_mean`, with `col_mean` and
/// `all_mean` taken from the training kernel.
fn center_kernel(k: &mut Array2<f64>, fit_col_means: &Array1<f64>, fit_all_mean: f64) {
    let n_fit = fit_col_means.len() as f64;
    Zip::from(k.rows_mut()).for_each(|mut row| {
        let row_mean = row.sum() / n_fit;
        Zip::from(&mut row)
            .and(fit_col_means)
            .for_each(|v, &c| *v = *v - c - row_mean + fit_all_mean);
    });
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    kernel: FittedKernel,
    eigenvalues: Array1<f64>,
    eigenvectors: Array2<f64>,
    x_fit: Array2<f64>,
    /// Column means of the training kernel (`KernelCenterer.K_fit_rows_`).
    k_fit_rows: Array1<f64>,
    /// Grand mean of the training kernel (`KernelCenterer.K_fit_all_`).
    k_fit_all: f64,
}

/// Kernel PCA (`fit_transform`, `transform`, `eigenvalues_`, `eigenvectors_`), with
/// scikit-learn's hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelPCA {
    /// Components to keep; `None` keeps every component with a positive eigenvalue.
    pub n_components: Option<usize>,
    /// `"linear"`, `"poly"`, `"rbf"`, `"sigmoid"` or `"cosine"`.
    pub kernel: String,
    /// Kernel coefficient of poly, rbf and sigmoid; `None` means `1 / n_features`.
    pub gamma: Option<f64>,
    /// Degree of the polynomial kernel.
    pub degree: u32,
    /// Independent term of the poly and sigmoid kernels.
    pub coef0: f64,
    /// The original-API kernel this model was built from (its gamma resolved at `fit`).
    #[serde(default)]
    kernel_type: Option<KernelType>,
    #[serde(default)]
    eigen_solver: EigenSolver,
    /// Refuse kernels that are significantly not positive semi-definite (scikit-learn);
    /// the original API clips their negative eigenvalues to zero instead.
    #[serde(default = "strict_psd_default")]
    strict_psd: bool,
    fitted: Option<Fitted>,
}

fn strict_psd_default() -> bool {
    true
}

impl Default for KernelPCA {
    /// The original's default: RBF with gamma 0.1, two components.
    fn default() -> Self {
        Self::new(
            KernelType::RBF {
                gamma: Gamma::Value(0.1),
            },
            2,
        )
        .expect("valid defaults")
    }
}

impl KernelPCA {
    /// scikit-learn's defaults for the other parameters: `gamma=None`, `degree=3`, `coef0=1`;
    /// unvalidated (checked at `fit`).
    pub fn builder(n_components: Option<usize>, kernel: &str) -> Self {
        Self {
            n_components,
            kernel: kernel.to_string(),
            gamma: None,
            degree: 3,
            coef0: 1.0,
            kernel_type: None,
            eigen_solver: EigenSolver::Dense,
            strict_psd: true,
            fitted: None,
        }
    }

    crate::accessors::builder_setters! {
        with_gamma(gamma: Option<f64>),
        with_degree(degree: u32),
        with_coef0(coef0: f64),
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Eigenvalues of the centered training kernel, descending (`eigenvalues_`).
        eigenvalues -> &eigenvalues: Array1<f64>,
        /// Unit eigenvectors of the centered training kernel, one per column (`eigenvectors_`).
        eigenvectors -> &eigenvectors: Array2<f64>,
        /// The training data kept for `transform` (`X_fit_`).
        x_fit -> &x_fit: Array2<f64>,
    }

    /// The kernel `gamma` actually used (`gamma_`: `1 / n_features` when unset); `None` before
    /// fit and for kernels without one.
    pub fn gamma_used(&self) -> Option<f64> {
        match self.fitted.as_ref()?.kernel {
            FittedKernel::Shared(
                Kernel::Poly { gamma, .. } | Kernel::Rbf { gamma } | Kernel::Sigmoid { gamma, .. },
            ) => Some(gamma),
            _ => None,
        }
    }

    /// The kernel with `gamma` resolved for `n_features` columns; refuses unknown names and
    /// invalid parameters.
    fn resolve_kernel(&self, n_features: usize) -> Result<FittedKernel> {
        if let Some(g) = self.gamma {
            if !(g.is_finite() && g > 0.0) {
                return Err(Error::invalid_parameter(
                    "gamma",
                    format!("must be None or a finite number > 0, got {g}"),
                ));
            }
        }
        let gamma = self.gamma.unwrap_or(1.0 / n_features.max(1) as f64);
        match self.kernel.as_str() {
            "cosine" => Ok(FittedKernel::Cosine),
            "linear" | "poly" | "rbf" | "sigmoid" => Ok(FittedKernel::Shared(Kernel::parse(
                &self.kernel,
                gamma,
                self.degree,
                self.coef0,
            )?)),
            other => Err(Error::invalid_input(format!(
                "unknown kernel {other:?}; expected one of {KERNEL_NAMES}"
            ))),
        }
    }

    /// The one check of KernelPCA's hyper-parameters, for every door (the kernel's own are
    /// checked as it is resolved against the data's width).
    pub fn check_params(&self) -> Result<()> {
        if let Some(count) = self.n_components {
            require_nonzero("n_components", count)?;
        }
        Ok(())
    }

    /// A count of components `n` samples can give.
    fn check_components_for(&self, n: usize) -> Result<()> {
        match self.n_components {
            Some(k) if k > n => Err(Error::invalid_parameter(
                "n_components",
                format!("must be between 1 and n_samples={n}, got {k}"),
            )),
            _ => Ok(()),
        }
    }

    /// Fit to `x` (`n_samples x n_features`) with scikit-learn's checks and messages.
    pub fn fit_checked(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        check_features(&x, "X")?;
        let (n, d) = x.dim();
        self.check_params()?;
        self.check_components_for(n)?;
        let kernel = self.resolve_kernel(d)?;
        let mut k = kernel.gram(x)?;
        if let Some(pos) = k.iter().position(|v| !v.is_finite()) {
            return Err(Error::computation(format!(
                "the {} kernel overflowed to a non-finite value (at row {}); scale the features or lower degree/gamma",
                self.kernel,
                pos / n
            )));
        }
        let k_fit_rows = k.mean_axis(Axis(0)).expect("n >= 1");
        let k_fit_all = k_fit_rows.sum() / n as f64;
        center_kernel(&mut k, &k_fit_rows, k_fit_all);

        let wanted = self.n_components.unwrap_or(n);
        let (mut eigenvalues, mut eigenvectors) = linalg::symmetric_eigen_top(k.view(), wanted)?;
        if self.strict_psd {
            clean_psd_eigenvalues(&mut eigenvalues, &self.kernel)?;
        } else {
            eigenvalues.mapv_inplace(|v| v.max(0.0));
        }
        for col in eigenvectors.axis_iter_mut(Axis(1)) {
            flip_to_positive_max(col);
        }
        if self.n_components.is_none() {
            let keep: Vec<usize> = (0..wanted).filter(|&i| eigenvalues[i] > 0.0).collect();
            eigenvalues = eigenvalues.select(Axis(0), &keep);
            eigenvectors = eigenvectors.select(Axis(1), &keep);
        }
        self.fitted = Some(Fitted {
            kernel,
            eigenvalues,
            eigenvectors,
            x_fit: x.to_owned(),
            k_fit_rows,
            k_fit_all,
        });
        Ok(self)
    }

    /// Fit, then the training data in component space: `eigenvectors * sqrt(eigenvalues)`.
    pub fn fit_transform_checked(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.fit_checked(x)?;
        Ok(self.training_projection())
    }

    fn training_projection(&self) -> Array2<f64> {
        let f = self.fitted.as_ref().expect("just fitted");
        let mut out = f.eigenvectors.clone();
        Zip::from(out.columns_mut())
            .and(&f.eigenvalues)
            .for_each(|mut col, &l| col *= l.sqrt());
        out
    }

    /// Project new data: the centered kernel against the training data times
    /// `eigenvectors / sqrt(eigenvalues)` (zero for zero eigenvalues).
    pub fn transform_checked(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let f = fitted_state(&self.fitted, "KernelPCA")?;
        let x = x.view();
        check_n_features(&x, f.x_fit.ncols(), "KernelPCA")?;
        let mut k = f.kernel.matrix(x, f.x_fit.view())?;
        center_kernel(&mut k, &f.k_fit_rows, f.k_fit_all);
        let mut alphas = f.eigenvectors.clone();
        Zip::from(alphas.columns_mut())
            .and(&f.eigenvalues)
            .for_each(|mut col, &l| {
                if l > 0.0 {
                    col /= l.sqrt()
                } else {
                    col.fill(0.0)
                }
            });
        matmul::dot_par(k.view(), alphas.view(), matmul::nested_parallelism())
    }
}

/// scikit-learn's `_check_psd_eigenvalues` for float64: refuse a spectrum whose largest value is
/// negative or with significantly negative values (below `-1e-5 * max` and below `-1e-10`),
/// set the remaining negative values and positive values below `1e-12 * max` to zero.
fn clean_psd_eigenvalues(values: &mut Array1<f64>, kernel: &str) -> Result<()> {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    if max < 0.0 {
        return Err(Error::computation(format!(
            "all kernel eigenvalues are negative (maximum is {max:e}): the kernel is not positive semi-definite"
        )));
    }
    if min < -1e-5 * max && min < -1e-10 {
        return Err(Error::computation(format!(
            "the centered kernel has significantly negative eigenvalues ({:e} of the maximum positive): the {} kernel is not positive semi-definite on this data",
            -min / max,
            kernel
        )));
    }
    values.mapv_inplace(|v| {
        if v < 0.0 || (v > 0.0 && v < 1e-12 * max) {
            0.0
        } else {
            v
        }
    });
    Ok(())
}

/// The original RustyML API: validated constructor, getters, its error kinds.
impl KernelPCA {
    /// `kernel` (parameters validated) and `n_components` (>= 1); else `InvalidParameter`.
    pub fn new(kernel: KernelType, n_components: usize) -> Result<Self> {
        kernel.validate()?;
        let name = match kernel {
            KernelType::Linear => "linear",
            KernelType::Poly { .. } => "poly",
            KernelType::RBF { .. } => "rbf",
            KernelType::Sigmoid { .. } => "sigmoid",
            KernelType::Cosine => "cosine",
        };
        let mut model = Self::builder(Some(n_components), name);
        if let KernelType::Poly { degree, coef0, .. } = kernel {
            model.degree = degree;
            model.coef0 = coef0;
        }
        if let KernelType::Sigmoid { coef0, .. } = kernel {
            model.coef0 = coef0;
        }
        model.kernel_type = Some(kernel);
        model.strict_psd = false;
        model.check_params()?;
        Ok(model)
    }

    crate::accessors::builder_setters! {
        with_eigen_solver(eigen_solver: EigenSolver),
    }

    crate::accessors::field_getters! {
        get_eigen_solver -> eigen_solver: EigenSolver,
    }

    pub fn get_kernel(&self) -> KernelType {
        self.kernel_type.unwrap_or_else(|| {
            let gamma = self.gamma.map_or(Gamma::Auto, Gamma::Value);
            match self.kernel.as_str() {
                "poly" => KernelType::Poly {
                    degree: self.degree,
                    gamma,
                    coef0: self.coef0,
                },
                "rbf" => KernelType::RBF { gamma },
                "sigmoid" => KernelType::Sigmoid {
                    gamma,
                    coef0: self.coef0,
                },
                "cosine" => KernelType::Cosine,
                _ => KernelType::Linear,
            }
        })
    }

    pub fn get_n_components(&self) -> usize {
        self.n_components
            .or_else(|| self.eigenvalues().map(|e| e.len()))
            .unwrap_or(0)
    }

    pub fn get_n_samples(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.x_fit.nrows())
    }

    pub fn get_n_features(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.x_fit.ncols())
    }

    pub fn get_eigenvalues(&self) -> Option<&Array1<f64>> {
        self.eigenvalues()
    }

    pub fn get_eigenvectors(&self) -> Option<&Array2<f64>> {
        self.eigenvectors()
    }

    /// The original's guards (empty -> `EmptyInput`, NaN/inf -> `NonFinite`, fewer than 2
    /// samples -> `InvalidInput`, more components than samples -> `InvalidParameter`), then
    /// the kernel's gamma resolved on `x` (`Scale` needs its variance).
    fn prepare_fit(&mut self, x: &ArrayView2<f64>) -> Result<()> {
        require_data(x, "KernelPCA data")?;
        let (n, d) = x.dim();
        if n < 2 {
            return Err(Error::invalid_input(format!(
                "KernelPCA needs at least 2 samples, got {n}"
            )));
        }
        self.check_components_for(n)?;
        if let Some(kernel) = self.kernel_type {
            let variance = x.var(0.0);
            if let KernelType::Poly { gamma, .. }
            | KernelType::RBF { gamma }
            | KernelType::Sigmoid { gamma, .. } = kernel.resolve_gamma(d, variance)?
            {
                if let Gamma::Value(v) = gamma {
                    self.gamma = Some(v);
                }
            }
        }
        Ok(())
    }

    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        self.prepare_fit(&x.view())?;
        self.fit_checked(x)
    }

    /// Project `x`; unfitted -> `NotFitted`, wrong width -> `DimensionMismatch`.
    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted.as_ref().ok_or(Error::NotFitted("KernelPCA"))?;
        require_data_width(&x.view(), f.x_fit.ncols(), "KernelPCA input")?;
        self.transform_checked(x)
    }

    pub fn fit_transform(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.fit(x)?;
        Ok(self.training_projection())
    }
}

crate::machine_learning::data_traits!(
    KernelPCA:
    Fit where Send + Sync,
    Transform -> Array2<f64> where Send + Sync,
    FitTransform -> Array2<f64> where Send + Sync,
);

crate::machine_learning::path_persistence!(KernelPCA);

impl Persist for KernelPCA {
    const MODEL_NAME: &'static str = "KernelPCA";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine_learning::pca::{NComponents, PCA};
    use ndarray::array;

    fn data(n: usize, d: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, d), |(i, j)| {
            ((i * d + j) as f64 * 0.53).sin() * (j as f64 + 1.0) + (i % 3) as f64
        })
    }

    #[test]
    fn linear_kernel_reproduces_pca_projections() {
        // Independent oracle: with the linear kernel, kernel-PCA scores equal PCA scores up to
        // the sign of each component (eigenvalue_k = (n - 1) * explained_variance_k).
        let x = data(40, 4);
        let mut kpca = KernelPCA::builder(Some(3), "linear");
        let z = kpca.fit_transform(&x).unwrap();
        let mut pca = PCA::builder(NComponents::Count(3));
        let zp = pca.fit_transform(&x).unwrap();
        for k in 0..3 {
            let ev = pca.explained_variance().unwrap()[k] * 39.0;
            assert!((kpca.eigenvalues().unwrap()[k] - ev).abs() < 1e-9 * ev);
            let sign = if z[[0, k]] * zp[[0, k]] < 0.0 {
                -1.0
            } else {
                1.0
            };
            for i in 0..40 {
                assert!(
                    (z[[i, k]] - sign * zp[[i, k]]).abs() < 1e-9,
                    "component {k} row {i}"
                );
            }
        }
        // transform of new points agrees with PCA's too.
        let new = data(7, 4).mapv(|v| v * 0.5 + 0.1);
        let t = kpca.transform(&new).unwrap();
        let tp = pca.transform(&new).unwrap();
        for k in 0..3 {
            let sign = if z[[0, k]] * zp[[0, k]] < 0.0 {
                -1.0
            } else {
                1.0
            };
            for i in 0..7 {
                assert!((t[[i, k]] - sign * tp[[i, k]]).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn transform_of_training_data_equals_fit_transform() {
        let x = data(30, 3);
        for kpca in [
            KernelPCA::builder(Some(4), "rbf").with_gamma(Some(0.2)),
            KernelPCA::builder(Some(4), "poly").with_degree(2),
            KernelPCA::builder(Some(4), "sigmoid")
                .with_gamma(Some(0.05))
                .with_coef0(0.0),
            KernelPCA::builder(Some(4), "cosine"),
        ] {
            let mut kpca = kpca;
            let kernel = kpca.kernel.clone();
            let z = kpca.fit_transform(&x).unwrap();
            let t = kpca.transform(&x).unwrap();
            for (a, b) in z.iter().zip(t.iter()) {
                assert!((a - b).abs() < 1e-9, "{kernel:?}: {a} vs {b}");
            }
            let v = kpca.eigenvectors().unwrap();
            for k in 0..4 {
                let col = v.column(k);
                assert!((col.dot(&col) - 1.0).abs() < 1e-12);
                let (imax, _) = col
                    .iter()
                    .enumerate()
                    .fold((0, 0.0f64), |(bi, bv), (i, &x)| {
                        if x.abs() > bv {
                            (i, x.abs())
                        } else {
                            (bi, bv)
                        }
                    });
                assert!(col[imax] > 0.0);
            }
        }
    }

    #[test]
    fn default_keeps_only_positive_eigenvalues() {
        // 10 points on a line: the centered linear kernel has rank 1.
        let x = Array2::from_shape_fn((10, 2), |(i, j)| i as f64 * (j as f64 + 1.0));
        let mut kpca = KernelPCA::builder(None, "linear");
        let z = kpca.fit_transform(&x).unwrap();
        assert_eq!(z.ncols(), 1);
        // Hand-derived: the only eigenvalue is the total scatter sum |x_i - mean|^2 =
        // 5 * sum_i (i - 4.5)^2 = 5 * 82.5.
        assert!((kpca.eigenvalues().unwrap()[0] - 412.5).abs() < 1e-9);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = data(10, 2);
        assert!(matches!(
            KernelPCA::builder(None, "linear").transform(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(KernelPCA::builder(Some(11), "linear").fit(&x).is_err());
        assert!(KernelPCA::builder(Some(0), "linear").fit(&x).is_err());
        assert!(KernelPCA::builder(None, "linear")
            .fit(&array![[f64::INFINITY]])
            .is_err());
        assert!(KernelPCA::builder(None, "linear")
            .fit(&Array2::<f64>::zeros((0, 2)))
            .is_err());
        let bad = KernelPCA::builder(None, "rbf").with_gamma(Some(-1.0));
        assert!(bad.clone().fit(&x).is_err());
        assert!(KernelPCA::builder(None, "laplacian").fit(&x).is_err());
        assert!(KernelPCA::builder(None, "sigmoid")
            .with_coef0(f64::NAN)
            .fit(&x)
            .is_err());
        let mut ok = KernelPCA::builder(Some(2), "linear");
        ok.fit(&x).unwrap();
        assert!(ok.transform(&Array2::<f64>::zeros((1, 3))).is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let x = data(20, 3);
        let mut kpca = KernelPCA::builder(Some(2), "rbf");
        kpca.fit(&x).unwrap();
        assert_eq!(kpca.gamma_used(), Some(1.0 / 3.0));
        let back = KernelPCA::from_bytes(&kpca.to_bytes().unwrap()).unwrap();
        assert_eq!(back.transform(&x).unwrap(), kpca.transform(&x).unwrap());
    }

    #[test]
    fn original_api_resolves_gamma_and_tolerates_indefinite_kernels() {
        // Scale: gamma = 1 / (n_features * var(X)); X = [[0, 0], [2, 2]] has variance 1.
        let x = array![[0.0, 0.0], [2.0, 2.0]];
        let mut kpca = KernelPCA::new(
            KernelType::RBF {
                gamma: Gamma::Scale,
            },
            1,
        )
        .unwrap();
        kpca.fit(&x).unwrap();
        assert_eq!(kpca.gamma_used(), Some(0.5));
        // Sigmoid(gamma 1, coef0 0) on 1 and 4: the centered kernel of two points is
        // a [[1, -1], [-1, 1]] with a = (tanh 1 + tanh 16 - 2 tanh 4) / 4 < 0, so the only
        // non-zero eigenvalue is negative: clipped to zero, not refused.
        let mut sig = KernelPCA::new(
            KernelType::Sigmoid {
                gamma: Gamma::Value(1.0),
                coef0: 0.0,
            },
            2,
        )
        .unwrap();
        sig.fit(&array![[1.0], [4.0]]).unwrap();
        assert!(sig
            .get_eigenvalues()
            .unwrap()
            .iter()
            .all(|&v| (0.0..1e-12).contains(&v)));
        assert!(matches!(
            KernelPCA::new(KernelType::Linear, 0),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            KernelPCA::new(KernelType::Linear, 3).unwrap().fit(&x),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
