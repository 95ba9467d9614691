//! scikit-learn's gradient descent: momentum, per-parameter gains (+0.2 / *0.8, floor 0.01),
//! progress checked every 50 iterations.

use super::affinities::Affinities;
use super::gradient::Objective;
use crate::math::reduction;
use ndarray::{Array2, ArrayView1};

/// Progress is checked every this many iterations (scikit-learn's `_N_ITER_CHECK`).
const ITER_CHECK: usize = 50;
pub(super) struct Schedule {
    pub(super) start: usize,
    pub(super) max_iter: usize,
    pub(super) momentum: f64,
    pub(super) learning_rate: f64,
    pub(super) n_iter_without_progress: usize,
    pub(super) min_grad_norm: f64,
}

/// Gradient descent with momentum and per-parameter gains (scikit-learn's
/// `_gradient_descent`).
pub(super) struct Descent {
    pub(super) y: Array2<f64>,
    pub(super) update: Array2<f64>,
    pub(super) gains: Array2<f64>,
}

impl Descent {
    pub(super) fn new(y: Array2<f64>) -> Self {
        let shape = y.raw_dim();
        Self {
            y,
            update: Array2::zeros(shape),
            gains: Array2::ones(shape),
        }
    }

    /// Run iterations `schedule.start..schedule.max_iter`; returns the last KL divergence
    /// computed and the index of the last iteration run.
    pub(super) fn run(
        &mut self,
        objective: &Objective,
        p: &Affinities,
        schedule: &Schedule,
    ) -> (f64, usize) {
        // scikit-learn restarts `update` and `gains` with each call.
        self.update.fill(0.0);
        self.gains.fill(1.0);
        let mut error = f64::MAX;
        let mut best_error = f64::MAX;
        let mut best_iter = schedule.start;
        let mut last = schedule.start;
        for i in schedule.start..schedule.max_iter {
            last = i;
            let check = (i + 1) % ITER_CHECK == 0;
            let (err, mut grad) =
                objective.evaluate(p, self.y.view(), check || i == schedule.max_iter - 1);
            error = err;
            ndarray::Zip::from(&mut self.gains)
                .and(&self.update)
                .and(&grad)
                .for_each(|g, &u, &d| {
                    *g = if u * d < 0.0 { *g + 0.2 } else { *g * 0.8 };
                    *g = g.max(0.01);
                });
            grad *= &self.gains;
            ndarray::Zip::from(&mut self.update)
                .and(&grad)
                .for_each(|u, &d| {
                    *u = schedule.momentum * *u - schedule.learning_rate * d;
                });
            self.y += &self.update;
            if check {
                let grad_norm =
                    reduction::sq_sum(ArrayView1::from(grad.as_slice().expect("contiguous")))
                        .sqrt();
                if error < best_error {
                    best_error = error;
                    best_iter = i;
                } else if i - best_iter > schedule.n_iter_without_progress {
                    break;
                }
                if grad_norm <= schedule.min_grad_norm {
                    break;
                }
            }
        }
        (error, last)
    }
}
