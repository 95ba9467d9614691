use super::*;
use ndarray::array;

fn params(kernel: Kernel, c: f64) -> SvcParams {
    SvcParams {
        kernel,
        c,
        tol: 1e-3,
        shrinking: true,
        max_iter: None,
        cache_bytes: 1 << 20,
    }
}

/// Two points at -1 and +1 (classes 1 and 0), linear kernel: the dual's optimum is
/// `a = 1/2` for both (`w = 1`, margin exactly at the points, `rho = 0`), reached by one SMO
/// step of size `(-G_i - G_j) / (QD_i + QD_j + 2 Q_ij) = 2 / 4`.
#[test]
fn two_points_by_hand() {
    let x = array![[1.0], [-1.0]];
    let fit = fit_svc(
        x.view(),
        &[0, 1],
        2,
        &[1.0, 1.0],
        &[1.0, 1.0],
        params(Kernel::Linear, 10.0),
    )
    .unwrap();
    assert_eq!(fit.support, vec![0, 1]);
    assert_eq!(fit.n_support, vec![1, 1]);
    assert_eq!(fit.dual_coef, array![[0.5, -0.5]]);
    assert_eq!(fit.intercept, vec![0.0]);
    assert_eq!(fit.n_iter, vec![1]);
    assert!(!fit.hit_max_iter);
}

/// With `C` below the unconstrained optimum both variables stop at their bound `C`.
#[test]
fn two_points_capped_by_c() {
    let x = array![[1.0], [-1.0]];
    let fit = fit_svc(
        x.view(),
        &[0, 1],
        2,
        &[1.0, 1.0],
        &[1.0, 1.0],
        params(Kernel::Linear, 0.25),
    )
    .unwrap();
    assert_eq!(fit.dual_coef, array![[0.25, -0.25]]);
    // both at the bound: rho is the middle of [lb, ub] = [-0.5, 0.5]
    assert_eq!(fit.intercept, vec![0.0]);
}

/// A pseudo-random 2-feature problem with overlapping classes.
fn overlapping(n: usize) -> (Array2<f64>, Vec<usize>) {
    let mut state: u64 = 12345;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    };
    let mut x = Array2::zeros((n, 2));
    let mut y = Vec::with_capacity(n);
    for s in 0..n {
        let class = s % 2;
        let shift = if class == 0 { 0.3 } else { -0.3 };
        x[[s, 0]] = next() + shift;
        x[[s, 1]] = next() - shift;
        y.push(class);
    }
    (x, y)
}

/// At the solution the KKT conditions hold to the tolerance: with `f` the decision value
/// and `m = y f`, `a = 0` needs `m >= 1 - tol`, `a = C` needs `m <= 1 + tol`, a free `a`
/// needs `|m - 1| <= tol`; and `sum y a = 0`. The decision values are recomputed here in
/// double precision, so the float32 rounding of `Q` (relative 2^-24 on entries of at most
/// `max |K|`, over `sum a` of at most `n C`) adds to the slack.
#[test]
fn kkt_conditions_hold_at_the_solution() {
    for (kernel, shrinking) in [
        (Kernel::Rbf { gamma: 2.0 }, true),
        (Kernel::Rbf { gamma: 2.0 }, false),
        (Kernel::Linear, true),
        (
            Kernel::Poly {
                degree: 3,
                gamma: 1.0,
                coef0: 1.0,
            },
            true,
        ),
    ] {
        let (x, y) = overlapping(60);
        let c = 5.0;
        let mut p = params(kernel, c);
        p.shrinking = shrinking;
        let fit = fit_svc(x.view(), &y, 2, &[1.0; 60], &[1.0, 1.0], p).unwrap();
        let gram = Gram::new(x.view(), kernel).unwrap();
        let coef = fit.dual_coef.row(0);
        let sum: f64 = coef.iter().sum();
        assert!(sum.abs() < 1e-12, "sum y a = {sum}");
        let mut alpha = [0.0; 60];
        for (k, &s) in fit.support.iter().enumerate() {
            alpha[s] = coef[k].abs();
        }
        let slack = p.tol + 60.0 * c * 4.0 * f64::from(f32::EPSILON);
        for s in 0..60 {
            let f: f64 = fit
                .support
                .iter()
                .enumerate()
                .map(|(k, &t)| coef[k] * gram.value(t, s))
                .sum::<f64>()
                + fit.intercept[0];
            let sign = if y[s] == 0 { 1.0 } else { -1.0 };
            let margin = sign * f;
            if alpha[s] == 0.0 {
                assert!(margin >= 1.0 - slack, "{kernel:?} sample {s}: {margin}");
            } else if alpha[s] >= c {
                assert!(margin <= 1.0 + slack, "{kernel:?} sample {s}: {margin}");
            } else {
                assert!(
                    (margin - 1.0).abs() <= slack,
                    "{kernel:?} sample {s}: {margin}"
                );
            }
        }
    }
}

#[test]
fn max_iter_stops_every_problem() {
    let (x, y) = overlapping(40);
    let mut p = params(Kernel::Rbf { gamma: 1.0 }, 1.0);
    p.max_iter = Some(3);
    let fit = fit_svc(x.view(), &y, 2, &[1.0; 40], &[1.0, 1.0], p).unwrap();
    assert!(fit.hit_max_iter);
    assert_eq!(fit.n_iter, vec![3]);
}

/// Three classes: libsvm's coefficient layout (class `i`'s coefficients of problem `(i, j)`
/// in row `j - 1`, class `j`'s in row `i`) and the support numbering among the samples of
/// positive weight.
#[test]
fn one_vs_one_layout_and_zero_weights() {
    let x = array![[0.0], [10.0], [20.0], [0.5], [10.5], [20.5], [100.0]];
    let labels = [0, 1, 2, 0, 1, 2, 0];
    // the last sample weighs nothing: dropped before training, numbers unchanged before it
    let w = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0];
    let fit = fit_svc(
        x.view(),
        &labels,
        3,
        &w,
        &[1.0; 3],
        params(Kernel::Linear, 100.0),
    )
    .unwrap();
    assert_eq!(fit.n_iter.len(), 3);
    assert_eq!(fit.n_support.iter().sum::<usize>(), fit.support.len());
    assert_eq!(fit.dual_coef.dim(), (2, fit.support.len()));
    // grouped by class: class 0 (samples 0, 3), class 1 (1, 4), class 2 (2, 5)
    let class_of = |s: usize| labels[s];
    let mut previous = 0;
    for &s in &fit.support {
        assert!(class_of(s) >= previous);
        previous = class_of(s);
    }
    assert_eq!(fit.support_rows, fit.support);
    // the problem (0, 1): class 0's coefficients (row 0 for j - 1 = 0) are positive, class
    // 1's (row 0 for i = 0) negative, and they balance
    let row0 = fit.dual_coef.row(0);
    let mut balance = 0.0;
    for (k, &s) in fit.support.iter().enumerate() {
        match class_of(s) {
            0 => assert!(row0[k] >= 0.0),
            1 => assert!(row0[k] <= 0.0),
            _ => {}
        }
        if class_of(s) < 2 {
            balance += row0[k];
        }
    }
    assert!(balance.abs() < 1e-12);
}

#[test]
fn a_class_without_positive_weight_is_refused() {
    let x = array![[0.0], [1.0], [2.0]];
    let err = fit_svc(
        x.view(),
        &[0, 1, 1],
        2,
        &[0.0, 1.0, 1.0],
        &[1.0, 1.0],
        params(Kernel::Linear, 1.0),
    );
    assert!(err.is_err());
}

#[test]
fn precomputed_matches_the_linear_kernel() {
    let (x, y) = overlapping(30);
    let k = x.dot(&x.t());
    let lin = fit_svc(
        x.view(),
        &y,
        2,
        &[1.0; 30],
        &[1.0, 1.0],
        params(Kernel::Linear, 1.0),
    )
    .unwrap();
    let pre = fit_svc(
        k.view(),
        &y,
        2,
        &[1.0; 30],
        &[1.0, 1.0],
        params(Kernel::Precomputed, 1.0),
    )
    .unwrap();
    assert_eq!(lin.support, pre.support);
    assert_eq!(lin.n_iter, pre.n_iter);
    let gap = (&lin.dual_coef - &pre.dual_coef)
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(gap < 1e-9, "{gap}");
}

/// A tiny cache (two rows) recomputes rows but gives the same bits.
#[test]
fn cache_size_does_not_change_the_result() {
    let (x, y) = overlapping(50);
    let big = fit_svc(
        x.view(),
        &y,
        2,
        &[1.0; 50],
        &[1.0, 1.0],
        params(Kernel::Rbf { gamma: 3.0 }, 2.0),
    )
    .unwrap();
    let mut p = params(Kernel::Rbf { gamma: 3.0 }, 2.0);
    p.cache_bytes = 1;
    let small = fit_svc(x.view(), &y, 2, &[1.0; 50], &[1.0, 1.0], p).unwrap();
    assert_eq!(big.dual_coef, small.dual_coef);
    assert_eq!(big.intercept, small.intercept);
    assert_eq!(big.n_iter, small.n_iter);
}

/// The row computation that advances four dot products together gives each entry's bits.
#[test]
fn blocked_rows_equal_single_values() {
    let (x, _) = overlapping(23);
    let others: Vec<usize> = (0..23).rev().collect();
    for kernel in [
        Kernel::Linear,
        Kernel::Rbf { gamma: 0.7 },
        Kernel::Poly {
            degree: 4,
            gamma: 0.5,
            coef0: 0.3,
        },
        Kernel::Sigmoid {
            gamma: 0.2,
            coef0: -0.1,
        },
    ] {
        let gram = Gram::new(x.view(), kernel).unwrap();
        let mut out = vec![0.0; others.len()];
        gram.values(5, &others, &mut out);
        for (t, &b) in others.iter().enumerate() {
            assert_eq!(out[t].to_bits(), gram.value(5, b).to_bits(), "{kernel:?}");
        }
    }
}

#[test]
fn sigmoid_fit_of_a_symmetric_pair_is_platts_closed_form() {
    // one sample each side at f = +1 (positive) and f = -1: the regularised targets are 2/3
    // and 1/3, so by symmetry B = 0 and 1 / (1 + exp(A)) = 2/3, that is A = -ln 2
    let (a, b) = super::platt::fit_sigmoid(&[1.0, -1.0], &[true, false]);
    assert!((a + 2f64.ln()).abs() < 1e-5, "A = {a}");
    assert!(b.abs() < 1e-12, "B = {b}");
}

#[test]
fn sigmoid_fit_at_zero_decisions_matches_the_mean_target() {
    // no signal: A stays 0 and 1 / (1 + exp(B)) is the mean target (2/3 + 1/4 + 1/4) / 3
    // = 7/18, so B = ln(11/7)
    let (a, b) = super::platt::fit_sigmoid(&[0.0; 3], &[true, false, false]);
    assert_eq!(a, 0.0);
    assert!((b - (11f64 / 7.0).ln()).abs() < 1e-5, "B = {b}");
}

#[test]
fn shuffle_draws_one_bounded_value_per_position() {
    use crate::machine_learning::sklearn_liblinear::MersenneTwister;
    let mut rng = MersenneTwister::new(42);
    let order = super::platt::shuffled_order(9, &mut rng);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..9).collect::<Vec<_>>());
    // the same swaps from a twin generator, position t with t + below(9 - t)
    let mut twin = MersenneTwister::new(42);
    let mut expected: Vec<usize> = (0..9).collect();
    for t in 0..9 {
        let partner = t + twin.below((9 - t) as u32) as usize;
        expected.swap(t, partner);
    }
    assert_eq!(order, expected);
    // both consumed alike, the bound-1 draw included
    assert_eq!(rng.next_u32(), twin.next_u32());
    let mut fresh = MersenneTwister::new(42);
    let mut once = MersenneTwister::new(42);
    super::platt::shuffled_order(1, &mut once);
    fresh.next_u32();
    assert_eq!(once.next_u32(), fresh.next_u32());
}

#[test]
fn probability_fit_gives_one_sigmoid_per_pair() {
    let x = ndarray::Array2::from_shape_fn((30, 2), |(r, c)| {
        ((r * 7 + c * 3) % 11) as f64 / 5.0 + (r % 3) as f64 * 2.0
    });
    let labels: Vec<usize> = (0..30).map(|r| r % 3).collect();
    let fit = super::fit_svc_with_probability(
        x.view(),
        &labels,
        3,
        &[1.0; 30],
        &[1.0; 3],
        params(Kernel::Rbf { gamma: 0.5 }, 1.0),
        7,
    )
    .unwrap();
    assert_eq!(fit.prob_a.len(), 3);
    assert_eq!(fit.prob_b.len(), 3);
    assert!(fit.prob_a.iter().chain(&fit.prob_b).all(|v| v.is_finite()));
    let plain = super::fit_svc(
        x.view(),
        &labels,
        3,
        &[1.0; 30],
        &[1.0; 3],
        params(Kernel::Rbf { gamma: 0.5 }, 1.0),
    )
    .unwrap();
    assert!(plain.prob_a.is_empty());
    assert_eq!(plain.dual_coef, fit.dual_coef);
}
