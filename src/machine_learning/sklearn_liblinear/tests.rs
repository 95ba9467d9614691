use super::random::{MersenneTwister, DEFAULT_SEED};
use super::*;

#[test]
fn mersenne_twister_matches_the_standards_check_value() {
    // The C++ standard requires the 10000th output of a default-constructed mt19937 to be
    // 4123659995.
    let mut rng = MersenneTwister::new(DEFAULT_SEED);
    let mut last = 0;
    for _ in 0..10_000 {
        last = rng.next_u32();
    }
    assert_eq!(last, 4_123_659_995);
}

#[test]
fn mersenne_twister_first_outputs_of_the_default_seed() {
    // the first outputs of std::mt19937 (and of the reference mt19937ar with init_genrand(5489))
    let mut rng = MersenneTwister::new(DEFAULT_SEED);
    let first: Vec<u32> = (0..3).map(|_| rng.next_u32()).collect();
    assert_eq!(first, [3_499_211_612, 581_869_302, 3_890_346_734]);
}

#[test]
fn bounded_draw_is_the_high_word_of_the_product() {
    // Without a rejection, the draw is floor(x * bound / 2^32) of the generator's next output.
    for bound in [1u32, 2, 3, 7, 1000, 1 << 31, u32::MAX] {
        let mut a = MersenneTwister::new(42);
        let mut b = MersenneTwister::new(42);
        for _ in 0..200 {
            let drawn = a.below(bound);
            assert!(drawn < bound);
            let x = b.next_u32();
            let product = u64::from(x) * u64::from(bound);
            let threshold = (1u64 << 32) % u64::from(bound);
            if (product as u32 as u64) < threshold {
                // a rejection: b must follow a's redraws
                let mut p = product;
                while ((p as u32) as u64) < threshold {
                    p = u64::from(b.next_u32()) * u64::from(bound);
                }
                assert_eq!(drawn, (p >> 32) as u32);
            } else {
                assert_eq!(drawn, (product >> 32) as u32);
            }
        }
    }
}

#[test]
fn bounded_draw_rejects_the_biased_low_words() {
    // bound 3 * 2^30: 2^32 mod bound = 2^30, so about a quarter of the outputs are redrawn;
    // every draw stays in range and the four residues mod 4 of the draws all appear.
    let bound = 3u32 << 30;
    let mut rng = MersenneTwister::new(7);
    let mut seen = [false; 4];
    for _ in 0..1000 {
        let d = rng.below(bound);
        assert!(d < bound);
        seen[(d % 4) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));
}

/// A separable-ish toy problem: 2 features, bias 1.
fn toy_rows() -> (Rows<'static>, Vec<i32>) {
    let x = [
        1.0, 2.0, //
        2.0, 0.5, //
        -1.0, -1.5, //
        0.0, -2.0, //
        1.5, -0.5, //
        -2.0, 0.5, //
    ];
    let y = vec![1, 1, 0, 0, 1, 0];
    (Rows::from_dense(&x, 6, 2, 1.0).unwrap(), y)
}

fn margins(rows: &Rows<'_>, y: &[i32], w: &[f64]) -> Vec<f64> {
    (0..rows.n_rows())
        .map(|r| {
            let (idx, val) = rows.row(r);
            let z: f64 = idx.iter().zip(val).map(|(&f, &v)| w[f as usize] * v).sum();
            if y[r] == 1 {
                z
            } else {
                -z
            }
        })
        .collect()
}

#[test]
fn dense_rows_skip_zeros_and_append_the_bias() {
    let (rows, _) = toy_rows();
    assert_eq!(rows.n_cols, 3);
    assert_eq!(rows.row(3), (&[1u32, 2][..], &[-2.0, 1.0][..]));
    assert_eq!(rows.row(0), (&[0u32, 1, 2][..], &[1.0, 2.0, 1.0][..]));
}

#[test]
fn hinge_dual_solution_satisfies_the_kkt_conditions() {
    // The L1-loss SVM's optimum: w = sum_i alpha_i y_i x_i with 0 <= alpha_i <= C, and the
    // primal gradient w - C sum_{margin < 1} y_i x_i (plus the subgradient on margin = 1)
    // vanishes; checked through the primal objective: no coordinate move lowers it.
    let (rows, y) = toy_rows();
    let settings = TrainSettings {
        solver: Solver::DualCoordinateDescent(HingeLoss::Hinge),
        eps: 1e-10,
        c: 1.0,
        class_weight: &[],
        max_iter: 100_000,
        seed: 3,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    assert!(trained.n_iter[0] < 100_000);
    let w = &trained.coef[0];
    let primal = |w: &[f64]| {
        let m = margins(&rows, &y, w);
        0.5 * w.iter().map(|v| v * v).sum::<f64>()
            + m.iter().map(|&z| (1.0 - z).max(0.0)).sum::<f64>()
    };
    let best = primal(w);
    for j in 0..3 {
        for step in [1e-4, -1e-4] {
            let mut moved = w.clone();
            moved[j] += step;
            assert!(primal(&moved) >= best - 1e-9, "coordinate {j} step {step}");
        }
    }
}

#[test]
fn squared_hinge_dual_and_primal_agree_at_the_optimum() {
    // Both formulations minimise the same strictly convex primal, so both solvers reach its
    // unique minimiser; its gradient w - 2 C sum_i y_i x_i max(0, 1 - margin_i) vanishes.
    let (rows, y) = toy_rows();
    let mut solutions = Vec::new();
    for solver in [
        Solver::DualCoordinateDescent(HingeLoss::SquaredHinge),
        Solver::SquaredHingePrimal,
    ] {
        let settings = TrainSettings {
            solver,
            eps: 1e-12,
            c: 0.5,
            class_weight: &[],
            max_iter: 100_000,
            seed: 11,
        };
        let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
        let w = trained.coef[0].clone();
        let m = margins(&rows, &y, &w);
        let mut grad = w.clone();
        for r in 0..6 {
            let slack = (1.0 - m[r]).max(0.0);
            let sign = if y[r] == 1 { 1.0 } else { -1.0 };
            let (idx, val) = rows.row(r);
            for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                grad[f] -= 2.0 * 0.5 * sign * v * slack;
            }
        }
        assert!(
            grad.iter().all(|g| g.abs() < 1e-6),
            "{solver:?}: gradient {grad:?}"
        );
        solutions.push(w);
    }
    for (a, b) in solutions[0].iter().zip(&solutions[1]) {
        assert!((a - b).abs() < 1e-6);
    }
}

#[test]
fn one_vs_rest_trains_one_row_per_class_and_drops_unweighted_samples() {
    let (rows, _) = toy_rows();
    let y = vec![0, 1, 2, 0, 1, 2];
    let settings = TrainSettings {
        solver: Solver::DualCoordinateDescent(HingeLoss::SquaredHinge),
        eps: 1e-4,
        c: 1.0,
        class_weight: &[1.0, 2.0, 1.0],
        max_iter: 1000,
        seed: 0,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    assert_eq!(trained.labels, [0, 1, 2]);
    assert_eq!(trained.coef.len(), 3);
    assert_eq!(trained.n_iter.len(), 3);
    // weight 0 drops a sample: with class 2 left with none, two classes remain
    let trained = train(&rows, &y, &[1.0, 1.0, 0.0, 1.0, 1.0, -1.0], &settings).unwrap();
    assert_eq!(trained.labels, [0, 1]);
    assert_eq!(trained.coef.len(), 1);
}

#[test]
fn max_iter_zero_leaves_zero_weights() {
    let (rows, y) = toy_rows();
    for solver in [
        Solver::DualCoordinateDescent(HingeLoss::Hinge),
        Solver::SquaredHingePrimal,
    ] {
        let settings = TrainSettings {
            solver,
            eps: 1e-4,
            c: 1.0,
            class_weight: &[],
            max_iter: 0,
            seed: 0,
        };
        let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
        assert_eq!(trained.n_iter, [0]);
        assert!(trained.coef[0].iter().all(|&v| v == 0.0));
    }
}

#[test]
fn l1_solution_satisfies_the_optimality_conditions() {
    // min |w|_1 + C sum max(0, 1 - margin)^2: at the optimum the loss gradient g_j is -sign(w_j)
    // where w_j != 0 and within [-1, 1] where w_j == 0.
    let (rows, y) = toy_rows();
    let settings = TrainSettings {
        solver: Solver::L1SquaredHinge,
        eps: 1e-12,
        c: 2.0,
        class_weight: &[],
        max_iter: 100_000,
        seed: 5,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    let w = &trained.coef[0];
    let m = margins(&rows, &y, w);
    let mut grad = [0.0; 3];
    for r in 0..6 {
        let slack = (1.0 - m[r]).max(0.0);
        let sign = if y[r] == 1 { 1.0 } else { -1.0 };
        let (idx, val) = rows.row(r);
        for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
            grad[f] -= 2.0 * 2.0 * sign * v * slack;
        }
    }
    for j in 0..3 {
        if w[j] == 0.0 {
            assert!(grad[j].abs() <= 1.0 + 1e-6, "feature {j}: {grad:?}");
        } else {
            assert!(
                (grad[j] + w[j].signum()).abs() < 1e-6,
                "feature {j}: {grad:?} {w:?}"
            );
        }
    }
}

#[test]
fn logistic_primal_reaches_a_zero_gradient() {
    // the gradient of w^T w / 2 + C sum log(1 + exp(-y w^T x)) is
    // w - C sum_i y_i x_i / (1 + exp(y_i w^T x_i))
    let (rows, y) = toy_rows();
    let settings = TrainSettings {
        solver: Solver::LogisticPrimal,
        eps: 1e-12,
        c: 3.0,
        class_weight: &[],
        max_iter: 1000,
        seed: 0,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    let w = &trained.coef[0];
    let m = margins(&rows, &y, w);
    let mut grad = w.clone();
    for r in 0..6 {
        let sign = if y[r] == 1 { 1.0 } else { -1.0 };
        let (idx, val) = rows.row(r);
        for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
            grad[f] -= 3.0 * sign * v / (1.0 + m[r].exp());
        }
    }
    // TRON also stops once the actual and predicted reductions fall below 1e-12 |f|; the
    // predicted reduction of a Newton step is about |g|^2 / 2 here (H near the identity
    // scale), so |g| may stay near sqrt(2e-12 |f|) ~ 1e-6 (f is a few units)
    assert!(grad.iter().all(|g| g.abs() < 1e-5), "gradient {grad:?}");
}

/// The logistic loss gradient `w - C sum_i y_i x_i / (1 + exp(y_i w^T x_i))` without the
/// regulariser's `w` term (`C` a single cost for every sample).
fn logistic_loss_gradient(rows: &Rows<'_>, y: &[i32], w: &[f64], c: f64) -> Vec<f64> {
    let m = margins(rows, y, w);
    let mut grad = vec![0.0; w.len()];
    for r in 0..rows.n_rows() {
        let sign = if y[r] == 1 { 1.0 } else { -1.0 };
        let (idx, val) = rows.row(r);
        for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
            grad[f] -= c * sign * v / (1.0 + m[r].exp());
        }
    }
    grad
}

#[test]
fn logistic_dual_reaches_the_primal_optimum() {
    // The dual's w = sum_i alpha_i y_i x_i minimises the primal w^T w / 2 + C sum log-loss:
    // its gradient w + loss gradient vanishes. The dual stops when every coordinate's first
    // Newton derivative is below eps (1e-10): a dual gradient of that size moves the
    // primal gradient by about eps |x|^2 C, far below the 1e-6 asserted.
    let (rows, y) = toy_rows();
    let c = 2.0;
    let settings = TrainSettings {
        solver: Solver::LogisticDual,
        eps: 1e-10,
        c,
        class_weight: &[],
        max_iter: 100_000,
        seed: 9,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    assert!(trained.n_iter[0] < 100_000);
    let w = &trained.coef[0];
    let loss = logistic_loss_gradient(&rows, &y, w, c);
    let grad: Vec<f64> = w.iter().zip(&loss).map(|(a, b)| a + b).collect();
    assert!(grad.iter().all(|g| g.abs() < 1e-6), "gradient {grad:?}");
}

#[test]
fn logistic_dual_and_primal_agree() {
    // Both minimise the same strictly convex primal, so they reach the same point.
    let (rows, y) = toy_rows();
    let fit = |solver| {
        let settings = TrainSettings {
            solver,
            eps: 1e-12,
            c: 0.7,
            class_weight: &[],
            max_iter: 100_000,
            seed: 4,
        };
        train(&rows, &y, &[1.0; 6], &settings).unwrap().coef[0].clone()
    };
    let (dual, primal) = (fit(Solver::LogisticDual), fit(Solver::LogisticPrimal));
    for (a, b) in dual.iter().zip(&primal) {
        assert!((a - b).abs() < 1e-5, "{dual:?} vs {primal:?}");
    }
}

#[test]
fn l1_logistic_satisfies_the_optimality_conditions() {
    // min |w|_1 + C sum log(1 + exp(-y w^T x)): the loss gradient is -sign(w_j) where
    // w_j != 0 and within [-1, 1] where w_j == 0. newGLMNET stops once the summed
    // violation is below eps (1e-12, scaled by the class share) times its first value.
    let (rows, y) = toy_rows();
    for c in [0.3, 5.0] {
        let settings = TrainSettings {
            solver: Solver::L1Logistic,
            eps: 1e-12,
            c,
            class_weight: &[],
            max_iter: 1000,
            seed: 2,
        };
        let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
        assert!(trained.n_iter[0] < 1000);
        let w = &trained.coef[0];
        let grad = logistic_loss_gradient(&rows, &y, w, c);
        for j in 0..3 {
            if w[j] == 0.0 {
                assert!(grad[j].abs() <= 1.0 + 1e-8, "C {c} feature {j}: {grad:?}");
            } else {
                assert!(
                    (grad[j] + w[j].signum()).abs() < 1e-6,
                    "C {c} feature {j}: {grad:?} {w:?}"
                );
            }
        }
    }
    // a small C zeroes every weight: the loss gradient at 0, |C sum y_i x_i / 2|, is below 1
    let settings = TrainSettings {
        solver: Solver::L1Logistic,
        eps: 1e-6,
        c: 0.05,
        class_weight: &[],
        max_iter: 1000,
        seed: 2,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    assert!(trained.coef[0].iter().all(|&v| v == 0.0));
}

#[test]
fn crammer_singer_satisfies_its_dual_conditions() {
    // The dual's optimum: per sample, alpha_i sums to zero, alpha_im <= C for its own class
    // and <= 0 otherwise, and among the classes whose variable is below its bound the
    // gradients G_im = w_m . x_i + [m != y_i] are all equal (the block's KKT condition),
    // and no class at its bound has a larger gradient than them. Checked through the
    // primal instead: w_m = sum_i alpha_im x_i is the minimiser of
    // |W|^2 / 2 + C sum_i max_m (w_m . x_i + [m != y_i] - w_{y_i} . x_i), whose subgradient
    // condition the dual's optimum satisfies; a small move of any weight cannot lower it.
    let (rows, _) = toy_rows();
    let y = vec![0, 1, 2, 0, 1, 2];
    let c = 1.5;
    let settings = TrainSettings {
        solver: Solver::CrammerSinger,
        eps: 1e-10,
        c,
        class_weight: &[],
        max_iter: 1,
        seed: 1,
    };
    let trained = train(&rows, &y, &[1.0; 6], &settings).unwrap();
    assert_eq!(trained.coef.len(), 3);
    // the pass cap is the solver's own, not max_iter (as scikit-learn's fork runs it)
    assert!(trained.n_iter[0] > 1);
    let objective = |w: &[Vec<f64>]| {
        let mut total = 0.0;
        for row in w {
            total += 0.5 * row.iter().map(|v| v * v).sum::<f64>();
        }
        for (r, &label) in y.iter().enumerate() {
            let (idx, val) = rows.row(r);
            let score = |m: usize| -> f64 {
                idx.iter()
                    .zip(val)
                    .map(|(&f, &v)| w[m][f as usize] * v)
                    .sum()
            };
            let own = score(label as usize);
            let worst = (0..3)
                .map(|m| score(m) + if m == label as usize { 0.0 } else { 1.0 } - own)
                .fold(f64::NEG_INFINITY, f64::max);
            total += c * worst;
        }
        total
    };
    let best = objective(&trained.coef);
    for m in 0..3 {
        for f in 0..3 {
            for step in [1e-4, -1e-4] {
                let mut moved = trained.coef.clone();
                moved[m][f] += step;
                assert!(
                    objective(&moved) >= best - 1e-9,
                    "class {m} column {f} step {step}"
                );
            }
        }
    }
}

/// `n x d` rows of splitmix noise in [-1, 1), a quarter of them zero, and four classes
/// that depend on the first two columns (so every problem is non-trivial).
fn noisy_problem(n: usize, d: usize) -> (Vec<f64>, Vec<i32>) {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / 2f64.powi(63) - 1.0
    };
    let x: Vec<f64> = (0..n * d)
        .map(|_| {
            let v = next();
            if v.abs() < 0.25 {
                0.0
            } else {
                v
            }
        })
        .collect();
    let y = (0..n)
        .map(|r| i32::from(x[r * d] + 0.3 * next() > 0.0) * 2 + i32::from(x[r * d + 1] > 0.1))
        .collect();
    (x, y)
}

/// Solver `number` (liblinear's) on [`noisy_problem`]'s four classes, with class weights.
fn four_class_settings(number: i32, seed: u32) -> TrainSettings<'static> {
    TrainSettings {
        solver: Solver::from_liblinear(number).unwrap(),
        eps: 1e-4,
        c: 0.7,
        class_weight: &[1.0, 1.5, 0.8, 1.2],
        max_iter: 200,
        seed,
    }
}

fn bits(trained: &Trained) -> (Vec<Vec<u64>>, Vec<i32>, Vec<i32>) {
    let coef = trained
        .coef
        .iter()
        .map(|row| row.iter().map(|v| v.to_bits()).collect())
        .collect();
    (coef, trained.n_iter.clone(), trained.labels.clone())
}

#[test]
fn side_by_side_trainings_are_the_serial_ones_bit_for_bit() {
    // every solver, four classes (one-vs-rest side by side for TRON), and a fit beside its
    // probe: serial (`usize::MAX`) and parallel (`0`) give the same bits, and each half of a
    // pair is the fit run alone
    let (n, d) = (300, 7);
    let (x, y) = noisy_problem(n, d);
    let moved: Vec<f64> = x.iter().map(|v| v * (1.0 + 4.0 * f64::EPSILON)).collect();
    let rows = Rows::from_dense(&x, n, d, 1.0).unwrap();
    let moved_rows = Rows::from_dense(&moved, n, d, 1.0).unwrap();
    let weight: Vec<f64> = (0..n).map(|r| 0.5 + (r % 3) as f64 * 0.25).collect();
    for number in 0..8 {
        let settings = four_class_settings(number, 3);
        let alone = bits(&train(&rows, &y, &weight, &settings).unwrap());
        let moved_alone = bits(&train(&moved_rows, &y, &weight, &settings).unwrap());
        let (serial, parallel) =
            crate::gate::serial_and_parallel(&SIDE_BY_SIDE_MIN_ENTRIES, || {
                let (a, b) = train_pair(&rows, &moved_rows, &y, &weight, &settings);
                (bits(&a.unwrap()), bits(&b.unwrap()))
            });
        assert_eq!(serial, parallel, "solver {number}");
        assert_eq!(serial, (alone.clone(), moved_alone), "solver {number}");
        let (serial, parallel) =
            crate::gate::serial_and_parallel(&SIDE_BY_SIDE_MIN_ENTRIES, || {
                bits(&train(&rows, &y, &weight, &settings).unwrap())
            });
        assert_eq!(serial, parallel, "solver {number}");
        assert_eq!(serial, alone, "solver {number}");
        // one weight row per class (one-vs-rest, or Crammer-Singer's joint problem)
        assert_eq!(serial.0.len(), 4, "solver {number}");
    }
}

#[test]
fn rows_converted_in_grouped_order_train_to_the_same_bits() {
    // weights of zero drop rows; the conversion in `grouped_order` (y and weights taken
    // in it too) is the problem `train` regroups itself, for every solver, dense and CSR
    let (n, d) = (120, 5);
    let (x, y) = noisy_problem(n, d);
    let weight: Vec<f64> = (0..n).map(|r| (r % 4) as f64 * 0.5).collect();
    let order = grouped_order(&y, &weight);
    assert!(order.windows(2).all(|p| (y[p[0]], p[0]) < (y[p[1]], p[1])));
    assert_eq!(order.len(), weight.iter().filter(|&&w| w > 0.0).count());
    let y_in: Vec<i32> = order.iter().map(|&r| y[r]).collect();
    let w_in: Vec<f64> = order.iter().map(|&r| weight[r]).collect();
    let indptr: Vec<usize> = (0..=n).map(|r| r * d).collect();
    let indices: Vec<usize> = (0..n * d).map(|k| k % d).collect();
    let natural = Rows::from_dense(&x, n, d, 1.0).unwrap();
    let dense_in = Rows::from_dense_in(&x, n, d, 1.0, Some(&order)).unwrap();
    let csr_in = Rows::from_csr_in(&indptr, &indices, &x, d, 1.0, Some(&order)).unwrap();
    for number in 0..8 {
        let settings = four_class_settings(number, 5);
        let want = bits(&train(&natural, &y, &weight, &settings).unwrap());
        let dense = bits(&train(&dense_in, &y_in, &w_in, &settings).unwrap());
        assert_eq!(dense, want, "solver {number}");
        // CSR keeps the stored zeros a dense conversion skips: compare CSR with CSR
        let csr_natural = Rows::from_csr(&indptr, &indices, &x, d, 1.0).unwrap();
        let csr = bits(&train(&csr_in, &y_in, &w_in, &settings).unwrap());
        assert_eq!(
            csr,
            bits(&train(&csr_natural, &y, &weight, &settings).unwrap()),
            "solver {number}"
        );
    }
    assert!(Rows::from_dense_in(&x, n, d, 1.0, Some(&[n])).is_err());
}

#[test]
fn full_rows_are_recognised_only_when_every_row_stores_every_column_in_order() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    assert!(Rows::from_dense(&x, 2, 3, 1.0).unwrap().full);
    assert!(Rows::from_dense(&x, 3, 2, 0.0).unwrap().full);
    let with_zero = [1.0, 0.0, 3.0, 4.0, 5.0, 6.0];
    assert!(!Rows::from_dense(&with_zero, 2, 3, 1.0).unwrap().full);
    let indptr = [0, 3, 6];
    assert!(
        Rows::from_csr(&indptr, &[0, 1, 2, 0, 1, 2], &x, 3, 1.0)
            .unwrap()
            .full
    );
    // stored out of column order, or one column twice and another not at all
    assert!(
        !Rows::from_csr(&indptr, &[0, 2, 1, 0, 1, 2], &x, 3, 1.0)
            .unwrap()
            .full
    );
    assert!(
        !Rows::from_csr(&indptr, &[0, 1, 1, 0, 1, 2], &x, 3, 0.0)
            .unwrap()
            .full
    );
    assert!(
        !Rows::from_csr(&[0, 2, 6], &[0, 1, 0, 1, 2, 2], &x, 3, 0.0)
            .unwrap()
            .full
    );
}

#[test]
fn full_rows_train_to_the_bits_of_their_sparse_reading() {
    // TRON reads full rows as dense slices, eight rows' sums side by side: each sum must
    // still be liblinear's sequential one. The same rows read entry by entry (`full`
    // cleared) are the reference; 203 rows leave a remainder past the blocks of eight, and
    // four classes train problems whose inside rows are scattered subsets
    let (n, d) = (203, 9);
    let (x, y) = noisy_problem(n, d);
    let x: Vec<f64> = x
        .iter()
        .map(|&v| if v == 0.0 { 0.125 } else { v })
        .collect();
    let weight: Vec<f64> = (0..n).map(|r| 0.5 + (r % 3) as f64 * 0.25).collect();
    for bias in [1.0, 0.0] {
        let full = Rows::from_dense(&x, n, d, bias).unwrap();
        assert!(full.full);
        let mut entrywise = Rows::from_dense(&x, n, d, bias).unwrap();
        entrywise.full = false;
        for number in [0, 2] {
            for (c, seed) in [(0.7, 3), (20.0, 4)] {
                let settings = TrainSettings {
                    c,
                    ..four_class_settings(number, seed)
                };
                let got = bits(&train(&full, &y, &weight, &settings).unwrap());
                let want = bits(&train(&entrywise, &y, &weight, &settings).unwrap());
                assert_eq!(got, want, "solver {number} bias {bias} C {c}");
                let two: Vec<i32> = y.iter().map(|&k| k % 2).collect();
                let got = bits(&train(&full, &two, &weight, &settings).unwrap());
                let want = bits(&train(&entrywise, &two, &weight, &settings).unwrap());
                assert_eq!(got, want, "solver {number} bias {bias} C {c}, two classes");
            }
        }
    }
}
