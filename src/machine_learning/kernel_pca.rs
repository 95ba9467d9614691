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

use crate::error::{Result, RustymlError};
use crate::machine_learning::pca::flip_to_positive_max;
use crate::machine_learning::validation::{check_features, check_n_features};
use crate::math::kernels::Kernel;
use crate::math::{linalg, matmul};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayBase, ArrayView2, Axis, Data, Ix2, Zip};
use serde::{Deserialize, Serialize};

/// The kernel names KernelPCA accepts.
const KERNEL_NAMES: &str = "'linear', 'poly', 'rbf', 'sigmoid', 'cosine'";

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
    fitted: Option<Fitted>,
}

impl KernelPCA {
    /// scikit-learn's defaults for the other parameters: `gamma=None`, `degree=3`, `coef0=1`.
    pub fn new(n_components: Option<usize>, kernel: &str) -> Self {
        Self {
            n_components,
            kernel: kernel.to_string(),
            gamma: None,
            degree: 3,
            coef0: 1.0,
            fitted: None,
        }
    }

    pub fn with_gamma(mut self, gamma: Option<f64>) -> Self {
        self.gamma = gamma;
        self
    }

    pub fn with_degree(mut self, degree: u32) -> Self {
        self.degree = degree;
        self
    }

    pub fn with_coef0(mut self, coef0: f64) -> Self {
        self.coef0 = coef0;
        self
    }

    /// Eigenvalues of the centered training kernel, descending (`eigenvalues_`).
    pub fn eigenvalues(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.eigenvalues)
    }

    /// Unit eigenvectors of the centered training kernel, one per column (`eigenvectors_`).
    pub fn eigenvectors(&self) -> Option<&Array2<f64>> {
        self.fitted.as_ref().map(|f| &f.eigenvectors)
    }

    /// The training data kept for `transform` (`X_fit_`).
    pub fn x_fit(&self) -> Option<&Array2<f64>> {
        self.fitted.as_ref().map(|f| &f.x_fit)
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
                return Err(RustymlError::invalid(format!(
                    "gamma must be None or a finite number > 0, got {g}"
                )));
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
            other => Err(RustymlError::invalid(format!(
                "unknown kernel {other:?}; expected one of {KERNEL_NAMES}"
            ))),
        }
    }

    fn check_params(&self, n: usize, d: usize) -> Result<FittedKernel> {
        let kernel = self.resolve_kernel(d)?;
        match self.n_components {
            Some(k) if k == 0 || k > n => Err(RustymlError::invalid(format!(
                "n_components={k} must be between 1 and n_samples={n}"
            ))),
            _ => Ok(kernel),
        }
    }

    /// Fit to `x` (`n_samples x n_features`).
    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        let x = x.view();
        check_features(&x, "X")?;
        let (n, d) = x.dim();
        let kernel = self.check_params(n, d)?;
        let mut k = kernel.gram(x)?;
        if let Some(pos) = k.iter().position(|v| !v.is_finite()) {
            return Err(RustymlError::computation(format!(
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
        clean_psd_eigenvalues(&mut eigenvalues, &self.kernel)?;
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
    pub fn fit_transform<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        self.fit(x)?;
        let f = self.fitted.as_ref().expect("just fitted");
        let mut out = f.eigenvectors.clone();
        Zip::from(out.columns_mut())
            .and(&f.eigenvalues)
            .for_each(|mut col, &l| col *= l.sqrt());
        Ok(out)
    }

    /// Project new data: the centered kernel against the training data times
    /// `eigenvectors / sqrt(eigenvalues)` (zero for zero eigenvalues).
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let f = self
            .fitted
            .as_ref()
            .ok_or_else(|| RustymlError::not_fitted("KernelPCA"))?;
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
        return Err(RustymlError::computation(format!(
            "all kernel eigenvalues are negative (maximum is {max:e}): the kernel is not positive semi-definite"
        )));
    }
    if min < -1e-5 * max && min < -1e-10 {
        return Err(RustymlError::computation(format!(
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
        let mut kpca = KernelPCA::new(Some(3), "linear");
        let z = kpca.fit_transform(&x).unwrap();
        let mut pca = PCA::new(NComponents::Count(3));
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
            KernelPCA::new(Some(4), "rbf").with_gamma(Some(0.2)),
            KernelPCA::new(Some(4), "poly").with_degree(2),
            KernelPCA::new(Some(4), "sigmoid")
                .with_gamma(Some(0.05))
                .with_coef0(0.0),
            KernelPCA::new(Some(4), "cosine"),
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
        let mut kpca = KernelPCA::new(None, "linear");
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
            KernelPCA::new(None, "linear").transform(&x),
            Err(RustymlError::NotFitted(_))
        ));
        assert!(KernelPCA::new(Some(11), "linear").fit(&x).is_err());
        assert!(KernelPCA::new(Some(0), "linear").fit(&x).is_err());
        assert!(KernelPCA::new(None, "linear")
            .fit(&array![[f64::INFINITY]])
            .is_err());
        assert!(KernelPCA::new(None, "linear")
            .fit(&Array2::<f64>::zeros((0, 2)))
            .is_err());
        let bad = KernelPCA::new(None, "rbf").with_gamma(Some(-1.0));
        assert!(bad.clone().fit(&x).is_err());
        assert!(KernelPCA::new(None, "laplacian").fit(&x).is_err());
        assert!(KernelPCA::new(None, "sigmoid")
            .with_coef0(f64::NAN)
            .fit(&x)
            .is_err());
        let mut ok = KernelPCA::new(Some(2), "linear");
        ok.fit(&x).unwrap();
        assert!(ok.transform(&Array2::<f64>::zeros((1, 3))).is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let x = data(20, 3);
        let mut kpca = KernelPCA::new(Some(2), "rbf");
        kpca.fit(&x).unwrap();
        assert_eq!(kpca.gamma_used(), Some(1.0 / 3.0));
        let back = KernelPCA::from_bytes(&kpca.to_bytes().unwrap()).unwrap();
        assert_eq!(back.transform(&x).unwrap(), kpca.transform(&x).unwrap());
    }
}
