//! C-SVC trained as scikit-learn 1.9's libsvm fork trains it, so that the door's `SVC` gets
//! libsvm's support vectors, dual coefficients, intercepts and iteration counts.
//!
//! What is repeated, and why it fixes the results:
//! - samples of weight `<= 0` are dropped first, and support indices count the samples
//!   kept (libsvm's numbering, which scikit-learn reports as `support_`);
//! - classes are grouped in ascending label order, each keeping its samples' order; the
//!   one-vs-one problems run in pair order `(0,1), (0,2), ..., (1,2), ...`, class `i` as
//!   `+1`, with per-sample bounds `w_s C class_weight[class]`;
//! - each problem is solved by libsvm's SMO ([`solver`]) over `Q` entries rounded to
//!   float32 as libsvm's cache stores them ([`kernel`]);
//! - a sample is a support vector when any of its problems leaves it a nonzero
//!   coefficient; the coefficient rows follow libsvm's layout (see [`fit_svc`]).
//!
//! The one difference from scikit-learn's dense build is the dot product: libsvm's dense
//! kernels call BLAS `ddot`, whose blocked sums agree with the sequential sum here only to
//! rounding (its sparse kernels sum sequentially, as here). Rounded to float32, the `Q`
//! entries then almost always agree to the bit, so the iterates, supports and `n_iter` are
//! libsvm's, and the coefficients agree to a few ulps of the problem's conditioning.

mod kernel;
mod platt;
mod solver;
#[cfg(test)]
mod tests;

pub use kernel::Kernel;

use crate::error::{Error, Result};
use crate::machine_learning::sklearn_liblinear::MersenneTwister;
use kernel::{Gram, QRows};
use ndarray::{Array2, ArrayView2};
use platt::BinaryProblem;

/// The solver settings scikit-learn passes to libsvm for C-SVC.
#[derive(Debug, Clone, Copy)]
pub struct SvcParams {
    pub kernel: Kernel,
    pub c: f64,
    /// The stopping tolerance (scikit-learn's `tol`, libsvm's `eps`).
    pub tol: f64,
    pub shrinking: bool,
    /// `None` for no limit (scikit-learn's `max_iter=-1`).
    pub max_iter: Option<u64>,
    /// Bytes of `Q` rows kept per problem (rows past it are recomputed when needed again).
    pub cache_bytes: usize,
}

/// A trained C-SVC in scikit-learn's (libsvm's) layout.
#[derive(Debug, Clone)]
pub struct SvcFit {
    /// Support vectors' numbers among the samples of positive weight, grouped by class.
    pub support: Vec<usize>,
    /// Support vectors' rows of the input (the same as `support` when no weight is `<= 0`).
    pub support_rows: Vec<usize>,
    /// Support vectors per class.
    pub n_support: Vec<usize>,
    /// `(n_classes - 1) x n_SV`: the coefficient `y_s a_s` of each support vector in the
    /// problems it takes part in.
    pub dual_coef: Array2<f64>,
    /// `-rho` per problem, libsvm's intercepts (a zero kept positive).
    pub intercept: Vec<f64>,
    /// Iterations per problem.
    pub n_iter: Vec<usize>,
    /// Whether any problem stopped at `max_iter` (scikit-learn's `fit_status_` of 1).
    pub hit_max_iter: bool,
    /// Platt's sigmoid `(A, B)` per problem, libsvm's `probA` / `probB` (empty unless
    /// probability estimates were asked for).
    pub prob_a: Vec<f64>,
    pub prob_b: Vec<f64>,
}

/// Trains the one-vs-one C-SVC libsvm trains on `x` (samples by features, or the square
/// Gram matrix for [`Kernel::Precomputed`]) with class codes `labels` in `0..n_classes`,
/// per-sample `sample_weight` and per-class `class_weight`.
///
/// Every class must keep a sample of positive weight (libsvm would silently train fewer
/// classes); `Err` otherwise and for inconsistent shapes.
///
/// The coefficient rows are libsvm's: for the problem of classes `i < j`, class `i`'s
/// coefficients go to row `j - 1` and class `j`'s to row `i`, each in the columns of its
/// class's support vectors.
pub fn fit_svc(
    x: ArrayView2<f64>,
    labels: &[usize],
    n_classes: usize,
    sample_weight: &[f64],
    class_weight: &[f64],
    params: SvcParams,
) -> Result<SvcFit> {
    fit_one_vs_one(
        x,
        labels,
        n_classes,
        sample_weight,
        class_weight,
        params,
        None,
    )
}

/// [`fit_svc`] with libsvm's probability model (`probability=True`): before each pair's
/// problem is trained, its Platt sigmoid is fitted to 5-fold cross-validated decision
/// values, the folds drawn from `std::mt19937` seeded with `seed` (the number
/// scikit-learn draws from `random_state`); libsvm reseeds it whenever it trains, fold
/// models included, so each pair after a trained fold model draws from the seed afresh.
pub fn fit_svc_with_probability(
    x: ArrayView2<f64>,
    labels: &[usize],
    n_classes: usize,
    sample_weight: &[f64],
    class_weight: &[f64],
    params: SvcParams,
    seed: u32,
) -> Result<SvcFit> {
    fit_one_vs_one(
        x,
        labels,
        n_classes,
        sample_weight,
        class_weight,
        params,
        Some(seed),
    )
}

fn fit_one_vs_one(
    x: ArrayView2<f64>,
    labels: &[usize],
    n_classes: usize,
    sample_weight: &[f64],
    class_weight: &[f64],
    params: SvcParams,
    probability_seed: Option<u32>,
) -> Result<SvcFit> {
    let n = x.nrows();
    if labels.len() != n || sample_weight.len() != n {
        return Err(Error::invalid_input(
            "labels and sample weights must have one entry per row of x",
        ));
    }
    if class_weight.len() != n_classes || n_classes < 2 {
        return Err(Error::invalid_input(
            "one class weight per class, and at least two classes",
        ));
    }
    if params.kernel == Kernel::Precomputed && x.ncols() != n {
        return Err(Error::invalid_input("a precomputed kernel must be square"));
    }
    if labels.iter().any(|&c| c >= n_classes) {
        return Err(Error::invalid_input("a label beyond n_classes"));
    }
    let gram = Gram::new(x, params.kernel)
        .ok_or_else(|| Error::invalid_input("x must be C-contiguous"))?;

    // the kept samples, as input rows; `grouped[class]` their numbers among the kept, by class
    let kept: Vec<usize> = (0..n).filter(|&r| sample_weight[r] > 0.0).collect();
    let mut grouped: Vec<Vec<usize>> = vec![Vec::new(); n_classes];
    for (s, &r) in kept.iter().enumerate() {
        grouped[labels[r]].push(s);
    }
    if grouped.iter().any(Vec::is_empty) {
        return Err(Error::invalid_input(
            "every class needs a sample of positive weight",
        ));
    }
    let bound_of_class: Vec<f64> = class_weight.iter().map(|&w| params.c * w).collect();

    // one problem per pair, in libsvm's order
    let mut coefficients: Vec<Vec<f64>> = Vec::new();
    let mut intercept = Vec::new();
    let mut n_iter = Vec::new();
    let mut hit_max_iter = false;
    let (mut prob_a, mut prob_b) = (Vec::new(), Vec::new());
    // libsvm seeds its generator when training starts
    let mut rng = probability_seed.map(MersenneTwister::new);
    let mut nonzero = vec![false; kept.len()];
    for i in 0..n_classes {
        for j in i + 1..n_classes {
            let members: Vec<usize> = grouped[i].iter().chain(&grouped[j]).copied().collect();
            let n_i = grouped[i].len();
            let y: Vec<i8> = (0..members.len())
                .map(|t| if t < n_i { 1 } else { -1 })
                .collect();
            let bounds: Vec<f64> = members
                .iter()
                .enumerate()
                .map(|(t, &s)| {
                    let class = if t < n_i { i } else { j };
                    sample_weight[kept[s]] * bound_of_class[class]
                })
                .collect();
            let rows: Vec<usize> = members.iter().map(|&s| kept[s]).collect();
            if let (Some(rng), Some(seed)) = (rng.as_mut(), probability_seed) {
                let positive: Vec<bool> = y.iter().map(|&sign| sign > 0).collect();
                let weights: Vec<f64> = rows.iter().map(|&r| sample_weight[r]).collect();
                let problem = BinaryProblem {
                    rows: &rows,
                    positive: &positive,
                    weights: &weights,
                    cost_positive: bound_of_class[i],
                    cost_negative: bound_of_class[j],
                };
                let (a, b) = platt::probability_model(&gram, &problem, params, rng, seed);
                prob_a.push(a);
                prob_b.push(b);
            }
            let mut q = QRows::new(&gram, rows, y.clone(), params.cache_bytes);
            let solution = solver::solve_binary(
                &mut q,
                &y,
                &bounds,
                params.tol,
                params.shrinking,
                params.max_iter,
            );
            hit_max_iter |= solution.hit_max_iter;
            n_iter.push(solution.n_iter);
            let signed: Vec<f64> = solution
                .alpha
                .iter()
                .zip(&y)
                .map(|(&a, &sign)| a * f64::from(sign))
                .collect();
            for (t, &s) in members.iter().enumerate() {
                if signed[t].abs() > 0.0 {
                    nonzero[s] = true;
                }
            }
            coefficients.push(signed);
            // libsvm stores rho; scikit-learn reads its negation, a zero kept positive
            intercept.push(if solution.rho != 0.0 {
                -solution.rho
            } else {
                0.0
            });
        }
    }

    // support vectors class by class, each class's in sample order
    let mut support = Vec::new();
    let mut n_support = Vec::with_capacity(n_classes);
    let mut column = vec![usize::MAX; kept.len()];
    for members in &grouped {
        let before = support.len();
        for &s in members {
            if nonzero[s] {
                column[s] = support.len();
                support.push(s);
            }
        }
        n_support.push(support.len() - before);
    }
    let mut dual_coef = Array2::zeros((n_classes - 1, support.len()));
    let mut problem = 0;
    for i in 0..n_classes {
        for j in i + 1..n_classes {
            let signed = &coefficients[problem];
            let members = grouped[i].iter().map(|&s| (s, j - 1));
            let members = members.chain(grouped[j].iter().map(|&s| (s, i)));
            for (t, (s, row)) in members.enumerate() {
                if nonzero[s] {
                    dual_coef[[row, column[s]]] = signed[t];
                }
            }
            problem += 1;
        }
    }
    let support_rows = support.iter().map(|&s| kept[s]).collect();
    Ok(SvcFit {
        support,
        support_rows,
        n_support,
        dual_coef,
        intercept,
        n_iter,
        hit_max_iter,
        prob_a,
        prob_b,
    })
}
