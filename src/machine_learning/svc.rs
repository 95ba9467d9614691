//! C-support vector classification with a kernel (linear, polynomial, RBF, sigmoid).
//!
//! Each pair of classes gets its own binary problem (one-vs-one, as libsvm and
//! scikit-learn's `SVC`), solved by sequential minimal optimisation with libsvm's
//! second-order working-set selection (Fan, Chen & Lin, 2005). Kernel rows come from the
//! shared kernel engine ([`crate::math::kernels`]): the whole Gram matrix of a pair when it
//! fits in `cache_size` megabytes, otherwise rows computed on demand behind an LRU cache.

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::labels;
use crate::machine_learning::linear_model::require_xy;
use crate::machine_learning::options::ClassLabels;
use crate::machine_learning::types::KernelType;
use crate::machine_learning::validation::{check_xy, require_data_width, require_positive};
use crate::math::distance::SCAN_F64;
use crate::math::kernels::{Gamma, Kernel};
use crate::math::matmul;
use crate::persistence::Persist;
use ndarray::{s, Array1, Array2, ArrayRef1, ArrayRef2, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Smallest curvature used when the kernel gives a non-positive one (libsvm's `TAU`).
const TAU: f64 = 1e-12;

/// Shape of [`SVC::decision_function`] for more than two classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DecisionShape {
    /// One column per class: votes plus a bounded confidence (scikit-learn's default).
    Ovr,
    /// One column per pair of classes `(i, j)`, `i < j`, positive meaning class `i`.
    Ovo,
}

/// What a fit that stops at `max_iter` before the KKT conditions hold gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IterationCap {
    /// `NotConverged` (the original API).
    Error,
    /// The model, with `converged() == Some(false)` (scikit-learn, which warns).
    Report,
}

crate::machine_learning::options::paired_options! {
    /// The options that tell the original API's SVC from scikit-learn's; saved as one byte
    /// (see [`crate::machine_learning::options`]). With [`ClassLabels::ZeroOne`] a fit also
    /// reports the binary multipliers and `±1` labels of its support vectors
    /// ([`SVC::get_alphas`], [`SVC::get_support_vector_labels`]) and refuses one-class data
    /// with `NotConverged`, as no support vector can exist.
    pub struct SvcOptions ("SVC") {
        pub labels: ClassLabels { ZeroOne, Observed },
        pub iteration_cap: IterationCap { Error, Report },
    }
    /// The original API's: labels 0/1, `NotConverged` at the iteration cap.
    ORIGINAL;
    /// scikit-learn's: any labels, the model reported at the iteration cap.
    SCIKIT_LEARN;
}

/// Kernel support vector classifier. The kernel is the original API's [`KernelType`] when one
/// is set ([`SVC::new`]), else scikit-learn's `kernel` name with `gamma`, `degree`, `coef0`
/// ([`SVC::with_defaults`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SVC {
    pub c: f64,
    /// `"linear"`, `"poly"`, `"rbf"` or `"sigmoid"`.
    pub kernel: String,
    pub degree: u32,
    pub gamma: Gamma,
    pub coef0: f64,
    /// Stopping tolerance on the KKT violation (libsvm's `eps`).
    pub tol: f64,
    /// Iteration cap per pair; `None` for libsvm's `max(10_000_000, 100 * n)`.
    pub max_iter: Option<usize>,
    /// Kernel cache per pair, in megabytes.
    pub cache_size: f64,
    pub decision_shape: DecisionShape,
    /// The original API's kernel; when set it replaces `kernel`, `gamma`, `degree`, `coef0`.
    kernel_type: Option<KernelType>,
    random_state: Option<u64>,
    options: SvcOptions,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    kernel: Kernel,
    classes: Array1<f64>,
    /// Training indices of the support vectors, grouped by class.
    support: Vec<usize>,
    support_vectors: Array2<f64>,
    n_support: Vec<usize>,
    /// libsvm layout, `(n_classes - 1) x n_sv`.
    dual_coef: Array2<f64>,
    /// One per pair in `(0,1), (0,2), ..., (1,2), ...` order; decision = sum - rho.
    rho: Array1<f64>,
    n_iter: Vec<usize>,
    converged: bool,
    /// Rows are scaled to unit norm before the (linear) kernel: the cosine kernel.
    unit_rows: bool,
    /// Binary fits: `α` and `±1` labels of the support vectors.
    alphas: Option<Array1<f64>>,
    sv_signs: Option<Array1<f64>>,
}

/// The original API's tolerance for treating a multiplier as zero (reported by
/// [`SVC::get_epsilon`]).
const EPSILON: f64 = 1e-8;

impl Default for SVC {
    /// RBF kernel with `gamma = 0.1`, `C = 1`, `tol = 1e-3`, `max_iter = 1000`.
    fn default() -> Self {
        Self::new(
            KernelType::RBF {
                gamma: Gamma::Value(0.1),
            },
            1.0,
            1e-3,
            1000,
        )
        .expect("valid defaults")
    }
}

impl SVC {
    /// The original API: kernel, `C`, tolerance and iteration cap (`InvalidParameter` for a
    /// `C` or `tol` not finite and `> 0`, `max_iter == 0`, or bad kernel parameters). Labels
    /// are 0/1.
    pub fn new(
        kernel: KernelType,
        regularization_param: f64,
        tol: f64,
        max_iter: usize,
    ) -> Result<Self> {
        let model = Self {
            c: regularization_param,
            tol,
            max_iter: Some(max_iter),
            kernel_type: Some(kernel),
            options: SvcOptions::ORIGINAL,
            ..Self::with_defaults()
        };
        model.check_params()?;
        kernel.validate()?;
        Ok(model)
    }

    /// scikit-learn's `SVC` defaults (its [`SvcOptions`]): `C = 1`, RBF kernel,
    /// `gamma = "scale"`, `degree = 3`, `coef0 = 0`, `tol = 1e-3`, no iteration cap, 200 MB
    /// cache, `"ovr"` decision shape; parameters are checked at `fit`.
    pub fn with_defaults() -> Self {
        Self {
            c: 1.0,
            kernel: "rbf".into(),
            degree: 3,
            gamma: Gamma::Scale,
            coef0: 0.0,
            tol: 1e-3,
            max_iter: None,
            cache_size: 200.0,
            decision_shape: DecisionShape::Ovr,
            kernel_type: None,
            random_state: None,
            options: SvcOptions::SCIKIT_LEARN,
            fitted: None,
        }
    }

    /// The kernel of the original API, with a `Scale`/`Auto` gamma resolved to its value
    /// once fitted (the Python layer names its kernel by string and reads as `Linear` here).
    pub fn get_kernel(&self) -> KernelType {
        self.kernel_type.unwrap_or(KernelType::Linear)
    }

    crate::accessors::builder_setters! {
        with_options(options: SvcOptions),
        with_c(c: f64),
        with_gamma(gamma: Gamma),
        with_degree(degree: u32),
        with_coef0(coef0: f64),
        with_tol(tol: f64),
        with_max_iter(max_iter: Option<usize>),
        with_random_state(random_state: Some(u64)),
        with_cache_size(cache_size: f64),
        with_decision_shape(decision_shape: DecisionShape),
    }

    crate::accessors::field_getters! {
        get_regularization_parameter -> c: f64,
        get_tolerance -> tol: f64,
        get_random_state -> random_state: Option<u64>,
        get_options -> options: SvcOptions,
    }

    #[inline]
    pub fn get_max_iterations(&self) -> usize {
        self.max_iter.unwrap_or(usize::MAX)
    }

    #[inline]
    pub fn get_epsilon(&self) -> f64 {
        EPSILON
    }

    /// Solver iterations of a binary fit.
    pub fn get_actual_iterations(&self) -> Option<usize> {
        self.fitted
            .as_ref()
            .map(|f| f.n_iter.iter().copied().max().unwrap_or(0))
    }

    /// The multipliers `α_i > 0` of the support vectors (binary fit).
    pub fn get_alphas(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().and_then(|f| f.alphas.as_ref())
    }

    pub fn get_support_vectors(&self) -> Option<&Array2<f64>> {
        self.support_vectors()
    }

    /// The support vectors' labels as `±1` (`+1` for label 1), so that the decision value is
    /// `Σ α_i y_i k(x_i, x) + bias`.
    pub fn get_support_vector_labels(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().and_then(|f| f.sv_signs.as_ref())
    }

    /// The bias of a binary fit (see [`get_support_vector_labels`](Self::get_support_vector_labels)).
    pub fn get_bias(&self) -> Option<f64> {
        self.fitted.as_ref().map(|f| f.rho[0])
    }

    /// Kernel by name; checked when fitting.
    pub fn with_kernel(mut self, kernel: &str) -> Self {
        self.kernel = kernel.to_string();
        self
    }

    fn fitted(&self) -> Result<&Fitted> {
        fitted_state(&self.fitted, "SVC")
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Sorted distinct training labels (`classes_`).
        classes -> &classes: Array1<f64>,
        /// The support vectors (`support_vectors_`).
        support_vectors -> &support_vectors: Array2<f64>,
        /// The resolved kernel (gamma as a number).
        fitted_kernel -> kernel: Kernel,
        /// Whether every pair met `tol` within `max_iter`.
        converged -> converged: bool,
    }

    /// Training indices of the support vectors (`support_`), grouped by class.
    pub fn support(&self) -> Option<&[usize]> {
        self.fitted.as_ref().map(|f| f.support.as_slice())
    }

    /// Support vectors per class (`n_support_`).
    pub fn n_support(&self) -> Option<&[usize]> {
        self.fitted.as_ref().map(|f| f.n_support.as_slice())
    }

    /// Dual coefficients `y_i alpha_i` (`dual_coef_`, `(n_classes - 1) x n_SV`), with
    /// scikit-learn's sign convention (negated for two classes, so positive favours
    /// `classes[1]`).
    pub fn dual_coef(&self) -> Option<Array2<f64>> {
        self.fitted.as_ref().map(|f| {
            if f.classes.len() == 2 {
                -&f.dual_coef
            } else {
                f.dual_coef.clone()
            }
        })
    }

    /// Intercepts (`intercept_`), one per pair of classes, with scikit-learn's sign
    /// convention.
    pub fn intercept(&self) -> Option<Array1<f64>> {
        self.fitted.as_ref().map(|f| {
            if f.classes.len() == 2 {
                f.rho.clone()
            } else {
                -&f.rho
            }
        })
    }

    /// SMO iterations per pair of classes (`n_iter_`).
    pub fn n_iter(&self) -> Option<&[usize]> {
        self.fitted.as_ref().map(|f| f.n_iter.as_slice())
    }

    /// Primal weights for the linear kernel (`coef_`): `1 x d` for two classes (positive
    /// favours `classes[1]`), one row per pair of classes otherwise. `None` for other kernels
    /// or before fitting.
    pub fn coefficients(&self) -> Option<Array2<f64>> {
        let f = self.fitted.as_ref()?;
        if f.kernel != Kernel::Linear {
            return None;
        }
        let k = f.classes.len();
        let starts = class_starts(&f.n_support);
        let mut coef = Array2::zeros((k * (k - 1) / 2, f.support_vectors.ncols()));
        let mut p = 0;
        for i in 0..k {
            for j in i + 1..k {
                let mut row = coef.row_mut(p);
                for s in starts[i]..starts[i + 1] {
                    row.scaled_add(f.dual_coef[[j - 1, s]], &f.support_vectors.row(s));
                }
                for s in starts[j]..starts[j + 1] {
                    row.scaled_add(f.dual_coef[[i, s]], &f.support_vectors.row(s));
                }
                p += 1;
            }
        }
        if k == 2 {
            coef.mapv_inplace(|v| -v);
        }
        Some(coef)
    }

    fn resolve_kernel(&self, x: ArrayView2<f64>) -> Result<Kernel> {
        if let Gamma::Value(v) = self.gamma {
            Gamma::value(v)?;
        }
        // Parse with a placeholder gamma first so an unknown name fails before any work.
        Kernel::parse(&self.kernel, 1.0, self.degree, self.coef0)?;
        Kernel::parse(
            &self.kernel,
            self.gamma.value_on(x),
            self.degree,
            self.coef0,
        )
    }

    /// The one check of SVC's hyper-parameters, for every door (the kernel's are checked as
    /// it is resolved).
    pub fn check_params(&self) -> Result<()> {
        require_positive("C", self.c)?;
        require_positive("tol", self.tol)?;
        if self.max_iter == Some(0) {
            return Err(Error::invalid_parameter(
                "max_iter",
                "must be at least 1 (or None for no cap), got 0",
            ));
        }
        if !(self.cache_size.is_finite() && self.cache_size > 0.0) {
            return Err(Error::invalid_parameter(
                "cache_size",
                format!(
                    "must be a positive number of megabytes, got {}",
                    self.cache_size
                ),
            ));
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and labels `y`.
    ///
    /// Original API: labels 0 or 1, both present (`InvalidInput` otherwise); empty ->
    /// `EmptyInput`; NaN/inf -> `NonFinite`; length mismatch -> `DimensionMismatch`; no
    /// convergence within `max_iter` -> `NotConverged`. Python layer: any labels, at least two
    /// distinct (one-vs-one beyond two).
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<&mut Self> {
        let (x, y) = (x.view(), y.view());
        let zero_one = self.options.labels == ClassLabels::ZeroOne;
        if zero_one {
            require_xy(&x, &y)?;
            if let Some(bad) = y.iter().find(|&&v| v != 0.0 && v != 1.0) {
                return Err(Error::invalid_input(format!(
                    "labels must be 0 or 1, found {bad}"
                )));
            }
        } else {
            self.check_params()?;
            check_xy(&x, &y)?;
        }
        let mut named_kernel = None;
        let (classes, index) = if zero_one {
            let index: Vec<usize> = y.iter().map(|&v| usize::from(v == 1.0)).collect();
            // One label only: no support vectors can exist, so there is no model to converge to.
            if index.iter().all(|&c| c == index[0]) {
                return Err(Error::not_converged(
                    "SVC: the training labels hold one class only, so no support vectors exist",
                ));
            }
            (Array1::from(vec![0.0, 1.0]), index)
        } else {
            // An unknown kernel name or a bad gamma is refused before the labels are read.
            if self.kernel_type.is_none() {
                named_kernel = Some(self.resolve_kernel(x)?);
            }
            labels::encode(y, "SVC")?
        };
        let (xs, kernel, resolved) = match self.kernel_type {
            None => match named_kernel {
                Some(kernel) => (None, kernel, None),
                None => (None, self.resolve_kernel(x)?, None),
            },
            Some(kernel_type) => {
                let d = x.ncols();
                let n_all = x.len() as f64;
                let mean = x.iter().sum::<f64>() / n_all;
                let variance = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n_all;
                // Data-dependent gammas are resolved now and kept (`get_kernel` reports the value).
                let resolved = kernel_type.resolve_gamma(d, variance)?;
                // Cosine is the linear kernel on unit-norm rows.
                let kernel = resolved.to_engine(d).unwrap_or(Kernel::Linear);
                let xs = (kernel_type == KernelType::Cosine).then(|| unit_norm_rows(x));
                (xs, kernel, Some(resolved))
            }
        };
        let unit_rows = xs.is_some();
        let mut fitted = self.fit_engine(
            xs.as_ref().map_or(x, |xs| xs.view()),
            kernel,
            classes,
            &index,
            unit_rows,
        )?;
        if !fitted.converged && self.options.iteration_cap == IterationCap::Error {
            return Err(Error::not_converged(format!(
                "SVC reached max_iter = {} before the KKT conditions held within tol = {}",
                self.get_max_iterations(),
                self.tol
            )));
        }
        if zero_one {
            // In the engine's pair (0, 1) a coefficient is α times +1 for label 0.
            let c = fitted.dual_coef.row(0);
            fitted.alphas = Some(c.mapv(f64::abs));
            fitted.sv_signs = Some(c.mapv(|v| if v > 0.0 { -1.0 } else { 1.0 }));
        }
        if resolved.is_some() {
            self.kernel_type = resolved;
        }
        self.fitted = Some(fitted);
        Ok(self)
    }

    /// The SMO pairs over `x` with a resolved kernel and encoded labels.
    fn fit_engine(
        &self,
        x: ArrayView2<f64>,
        kernel: Kernel,
        classes: Array1<f64>,
        index: &[usize],
        unit_rows: bool,
    ) -> Result<Fitted> {
        kernel.check_range(&x, "X", x.nrows())?;
        let k = classes.len();
        let members: Vec<Vec<usize>> = (0..k)
            .map(|c| (0..index.len()).filter(|&i| index[i] == c).collect())
            .collect();
        let cache_bytes = (self.cache_size * 1024.0 * 1024.0) as usize;
        // alpha of every sample in every pair it takes part in: (pair, local index) -> y alpha.
        let mut pair_coef: Vec<Vec<f64>> = Vec::with_capacity(k * (k - 1) / 2);
        let mut rho = Vec::with_capacity(k * (k - 1) / 2);
        let mut n_iter = Vec::with_capacity(k * (k - 1) / 2);
        let mut converged = true;
        let mut is_sv = vec![false; x.nrows()];
        for i in 0..k {
            for j in i + 1..k {
                let idx: Vec<usize> = members[i].iter().chain(&members[j]).copied().collect();
                let sub = x.select(Axis(0), &idx);
                let signs: Vec<f64> = (0..idx.len())
                    .map(|t| if t < members[i].len() { 1.0 } else { -1.0 })
                    .collect();
                let max_iter = self
                    .max_iter
                    .unwrap_or_else(|| 10_000_000usize.max(100usize.saturating_mul(idx.len())));
                let mut rows = KernelRows::new(sub.view(), kernel, cache_bytes);
                let sol = smo(&mut rows, &signs, self.c, self.tol, max_iter);
                converged &= sol.converged;
                for (t, &a) in sol.alpha.iter().enumerate() {
                    if a > 0.0 {
                        is_sv[idx[t]] = true;
                    }
                }
                pair_coef.push(sol.alpha.iter().zip(&signs).map(|(a, s)| a * s).collect());
                rho.push(sol.rho);
                n_iter.push(sol.n_iter);
            }
        }
        // Support vectors grouped by class, in training order within a class.
        let mut support = Vec::new();
        let mut n_support = Vec::with_capacity(k);
        let mut sv_pos = vec![usize::MAX; x.nrows()];
        for m in &members {
            let before = support.len();
            for &t in m {
                if is_sv[t] {
                    sv_pos[t] = support.len();
                    support.push(t);
                }
            }
            n_support.push(support.len() - before);
        }
        // libsvm layout: in pair (i, j), class-i coefficients go to row j - 1, class-j ones to row i.
        let mut dual_coef = Array2::zeros((k - 1, support.len()));
        let mut p = 0;
        for i in 0..k {
            for j in i + 1..k {
                for (t, &c) in members[i].iter().chain(&members[j]).zip(&pair_coef[p]) {
                    if sv_pos[*t] != usize::MAX {
                        let row = if index[*t] == i { j - 1 } else { i };
                        dual_coef[[row, sv_pos[*t]]] = c;
                    }
                }
                p += 1;
            }
        }
        Ok(Fitted {
            kernel,
            classes,
            support_vectors: x.select(Axis(0), &support),
            support,
            n_support,
            dual_coef,
            rho: Array1::from(rho),
            n_iter,
            converged,
            unit_rows,
            alphas: None,
            sv_signs: None,
        })
    }

    /// libsvm's pairwise decision values, `n x n_pairs`, positive meaning the first class of
    /// the pair.
    fn pairwise_decision(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        require_data_width(&x, f.support_vectors.ncols(), "x")?;
        let normalised;
        let x = if f.unit_rows {
            normalised = unit_norm_rows(x);
            normalised.view()
        } else {
            x
        };
        f.kernel.check_range(&x, "X", f.support_vectors.nrows())?;
        let k = f.classes.len();
        let starts = class_starts(&f.n_support);
        let n_pairs = k * (k - 1) / 2;
        let mut out = Array2::zeros((x.nrows(), n_pairs));
        let fill = |(mut dec, krow): (ndarray::ArrayViewMut1<f64>, ndarray::ArrayView1<f64>)| {
            let mut p = 0;
            for i in 0..k {
                for j in i + 1..k {
                    let mut s = 0.0;
                    for t in starts[i]..starts[i + 1] {
                        s += f.dual_coef[[j - 1, t]] * krow[t];
                    }
                    for t in starts[j]..starts[j + 1] {
                        s += f.dual_coef[[i, t]] * krow[t];
                    }
                    dec[p] = s - f.rho[p];
                    p += 1;
                }
            }
        };
        // Kernel rows against the support vectors, a row-chunk at a time (the tiling policy's
        // element budget), so a large test set never materialises n x n_SV at once.
        let n_sv = f.support.len();
        for rows in matmul::row_chunks(x.nrows(), n_sv, usize::MAX) {
            let (start, end) = (rows.start, rows.end);
            let kmat = f
                .kernel
                .kernel_matrix(x.slice(s![start..end, ..]), f.support_vectors.view())?;
            let mut block = out.slice_mut(s![start..end, ..]);
            let work = (end - start)
                .saturating_mul((k - 1).max(1))
                .saturating_mul(n_sv);
            if SCAN_F64.allows_parallel(work) {
                block
                    .axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .zip(kmat.axis_iter(Axis(0)))
                    .for_each(fill);
            } else {
                block
                    .axis_iter_mut(Axis(0))
                    .zip(kmat.axis_iter(Axis(0)))
                    .for_each(fill);
            }
        }
        Ok(out)
    }

    /// Decision values: `n x 1` for two classes (positive favours `classes[1]`); for more,
    /// `n x n_classes` (`Ovr`: votes plus a confidence in `(-1/3, 1/3)`, as scikit-learn)
    /// or `n x n_pairs` (`Ovo`).
    pub fn decision_scores(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let dec = self.pairwise_decision(x)?;
        let k = self.fitted()?.classes.len();
        if k == 2 {
            return Ok(-dec);
        }
        if self.decision_shape == DecisionShape::Ovo {
            return Ok(dec);
        }
        let mut votes = Array2::<f64>::zeros((dec.nrows(), k));
        let mut conf = Array2::<f64>::zeros((dec.nrows(), k));
        for r in 0..dec.nrows() {
            let mut p = 0;
            for i in 0..k {
                for j in i + 1..k {
                    let d = dec[[r, p]];
                    if d >= 0.0 {
                        votes[[r, i]] += 1.0;
                    } else {
                        votes[[r, j]] += 1.0;
                    }
                    conf[[r, i]] += d;
                    conf[[r, j]] -= d;
                    p += 1;
                }
            }
        }
        conf.mapv_inplace(|s| s / (3.0 * (s.abs() + 1.0)));
        Ok(votes + conf)
    }

    /// Predicted labels by one-vs-one voting (ties go to the lower class).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let dec = self.pairwise_decision(x.view())?;
        let f = self.fitted()?;
        let k = f.classes.len();
        let winners: Vec<usize> = dec
            .outer_iter()
            .map(|row| {
                let mut votes = vec![0usize; k];
                let mut p = 0;
                for i in 0..k {
                    for j in i + 1..k {
                        votes[if row[p] > 0.0 { i } else { j }] += 1;
                        p += 1;
                    }
                }
                let mut best = 0;
                for c in 1..k {
                    if votes[c] > votes[best] {
                        best = c;
                    }
                }
                best
            })
            .collect();
        Ok(labels::decode(&f.classes, &winners))
    }

    /// The decision value of a binary fit, positive for label 1:
    /// `Σ α_i y_i k(x_i, x) + bias`.
    pub fn decision_function(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        Ok(self.decision_scores(x.view())?.column(0).to_owned())
    }
}

crate::machine_learning::linear_model::supervised_traits!(SVC, f64, Array1<f64>);
crate::machine_learning::linear_model::supervised_conveniences!(SVC: fit_predict, accuracy_score);
crate::machine_learning::path_persistence!(SVC);

/// Rows scaled to unit Euclidean norm (zero rows stay zero), so the linear kernel on them is
/// the cosine kernel.
fn unit_norm_rows(x: ArrayView2<f64>) -> Array2<f64> {
    let mut out = x.to_owned();
    for mut row in out.rows_mut() {
        let norm = row.dot(&row).sqrt();
        if norm > 0.0 {
            row /= norm;
        }
    }
    out
}

fn class_starts(n_support: &[usize]) -> Vec<usize> {
    let mut starts = vec![0];
    for n in n_support {
        starts.push(starts.last().unwrap() + n);
    }
    starts
}

impl Persist for SVC {
    const MODEL_NAME: &'static str = "SVC";

    fn validate_loaded(&self) -> Result<()> {
        let Some(f) = &self.fitted else {
            return Ok(());
        };
        let damaged = |what: &str| Err(Error::format(format!("damaged SVC: {what}")));
        let (k, n_sv) = (f.classes.len(), f.support_vectors.nrows());
        if k < 2 || f.n_support.len() != k || f.n_support.iter().sum::<usize>() != n_sv {
            return damaged("class and support-vector counts disagree");
        }
        if f.support.len() != n_sv || f.dual_coef.dim() != (k - 1, n_sv) {
            return damaged(
                "support indices or dual coefficients do not match the support vectors",
            );
        }
        if f.rho.len() != k * (k - 1) / 2 || f.n_iter.len() != f.rho.len() {
            return damaged("one intercept and iteration count per class pair expected");
        }
        let binary_terms = [&f.alphas, &f.sv_signs];
        if binary_terms
            .iter()
            .any(|t| t.as_ref().is_some_and(|a| a.len() != n_sv))
        {
            return damaged("binary multipliers do not match the support vectors");
        }
        let binary_values = binary_terms.into_iter().flatten().flat_map(|a| a.iter());
        let values = (f.classes.iter().chain(f.support_vectors.iter()))
            .chain(f.dual_coef.iter().chain(f.rho.iter()))
            .chain(binary_values);
        if !values.into_iter().all(|v| v.is_finite()) {
            return damaged("non-finite fitted values");
        }
        let kernel_ok = match f.kernel {
            Kernel::Linear => true,
            Kernel::Poly { gamma, coef0, .. } | Kernel::Sigmoid { gamma, coef0 } => {
                gamma.is_finite() && gamma > 0.0 && coef0.is_finite()
            }
            Kernel::Rbf { gamma } => gamma.is_finite() && gamma > 0.0,
        };
        if !kernel_ok {
            return damaged("invalid kernel parameters");
        }
        Ok(())
    }
}

/// Kernel rows of one binary problem: all precomputed when the Gram matrix fits the cache,
/// otherwise computed on demand and kept in a least-recently-used cache.
struct KernelRows<'a> {
    x: ArrayView2<'a, f64>,
    kernel: Kernel,
    diag: Array1<f64>,
    rows: Vec<Option<Arc<[f64]>>>,
    last_used: Vec<u64>,
    resident: Vec<usize>,
    capacity: usize,
    clock: u64,
}

impl<'a> KernelRows<'a> {
    fn new(x: ArrayView2<'a, f64>, kernel: Kernel, cache_bytes: usize) -> Self {
        let m = x.nrows();
        let capacity = (cache_bytes / (8 * m.max(1))).clamp(2, m.max(2));
        let diag = kernel.diagonal(x);
        let mut rows: Vec<Option<Arc<[f64]>>> = vec![None; m];
        let mut resident = Vec::new();
        if capacity >= m {
            let gram = kernel.gram(x).expect("kernel validated and shapes agree");
            for (i, row) in gram.outer_iter().enumerate() {
                rows[i] = Some(Arc::from(row.to_vec()));
                resident.push(i);
            }
        }
        Self {
            x,
            kernel,
            diag,
            rows,
            last_used: vec![0; m],
            resident,
            capacity,
            clock: 0,
        }
    }

    fn row(&mut self, i: usize) -> Arc<[f64]> {
        self.clock += 1;
        self.last_used[i] = self.clock;
        if let Some(r) = &self.rows[i] {
            return r.clone();
        }
        if self.resident.len() >= self.capacity {
            let (pos, _) = self
                .resident
                .iter()
                .enumerate()
                .min_by_key(|(_, &r)| self.last_used[r])
                .expect("cache holds rows");
            let evicted = self.resident.swap_remove(pos);
            self.rows[evicted] = None;
        }
        let mut row = self
            .kernel
            .kernel_matrix(self.x.row(i).insert_axis(Axis(0)), self.x)
            .expect("kernel validated and shapes agree")
            .into_raw_vec_and_offset()
            .0;
        row[i] = self.diag[i];
        let row: Arc<[f64]> = Arc::from(row);
        self.rows[i] = Some(row.clone());
        self.resident.push(i);
        row
    }
}

struct SmoSolution {
    alpha: Vec<f64>,
    rho: f64,
    n_iter: usize,
    converged: bool,
}

/// One of libsvm's two clips of a pair whose sum is kept (`y_i == y_j`), run for `(a, b)` =
/// `(i, j)` then `(j, i)`: `alpha[a]` down to `c`, or `alpha[b]` up to 0, the other taking
/// the rest of `sum`.
#[inline(always)]
fn clip_fixed_sum(alpha: &mut [f64], a: usize, b: usize, sum: f64, c: f64) {
    if sum > c {
        if alpha[a] > c {
            alpha[a] = c;
            alpha[b] = sum - c;
        }
    } else if alpha[b] < 0.0 {
        alpha[b] = 0.0;
        alpha[a] = sum;
    }
}

/// libsvm's C-SVC dual solver without shrinking:
/// `min 0.5 aᵀQa - eᵀa` s.t. `0 <= a <= C`, `yᵀa = 0`, with `Q_ij = y_i y_j K_ij`.
fn smo(rows: &mut KernelRows, y: &[f64], c: f64, eps: f64, max_iter: usize) -> SmoSolution {
    let m = y.len();
    let mut alpha = vec![0.0; m];
    let mut grad = vec![-1.0; m];
    let qd = rows.diag.clone();
    let upper = |a: f64| a >= c;
    let lower = |a: f64| a <= 0.0;
    let mut n_iter = 0;
    let mut converged = false;
    while n_iter < max_iter {
        // Working-set selection, second-order (libsvm's WSS 3).
        let mut gmax = f64::NEG_INFINITY;
        let mut gmax_idx = None;
        for t in 0..m {
            if y[t] > 0.0 {
                if !upper(alpha[t]) && -grad[t] >= gmax {
                    gmax = -grad[t];
                    gmax_idx = Some(t);
                }
            } else if !lower(alpha[t]) && grad[t] >= gmax {
                gmax = grad[t];
                gmax_idx = Some(t);
            }
        }
        let Some(i) = gmax_idx else {
            converged = true;
            break;
        };
        let ki = rows.row(i);
        let mut gmax2 = f64::NEG_INFINITY;
        let mut gmin_idx = None;
        let mut obj_diff_min = f64::INFINITY;
        for t in 0..m {
            let grad_diff = if y[t] > 0.0 {
                if lower(alpha[t]) {
                    continue;
                }
                gmax2 = gmax2.max(grad[t]);
                gmax + grad[t]
            } else {
                if upper(alpha[t]) {
                    continue;
                }
                gmax2 = gmax2.max(-grad[t]);
                gmax - grad[t]
            };
            if grad_diff > 0.0 {
                let quad = qd[i] + qd[t] - 2.0 * ki[t];
                let obj_diff = -(grad_diff * grad_diff) / if quad > 0.0 { quad } else { TAU };
                if obj_diff <= obj_diff_min {
                    gmin_idx = Some(t);
                    obj_diff_min = obj_diff;
                }
            }
        }
        let (Some(j), true) = (gmin_idx, gmax + gmax2 >= eps) else {
            converged = true;
            break;
        };
        n_iter += 1;
        let kj = rows.row(j);
        let (old_ai, old_aj) = (alpha[i], alpha[j]);
        let quad = {
            let q = qd[i] + qd[j] - 2.0 * ki[j];
            if q > 0.0 {
                q
            } else {
                TAU
            }
        };
        if y[i] != y[j] {
            let delta = (-grad[i] - grad[j]) / quad;
            let diff = alpha[i] - alpha[j];
            alpha[i] += delta;
            alpha[j] += delta;
            if diff > 0.0 {
                if alpha[j] < 0.0 {
                    alpha[j] = 0.0;
                    alpha[i] = diff;
                }
            } else if alpha[i] < 0.0 {
                alpha[i] = 0.0;
                alpha[j] = -diff;
            }
            // libsvm's `diff > C_i - C_j` with equal bounds.
            if diff > 0.0 {
                if alpha[i] > c {
                    alpha[i] = c;
                    alpha[j] = c - diff;
                }
            } else if alpha[j] > c {
                alpha[j] = c;
                alpha[i] = c + diff;
            }
        } else {
            let delta = (grad[i] - grad[j]) / quad;
            let sum = alpha[i] + alpha[j];
            alpha[i] -= delta;
            alpha[j] += delta;
            clip_fixed_sum(&mut alpha, i, j, sum, c);
            clip_fixed_sum(&mut alpha, j, i, sum, c);
        }
        let (dai, daj) = (alpha[i] - old_ai, alpha[j] - old_aj);
        let (ci, cj) = (y[i] * dai, y[j] * daj);
        for t in 0..m {
            grad[t] += y[t] * (ci * ki[t] + cj * kj[t]);
        }
    }
    // rho: mean of y G over free vectors, else the middle of the feasible interval.
    let (mut ub, mut lb, mut sum_free, mut n_free) =
        (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize);
    for t in 0..m {
        let yg = y[t] * grad[t];
        if upper(alpha[t]) {
            if y[t] < 0.0 {
                ub = ub.min(yg);
            } else {
                lb = lb.max(yg);
            }
        } else if lower(alpha[t]) {
            if y[t] > 0.0 {
                ub = ub.min(yg);
            } else {
                lb = lb.max(yg);
            }
        } else {
            n_free += 1;
            sum_free += yg;
        }
    }
    let rho = if n_free > 0 {
        sum_free / n_free as f64
    } else {
        (ub + lb) / 2.0
    };
    SmoSolution {
        alpha,
        rho,
        n_iter,
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn rings(n: usize) -> (Array2<f64>, Array1<f64>) {
        // Inner disc (label 1) and outer ring (label 2): not linearly separable.
        let x = Array2::from_shape_fn((n, 2), |(i, j)| {
            let r = if i % 2 == 0 {
                0.5 + (i % 5) as f64 * 0.05
            } else {
                2.0 + (i % 7) as f64 * 0.05
            };
            let a = i as f64 * 2.399;
            if j == 0 {
                r * a.cos()
            } else {
                r * a.sin()
            }
        });
        let y = Array1::from_iter((0..n).map(|i| if i % 2 == 0 { 1.0 } else { 2.0 }));
        (x, y)
    }

    /// Hand-solvable problem: two points x = -1 (class 0) and x = +1 (class 1), linear kernel.
    /// The hard-margin solution is w = 1, b = 0, alphas 1/2 (within C = 1).
    #[test]
    fn two_point_problem_matches_the_hand_solution() {
        let x = array![[-1.0], [1.0]];
        let y = array![0.0, 1.0];
        let mut m = SVC::with_defaults().with_kernel("linear");
        m.fit(&x, &y).unwrap();
        let coef = m.coefficients().unwrap();
        assert!((coef[[0, 0]] - 1.0).abs() < 1e-12, "{coef}");
        assert!(m.intercept().unwrap()[0].abs() < 1e-12);
        assert_eq!(m.support().unwrap(), &[0, 1]);
        assert_eq!(m.n_support().unwrap(), &[1, 1]);
        let dc = m.dual_coef().unwrap();
        assert!(
            (dc[[0, 0]] + 0.5).abs() < 1e-12 && (dc[[0, 1]] - 0.5).abs() < 1e-12,
            "{dc}"
        );
        let dec = m.decision_scores(array![[0.5], [-2.0]].view()).unwrap();
        assert!((dec[[0, 0]] - 0.5).abs() < 1e-12 && (dec[[1, 0]] + 2.0).abs() < 1e-12);
    }

    #[test]
    fn rbf_separates_rings_and_satisfies_the_kkt_conditions() {
        let (x, y) = rings(120);
        let mut m = SVC::with_defaults().with_c(10.0);
        m.fit(&x, &y).unwrap();
        assert_eq!(m.score(&x, &y).unwrap(), 1.0);
        assert!(m.converged().unwrap());
        // KKT of the dual: sum(y alpha) = 0 and 0 <= alpha <= C.
        let dc = m.dual_coef().unwrap();
        assert!(dc.sum().abs() < 1e-10);
        assert!(dc.iter().all(|v| v.abs() <= 10.0 + 1e-12));
        // Decision values recomputed from the dual form with the public attributes.
        let kernel = m.fitted_kernel().unwrap();
        let sv = m.support_vectors().unwrap();
        let dec = m.decision_scores(x.view()).unwrap();
        for i in 0..10 {
            let mut s = m.intercept().unwrap()[0];
            for t in 0..sv.nrows() {
                s += dc[[0, t]] * kernel.between(sv.row(t), x.row(i));
            }
            assert!((s - dec[[i, 0]]).abs() < 1e-9, "{s} vs {}", dec[[i, 0]]);
        }
    }

    #[test]
    fn lru_cache_gives_the_same_model_as_the_full_gram() {
        let (x, y) = rings(80);
        let mut full = SVC::with_defaults();
        full.fit(&x, &y).unwrap();
        // 80 rows of 8 bytes = 640 bytes per row: a 4 kB cache holds 6 rows.
        let mut tiny = SVC::with_defaults().with_cache_size(4096.0 / (1024.0 * 1024.0));
        tiny.fit(&x, &y).unwrap();
        assert_eq!(full.support(), tiny.support());
        let (a, b) = (
            full.decision_scores(x.view()).unwrap(),
            tiny.decision_scores(x.view()).unwrap(),
        );
        // Rows computed one at a time round differently from the whole Gram matrix.
        for (u, v) in a.iter().zip(b.iter()) {
            assert!((u - v).abs() < 1e-9);
        }
    }

    #[test]
    fn one_vs_one_multiclass_with_every_kernel() {
        // Four clusters on a line-free layout, labels 5, 6, 7, 8.
        let centers = [(0.0, 0.0), (6.0, 0.0), (0.0, 6.0), (6.0, 6.0)];
        let x = Array2::from_shape_fn((80, 2), |(i, j)| {
            let c = centers[i % 4];
            let jitter = ((i * 7919 + j * 131) % 100) as f64 / 50.0 - 1.0;
            if j == 0 {
                c.0 + jitter
            } else {
                c.1 + jitter
            }
        });
        let y = Array1::from_iter((0..80).map(|i| 5.0 + (i % 4) as f64));
        for kernel in ["linear", "poly", "rbf"] {
            let mut m = SVC::with_defaults().with_kernel(kernel);
            m.fit(&x, &y).unwrap();
            assert_eq!(m.score(&x, &y).unwrap(), 1.0, "{kernel}");
            assert_eq!(m.n_support().unwrap().len(), 4);
            assert_eq!(
                m.n_support().unwrap().iter().sum::<usize>(),
                m.support().unwrap().len()
            );
            let ovr = m.decision_scores(x.view()).unwrap();
            assert_eq!(ovr.dim(), (80, 4));
            let pred = m.predict(&x).unwrap();
            for i in 0..80 {
                // The ovr shape's arg-max is the voting winner (confidences stay below 1/3).
                let best = labels::row_argmax(ovr.slice(ndarray::s![i..i + 1, ..]))[0];
                assert_eq!(5.0 + best as f64, pred[i]);
            }
            let ovo = m
                .clone()
                .with_decision_shape(DecisionShape::Ovo)
                .decision_scores(x.view())
                .unwrap();
            assert_eq!(ovo.dim(), (80, 6));
        }
        let mut sig = SVC::with_defaults()
            .with_kernel("sigmoid")
            .with_gamma(Gamma::Value(0.01));
        sig.fit(&x, &y).unwrap();
        assert_eq!(sig.predict(&x).unwrap().len(), 80);
    }

    #[test]
    fn chunked_prediction_equals_one_block() {
        let (x, y) = rings(60);
        let mut m = SVC::with_defaults();
        m.fit(&x, &y).unwrap();
        let whole = m.decision_scores(x.view()).unwrap();
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // A budget of 7 rows of support-vector kernel values per chunk.
        let budget = 7 * m.support().unwrap().len();
        let chunked = crate::gate::with_gate(&matmul::CHUNK_ELEMS, budget, || {
            m.decision_scores(x.view()).unwrap()
        });
        // Smaller products may take another gemmkit path (rounding, not results, may differ).
        for (a, b) in whole.iter().zip(chunked.iter()) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = array![[0.0], [1.0]];
        let y = array![0.0, 1.0];
        assert!(matches!(
            SVC::with_defaults().predict(&x),
            Err(Error::NotFitted(_))
        ));
        let err = SVC::with_defaults()
            .with_kernel("laplace")
            .fit(&x, &y)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown kernel"), "{err}");
        assert!(SVC::with_defaults().with_c(0.0).fit(&x, &y).is_err());
        assert!(SVC::with_defaults()
            .with_gamma(Gamma::Value(-1.0))
            .fit(&x, &y)
            .is_err());
        assert!(SVC::with_defaults().fit(&x, &array![1.0, 1.0]).is_err());
        assert!(SVC::with_defaults()
            .fit(&array![[f64::NAN], [1.0]], &y)
            .is_err());
        assert!(SVC::with_defaults().fit(&x, &array![1.0]).is_err());
        let mut m = SVC::with_defaults();
        m.fit(&x, &y).unwrap();
        assert!(m.predict(&array![[1.0, 2.0]]).is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y) = rings(40);
        let mut m = SVC::with_defaults();
        m.fit(&x, &y).unwrap();
        let back = SVC::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.decision_scores(x.view()).unwrap(),
            m.decision_scores(x.view()).unwrap()
        );
    }

    /// Each damage that used to load and then panic in predict is refused at load.
    #[test]
    fn inconsistent_saved_state_is_refused_at_load() {
        let (x, y) = rings(40);
        let mut m = SVC::with_defaults();
        m.fit(&x, &y).unwrap();
        let damages: [fn(&mut Fitted); 5] = [
            |f| f.rho = Array1::zeros(0),
            |f| f.n_support[0] += 1,
            |f| f.dual_coef = Array2::zeros((1, 1)),
            |f| f.support_vectors[[0, 0]] = f64::NAN,
            |f| f.kernel = Kernel::Rbf { gamma: -1.0 },
        ];
        for damage in damages {
            let mut bad = m.clone();
            damage(bad.fitted.as_mut().unwrap());
            let err = SVC::from_bytes(&bad.to_bytes().unwrap()).unwrap_err();
            assert!(err.to_string().contains("damaged SVC"), "{err}");
        }
    }

    /// Hand-derived: on x = {0, -1} (label 0) and {2, 3} (label 1) the maximum-margin
    /// hyperplane is f(x) = x - 1 (support vectors 0 and 2 on the margins), so the bias is -1.
    #[test]
    fn original_api_matches_the_closed_form_margin() {
        let x = array![[0.0], [-1.0], [2.0], [3.0]];
        let y = array![0.0, 0.0, 1.0, 1.0];
        let mut m = SVC::new(KernelType::Linear, 10.0, 1e-6, 5000).unwrap();
        m.fit(&x, &y).unwrap();
        assert!((m.get_bias().unwrap() + 1.0).abs() < 1e-4);
        let f = m.decision_function(&array![[0.0], [2.0], [1.0]]).unwrap();
        for (got, want) in f.iter().zip([-1.0, 1.0, 0.0]) {
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
        assert_eq!(m.predict(&x).unwrap(), y);
        assert!(matches!(
            m.fit(&x, &array![-1.0, -1.0, 1.0, 1.0]),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            m.fit(&x, &array![1.0, 1.0, 1.0, 1.0]),
            Err(Error::NotConverged(_))
        ));
    }
}
