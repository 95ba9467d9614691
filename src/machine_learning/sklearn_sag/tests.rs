use super::*;

/// The xorshift by hand from seed 1: `1 ^ 1 << 13 = 8193`, `8193 >> 17 = 0` leaves it,
/// `8193 ^ 8193 << 5 = 8193 ^ 262176 = 270369`; the next two outputs computed the same way
/// with 32-bit wrapping shifts.
#[test]
fn sampler_first_outputs() {
    let mut sampler = XorShiftSampler::new(1);
    assert_eq!(sampler.next_output(), 270_369);
    assert_eq!(sampler.next_output(), 67_634_689);
    assert_eq!(sampler.next_output(), 499_951_813);
    // A zero seed starts from one.
    let mut zero = XorShiftSampler::new(0);
    assert_eq!(zero.next_output(), 270_369);
    // Row draws reduce the output modulo the row count.
    let mut rows = XorShiftSampler::new(1);
    assert_eq!(rows.next_row(7), 270_369 % 7);
}

#[test]
fn step_sizes_follow_the_lipschitz_bound() {
    // L = (3 + 1) / 4 + 0.5 = 1.5
    assert_eq!(auto_step_size(3.0, 0.5, true, 10, false), 1.0 / 1.5);
    // SAGA: min(2 * 10 * 0.5, 1.5) = 1.5, so 1 / (3 + 1.5)
    assert_eq!(auto_step_size(3.0, 0.5, true, 10, true), 1.0 / 4.5);
    // SAGA with a weak penalty: min(2 * 10 * 0.01, 0.76) = 0.2
    let l = 0.25 * 3.0 + 0.01;
    assert_eq!(
        auto_step_size(3.0, 0.01, false, 10, true),
        1.0 / (2.0 * l + 0.2)
    );
}

#[test]
fn soft_threshold_shrinks_toward_zero() {
    assert_eq!(soft_threshold(3.0, 1.0), 2.0);
    assert_eq!(soft_threshold(-3.0, 1.0), -2.0);
    assert_eq!(soft_threshold(0.5, 1.0), 0.0);
}

#[test]
fn gradients_match_their_closed_forms() {
    let expit = |z: f64| 1.0 / (1.0 + (-z).exp());
    for &(y, raw) in &[(1.0, 0.3), (0.0, -2.0), (1.0, -40.0), (0.0, 5.0)] {
        let g = binomial_gradient(y, raw);
        assert!((g - (expit(raw) - y)).abs() < 1e-15, "{y} {raw} {g}");
    }
    let raw = [0.5, -1.0, 2.0];
    let mut out = [0.0; 3];
    multinomial_gradient(2.0, &raw, 2.0, &mut out);
    let z: f64 = raw.iter().map(|r| r.exp()).sum();
    for k in 0..3 {
        let want = (raw[k].exp() / z - if k == 2 { 1.0 } else { 0.0 }) * 2.0;
        assert!((out[k] - want).abs() < 1e-15);
    }
}

/// A small, non-separable binary problem: 8 rows, 2 features.
fn tiny_problem() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let x = vec![
        0.5, 1.0, -1.2, 0.3, 0.8, -0.4, -0.3, -1.1, 1.5, 0.2, -0.7, 0.9, 0.1, 0.1, -1.4, -0.6,
    ];
    let y = vec![1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    let w = vec![1.0, 2.0, 0.5, 1.0, 1.0, 1.5, 1.0, 0.7];
    (x, y, w)
}

fn settings(loss: SagLoss, n_classes: usize, alpha: f64, beta: f64, saga: bool) -> SagSettings {
    SagSettings {
        loss,
        n_classes,
        alpha,
        beta,
        max_squared_sum: 2.0 * 2.0 + 0.6 * 0.6 + 1.0, // an upper bound is a valid step
        tol: 1e-14,
        max_iter: 20_000,
        fit_intercept: true,
        saga,
        seed: 42,
    }
}

/// The gradient of `(1/n) sum_i w_i loss_i + alpha/(2n) |coef|^2` in the coefficients and
/// the intercept, binomial loss.
fn binomial_objective_gradient(
    x: &[f64],
    y: &[f64],
    sw: &[f64],
    coef: &[f64],
    b: f64,
    alpha: f64,
) -> (Vec<f64>, f64) {
    let n = y.len();
    let mut g = vec![0.0; 2];
    let mut gb = 0.0;
    for i in 0..n {
        let z = x[2 * i] * coef[0] + x[2 * i + 1] * coef[1] + b;
        let r = sw[i] * binomial_gradient(y[i], z) / n as f64;
        g[0] += r * x[2 * i];
        g[1] += r * x[2 * i + 1];
        gb += r;
    }
    for j in 0..2 {
        g[j] += alpha / n as f64 * coef[j];
    }
    (g, gb)
}

#[test]
fn sag_reaches_the_l2_optimum() {
    let (x, y, sw) = tiny_problem();
    let rows = SagRows::Dense {
        values: &x,
        n_rows: 8,
        n_features: 2,
    };
    for saga in [false, true] {
        let s = settings(SagLoss::Binomial, 1, 0.5, 0.0, saga);
        let run = train_sag(rows, &y, &sw, &s, vec![0.0; 2], vec![0.0]).unwrap();
        assert!(run.n_iter < s.max_iter);
        assert_eq!(run.num_seen, 8);
        let (g, gb) = binomial_objective_gradient(&x, &y, &sw, &run.weights, run.intercept[0], 0.5);
        // Stationarity to well below the stopping tolerance's effect (weights of order 1).
        assert!(
            g.iter().all(|v| v.abs() < 1e-9) && gb.abs() < 1e-9,
            "{g:?} {gb}"
        );
    }
}

#[test]
fn saga_l1_meets_the_subgradient_conditions() {
    let (x, y, sw) = tiny_problem();
    let rows = SagRows::Dense {
        values: &x,
        n_rows: 8,
        n_features: 2,
    };
    let beta = 2.0;
    let s = settings(SagLoss::Binomial, 1, 0.0, beta, true);
    let run = train_sag(rows, &y, &sw, &s, vec![0.0; 2], vec![0.0]).unwrap();
    let (g, gb) = binomial_objective_gradient(&x, &y, &sw, &run.weights, run.intercept[0], 0.0);
    let scaled = beta / 8.0;
    for (gj, wj) in g.iter().zip(&run.weights) {
        if *wj == 0.0 {
            assert!(gj.abs() <= scaled + 1e-9, "{gj}");
        } else {
            assert!((gj + scaled * wj.signum()).abs() < 1e-9, "{gj} {wj}");
        }
    }
    assert!(gb.abs() < 1e-9);
    // This penalty is strong enough to zero at least one coefficient of this problem.
    assert!(run.weights.contains(&0.0), "{:?}", run.weights);
}

#[test]
fn sparse_rows_with_every_entry_stored_match_dense_rows_but_for_the_intercept_decay() {
    // Dense rows bring every feature up to date in one pass with one shared step count;
    // sparse rows feature by feature. With every entry stored both are the same operations
    // per weight, so the runs agree bit for bit (the intercept aside, whose step sparse
    // rows decay): SAG and SAGA, with and without L1, binomial and multinomial, and a
    // penalty strong enough to fold the scale in mid-epoch.
    let (n, d) = (40, 5);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / 2f64.powi(52) - 1.0
    };
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let sw: Vec<f64> = (0..n).map(|_| 1.0 + next() * 0.5).collect();
    let binary: Vec<f64> = (0..n)
        .map(|r| f64::from(u8::from(x[r * d] + 0.5 * next() > 0.0)))
        .collect();
    let three: Vec<f64> = (0..n).map(|r| (r % 3) as f64).collect();
    let dense = SagRows::Dense {
        values: &x,
        n_rows: n,
        n_features: d,
    };
    let indptr: Vec<usize> = (0..=n).map(|i| d * i).collect();
    let indices: Vec<usize> = (0..n * d).map(|k| k % d).collect();
    let sparse = SagRows::Csr {
        indptr: &indptr,
        indices: &indices,
        values: &x,
        n_features: d,
    };
    let bits = |v: &[f64]| v.iter().map(|w| w.to_bits()).collect::<Vec<_>>();
    for (loss, k, y) in [
        (SagLoss::Binomial, 1, &binary),
        (SagLoss::Multinomial, 3, &three),
    ] {
        for (saga, beta) in [(false, 0.0), (true, 0.0), (true, 0.3)] {
            for alpha in [0.5, 1000.0] {
                let mut s = settings(loss, k, alpha, beta, saga);
                s.max_squared_sum = 5.0;
                s.fit_intercept = false; // the decay only touches the intercept
                s.max_iter = 7;
                let a = train_sag(dense, y, &sw, &s, vec![0.0; d * k], vec![0.0; k]).unwrap();
                let b = train_sag(sparse, y, &sw, &s, vec![0.0; d * k], vec![0.0; k]).unwrap();
                let case = format!("{loss:?} saga {saga} beta {beta} alpha {alpha}");
                assert_eq!(bits(&a.weights), bits(&b.weights), "{case}");
                assert_eq!(a.n_iter, b.n_iter, "{case}");
                assert!(a.weights.iter().any(|&w| w != 0.0), "{case}");
            }
        }
    }
}

#[test]
fn multinomial_gradients_vanish_at_the_end() {
    let (x, _, sw) = tiny_problem();
    let y = vec![0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 2.0, 0.0];
    let rows = SagRows::Dense {
        values: &x,
        n_rows: 8,
        n_features: 2,
    };
    let alpha = 0.3;
    let s = settings(SagLoss::Multinomial, 3, alpha, 0.0, false);
    let run = train_sag(rows, &y, &sw, &s, vec![0.0; 6], vec![0.0; 3]).unwrap();
    let n = 8.0;
    let mut g = [0.0; 6];
    let mut gb = [0.0; 3];
    for i in 0..8 {
        let raw: Vec<f64> = (0..3)
            .map(|k| {
                x[2 * i] * run.weights[k] + x[2 * i + 1] * run.weights[3 + k] + run.intercept[k]
            })
            .collect();
        let mut out = [0.0; 3];
        multinomial_gradient(y[i], &raw, sw[i], &mut out);
        for k in 0..3 {
            g[k] += out[k] * x[2 * i] / n;
            g[3 + k] += out[k] * x[2 * i + 1] / n;
            gb[k] += out[k] / n;
        }
    }
    for (gj, wj) in g.iter().zip(&run.weights) {
        assert!((gj + alpha / n * wj).abs() < 1e-9);
    }
    assert!(gb.iter().all(|v| v.abs() < 1e-9));
}

#[test]
fn bad_input_and_a_degenerate_step_are_refused() {
    let (x, y, sw) = tiny_problem();
    let rows = SagRows::Dense {
        values: &x,
        n_rows: 8,
        n_features: 2,
    };
    let s = settings(SagLoss::Binomial, 1, 0.5, 0.0, false);
    assert!(matches!(
        train_sag(rows, &y[..7], &sw, &s, vec![0.0; 2], vec![0.0]),
        Err(SagFailure::InvalidInput(_))
    ));
    // alpha_scaled = L makes step * alpha_scaled one only if the rest vanishes: with no
    // data norm and no intercept, L = alpha_scaled and the SAG step is 1 / alpha_scaled.
    let mut degenerate = s.clone();
    degenerate.max_squared_sum = 0.0;
    degenerate.fit_intercept = false;
    assert_eq!(
        train_sag(rows, &y, &sw, &degenerate, vec![0.0; 2], vec![0.0]).unwrap_err(),
        SagFailure::DegenerateStep
    );
}
