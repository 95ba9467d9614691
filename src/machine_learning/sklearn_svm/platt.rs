//! libsvm's probability model for one binary problem, as scikit-learn's fork fits it:
//! decision values from a 5-fold cross-validation over a random permutation of the
//! problem's samples, then Platt's sigmoid `P(+1 | f) = 1 / (1 + exp(A f + B))` fitted to
//! them by Newton's method with a backtracking line search.

use super::kernel::{Gram, QRows};
use super::solver;
use super::SvcParams;
use crate::machine_learning::sklearn_liblinear::MersenneTwister;

const FOLDS: usize = 5;
const SIGMOID_MAX_ITER: usize = 100;
/// The smallest line-search step before the fit gives up.
const SIGMOID_MIN_STEP: f64 = 1e-10;
/// Added to the Hessian's diagonal so it stays strictly positive definite.
const SIGMOID_HESSIAN_SHIFT: f64 = 1e-12;
/// The fit stops once both gradient entries are below this.
const SIGMOID_GRADIENT_TOL: f64 = 1e-5;

/// The samples' order for the cross-validation: a Fisher-Yates shuffle drawing position
/// `t`'s partner from `t..l` with the generator's bounded draw (the last draw, of bound 1,
/// still consumes an output).
pub(crate) fn shuffled_order(l: usize, rng: &mut MersenneTwister) -> Vec<usize> {
    let mut order: Vec<usize> = (0..l).collect();
    for t in 0..l {
        let partner = t + rng.below((l - t) as u32) as usize;
        order.swap(t, partner);
    }
    order
}

/// `log(1 + exp(-|z|))` plus the linear part, the loss term of one sample with target `t`
/// at `z = A f + B`, in libsvm's two branches (which keep `exp` from overflowing).
fn sample_loss(target: f64, z: f64) -> f64 {
    if z >= 0.0 {
        target * z + (1.0 + (-z).exp()).ln()
    } else {
        (target - 1.0) * z + (1.0 + z.exp()).ln()
    }
}

fn total_loss(decisions: &[f64], targets: &[f64], a: f64, b: f64) -> f64 {
    let mut sum = 0.0;
    for (&f, &t) in decisions.iter().zip(targets) {
        sum += sample_loss(t, f * a + b);
    }
    sum
}

/// Platt's sigmoid `(A, B)` for decision values `decisions` of samples whose class is
/// `positive[s]`, with libsvm's regularised targets, start, constants and sums in order.
pub(crate) fn fit_sigmoid(decisions: &[f64], positive: &[bool]) -> (f64, f64) {
    let n_pos = positive.iter().filter(|&&p| p).count() as f64;
    let n_neg = positive.len() as f64 - n_pos;
    let high = (n_pos + 1.0) / (n_pos + 2.0);
    let low = 1.0 / (n_neg + 2.0);
    let targets: Vec<f64> = positive
        .iter()
        .map(|&p| if p { high } else { low })
        .collect();
    let mut a = 0.0;
    let mut b = ((n_neg + 1.0) / (n_pos + 1.0)).ln();
    let mut loss = total_loss(decisions, &targets, a, b);
    for _ in 0..SIGMOID_MAX_ITER {
        let (mut h11, mut h22, mut h21) = (SIGMOID_HESSIAN_SHIFT, SIGMOID_HESSIAN_SHIFT, 0.0);
        let (mut g1, mut g2) = (0.0, 0.0);
        for (&f, &t) in decisions.iter().zip(&targets) {
            let z = f * a + b;
            // p = 1 / (1 + exp(z)) and q = 1 - p, each formed without overflow
            let (p, q) = if z >= 0.0 {
                let e = (-z).exp();
                (e / (1.0 + e), 1.0 / (1.0 + e))
            } else {
                let e = z.exp();
                (1.0 / (1.0 + e), e / (1.0 + e))
            };
            let curvature = p * q;
            h11 += f * f * curvature;
            h22 += curvature;
            h21 += f * curvature;
            let residual = t - p;
            g1 += f * residual;
            g2 += residual;
        }
        if g1.abs() < SIGMOID_GRADIENT_TOL && g2.abs() < SIGMOID_GRADIENT_TOL {
            break;
        }
        let det = h11 * h22 - h21 * h21;
        let da = -(h22 * g1 - h21 * g2) / det;
        let db = -(-h21 * g1 + h11 * g2) / det;
        let slope = g1 * da + g2 * db;
        let mut step = 1.0;
        while step >= SIGMOID_MIN_STEP {
            let (new_a, new_b) = (a + step * da, b + step * db);
            let new_loss = total_loss(decisions, &targets, new_a, new_b);
            if new_loss < loss + 0.0001 * step * slope {
                (a, b, loss) = (new_a, new_b, new_loss);
                break;
            }
            step /= 2.0;
        }
        if step < SIGMOID_MIN_STEP {
            break;
        }
    }
    (a, b)
}

/// The binary problem a probability model is fitted for: input rows in libsvm's order,
/// which of them are the positive class, their sample weights, and the two classes'
/// weighted costs.
pub(crate) struct BinaryProblem<'p> {
    pub rows: &'p [usize],
    pub positive: &'p [bool],
    pub weights: &'p [f64],
    pub cost_positive: f64,
    pub cost_negative: f64,
}

/// Each sample's decision value from the model trained on the other folds (the fold's
/// training samples in permutation order), signed so that positive means the positive
/// class; a fold whose training samples are of one class gives that class's sign.
fn cross_validated_decisions(
    gram: &Gram<'_>,
    problem: &BinaryProblem<'_>,
    params: SvcParams,
    rng: &mut MersenneTwister,
    seed: u32,
) -> Vec<f64> {
    let l = problem.rows.len();
    let order = shuffled_order(l, rng);
    let mut decisions = vec![0.0; l];
    for fold in 0..FOLDS {
        let begin = fold * l / FOLDS;
        let end = (fold + 1) * l / FOLDS;
        let training: Vec<usize> = order[..begin]
            .iter()
            .chain(&order[end..])
            .copied()
            .collect();
        let n_pos = training.iter().filter(|&&s| problem.positive[s]).count();
        let n_neg = training.len() - n_pos;
        if n_pos == 0 || n_neg == 0 {
            let sign = match (n_pos > 0, n_neg > 0) {
                (true, false) => 1.0,
                (false, true) => -1.0,
                _ => 0.0,
            };
            for &s in &order[begin..end] {
                decisions[s] = sign;
            }
            continue;
        }
        // libsvm groups the fold's labels in ascending order: the negative class (-1)
        // comes first and is the solver's +1, with the negative cost
        let members: Vec<usize> = training
            .iter()
            .filter(|&&s| !problem.positive[s])
            .chain(training.iter().filter(|&&s| problem.positive[s]))
            .copied()
            .collect();
        let y: Vec<i8> = members
            .iter()
            .map(|&s| if problem.positive[s] { -1 } else { 1 })
            .collect();
        let bounds: Vec<f64> = members
            .iter()
            .map(|&s| {
                let cost = if problem.positive[s] {
                    problem.cost_positive
                } else {
                    problem.cost_negative
                };
                problem.weights[s] * cost
            })
            .collect();
        let rows: Vec<usize> = members.iter().map(|&s| problem.rows[s]).collect();
        let mut q = QRows::new(gram, rows.clone(), y.clone(), params.cache_bytes);
        let solution = solver::solve_binary(
            &mut q,
            &y,
            &bounds,
            params.tol,
            params.shrinking,
            params.max_iter,
        );
        // libsvm's training seeds the generator afresh on entry, the fold models' too, so
        // the draws after this fold start over from the seed
        *rng = MersenneTwister::new(seed);
        let support: Vec<(usize, f64)> = rows
            .iter()
            .zip(solution.alpha.iter().zip(&y))
            .map(|(&r, (&a, &sign))| (r, a * f64::from(sign)))
            .filter(|&(_, coef)| coef.abs() > 0.0)
            .collect();
        for &s in &order[begin..end] {
            let mut sum = 0.0;
            for &(r, coef) in &support {
                sum += coef * gram.predict_value(problem.rows[s], r);
            }
            sum -= solution.rho;
            // the fold model's first label is -1: flip to the positive class's side
            decisions[s] = -sum;
        }
    }
    decisions
}

/// libsvm's `(probA, probB)` for one binary problem.
pub(crate) fn probability_model(
    gram: &Gram<'_>,
    problem: &BinaryProblem<'_>,
    params: SvcParams,
    rng: &mut MersenneTwister,
    seed: u32,
) -> (f64, f64) {
    let decisions = cross_validated_decisions(gram, problem, params, rng, seed);
    fit_sigmoid(&decisions, problem.positive)
}
