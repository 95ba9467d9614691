//! Random train/test splits: the original crate's `train_test_split` /
//! `train_test_split_stratified` (owned arrays, any label type, rounding and clamping rules of
//! its own) and, for the Python layer, scikit-learn's size rules and stratified allocation.

use crate::error::{Error, Result};
use crate::math::labels::{self, bincount, Label};
use crate::random::rng_from;
use ndarray::{Array1, Array2, ArrayView1, Axis};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::hash::Hash;

/// A split size: a fraction of the samples in `(0, 1)` or an absolute count in `(0, n)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplitSize {
    Fraction(f64),
    Count(usize),
}

impl std::fmt::Display for SplitSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fraction(v) => write!(f, "{v}"),
            Self::Count(v) => write!(f, "{v}"),
        }
    }
}

fn describe(size: Option<SplitSize>) -> String {
    size.map_or_else(|| "None".into(), |s| s.to_string())
}

/// `(n_train, n_test)` for `n` samples, scikit-learn's rules: the test size defaults to 0.25
/// when neither is given; a fractional test size rounds up and a fractional train size down;
/// a missing size is the complement of the other.
pub fn split_sizes(
    n: usize,
    test_size: Option<SplitSize>,
    train_size: Option<SplitSize>,
) -> Result<(usize, usize)> {
    let test = match (test_size, train_size) {
        (None, None) => Some(SplitSize::Fraction(0.25)),
        (t, _) => t,
    };
    for (size, name) in [(test, "test_size"), (train_size, "train_size")] {
        let bad = match size {
            Some(SplitSize::Count(c)) => c == 0 || c >= n,
            Some(SplitSize::Fraction(f)) => !(f > 0.0 && f < 1.0),
            None => false,
        };
        if bad {
            return Err(Error::invalid_input(format!(
                "{name}={} should be either positive and smaller than the number of samples {n} or a float in the (0, 1) range",
                describe(size)
            )));
        }
    }
    if let (Some(SplitSize::Fraction(a)), Some(SplitSize::Fraction(b))) = (test, train_size) {
        if a + b > 1.0 {
            return Err(Error::invalid_input(format!(
                "The sum of test_size and train_size = {}, should be in the (0, 1) range. Reduce test_size and/or train_size.",
                a + b
            )));
        }
    }
    let count = |size: SplitSize, round_up: bool| match size {
        SplitSize::Count(c) => c,
        SplitSize::Fraction(f) if round_up => (f * n as f64).ceil() as usize,
        SplitSize::Fraction(f) => (f * n as f64).floor() as usize,
    };
    let n_test_given = test.map(|t| count(t, true));
    let n_train_given = train_size.map(|t| count(t, false));
    let (n_train, n_test) = match (n_train_given, n_test_given) {
        (Some(tr), Some(te)) => (tr, te),
        (None, Some(te)) => (n.saturating_sub(te), te),
        (Some(tr), None) => (tr, n.saturating_sub(tr)),
        (None, None) => unreachable!("test size defaults above"),
    };
    if n_train + n_test > n {
        return Err(Error::invalid_input(format!(
            "The sum of train_size and test_size = {}, should be smaller than the number of samples {n}. Reduce test_size and/or train_size.",
            n_train + n_test
        )));
    }
    if n_train == 0 {
        return Err(Error::invalid_input(format!(
            "With n_samples={n}, test_size={} and train_size={}, the resulting train set will be empty. Adjust any of the aforementioned parameters.",
            describe(test_size),
            describe(train_size)
        )));
    }
    Ok((n_train, n_test))
}

/// scikit-learn's `_approximate_mode`: split `n_draws` over classes in proportion to
/// `counts`, flooring, then handing the remaining draws to the largest remainders (ties broken
/// at random).
fn approximate_mode(counts: &[usize], n_draws: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let total: usize = counts.iter().sum();
    let continuous: Vec<f64> = counts
        .iter()
        .map(|&c| c as f64 / total as f64 * n_draws as f64)
        .collect();
    let mut floored: Vec<usize> = continuous.iter().map(|v| v.floor() as usize).collect();
    let mut need = n_draws.saturating_sub(floored.iter().sum());
    if need > 0 {
        let remainder: Vec<f64> = continuous
            .iter()
            .zip(&floored)
            .map(|(&c, &f)| c - f as f64)
            .collect();
        let mut values = remainder.clone();
        values.sort_by(|a, b| b.total_cmp(a));
        values.dedup();
        for value in values {
            let mut inds: Vec<usize> = (0..remainder.len())
                .filter(|&i| remainder[i] == value)
                .collect();
            inds.shuffle(rng);
            let add_now = inds.len().min(need);
            for &i in &inds[..add_now] {
                floored[i] += 1;
            }
            need -= add_now;
            if need == 0 {
                break;
            }
        }
    }
    floored
}

/// Train and test row indices for `n` samples.
///
/// With `shuffle`, a seeded permutation (ChaCha8, `random_state`, entropy when `None`) picks
/// the test rows first and the train rows next, as scikit-learn's `ShuffleSplit`; without it the
/// first rows train and the next ones test. `stratify` keeps each class's share in both parts
/// (scikit-learn's `StratifiedShuffleSplit` allocation) and needs `shuffle`.
pub fn train_test_indices<T: Label>(
    n: usize,
    test_size: Option<SplitSize>,
    train_size: Option<SplitSize>,
    random_state: Option<u64>,
    shuffle: bool,
    stratify: Option<ArrayView1<T>>,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let (n_train, n_test) = split_sizes(n, test_size, train_size)?;
    let Some(strata) = stratify else {
        if !shuffle {
            return Ok((
                (0..n_train).collect(),
                (n_train..n_train + n_test).collect(),
            ));
        }
        let mut perm: Vec<usize> = (0..n).collect();
        perm.shuffle(&mut rng_from(random_state));
        let test = perm[..n_test].to_vec();
        let train = perm[n_test..n_test + n_train].to_vec();
        return Ok((train, test));
    };
    if !shuffle {
        return Err(Error::invalid_input(
            "Stratified train/test split is not implemented for shuffle=False",
        ));
    }
    if strata.len() != n {
        return Err(Error::invalid_input(format!(
            "stratify has {} labels, but there are {n} samples",
            strata.len()
        )));
    }
    let (classes, codes) = labels::encode(strata, "stratify")?;
    let k = classes.len();
    let counts = bincount(&codes, k);
    if counts.iter().any(|&c| c < 2) {
        return Err(Error::invalid_input(
            "The least populated class in y has only 1 member, which is too few. The minimum number of groups for any class cannot be less than 2.",
        ));
    }
    if n_train < k {
        return Err(Error::invalid_input(format!(
            "The train_size = {n_train} should be greater or equal to the number of classes = {k}"
        )));
    }
    if n_test < k {
        return Err(Error::invalid_input(format!(
            "The test_size = {n_test} should be greater or equal to the number of classes = {k}"
        )));
    }
    let mut rng = rng_from(random_state);
    let train_counts = approximate_mode(&counts, n_train, &mut rng);
    let remaining: Vec<usize> = counts
        .iter()
        .zip(&train_counts)
        .map(|(c, t)| c - t)
        .collect();
    let test_counts = approximate_mode(&remaining, n_test, &mut rng);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (i, &c) in codes.iter().enumerate() {
        members[c].push(i);
    }
    let (mut train, mut test) = (Vec::with_capacity(n_train), Vec::with_capacity(n_test));
    for (c, mut rows) in members.into_iter().enumerate() {
        rows.shuffle(&mut rng);
        train.extend_from_slice(&rows[..train_counts[c]]);
        test.extend_from_slice(&rows[train_counts[c]..train_counts[c] + test_counts[c]]);
    }
    train.shuffle(&mut rng);
    test.shuffle(&mut rng);
    Ok((train, test))
}

/// `(x_train, x_test, y_train, y_test)`.
pub type TrainTestSplit<A> = (Array2<f64>, Array2<f64>, Array1<A>, Array1<A>);

/// The original crate's checks: `x` and `y` describe the same non-empty samples (at least two,
/// so both parts can be non-empty) and `test_size` (default 0.3) lies in `(0, 1)`.
fn check_split<A>(x: &Array2<f64>, y: &Array1<A>, test_size: Option<f64>) -> Result<f64> {
    if x.nrows() != y.len() {
        return Err(Error::dimension_mismatch(x.nrows(), y.len()));
    }
    if x.nrows() == 0 {
        return Err(Error::empty_input("x and y have no samples"));
    }
    let test_size = test_size.unwrap_or(0.3);
    if !(test_size > 0.0 && test_size < 1.0) {
        return Err(Error::invalid_parameter(
            "test_size",
            format!("must lie strictly between 0 and 1, got {test_size}"),
        ));
    }
    if x.nrows() < 2 {
        return Err(Error::invalid_input(
            "a split needs at least 2 samples, one for each part",
        ));
    }
    Ok(test_size)
}

/// Test rows out of `n >= 2`: `round(n * test_size)` clamped to `[1, n - 1]`, so neither part
/// is ever empty.
fn n_test_of(n: usize, test_size: f64) -> usize {
    ((n as f64 * test_size).round() as usize).clamp(1, n - 1)
}

fn take<A: Clone>(
    x: Array2<f64>,
    y: Array1<A>,
    train: &[usize],
    test: &[usize],
) -> TrainTestSplit<A> {
    (
        x.select(Axis(0), train),
        x.select(Axis(0), test),
        y.select(Axis(0), train),
        y.select(Axis(0), test),
    )
}

/// Split samples into train and test parts at random (ChaCha8 seeded by `random_state`, or by
/// the global seed / entropy when `None`). `test_size` defaults to 0.3; the test part gets
/// `round(n * test_size)` rows, clamped so both parts keep at least one.
///
/// Errors: `x` rows != `y` length -> `DimensionMismatch`; no samples -> `EmptyInput`;
/// `test_size` outside `(0, 1)` -> `InvalidParameter`; a single sample -> `InvalidInput`.
pub fn train_test_split<A: Clone>(
    x: Array2<f64>,
    y: Array1<A>,
    test_size: Option<f64>,
    random_state: Option<u64>,
) -> Result<TrainTestSplit<A>> {
    let test_size = check_split(&x, &y, test_size)?;
    let n = x.nrows();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng_from(random_state));
    let (test, train) = perm.split_at(n_test_of(n, test_size));
    Ok(take(x, y, train, test))
}

/// [`train_test_split`] keeping every class on both sides: each class is split on its own
/// (`round(count * test_size)` test rows, clamped to `[1, count - 1]`), then both parts are
/// shuffled.
///
/// Errors as [`train_test_split`], plus `InvalidInput` when a class has fewer than 2 samples.
pub fn train_test_split_stratified<A: Clone + Eq + Hash>(
    x: Array2<f64>,
    y: Array1<A>,
    test_size: Option<f64>,
    random_state: Option<u64>,
) -> Result<TrainTestSplit<A>> {
    let test_size = check_split(&x, &y, test_size)?;
    // classes in first-seen order, so the result does not depend on hashing order
    let mut index: HashMap<&A, usize> = HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, label) in y.iter().enumerate() {
        let k = *index.entry(label).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[k].push(i);
    }
    if let Some(small) = members.iter().position(|m| m.len() < 2) {
        return Err(Error::invalid_input(format!(
            "class #{small} (in order of appearance) has {} sample; every class needs at least 2 to appear in both parts",
            members[small].len()
        )));
    }
    let mut rng = rng_from(random_state);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for mut rows in members {
        rows.shuffle(&mut rng);
        let (te, tr) = rows.split_at(n_test_of(rows.len(), test_size));
        test.extend_from_slice(te);
        train.extend_from_slice(tr);
    }
    train.shuffle(&mut rng);
    test.shuffle(&mut rng);
    Ok(take(x, y, &train, &test))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;
    use rand::SeedableRng;

    #[test]
    fn sizes_follow_scikit_learn_rules() {
        assert_eq!(split_sizes(10, None, None).unwrap(), (7, 3)); // ceil(2.5) = 3
        assert_eq!(
            split_sizes(10, Some(SplitSize::Count(4)), None).unwrap(),
            (6, 4)
        );
        assert_eq!(
            split_sizes(10, None, Some(SplitSize::Fraction(0.55))).unwrap(),
            (5, 5)
        ); // floor(5.5)
        assert_eq!(
            split_sizes(
                10,
                Some(SplitSize::Fraction(0.2)),
                Some(SplitSize::Count(3))
            )
            .unwrap(),
            (3, 2)
        );
        assert!(split_sizes(10, Some(SplitSize::Fraction(1.0)), None).is_err());
        assert!(split_sizes(10, Some(SplitSize::Count(10)), None).is_err());
        assert!(split_sizes(
            10,
            Some(SplitSize::Fraction(0.6)),
            Some(SplitSize::Fraction(0.6))
        )
        .is_err());
        assert!(split_sizes(10, Some(SplitSize::Count(6)), Some(SplitSize::Count(6))).is_err());
        assert!(split_sizes(1, None, None).is_err()); // train set would be empty
    }

    #[test]
    fn splits_are_disjoint_reproducible_and_stratified() {
        let n = 103;
        let (train, test) = train_test_indices::<i64>(n, None, None, Some(7), true, None).unwrap();
        assert_eq!((train.len(), test.len()), (77, 26));
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..n).collect::<Vec<_>>());
        assert_eq!(
            train_test_indices::<i64>(n, None, None, Some(7), true, None).unwrap(),
            (train.clone(), test.clone())
        );
        assert_ne!(
            train_test_indices::<i64>(n, None, None, Some(8), true, None)
                .unwrap()
                .0,
            train
        );
        let (tr, te) = train_test_indices::<i64>(10, None, None, None, false, None).unwrap();
        assert_eq!((tr, te), ((0..7).collect(), (7..10).collect()));
        // 60 of class 0, 40 of class 1: test 25 -> 15 + 10 exactly
        let y: Vec<i64> = (0..100).map(|i| i64::from(i % 5 >= 3)).collect();
        let (train, test) =
            train_test_indices(100, None, None, Some(1), true, Some(arr1(&y).view())).unwrap();
        let ones = |idx: &[usize]| idx.iter().filter(|&&i| y[i] == 1).count();
        assert_eq!((test.len(), ones(&test)), (25, 10));
        assert_eq!((train.len(), ones(&train)), (75, 30));
        assert!(
            train_test_indices(100, None, None, Some(1), false, Some(arr1(&y).view())).is_err()
        );
        let lonely = arr1(&[0i64, 0, 0, 1]);
        assert!(train_test_indices(
            4,
            Some(SplitSize::Count(2)),
            None,
            Some(1),
            true,
            Some(lonely.view())
        )
        .is_err());
    }

    #[test]
    fn approximate_mode_by_hand() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        // 3 draws over [1, 1, 1]: one each
        assert_eq!(approximate_mode(&[1, 1, 1], 3, &mut rng), vec![1, 1, 1]);
        // 5 draws over [6, 4]: continuous [3, 2]
        assert_eq!(approximate_mode(&[6, 4], 5, &mut rng), vec![3, 2]);
        // 2 draws over [1, 1, 1]: two of the three tied classes
        assert_eq!(
            approximate_mode(&[1, 1, 1], 2, &mut rng)
                .iter()
                .sum::<usize>(),
            2
        );
    }

    #[test]
    fn array_split_keeps_rows_together() {
        let x = Array2::from_shape_fn((20, 2), |(i, j)| (i * 10 + j) as f64);
        let y = Array1::from_shape_fn(20, |i| i as f64);
        let (xtr, xte, ytr, yte) = train_test_split(x, y, Some(0.3), Some(3)).unwrap();
        assert_eq!((xtr.nrows(), xte.nrows()), (14, 6));
        let mut seen: Vec<f64> = ytr.iter().chain(yte.iter()).copied().collect();
        seen.sort_by(f64::total_cmp);
        assert_eq!(seen, (0..20).map(|i| i as f64).collect::<Vec<_>>());
        for (row, t) in xtr
            .outer_iter()
            .zip(ytr.iter())
            .chain(xte.outer_iter().zip(yte.iter()))
        {
            assert_eq!(row[0], t * 10.0);
        }
    }

    #[test]
    fn original_size_rules_and_errors() {
        let x = |n: usize| Array2::from_shape_fn((n, 1), |(i, _)| i as f64);
        let y = |n: usize| Array1::from_iter(0..n as i32);
        // round(10 * 0.25) = 3 (half away from zero); 0.99 and 0.01 clamp to [1, n - 1]
        for (n, size, want) in [(10, 0.25, 3), (10, 0.99, 9), (10, 0.01, 1), (2, 0.9, 1)] {
            let (_, xte, ytr, _) = train_test_split(x(n), y(n), Some(size), Some(1)).unwrap();
            assert_eq!((xte.nrows(), ytr.len()), (want, n - want));
        }
        assert!(matches!(
            train_test_split(x(5), y(4), None, None),
            Err(Error::DimensionMismatch {
                expected: 5,
                found: 4
            })
        ));
        assert!(matches!(
            train_test_split(x(0), y(0), None, None),
            Err(Error::EmptyInput(_))
        ));
        assert!(matches!(
            train_test_split(x(5), y(5), Some(f64::NAN), None),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            train_test_split(x(1), y(1), None, None),
            Err(Error::InvalidInput(_))
        ));
    }

    #[test]
    fn stratified_split_keeps_every_class_and_is_reproducible() {
        // 9 of "a", 3 of "b": "a" gives round(2.7) = 3 test rows, "b" round(0.9) = 1
        let labels: Vec<&str> = (0..12).map(|i| if i < 9 { "a" } else { "b" }).collect();
        let x = Array2::from_shape_fn((12, 1), |(i, _)| i as f64);
        let y = Array1::from(labels);
        let split = || train_test_split_stratified(x.clone(), y.clone(), None, Some(9)).unwrap();
        let (xtr, xte, ytr, yte) = split();
        let count = |a: &Array1<&str>, c: &str| a.iter().filter(|&&l| l == c).count();
        assert_eq!((count(&yte, "a"), count(&yte, "b")), (3, 1));
        assert_eq!((count(&ytr, "a"), count(&ytr, "b")), (6, 2));
        for (row, &l) in xtr.outer_iter().zip(&ytr).chain(xte.outer_iter().zip(&yte)) {
            assert_eq!(l, if row[0] < 9.0 { "a" } else { "b" });
        }
        assert_eq!(split().0, xtr);
        let lonely = Array1::from(vec![0, 0, 1]);
        assert!(matches!(
            train_test_split_stratified(
                x.slice(ndarray::s![..3, ..]).to_owned(),
                lonely,
                None,
                None
            ),
            Err(Error::InvalidInput(_))
        ));
    }
}
