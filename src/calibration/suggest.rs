//! The suggestion rule: from a timed ladder to a gate value (SPEC §7: a gate sits at the
//! crossover with a margin toward serial).

/// Parallel "wins clearly" on a rung when it is at least this much faster than serial; below
/// it, run-to-run noise and a loaded host can flip the verdict.
pub const WIN_SPEEDUP: f64 = 1.1;

/// The suggested gate is the first clearly winning rung's work times this factor, so that a
/// kernel just past the crossover, where parallel barely pays, stays serial.
pub const MARGIN_FACTOR: usize = 2;

/// One rung's measurement.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub work: usize,
    pub serial_us: f64,
    pub parallel_us: f64,
}

/// What a ladder suggests for its gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suggestion {
    /// Parallel wins clearly from the rung of work `from` on (and on every larger rung); the
    /// next smaller rung, `below`, does not. Suggests `from` times [`MARGIN_FACTOR`], rounded
    /// up to two significant digits.
    Crossover {
        below: usize,
        from: usize,
        value: usize,
    },
    /// Parallel wins clearly on every rung: the crossover lies below the ladder, which says
    /// nothing about smaller work, so the smallest rung's work is suggested (not lower).
    ParallelFromSmallest { from: usize },
    /// Parallel does not win clearly on the largest rung: the ladder shows no crossover, and
    /// the compiled default is kept.
    KeepDefault { default: usize },
}

impl Suggestion {
    /// The suggested gate value.
    pub fn value(&self) -> usize {
        match *self {
            Suggestion::Crossover { value, .. } => value,
            Suggestion::ParallelFromSmallest { from } => from,
            Suggestion::KeepDefault { default } => default,
        }
    }

    /// One sentence saying what is suggested and why.
    pub fn describe(&self, unit: &str) -> String {
        match *self {
            Suggestion::Crossover { from, value, .. } => format!(
                "Suggested: {value} {unit} (parallel >= {WIN_SPEEDUP}x from {from} on, times {MARGIN_FACTOR} toward serial)."
            ),
            Suggestion::ParallelFromSmallest { from } => format!(
                "Suggested: {from} {unit} (the smallest rung; the ladder does not reach the crossover)."
            ),
            Suggestion::KeepDefault { default } => format!(
                "Suggested: keep the default {default} {unit} (parallel never wins by {WIN_SPEEDUP}x here)."
            ),
        }
    }
}

/// The rule: sort the rungs by work, find the first rung from which parallel is at least
/// [`WIN_SPEEDUP`] times faster on every larger rung, and suggest its work times
/// [`MARGIN_FACTOR`] (rounded up to two significant digits). If that is the smallest rung,
/// suggest its work as is; if there is no such rung (or no rung at all), keep `default`.
pub fn suggest(points: &[Point], default: usize) -> Suggestion {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.work);
    let wins = |p: &Point| p.serial_us >= WIN_SPEEDUP * p.parallel_us;
    // Length of the winning suffix: the rungs from the last loss on.
    let winning_tail = sorted.iter().rev().take_while(|p| wins(p)).count();
    if winning_tail == 0 {
        return Suggestion::KeepDefault { default };
    }
    let first = sorted.len() - winning_tail;
    if first == 0 {
        return Suggestion::ParallelFromSmallest {
            from: sorted[0].work,
        };
    }
    let from = sorted[first].work;
    Suggestion::Crossover {
        below: sorted[first - 1].work,
        from,
        value: round_up_two_digits(from.saturating_mul(MARGIN_FACTOR)),
    }
}

/// `x` rounded up to two significant decimal digits (262_144 -> 270_000), so suggestions read
/// as round numbers and never fall below the margin.
pub fn round_up_two_digits(x: usize) -> usize {
    let mut step = 1usize;
    while x / step >= 100 {
        step *= 10;
    }
    x.div_ceil(step).saturating_mul(step)
}

/// One threshold serves every kernel behind a gate, so a gate measured by several ladders
/// takes the largest of their suggestions: the most cautious toward serial.
pub fn combine(suggestions: impl IntoIterator<Item = usize>) -> Option<usize> {
    suggestions.into_iter().max()
}

/// Ladders of one gate whose suggestions lie further apart than this factor measure kernels
/// that one threshold cannot serve (the largest would keep the others serial far past their
/// crossover): such a gate is reported but not deployed.
pub const MAX_LADDER_SPREAD: usize = 10;

/// Whether suggestions for one gate agree well enough to deploy their [`combine`]d value.
pub fn ladders_agree(suggestions: &[usize]) -> bool {
    match (suggestions.iter().min(), suggestions.iter().max()) {
        (Some(&lo), Some(&hi)) => hi <= lo.max(1).saturating_mul(MAX_LADDER_SPREAD),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladders_further_apart_than_the_spread_do_not_agree() {
        assert!(ladders_agree(&[]));
        assert!(ladders_agree(&[270_000]));
        assert!(ladders_agree(&[66_000, 270_000, 530_000]));
        assert!(ladders_agree(&[100, 1_000]));
        assert!(!ladders_agree(&[100, 1_001]));
        assert!(!ladders_agree(&[20_000, 270_000, 34_000_000]));
    }

    fn ladder(rungs: &[(usize, f64)]) -> Vec<Point> {
        rungs
            .iter()
            .map(|&(work, speedup)| Point {
                work,
                serial_us: 100.0 * speedup,
                parallel_us: 100.0,
            })
            .collect()
    }

    #[test]
    fn crossover_suggests_first_clear_win_times_margin() {
        let s = suggest(
            &ladder(&[
                (1_000, 0.5),
                (10_000, 0.9),
                (100_000, 1.5),
                (1_000_000, 1.9),
            ]),
            7,
        );
        assert_eq!(
            s,
            Suggestion::Crossover {
                below: 10_000,
                from: 100_000,
                value: 200_000
            }
        );
        assert_eq!(s.value(), 200_000);
    }

    #[test]
    fn a_later_loss_moves_the_crossover_up() {
        // A win at 10_000 followed by a loss does not count: parallel must win on every larger rung.
        let s = suggest(
            &ladder(&[
                (1_000, 0.5),
                (10_000, 1.5),
                (100_000, 1.05),
                (1_000_000, 1.9),
            ]),
            7,
        );
        assert_eq!(s.value(), 2_000_000);
    }

    #[test]
    fn a_marginal_win_is_not_a_win() {
        let s = suggest(&ladder(&[(1_000, 0.5), (10_000, 1.05)]), 4_096);
        assert_eq!(s, Suggestion::KeepDefault { default: 4_096 });
    }

    #[test]
    fn parallel_never_winning_keeps_the_default() {
        assert_eq!(
            suggest(&ladder(&[(1_000, 0.5), (10_000, 0.8)]), 65_536).value(),
            65_536
        );
        assert_eq!(suggest(&[], 12).value(), 12);
    }

    #[test]
    fn winning_from_the_smallest_rung_suggests_that_rung_not_lower() {
        let s = suggest(&ladder(&[(5_000, 1.3), (50_000, 1.8)]), 1_000_000);
        assert_eq!(s, Suggestion::ParallelFromSmallest { from: 5_000 });
        assert_eq!(s.value(), 5_000);
    }

    #[test]
    fn rungs_are_ordered_by_work_not_by_listing() {
        let s = suggest(&ladder(&[(100_000, 1.5), (1_000, 0.5), (10_000, 0.9)]), 7);
        assert_eq!(s.value(), 200_000);
    }

    #[test]
    fn rounding_keeps_two_digits_and_never_rounds_down() {
        assert_eq!(round_up_two_digits(0), 0);
        assert_eq!(round_up_two_digits(7), 7);
        assert_eq!(round_up_two_digits(99), 99);
        assert_eq!(round_up_two_digits(100), 100);
        assert_eq!(round_up_two_digits(101), 110);
        assert_eq!(round_up_two_digits(262_144), 270_000);
        assert_eq!(round_up_two_digits(2_000_000), 2_000_000);
        assert_eq!(round_up_two_digits(usize::MAX), usize::MAX);
    }

    #[test]
    fn a_gate_takes_the_most_serial_family() {
        assert_eq!(combine([200_000, 65_536, 1_000_000]), Some(1_000_000));
        assert_eq!(combine([]), None);
    }
}
