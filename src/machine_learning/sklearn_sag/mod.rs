//! A step-for-step replica of scikit-learn's SAG and SAGA solvers (`sag_solver` and its
//! compiled loop) as `LogisticRegression` runs them, so a fit gives scikit-learn's
//! coefficients bit for bit.
//!
//! The method: each step draws one row (`random::XorShiftSampler`), computes its loss
//! gradient at the current weights, replaces that row's remembered gradient in the running
//! sum, and moves the weights along the averaged gradient. The weights are stored as
//! `scale * w`; the L2 penalty only shrinks `scale`. The averaged-gradient step of a feature
//! the drawn rows do not touch is postponed ("lagged") and applied in one go, with the
//! running sums of per-step factors, when a later row touches the feature or when the
//! scale is folded back into the weights (at the end of every epoch, and whenever it drops
//! below `1e-9`). SAGA adds the unbiased correction step for the drawn row and, for an L1
//! penalty, soft thresholding after each postponed step. The epoch loop stops when the
//! largest weight change over the epoch is at most `tol` times the largest weight.
//!
//! Every quantity is computed with the same operations in the same order as scikit-learn's
//! loop (no sum goes through BLAS there), and `exp` is the C library's, as scikit-learn's.

mod random;
#[cfg(test)]
mod tests;

pub use random::XorShiftSampler;

/// scikit-learn's intercept step factor for sparse data (its `SPARSE_INTERCEPT_DECAY`).
pub const SPARSE_INTERCEPT_DECAY: f64 = 0.01;

/// The scale below which the weights are rescaled mid-epoch.
const SMALLEST_SCALE: f64 = 1e-9;

/// The training rows: a dense C-ordered matrix or a CSR matrix (rows served in stored order).
#[derive(Clone, Copy, Debug)]
pub enum SagRows<'a> {
    /// `values[i * n_features + j]`, every feature of every row.
    Dense {
        values: &'a [f64],
        n_rows: usize,
        n_features: usize,
    },
    /// Row `i` holds `values[indptr[i]..indptr[i + 1]]` at columns `indices[..]` alike.
    Csr {
        indptr: &'a [usize],
        indices: &'a [usize],
        values: &'a [f64],
        n_features: usize,
    },
}

impl<'a> SagRows<'a> {
    pub fn n_rows(&self) -> usize {
        match self {
            SagRows::Dense { n_rows, .. } => *n_rows,
            SagRows::Csr { indptr, .. } => indptr.len().saturating_sub(1),
        }
    }

    pub fn n_features(&self) -> usize {
        match self {
            SagRows::Dense { n_features, .. } | SagRows::Csr { n_features, .. } => *n_features,
        }
    }

    /// Row `i`'s stored values and their columns (`None`: all columns in order).
    fn row(&self, i: usize) -> (Option<&'a [usize]>, &'a [f64]) {
        match *self {
            SagRows::Dense {
                values, n_features, ..
            } => (None, &values[i * n_features..(i + 1) * n_features]),
            SagRows::Csr {
                indptr,
                indices,
                values,
                ..
            } => {
                let span = indptr[i]..indptr[i + 1];
                (Some(&indices[span.clone()]), &values[span])
            }
        }
    }

    /// scikit-learn's intercept step factor: one for dense rows, less for sparse ones.
    pub fn intercept_decay(&self) -> f64 {
        match self {
            SagRows::Dense { .. } => 1.0,
            SagRows::Csr { .. } => SPARSE_INTERCEPT_DECAY,
        }
    }

    fn check(&self) -> Result<(), SagFailure> {
        let bad = |why: &str| Err(SagFailure::InvalidInput(why.to_string()));
        match *self {
            SagRows::Dense {
                values,
                n_rows,
                n_features,
            } => {
                if n_rows.checked_mul(n_features) != Some(values.len()) {
                    return bad("dense rows: values do not fill n_rows x n_features");
                }
            }
            SagRows::Csr {
                indptr,
                indices,
                values,
                n_features,
            } => {
                if indptr.is_empty() || indices.len() != values.len() {
                    return bad("sparse rows: malformed parts");
                }
                if indptr[0] != 0
                    || indptr.windows(2).any(|w| w[0] > w[1])
                    || indptr[indptr.len() - 1] != values.len()
                {
                    return bad("sparse rows: row pointers out of order");
                }
                if indices.iter().any(|&j| j >= n_features) {
                    return bad("sparse rows: a column index past n_features");
                }
            }
        }
        Ok(())
    }
}

/// The loss whose gradient the solver follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SagLoss {
    /// Half the binomial log-loss of a `{0, 1}` target, one weight column.
    Binomial,
    /// Half the multinomial log-loss of a class code `0..n_classes`, one column per class.
    Multinomial,
}

/// What the caller fixes for one run.
#[derive(Clone, Debug)]
pub struct SagSettings {
    pub loss: SagLoss,
    /// Weight columns: 1 for `Binomial`, the class count for `Multinomial`.
    pub n_classes: usize,
    /// The L2 strength (scikit-learn's `alpha`, before it divides by the row count).
    pub alpha: f64,
    /// The L1 strength (`beta`, likewise; SAGA only).
    pub beta: f64,
    /// The largest squared row norm, for the step size.
    pub max_squared_sum: f64,
    pub tol: f64,
    pub max_iter: usize,
    pub fit_intercept: bool,
    /// SAGA rather than SAG.
    pub saga: bool,
    /// The sampler's seed, as scikit-learn draws it from `random_state`.
    pub seed: u32,
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct SagRun {
    /// `weights[feature * n_classes + class]`.
    pub weights: Vec<f64>,
    pub intercept: Vec<f64>,
    /// Epochs run (scikit-learn's `n_iter_`).
    pub n_iter: usize,
    /// Distinct rows drawn.
    pub num_seen: usize,
}

/// Why a run gives no answer (scikit-learn raises on the first two).
#[derive(Clone, Debug, PartialEq)]
pub enum SagFailure {
    /// The step size times the scaled L2 strength is exactly one.
    DegenerateStep,
    /// A weight or an intercept became infinite or NaN during the given epoch (1-based).
    NonFinite {
        epoch: usize,
    },
    InvalidInput(String),
}

impl std::fmt::Display for SagFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SagFailure::DegenerateStep => write!(f, "step size times alpha is one"),
            SagFailure::NonFinite { epoch } => {
                write!(f, "floating-point under-/overflow at epoch {epoch}")
            }
            SagFailure::InvalidInput(why) => write!(f, "{why}"),
        }
    }
}

/// scikit-learn's automatic step size for the (binomial or multinomial) log-loss:
/// `1 / L` for SAG and `1 / (2 L + min(2 n alpha_scaled, L))` for SAGA, with
/// `L = (max_squared_sum + fit_intercept) / 4 + alpha_scaled`.
pub fn auto_step_size(
    max_squared_sum: f64,
    alpha_scaled: f64,
    fit_intercept: bool,
    n_rows: usize,
    saga: bool,
) -> f64 {
    let lipschitz = 0.25 * (max_squared_sum + f64::from(u8::from(fit_intercept))) + alpha_scaled;
    if saga {
        let strong = (2 * n_rows) as f64 * alpha_scaled;
        // Python's `min` keeps its first argument unless the second is smaller.
        let strong = if lipschitz < strong {
            lipschitz
        } else {
            strong
        };
        1.0 / (2.0 * lipschitz + strong)
    } else {
        1.0 / lipschitz
    }
}

/// C's `fmax` as scikit-learn's loop spells it: the first argument when greater, else the
/// second.
fn larger(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

/// The L1 proximal step: `x` moved toward zero by `shrinkage`, stopping at zero.
fn soft_threshold(x: f64, shrinkage: f64) -> f64 {
    larger(x - shrinkage, 0.0) - larger(-x - shrinkage, 0.0)
}

/// The derivative of half the binomial log-loss in the raw prediction, `expit(raw) - y`,
/// in scikit-learn's form (one exponential, its branch at -37).
pub fn binomial_gradient(y: f64, raw: f64) -> f64 {
    if raw > -37.0 {
        let e = (-raw).exp();
        ((1.0 - y) - y * e) / (1.0 + e)
    } else {
        raw.exp() - y
    }
}

/// The weighted multinomial gradient `(softmax(raw) - onehot(y)) * weight` into `out`, with
/// scikit-learn's order: the maximum, the shifted exponentials and their sum, then division.
pub fn multinomial_gradient(y: f64, raw: &[f64], weight: f64, out: &mut [f64]) {
    let mut top = raw[0];
    for &r in &raw[1..] {
        if top < r {
            top = r;
        }
    }
    let mut total = 0.0;
    for (o, &r) in out.iter_mut().zip(raw) {
        *o = (r - top).exp();
        total += *o;
    }
    for (class, o) in out.iter_mut().enumerate() {
        *o /= total;
        let hit = if y == class as f64 { 1.0 } else { 0.0 };
        *o = (*o - hit) * weight;
    }
}

/// The postponed-update bookkeeping: per-step running sums of the gradient factor (and of
/// the L1 shrinkage), and the step at which each feature was last brought up to date. Every
/// dense row touches every feature, so dense rows keep one step for all features (`shared`)
/// and bring them up to date in one pass over the weights, the factor worked out once: the
/// same operations per weight as feature by feature.
struct LaggedSteps {
    n_rows: usize,
    n_classes: usize,
    cumulative: Vec<f64>,
    /// Empty without an L1 proximal step.
    cumulative_prox: Vec<f64>,
    /// One entry per feature, or a single one when `shared`.
    last_update: Vec<usize>,
    shared: bool,
}

impl LaggedSteps {
    fn new(n_rows: usize, n_classes: usize, n_features: usize, prox: bool, dense: bool) -> Self {
        Self {
            n_rows,
            n_classes,
            cumulative: vec![0.0; n_rows],
            cumulative_prox: if prox { vec![0.0; n_rows] } else { Vec::new() },
            last_update: vec![0; if dense { 1 } else { n_features }],
            shared: dense,
        }
    }

    fn prox(&self) -> bool {
        !self.cumulative_prox.is_empty()
    }

    /// Brings the weights `weights` (with their gradient sums `sum_gradient`), last brought
    /// up to date at step `last`, up to step `step` (the steps before it); with `fold`, also
    /// multiplies in `scale`. `false` when a folded weight is not finite.
    // (inlined: it runs once per stored entry of every drawn sparse row)
    #[inline(always)]
    fn advance(
        &self,
        weights: &mut [f64],
        sum_gradient: &[f64],
        scale: f64,
        last: usize,
        step: usize,
        fold: bool,
    ) -> bool {
        let mut factor = self.cumulative[step - 1];
        if last != 0 {
            factor -= self.cumulative[last - 1];
        }
        if !self.prox() {
            if !fold {
                for (w, &g) in weights.iter_mut().zip(sum_gradient) {
                    *w -= factor * g;
                }
                return true;
            }
            for (w, &g) in weights.iter_mut().zip(sum_gradient) {
                *w -= factor * g;
                *w *= scale;
                if !w.is_finite() {
                    return false;
                }
            }
            return true;
        }
        let mut shrink = self.cumulative_prox[step - 1];
        if last != 0 {
            shrink -= self.cumulative_prox[last - 1];
        }
        for (weight, &gradient_sum) in weights.iter_mut().zip(sum_gradient) {
            if (gradient_sum * factor).abs() < shrink {
                // The gradient steps cannot cross zero by more than the shrinkage: all of
                // them, then all the thresholding, give the same weight.
                *weight -= factor * gradient_sum;
                *weight = soft_threshold(*weight, shrink);
            } else {
                // One gradient step and one thresholding per postponed step, latest first.
                for lag in (last..step).rev() {
                    let (grad_step, prox_step) = if lag > 0 {
                        (
                            self.cumulative[lag] - self.cumulative[lag - 1],
                            self.cumulative_prox[lag] - self.cumulative_prox[lag - 1],
                        )
                    } else {
                        (self.cumulative[lag], self.cumulative_prox[lag])
                    };
                    *weight -= gradient_sum * grad_step;
                    *weight = soft_threshold(*weight, prox_step);
                }
            }
            if fold {
                *weight *= scale;
                if !weight.is_finite() {
                    return false;
                }
            }
        }
        true
    }

    /// The step a feature is up to date at after being brought to `step`.
    fn stamp(&self, step: usize, fold: bool) -> usize {
        if fold {
            step % self.n_rows
        } else {
            step
        }
    }

    /// Brings `feature`'s weights up to step `step` (sparse rows, one feature at a time).
    #[inline(always)]
    fn catch_up(
        &mut self,
        weights: &mut [f64],
        sum_gradient: &[f64],
        scale: f64,
        feature: usize,
        step: usize,
        fold: bool,
    ) -> bool {
        let span = feature * self.n_classes..(feature + 1) * self.n_classes;
        let last = self.last_update[feature];
        let finite = self.advance(
            &mut weights[span.clone()],
            &sum_gradient[span],
            scale,
            last,
            step,
            fold,
        );
        self.last_update[feature] = self.stamp(step, fold);
        finite
    }

    /// Brings every feature up to step `step`; with `fold`, also multiplies in `scale`.
    fn catch_up_all(
        &mut self,
        weights: &mut [f64],
        sum_gradient: &[f64],
        scale: f64,
        step: usize,
        fold: bool,
    ) -> bool {
        if self.shared {
            let finite = self.advance(
                weights,
                sum_gradient,
                scale,
                self.last_update[0],
                step,
                fold,
            );
            self.last_update[0] = self.stamp(step, fold);
            return finite;
        }
        for feature in 0..self.last_update.len() {
            if !self.catch_up(weights, sum_gradient, scale, feature, step, fold) {
                return false;
            }
        }
        true
    }

    /// Brings every feature up to step `step`, folds `scale` into the weights and restarts
    /// the running sums there. `false` when a weight is not finite.
    fn fold_all(
        &mut self,
        weights: &mut [f64],
        sum_gradient: &[f64],
        scale: f64,
        step: usize,
    ) -> bool {
        if !self.catch_up_all(weights, sum_gradient, scale, step, true) {
            return false;
        }
        self.cumulative[step - 1] = 0.0;
        if self.prox() {
            self.cumulative_prox[step - 1] = 0.0;
        }
        true
    }
}

/// Runs scikit-learn's SAG (or SAGA) from `weights`/`intercept` (a warm start, or zeros):
/// `y` the targets (`{0, 1}` or class codes as floats), `sample_weight` one per row.
pub fn train_sag(
    rows: SagRows<'_>,
    y: &[f64],
    sample_weight: &[f64],
    settings: &SagSettings,
    mut weights: Vec<f64>,
    mut intercept: Vec<f64>,
) -> Result<SagRun, SagFailure> {
    rows.check()?;
    let n_rows = rows.n_rows();
    let n_features = rows.n_features();
    let n_classes = settings.n_classes;
    if n_rows == 0 || n_classes == 0 {
        return Err(SagFailure::InvalidInput("no rows or no classes".into()));
    }
    // scikit-learn's datasets index rows with C ints; the sampler's modulus is 32-bit.
    if n_rows > i32::MAX as usize {
        return Err(SagFailure::InvalidInput(
            "more rows than scikit-learn's SAG indexes".into(),
        ));
    }
    if (settings.loss == SagLoss::Binomial) != (n_classes == 1) {
        return Err(SagFailure::InvalidInput(
            "the binomial loss has one column, the multinomial several".into(),
        ));
    }
    if y.len() != n_rows
        || sample_weight.len() != n_rows
        || weights.len() != n_features * n_classes
        || intercept.len() != n_classes
    {
        return Err(SagFailure::InvalidInput(
            "targets, weights or initial coefficients of the wrong length".into(),
        ));
    }

    let alpha_scaled = settings.alpha / n_rows as f64;
    let beta_scaled = settings.beta / n_rows as f64;
    let step_size = auto_step_size(
        settings.max_squared_sum,
        alpha_scaled,
        settings.fit_intercept,
        n_rows,
        settings.saga,
    );
    if step_size * alpha_scaled == 1.0 {
        return Err(SagFailure::DegenerateStep);
    }
    let saga = settings.saga;
    let prox = beta_scaled > 0.0 && saga;
    let intercept_decay = rows.intercept_decay();
    let shrink_per_step = 1.0 - step_size * alpha_scaled;

    let mut sampler = XorShiftSampler::new(settings.seed);
    let dense = matches!(rows, SagRows::Dense { .. });
    let mut lagged = LaggedSteps::new(n_rows, n_classes, n_features, prox, dense);
    let mut sum_gradient = vec![0.0; n_features * n_classes];
    let mut intercept_sum_gradient = vec![0.0; n_classes];
    let mut gradient_memory = vec![0.0; n_rows * n_classes];
    let mut seen = vec![false; n_rows];
    let mut num_seen = 0usize;
    let mut previous = vec![0.0; n_features * n_classes];
    let mut prediction = vec![0.0; n_classes];
    let mut gradient = vec![0.0; n_classes];
    let mut scale = 1.0;
    // Dense rows are read through a column list too: their in-order dot product (one chain
    // of additions) measured a quarter slower as a plain contiguous loop on an Intel host.
    let all_columns: Vec<usize> = (0..n_features).collect();

    // scikit-learn counts one epoch even when `max_iter` is zero and none runs.
    let mut epochs = settings.max_iter.max(1);
    for epoch in 0..settings.max_iter {
        for step in 0..n_rows {
            let i = sampler.next_row(n_rows);
            let (columns, values) = rows.row(i);
            let columns = columns.unwrap_or(&all_columns[..]);
            let memory = &mut gradient_memory[i * n_classes..(i + 1) * n_classes];
            if !seen[i] {
                seen[i] = true;
                num_seen += 1;
            }
            let seen_f = num_seen as f64;

            if step > 0 {
                if dense {
                    lagged.catch_up_all(&mut weights, &sum_gradient, scale, step, false);
                } else {
                    for &feature in columns {
                        lagged.catch_up(&mut weights, &sum_gradient, scale, feature, step, false);
                    }
                }
            }

            for (class, p) in prediction.iter_mut().enumerate() {
                let mut dot = 0.0;
                for (&feature, &x) in columns.iter().zip(values) {
                    dot += weights[feature * n_classes + class] * x;
                }
                *p = scale * dot + intercept[class];
            }
            match settings.loss {
                SagLoss::Binomial => {
                    gradient[0] = binomial_gradient(y[i], prediction[0]) * sample_weight[i];
                }
                SagLoss::Multinomial => {
                    multinomial_gradient(y[i], &prediction, sample_weight[i], &mut gradient)
                }
            }

            scale *= shrink_per_step;

            for (&feature, &x) in columns.iter().zip(values) {
                let base = feature * n_classes;
                for class in 0..n_classes {
                    let change = x * (gradient[class] - memory[class]);
                    if saga {
                        // SAGA's correction for the drawn row; the averaged step waits.
                        weights[base + class] -= change * step_size * (1.0 - 1.0 / seen_f) / scale;
                    }
                    sum_gradient[base + class] += change;
                }
            }

            if settings.fit_intercept {
                for class in 0..n_classes {
                    let mut change = gradient[class] - memory[class];
                    intercept_sum_gradient[class] += change;
                    change *= step_size * (1.0 - 1.0 / seen_f);
                    let averaged =
                        step_size * intercept_sum_gradient[class] / seen_f * intercept_decay;
                    if saga {
                        intercept[class] -= averaged + change;
                    } else {
                        intercept[class] -= averaged;
                    }
                    if !intercept[class].is_finite() {
                        return Err(SagFailure::NonFinite { epoch: epoch + 1 });
                    }
                }
            }

            memory.copy_from_slice(&gradient);

            let before = if step == 0 {
                (0.0, 0.0)
            } else {
                (
                    lagged.cumulative[step - 1],
                    if prox {
                        lagged.cumulative_prox[step - 1]
                    } else {
                        0.0
                    },
                )
            };
            let factor = step_size / (scale * seen_f);
            lagged.cumulative[step] = if step == 0 { factor } else { before.0 + factor };
            if prox {
                let shrink = step_size * beta_scaled / scale;
                lagged.cumulative_prox[step] = if step == 0 { shrink } else { before.1 + shrink };
            }

            if scale < SMALLEST_SCALE {
                if !lagged.fold_all(&mut weights, &sum_gradient, scale, step + 1) {
                    return Err(SagFailure::NonFinite { epoch: epoch + 1 });
                }
                scale = 1.0;
            }
        }

        // Every epoch ends with the weights up to date and the scale folded in.
        if !lagged.fold_all(&mut weights, &sum_gradient, scale, n_rows) {
            return Err(SagFailure::NonFinite { epoch: epoch + 1 });
        }
        scale = 1.0;

        let mut largest_weight: f64 = 0.0;
        let mut largest_change: f64 = 0.0;
        for (w, p) in weights.iter().zip(previous.iter_mut()) {
            largest_weight = larger(largest_weight, w.abs());
            largest_change = larger(largest_change, (w - *p).abs());
            *p = *w;
        }
        if (largest_weight != 0.0 && largest_change / largest_weight <= settings.tol)
            || (largest_weight == 0.0 && largest_change == 0.0)
        {
            epochs = epoch + 1;
            break;
        }
    }

    Ok(SagRun {
        weights,
        intercept,
        n_iter: epochs,
        num_seen,
    })
}
