//! scikit-learn's `lbfgs` solver for logistic regression: its objective ([`Problem`], the
//! same loss and gradient the Newton solvers use) minimised by the replica of SciPy's
//! L-BFGS-B ([`crate::math::lbfgsb`]) from zero, over the parameter vector in scikit-learn's
//! order, so the run takes scikit-learn's iterates (to rounding) and stops after the same
//! iterations.
//!
//! scikit-learn's parameter vector: binary, the coefficients then the intercept (when fitted);
//! multinomial, the `n_classes x (n_features + 1)` matrix (intercepts as the last column,
//! when fitted) flattened column by column, so the classes of one feature are adjacent.
//! The order changes no step of the algorithm but the order of its sums.
//!
//! The replica's sums are not SciPy's and scikit-learn's (BLAS there), so the two runs part
//! by rounding, which long runs on ill-conditioned problems can amplify well past it. A probe
//! measures that: the fit runs a second time on an objective whose value and gradient
//! entries are moved by 2 eps (relative, signs from a fixed pseudo-random sequence), a
//! rounding difference like the one between the implementations; where the two runs end
//! after different iterations or further apart than `max_probe_gap` (relative to the
//! coefficients' scale) the fit is reported [`LbfgsbStatus::Fragile`].

use crate::error::{Error, Result};
use crate::machine_learning::logistic_regression::{Problem, Target};
use crate::math::lbfgsb::{self, LbfgsbOptions, LbfgsbStatus, Rounding};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

/// An objective value's rounding between two implementations, relative: the losses are
/// summed in different orders (a few eps each) and the iterates drift apart by rounding.
const LOSS_ROUNDING: f64 = 64.0 * f64::EPSILON;
/// Directional derivatives' rounding, relative to the line search's initial one: `g.d` sums
/// products of gradients that differ by the iterates' drift.
const SLOPE_ROUNDING: f64 = 1e-8;

/// The settings of one fit.
#[derive(Debug, Clone)]
pub struct LbfgsFitSettings {
    /// Inverse penalty strength; infinite for no penalty.
    pub c: f64,
    pub fit_intercept: bool,
    pub max_iter: usize,
    pub tol: f64,
    /// The largest distance between the run and its probe (module docs), relative to
    /// `max(1, max |parameter|)`, at which the fit is still reported.
    pub max_probe_gap: f64,
    /// Where the run starts (scikit-learn's `warm_start`): the coefficients (one row per
    /// output, as [`LbfgsFit::coef`]) and the intercepts (ignored without one); zeros when
    /// `None`.
    pub start: Option<(Array2<f64>, Array1<f64>)>,
}

/// A fit in scikit-learn's layout.
#[derive(Debug, Clone)]
pub struct LbfgsFit {
    /// One row for two classes, one per class otherwise.
    pub coef: Array2<f64>,
    /// Zeros when no intercept is fitted.
    pub intercept: Array1<f64>,
    /// scikit-learn's `n_iter_`: SciPy's `nit`, at most `max_iter`.
    pub n_iter: usize,
    pub status: LbfgsbStatus,
    /// The distance to the probe's end point relative to the parameters' scale; infinite
    /// where the probe ended otherwise.
    pub probe_gap: f64,
}

/// Relative size of the probe's moves: 2 eps, a few roundings of a sum.
const PROBE_JITTER: f64 = 2.0 * f64::EPSILON;

/// `1 +- PROBE_JITTER` with signs from a xorshift sequence (fixed seed: the probe is
/// deterministic).
struct Jitter(u64);

impl Jitter {
    fn factor(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if self.0 & 1 == 0 {
            1.0 + PROBE_JITTER
        } else {
            1.0 - PROBE_JITTER
        }
    }
}

/// Fits scikit-learn's `LogisticRegression(solver="lbfgs")` to `x` and class codes `y`
/// (`0..n_classes`, at least two classes), with optional per-sample `weights` (the product
/// of sample and class weights, `>= 0`, positive sum).
pub fn fit_sklearn_lbfgs(
    x: ArrayView2<f64>,
    y: &[usize],
    n_classes: usize,
    weights: Option<&[f64]>,
    settings: &LbfgsFitSettings,
) -> Result<LbfgsFit> {
    let (n, d) = x.dim();
    if y.len() != n || weights.is_some_and(|w| w.len() != n) {
        return Err(Error::dimension_mismatch(n, y.len()));
    }
    if n_classes < 2 || y.iter().any(|&c| c >= n_classes) {
        return Err(Error::invalid_input(
            "class codes must lie in 0..n_classes, n_classes >= 2",
        ));
    }
    if settings.c.is_nan() || settings.c <= 0.0 {
        return Err(Error::invalid_parameter("C", "must be positive"));
    }
    let weight_sum = weights.map_or(n as f64, |w| w.iter().sum());
    if !(weight_sum > 0.0 && weight_sum.is_finite())
        || weights.is_some_and(|w| w.iter().any(|v| v.is_nan() || *v < 0.0))
    {
        return Err(Error::invalid_input(
            "sample weights must be finite, >= 0, with a positive sum",
        ));
    }
    crate::validation::check_power_sum_range(&x, 2.0, "X", "the solver's products")?;
    let n_out = if n_classes == 2 { 1 } else { n_classes };
    let problem = Problem {
        x,
        n_out,
        d,
        fit_intercept: settings.fit_intercept,
        l2: if settings.c.is_finite() {
            1.0 / (settings.c * weight_sum)
        } else {
            0.0
        },
        weights,
        weight_sum,
        target: if n_out == 1 {
            Target::Binary(y.iter().map(|&c| c as f64).collect())
        } else {
            Target::Multinomial(y.to_vec())
        },
    };
    let layout = Layout {
        n_out,
        d,
        fit_intercept: settings.fit_intercept,
    };
    let x_scale = x
        .iter()
        .fold(f64::from(u8::from(settings.fit_intercept)), |m, v| {
            m.max(v.abs())
        });
    let rounding = Rounding {
        loss: LOSS_ROUNDING,
        slope: SLOPE_ROUNDING,
        // The gradient's entries are sums of feature values times O(1) residuals.
        gradient: 1e-6 * settings.tol + 1e3 * f64::EPSILON * x_scale,
    };
    let mut start = Array1::zeros(layout.len());
    if let Some((coef, intercept)) = &settings.start {
        let theta = problem.start_point(coef.view(), Some(intercept.view()))?;
        layout.gather(theta.view(), &mut start);
    }
    let opts = LbfgsbOptions::scikit_learn(settings.max_iter, settings.tol);
    let run = |probe: bool| {
        let mut theta = Array1::<f64>::zeros(n_out * (d + 1));
        let mut grad = Array1::<f64>::zeros(n_out * (d + 1));
        let mut jitter = Jitter(0x9E37_79B9_7F4A_7C15);
        let objective = |w: ArrayView1<f64>, g: &mut Array1<f64>| {
            layout.scatter(w, &mut theta);
            let mut f = problem.eval(theta.view(), &mut grad)?;
            layout.gather(grad.view(), g);
            if probe {
                f *= jitter.factor();
                g.mapv_inplace(|v| v * jitter.factor());
            }
            Ok(f)
        };
        lbfgsb::minimize_unbounded(objective, start.clone(), &opts, &rounding)
    };
    let main = run(false)?;
    let mut status = main.status;
    let mut probe_gap = f64::INFINITY;
    if status != LbfgsbStatus::Fragile {
        let probe = run(true)?;
        if probe.status == status && probe.n_iter == main.n_iter {
            let scale = main.x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let apart = main
                .x
                .iter()
                .zip(&probe.x)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            probe_gap = apart / scale;
        }
        if probe_gap.is_nan() || probe_gap > settings.max_probe_gap {
            status = LbfgsbStatus::Fragile;
        }
    }
    let mut theta = Array1::<f64>::zeros(n_out * (d + 1));
    layout.scatter(main.x.view(), &mut theta);
    let coef = Array2::from_shape_fn((n_out, d), |(c, j)| theta[c * d + j]);
    let intercept = theta.slice(ndarray::s![n_out * d..]).to_owned();
    Ok(LbfgsFit {
        coef,
        intercept,
        n_iter: main.n_iter.min(settings.max_iter),
        status,
        probe_gap,
    })
}

/// Maps scikit-learn's parameter vector (module docs) to [`Problem`]'s `theta` (coefficients
/// class by class, then one intercept per output) and back.
#[derive(Debug, Clone, Copy)]
struct Layout {
    n_out: usize,
    d: usize,
    fit_intercept: bool,
}

impl Layout {
    fn len(&self) -> usize {
        self.n_out * (self.d + usize::from(self.fit_intercept))
    }

    /// `theta`'s index of scikit-learn's entry `i`.
    fn theta_index(&self, i: usize) -> usize {
        let (k, d) = (self.n_out, self.d);
        let (feature, class) = if k == 1 { (i, 0) } else { (i / k, i % k) };
        if feature < d {
            class * d + feature
        } else {
            k * d + class
        }
    }

    fn scatter(&self, w: ArrayView1<f64>, theta: &mut Array1<f64>) {
        theta.fill(0.0);
        for (i, &v) in w.iter().enumerate() {
            theta[self.theta_index(i)] = v;
        }
    }

    fn gather(&self, theta: ArrayView1<f64>, w: &mut Array1<f64>) {
        for (i, v) in w.iter_mut().enumerate() {
            *v = theta[self.theta_index(i)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-learn's warm start: a run started at a converged fit's point stops there at
    /// once (SciPy's first gradient test), and a start of another shape is refused.
    #[test]
    fn a_run_started_at_its_optimum_stops_at_once() {
        let x = Array2::from_shape_fn((50, 3), |(i, j)| {
            ((i * 7919 + j * 104_729) % 997) as f64 / 498.5 - 1.0 + 0.3 * (i % 3) as f64
        });
        let y: Vec<usize> = (0..50).map(|i| (i * 31 + i / 7) % 3).collect();
        let mut settings = LbfgsFitSettings {
            c: 1.0,
            fit_intercept: true,
            max_iter: 200,
            tol: 1e-6,
            max_probe_gap: 1e-8,
            start: None,
        };
        let first = fit_sklearn_lbfgs(x.view(), &y, 3, None, &settings).unwrap();
        assert_eq!(first.status, LbfgsbStatus::ConvergedGradient);
        assert!(first.n_iter > 3);
        settings.start = Some((first.coef.clone(), first.intercept.clone()));
        let again = fit_sklearn_lbfgs(x.view(), &y, 3, None, &settings).unwrap();
        assert_eq!(again.status, LbfgsbStatus::ConvergedGradient);
        assert_eq!(again.n_iter, 0);
        assert_eq!(again.coef, first.coef);
        assert_eq!(again.intercept, first.intercept);
        settings.start = Some((
            first.coef.slice(ndarray::s![..2, ..]).to_owned(),
            first.intercept,
        ));
        assert!(fit_sklearn_lbfgs(x.view(), &y, 3, None, &settings).is_err());
    }

    /// scikit-learn's multinomial order: feature-major, classes adjacent, intercepts last.
    #[test]
    fn layout_follows_scikit_learn_order() {
        let layout = Layout {
            n_out: 3,
            d: 2,
            fit_intercept: true,
        };
        let order: Vec<usize> = (0..layout.len()).map(|i| layout.theta_index(i)).collect();
        assert_eq!(order, vec![0, 2, 4, 1, 3, 5, 6, 7, 8]);
        let binary = Layout {
            n_out: 1,
            d: 3,
            fit_intercept: false,
        };
        assert_eq!(binary.len(), 3);
        assert_eq!(binary.theta_index(2), 2);
    }

    /// A converged fit is at the optimum of scikit-learn's objective: the largest gradient
    /// entry is at most tol, in every layout.
    #[test]
    fn converged_fits_meet_the_gradient_tolerance() {
        let x = Array2::from_shape_fn((50, 3), |(i, j)| {
            ((i * 7919 + j * 104_729) % 997) as f64 / 498.5 - 1.0 + 0.3 * (i % 3) as f64
        });
        let y3: Vec<usize> = (0..50).map(|i| (i * 31 + i / 7) % 3).collect();
        let w: Vec<f64> = (0..50).map(|i| 0.5 + (i % 4) as f64 * 0.5).collect();
        for (classes, fit_intercept, weighted) in [
            (2, true, false),
            (2, false, true),
            (3, true, true),
            (3, false, false),
        ] {
            let y: Vec<usize> = y3.iter().map(|&c| c % classes).collect();
            let settings = LbfgsFitSettings {
                c: 1.0,
                fit_intercept,
                max_iter: 200,
                tol: 1e-6,
                max_probe_gap: 1e-8,
                start: None,
            };
            let weights = weighted.then_some(w.as_slice());
            let fit = fit_sklearn_lbfgs(x.view(), &y, classes, weights, &settings).unwrap();
            assert_eq!(
                fit.status,
                LbfgsbStatus::ConvergedGradient,
                "{classes} {fit_intercept}"
            );
            assert!(fit.n_iter > 0 && fit.n_iter < 200);
            assert!(fit.probe_gap < 1e-8, "{}", fit.probe_gap);
            let n_out = fit.coef.nrows();
            let weight_sum = weights.map_or(50.0, |w| w.iter().sum());
            let problem = Problem {
                x: x.view(),
                n_out,
                d: 3,
                fit_intercept,
                l2: 1.0 / weight_sum,
                weights,
                weight_sum,
                target: if n_out == 1 {
                    Target::Binary(y.iter().map(|&c| c as f64).collect())
                } else {
                    Target::Multinomial(y.clone())
                },
            };
            let theta: Array1<f64> = fit.coef.iter().chain(&fit.intercept).copied().collect();
            let mut g = Array1::zeros(theta.len());
            problem.eval(theta.view(), &mut g).unwrap();
            assert!(g.iter().all(|v| v.abs() <= 1e-6), "{g}");
        }
    }
}
