//! The calibration harness: time a kernel forced serial and forced parallel through its gate,
//! and format the markdown tables.

use super::suggest::{suggest, Point, Suggestion};
use crate::gate::{with_gate, Gate};
use ndarray::Array2;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A rung's kernel, built on demand.
type Setup = Box<dyn FnOnce() -> Prepared>;

/// A rung whose data exists: its work in the gate's unit and the kernel to time.
pub struct Prepared {
    pub work: usize,
    pub kernel: Box<dyn FnMut()>,
}

/// One rung of a ladder: a label and a setup that builds its data and kernel.
///
/// Data is built only when the rung is timed and dropped right after, so a run holds one
/// rung's arrays at a time rather than every ladder's.
pub struct Rung {
    pub label: String,
    setup: Setup,
}

impl Rung {
    /// A rung whose work is known before its data is built. `setup` builds the data and
    /// returns the kernel to time.
    pub fn new<K: FnMut() + 'static>(
        label: impl Into<String>,
        work: usize,
        setup: impl FnOnce() -> K + 'static,
    ) -> Self {
        Self::sized(label, move || (work, setup()))
    }

    /// A rung whose work is measured on its data (a radius scan's candidate pairs, a fitted
    /// tree's depth): `setup` returns the work and the kernel.
    pub fn sized<K: FnMut() + 'static>(
        label: impl Into<String>,
        setup: impl FnOnce() -> (usize, K) + 'static,
    ) -> Self {
        Self {
            label: label.into(),
            setup: Box::new(move || {
                let (work, kernel) = setup();
                Prepared {
                    work,
                    kernel: Box::new(kernel),
                }
            }),
        }
    }

    /// A rung timing `kernel` on the data `setup` builds. The data goes through `black_box` on
    /// the way in and the result on the way out, so the optimiser keeps all of the work.
    pub fn on<D: 'static, R>(
        label: impl Into<String>,
        work: usize,
        setup: impl FnOnce() -> D + 'static,
        mut kernel: impl FnMut(&mut D) -> R + 'static,
    ) -> Self {
        Self::new(label, work, move || {
            let mut data = setup();
            move || {
                black_box(kernel(black_box(&mut data)));
            }
        })
    }

    /// A rung timing an in-place map: every run first copies the input `setup` built into a
    /// scratch array (reusing its memory), so each map sees the same values.
    pub fn map_in_place<A: Clone + 'static>(
        label: impl Into<String>,
        work: usize,
        setup: impl FnOnce() -> A + 'static,
        mut map: impl FnMut(&mut A) + 'static,
    ) -> Self {
        Self::on(
            label,
            work,
            move || {
                let input = setup();
                (input.clone(), input)
            },
            move |(scratch, input)| {
                scratch.clone_from(input);
                map(scratch)
            },
        )
    }

    pub fn prepare(self) -> Prepared {
        (self.setup)()
    }
}

/// A gate's ladder.
pub struct Family {
    pub title: String,
    pub gate: &'static Gate,
    pub rungs: Vec<Rung>,
}

impl Family {
    /// The ladder `title` of `gate`: one rung per shape, thinned in quick mode ([`ladder`]).
    pub fn over<T>(
        title: &str,
        gate: &'static Gate,
        quick: bool,
        shapes: impl IntoIterator<Item = T>,
        rung: impl FnMut(T) -> Rung,
    ) -> Self {
        Self {
            title: title.into(),
            gate,
            rungs: ladder(quick, shapes).map(rung).collect(),
        }
    }
}

/// A module's ladders as a table, one row each, `title: gate, shapes => rung;`, in report
/// order; `rung` turns one shape into its [`Rung`].
macro_rules! ladders {
    ($quick:expr; $($title:literal: $gate:expr, $shapes:expr => $rung:expr;)+) => {
        vec![$($crate::calibration::Family::over($title, $gate, $quick, $shapes, $rung)),+]
    };
}
pub(super) use ladders;

/// Sizes (elements) of the ladders of memory-bound maps, f64 and f32 alike.
pub const MEMORY_BOUND_SIZES: [usize; 6] = [
    262_144, 1_048_576, 2_097_152, 4_194_304, 8_388_608, 16_777_216,
];

/// A `rows x cols` matrix whose entries are `value` of their row-major index: smooth,
/// deterministic input for a rung.
pub fn by_index(rows: usize, cols: usize, value: impl Fn(f64) -> f64) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(i, j)| value((i * cols + j) as f64))
}

/// The rungs of a ladder for this run: all of them, or in quick mode every other one plus the
/// largest, so a quick ladder still spans the same range of work, more coarsely.
pub fn ladder<T>(quick: bool, shapes: impl IntoIterator<Item = T>) -> impl Iterator<Item = T> {
    let shapes: Vec<T> = shapes.into_iter().collect();
    let last = shapes.len().saturating_sub(1);
    shapes
        .into_iter()
        .enumerate()
        .filter(move |&(i, _)| !quick || i % 2 == 0 || i == last)
        .map(|(_, shape)| shape)
}

/// How long to time each kernel.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Repetitions fill roughly this much time ...
    pub budget: Duration,
    /// ... but never fewer than this many.
    pub min_reps: usize,
}

impl Timing {
    pub const FULL: Timing = Timing {
        budget: Duration::from_millis(200),
        min_reps: 5,
    };
    pub const QUICK: Timing = Timing {
        budget: Duration::from_millis(50),
        min_reps: 3,
    };

    pub fn for_mode(quick: bool) -> Self {
        if quick {
            Self::QUICK
        } else {
            Self::FULL
        }
    }

    /// Median time of `f` in microseconds, after one warm-up run (caches, pools, lazy
    /// allocations).
    pub fn median_us(&self, f: &mut dyn FnMut()) -> f64 {
        f();
        let start = Instant::now();
        f();
        let once = start.elapsed().max(Duration::from_nanos(100));
        let reps =
            ((self.budget.as_secs_f64() / once.as_secs_f64()) as usize).clamp(self.min_reps, 2000);
        let mut samples: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    }
}

/// One timed rung.
#[derive(Debug, Clone)]
pub struct RungResult {
    pub label: String,
    pub work: usize,
    pub serial_us: f64,
    pub parallel_us: f64,
}

impl RungResult {
    pub fn speedup(&self) -> f64 {
        self.serial_us / self.parallel_us
    }
}

/// Time one rung: build its data, run the kernel with the gate at `usize::MAX` (serial) and
/// at `0` (parallel), drop the data.
pub fn time_rung(gate: &Gate, rung: Rung, timing: Timing) -> RungResult {
    let label = rung.label.clone();
    let Prepared { work, mut kernel } = rung.prepare();
    let serial_us = with_gate(gate, usize::MAX, || timing.median_us(&mut kernel));
    let parallel_us = with_gate(gate, 0, || timing.median_us(&mut kernel));
    RungResult {
        label,
        work,
        serial_us,
        parallel_us,
    }
}

/// A timed ladder and what it suggests for its gate.
#[derive(Debug, Clone)]
pub struct FamilyResult {
    pub title: String,
    pub gate: &'static Gate,
    pub rungs: Vec<RungResult>,
    pub suggestion: Suggestion,
}

impl FamilyResult {
    pub fn new(title: String, gate: &'static Gate, rungs: Vec<RungResult>) -> Self {
        let points: Vec<Point> = rungs
            .iter()
            .map(|r| Point {
                work: r.work,
                serial_us: r.serial_us,
                parallel_us: r.parallel_us,
            })
            .collect();
        let suggestion = suggest(&points, gate.default);
        Self {
            title,
            gate,
            rungs,
            suggestion,
        }
    }

    /// The `**Takeaway:**` line (SPEC §7) followed by the suggested value.
    pub fn takeaway(&self) -> String {
        let unit = self.gate.unit;
        let crossover = match self.suggestion {
            Suggestion::Crossover { below, from, .. } => {
                format!("**Takeaway:** crossover between {below} and {from} {unit}.")
            }
            Suggestion::ParallelFromSmallest { from } => format!(
                "**Takeaway:** parallel already pays at the smallest rung ({from} {unit}); no crossover seen."
            ),
            Suggestion::KeepDefault { .. } => format!(
                "**Takeaway:** no crossover seen: parallel does not win clearly up to the largest rung ({unit})."
            ),
        };
        format!("{crossover} {}", self.suggestion.describe(unit))
    }

    /// One markdown section: heading, table, takeaway.
    pub fn markdown(&self) -> String {
        let gate = self.gate;
        let mut table = format!(
            "## {} (`tuning::{}::set_{}`, default {})\n\n| shape | work ({}) | serial (us) | parallel (us) | speedup |\n|---|---:|---:|---:|---:|\n",
            self.title, gate.family, gate.name, gate.default, gate.unit
        );
        for r in &self.rungs {
            table.push_str(&format!(
                "| {} | {} | {:.1} | {:.1} | {:.2}x |\n",
                r.label,
                r.work,
                r.serial_us,
                r.parallel_us,
                r.speedup()
            ));
        }
        table.push_str(&format!("\n{}\n", self.takeaway()));
        table
    }
}
