//! Dual coordinate descent for L2-regularised logistic regression (Yu et al. 2011,
//! Algorithm 5; liblinear's solver 7). Each dual variable `a_i` lies in `(0, C_i)` and is
//! kept as the pair `(a_i, C_i - a_i)` so neither end loses precision; one coordinate's
//! step is a damped one-variable Newton solve on whichever of the pair is smaller in the
//! minimiser's direction. Every pass visits all coordinates (no shrinking) in a fresh
//! shuffle; it stops when the largest first-step derivative falls below `eps`, and each
//! pass with few Newton steps tightens the inner tolerance tenfold.

use super::random::MersenneTwister;
use super::{larger, smaller, Rows, SubProblem};

/// The inner Newton's step cap per coordinate visit (`<=`: up to one more step runs).
const MAX_INNER_STEPS: usize = 100;
/// The inner tolerance of the first pass.
const FIRST_INNER_TOL: f64 = 1e-2;
/// Where a Newton step leaves `(0, C)`, the variable shrinks by this factor instead.
const STEP_BACK: f64 = 0.1;

/// Solves one binary sub-problem into `w` (overwritten), drawing the pass orders from `rng`;
/// returns the number of passes.
pub fn solve(
    rows: &Rows<'_>,
    sub: &SubProblem<'_>,
    w: &mut [f64],
    eps: f64,
    max_iter: i32,
    rng: &mut MersenneTwister,
) -> i32 {
    let l = sub.order.len();
    let upper: Vec<f64> = (0..l).map(|i| sub.cost(i)).collect();
    // alpha[2i] is a_i, alpha[2i + 1] its complement C_i - a_i; both start strictly inside
    let mut alpha = vec![0.0; 2 * l];
    for i in 0..l {
        alpha[2 * i] = smaller(0.001 * upper[i], 1e-8);
        alpha[2 * i + 1] = upper[i] - alpha[2 * i];
    }
    w.fill(0.0);
    let mut x_sq = vec![0.0; l];
    for i in 0..l {
        let (idx, val) = rows.row(sub.order[i]);
        let start = sub.sign(i) * alpha[2 * i];
        for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
            x_sq[i] += v * v;
            w[f] += start * v;
        }
    }
    let mut index: Vec<usize> = (0..l).collect();
    let mut inner_tol = FIRST_INNER_TOL;
    let inner_tol_floor = smaller(1e-8, eps);
    let mut iter = 0;
    while iter < max_iter {
        rng.shuffle(&mut index[..l]);
        let mut newton_steps = 0usize;
        let mut g_max: f64 = 0.0;
        for &i in &index {
            let yi = sub.sign(i);
            let c = upper[i];
            let a = x_sq[i];
            let b = sub.row_dot(rows, i, w) * yi;
            // minimise over a_i itself, or over its complement when the minimiser lies
            // nearer C_i (then the sign of the linear term flips)
            let (mut near, mut far, mut sign) = (2 * i, 2 * i + 1, 1.0);
            if 0.5 * a * (alpha[far] - alpha[near]) + b < 0.0 {
                (near, far, sign) = (2 * i + 1, 2 * i, -1.0);
            }
            let start = alpha[near];
            let mut z = start;
            if c - z < 0.5 * c {
                z *= 0.1;
            }
            let derivative = |z: f64| a * (z - start) + sign * b + (z / (c - z)).ln();
            let mut gp = derivative(z);
            g_max = larger(g_max, gp.abs());
            let mut steps = 0;
            while steps <= MAX_INNER_STEPS {
                if gp.abs() < inner_tol {
                    break;
                }
                let curvature = a + c / (c - z) / z;
                let stepped = z - gp / curvature;
                if stepped <= 0.0 {
                    z *= STEP_BACK;
                } else {
                    z = stepped;
                }
                gp = derivative(z);
                newton_steps += 1;
                steps += 1;
            }
            if steps > 0 {
                alpha[near] = z;
                alpha[far] = c - z;
                let d = sign * (z - start) * yi;
                let (idx, val) = rows.row(sub.order[i]);
                for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                    w[f] += d * v;
                }
            }
        }
        iter += 1;
        if g_max < eps {
            break;
        }
        if newton_steps <= l / 10 {
            inner_tol = larger(inner_tol_floor, 0.1 * inner_tol);
        }
    }
    iter
}
