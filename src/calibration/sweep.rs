//! The product-knob sweep: coordinate descent over the gemmkit knobs that matter on 2-4 core
//! hosts, timed on a few representative products through [`crate::math::matmul`].
//!
//! Knobs are set through `tuning::matmul::BACKEND_KNOBS` without recording a setter call, and
//! every one is restored when the sweep ends, however it ends: the sweep suggests, it does not
//! deploy, and each knob's reported source (default, profile, environment) stays as it was.

use super::harness::Timing;
use crate::math::matmul;
use crate::tuning::matmul::{BackendKnob, BACKEND_KNOBS};
use ndarray::Array2;
use std::hint::black_box;
use std::time::Duration;

/// The title the sweep runs under; `--filter` matches it like a ladder's title.
pub const SWEEP_TITLE: &str = "gemmkit product knobs (sweep)";

/// A candidate is kept only when the products get at least this much faster (geometric mean,
/// median over the rounds), or more when the measured run-to-run noise is larger: smaller
/// gains are within the noise of a shared host.
pub const MIN_GAIN: f64 = 0.03;

/// The label of the sweep's first step, which measures the noise.
const NOISE_STEP: &str = "run-to-run noise (knobs in force against themselves)";

/// Interleaved rounds per candidate (best setting, candidate, alternating which goes first).
const ROUNDS_QUICK: usize = 3;
const ROUNDS_FULL: usize = 5;

/// Per-product timing: short, since every candidate costs `rounds` x 2 passes over the set.
const TIMING_QUICK: Timing = Timing {
    budget: Duration::from_millis(20),
    min_reps: 3,
};
const TIMING_FULL: Timing = Timing {
    budget: Duration::from_millis(80),
    min_reps: 5,
};

/// The knobs swept, in order, and their candidates given the value in force at the start.
struct KnobPlan {
    name: &'static str,
    candidates: fn(current: usize, quick: bool) -> Vec<usize>,
}

const PLAN: [KnobPlan; 5] = [
    // How many pool tiers gemmkit keeps (sizes of its worker pools).
    KnobPlan {
        name: "pool_classes",
        candidates: |_, _| vec![0, 1, 2, 3],
    },
    // Tasks per worker in a parallel product: load balance against scheduling overhead.
    KnobPlan {
        name: "parallel_oversample",
        candidates: |_, quick| {
            if quick {
                vec![1, 4]
            } else {
                vec![1, 2, 4, 8]
            }
        },
    },
    // Column sub-chunks per packed row block: balance when few row blocks feed the workers
    // (it took a 4096x256·256x784 product from 0.64x to 0.99x of OpenBLAS on 2 cores).
    KnobPlan {
        name: "packed_oversample",
        candidates: |_, quick| if quick { vec![8] } else { vec![4, 8] },
    },
    // When the left operand gets packed.
    KnobPlan {
        name: "lhs_pack_threshold",
        candidates: |_, _| vec![32, 128],
    },
    // The work from which a product forks at all: a factor around the value in force.
    KnobPlan {
        name: "parallel_threshold",
        candidates: |current, quick| {
            let mut c = vec![current / 4, current.saturating_mul(4)];
            if !quick {
                c.extend([current / 2, current.saturating_mul(2)]);
            }
            c
        },
    },
];

fn knob(name: &str) -> &'static BackendKnob {
    BACKEND_KNOBS
        .iter()
        .find(|k| k.name == name)
        .expect("the sweep plans only knobs tuning::matmul lists")
}

/// A knob's candidates other than its value in force, without repeats, in plan order.
fn candidates(plan: &KnobPlan, current: usize, quick: bool) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for c in (plan.candidates)(current, quick) {
        if c != current && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The steps a sweep will take (the noise, then `GEMMKIT_POOL_CLASSES=0`, ...), for progress
/// reporting.
pub fn planned_steps(quick: bool) -> Vec<String> {
    let candidates = PLAN.iter().flat_map(|plan| {
        let k = knob(plan.name);
        candidates(plan, (k.get)(), quick)
            .into_iter()
            .map(move |c| format!("{}={c}", k.env))
    });
    std::iter::once(NOISE_STEP.to_string())
        .chain(candidates)
        .collect()
}

struct Product {
    label: String,
    run: Box<dyn FnMut()>,
}

impl Product {
    fn new<R>(label: String, mut product: impl FnMut() -> crate::Result<R> + 'static) -> Self {
        Self {
            label,
            run: Box::new(move || {
                black_box(product().unwrap());
            }),
        }
    }
}

fn filled(rows: usize, cols: usize, phase: f64) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        ((i * cols + j) as f64 * 0.37 + phase).sin()
    })
}

fn filled_f32(rows: usize, cols: usize, phase: f64) -> Array2<f32> {
    filled(rows, cols, phase).mapv(|v| v as f32)
}

/// The representative products: square f64 and f32, a dense layer's forward product and its
/// two gradient products (transposed operands, read in place), and a tall-skinny product.
fn products(quick: bool) -> Vec<Product> {
    let (square64, square32, batch, tall) = if quick {
        (512, 640, 1_024, 25_000)
    } else {
        (1_024, 1_024, 4_096, 100_000)
    };
    let (features, units) = (784, 256);
    let a64 = filled(square64, square64, 0.1);
    let b64 = filled(square64, square64, 0.2);
    let a32 = filled_f32(square32, square32, 0.3);
    let b32 = filled_f32(square32, square32, 0.4);
    let x = filled_f32(batch, features, 0.5);
    let w = filled_f32(features, units, 0.6);
    let dy = filled_f32(batch, units, 0.7);
    let (x2, dy2, w2) = (x.clone(), dy.clone(), w.clone());
    let t = filled(tall, 32, 0.8);
    let s = filled(32, 32, 0.9);
    vec![
        Product::new(
            format!("f64 {square64}x{square64} . {square64}x{square64}"),
            move || matmul::dot(a64.view(), b64.view()),
        ),
        Product::new(
            format!("f32 {square32}x{square32} . {square32}x{square32}"),
            move || matmul::dot(a32.view(), b32.view()),
        ),
        Product::new(
            format!("dense forward f32 {batch}x{features} . {features}x{units}"),
            move || matmul::dot(x.view(), w.view()),
        ),
        Product::new(
            format!("dense weight gradient f32 ({batch}x{features})T . {batch}x{units}"),
            move || matmul::dot(x2.t(), dy.view()),
        ),
        Product::new(
            format!("dense input gradient f32 {batch}x{units} . ({features}x{units})T"),
            move || matmul::dot(dy2.view(), w2.t()),
        ),
        Product::new(format!("tall-skinny f64 {tall}x32 . 32x32"), move || {
            matmul::dot(t.view(), s.view())
        }),
    ]
}

/// Geometric mean of the products' median times, in microseconds: every product counts the
/// same whatever its size.
fn geomean_us(products: &mut [Product], timing: Timing) -> f64 {
    let log_sum: f64 = products
        .iter_mut()
        .map(|p| timing.median_us(&mut p.run).ln())
        .sum();
    (log_sum / products.len() as f64).exp()
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Candidate time / best time in `rounds` interleaved rounds, alternating which setting goes
/// first so a drifting host load favours neither. `use_best` / `use_candidate` set the knob.
fn interleaved_ratios(
    products: &mut [Product],
    timing: Timing,
    rounds: usize,
    use_best: &dyn Fn(),
    use_candidate: &dyn Fn(),
) -> Vec<f64> {
    (0..rounds)
        .map(|round| {
            let mut time_with = |setting: &dyn Fn()| {
                setting();
                geomean_us(products, timing)
            };
            let (best_us, candidate_us) = if round % 2 == 0 {
                let b = time_with(use_best);
                (b, time_with(use_candidate))
            } else {
                let c = time_with(use_candidate);
                (time_with(use_best), c)
            };
            candidate_us / best_us
        })
        .collect()
}

/// The gain a candidate must show: [`MIN_GAIN`], or the largest deviation from 1 of the
/// ratios of the knobs in force timed against themselves, whichever is larger.
pub fn required_gain(self_ratios: &[f64]) -> f64 {
    self_ratios
        .iter()
        .map(|r| (r - 1.0).abs())
        .fold(MIN_GAIN, f64::max)
}

/// The keep rule: a candidate whose time ratios to the best setting (one per interleaved
/// round) have a median at least `gain` below 1 and are all below 1: faster by more than the
/// noise, and consistently.
pub fn keeps(ratios: &[f64], gain: f64) -> bool {
    !ratios.is_empty() && median(ratios) <= 1.0 - gain && ratios.iter().all(|&r| r < 1.0)
}

/// One candidate tried.
#[derive(Debug, Clone)]
pub struct SweepStep {
    pub knob: &'static str,
    pub env: &'static str,
    pub value: usize,
    /// Candidate time / best time, one per round.
    pub ratios: Vec<f64>,
    pub kept: bool,
}

impl SweepStep {
    pub fn median_ratio(&self) -> f64 {
        median(&self.ratios)
    }
}

/// A knob the sweep would change.
#[derive(Debug, Clone)]
pub struct KnobChange {
    pub name: &'static str,
    pub env: &'static str,
    pub from: usize,
    pub to: usize,
}

#[derive(Debug, Clone)]
pub struct SweepResult {
    pub products: Vec<String>,
    pub rounds: usize,
    /// The knobs in force timed against themselves, one ratio per round.
    pub self_ratios: Vec<f64>,
    /// The gain a candidate had to show ([`required_gain`]).
    pub required_gain: f64,
    pub steps: Vec<SweepStep>,
    pub changes: Vec<KnobChange>,
}

/// Puts every swept knob back to its value at the start, also on a panic or a cancel.
struct RestoreKnobs(Vec<(&'static BackendKnob, usize)>);

impl Drop for RestoreKnobs {
    fn drop(&mut self) {
        for (k, value) in &self.0 {
            k.set_unrecorded(*value);
        }
    }
}

/// Run the sweep. `step_done` is called after every candidate with its `ENV=value` label and
/// returns whether to go on.
pub fn sweep(quick: bool, step_done: &mut dyn FnMut(&str) -> bool) -> SweepResult {
    let (rounds, timing) = if quick {
        (ROUNDS_QUICK, TIMING_QUICK)
    } else {
        (ROUNDS_FULL, TIMING_FULL)
    };
    let _restore = RestoreKnobs(
        PLAN.iter()
            .map(|p| {
                let k = knob(p.name);
                (k, (k.get)())
            })
            .collect(),
    );
    let mut products = products(quick);
    let mut steps = Vec::new();
    let mut changes = Vec::new();
    let self_ratios = interleaved_ratios(&mut products, timing, rounds, &|| {}, &|| {});
    let gain = required_gain(&self_ratios);
    let go_on = step_done(NOISE_STEP);
    'plan: for plan in PLAN.iter().filter(|_| go_on) {
        let k = knob(plan.name);
        let original = (k.get)();
        let mut best = original;
        for value in candidates(plan, original, quick) {
            let ratios = interleaved_ratios(
                &mut products,
                timing,
                rounds,
                &|| k.set_unrecorded(best),
                &|| k.set_unrecorded(value),
            );
            let kept = keeps(&ratios, gain);
            if kept {
                best = value;
            }
            k.set_unrecorded(best);
            steps.push(SweepStep {
                knob: k.name,
                env: k.env,
                value,
                ratios,
                kept,
            });
            if !step_done(&format!("{}={value}", k.env)) {
                break 'plan;
            }
        }
        if best != original {
            changes.push(KnobChange {
                name: k.name,
                env: k.env,
                from: original,
                to: best,
            });
        }
    }
    SweepResult {
        products: products.into_iter().map(|p| p.label).collect(),
        rounds,
        self_ratios,
        required_gain: gain,
        steps,
        changes,
    }
}

impl SweepResult {
    /// The sweep's markdown section.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## {SWEEP_TITLE}\n\nProducts (`math::matmul::dot`): {}.\n\nCoordinate descent, one knob at a time: each candidate is timed against the best setting so far in {} interleaved rounds (geometric mean of the products' median times) and kept when the median ratio is at most {:.3} and every round is faster: a gain of {:.0}% or the run-to-run noise, whichever is larger (the knobs in force against themselves: {}). Every knob is restored afterwards.\n\n| knob | value | candidate / best (median) | rounds | kept |\n|---|---:|---:|---|---|\n",
            self.products.join("; "),
            self.rounds,
            1.0 - self.required_gain,
            MIN_GAIN * 100.0,
            self.self_ratios
                .iter()
                .map(|r| format!("{r:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for s in &self.steps {
            let rounds: Vec<String> = s.ratios.iter().map(|r| format!("{r:.3}")).collect();
            out.push_str(&format!(
                "| {} | {} | {:.3} | {} | {} |\n",
                s.env,
                s.value,
                s.median_ratio(),
                rounds.join(", "),
                if s.kept { "yes" } else { "no" }
            ));
        }
        let takeaway = if self.changes.is_empty() {
            format!(
                "no candidate beats the knobs in force by {:.1}%: keep them.",
                self.required_gain * 100.0
            )
        } else {
            let changed: Vec<String> = self
                .changes
                .iter()
                .map(|c| format!("{} {} -> {}", c.env, c.from, c.to))
                .collect();
            format!("suggested {}.", changed.join(", "))
        };
        out.push_str(&format!("\n**Takeaway:** {takeaway}\n"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_consistent_gains_beyond_the_noise() {
        assert!(keeps(&[0.95, 0.96, 0.90], MIN_GAIN));
        // Median gain under 3%.
        assert!(!keeps(&[0.98, 0.99, 0.90], MIN_GAIN));
        // One round slower: not consistent.
        assert!(!keeps(&[0.90, 0.92, 1.01], MIN_GAIN));
        assert!(!keeps(&[], MIN_GAIN));
        // A noisier host asks for more.
        assert!(!keeps(&[0.95, 0.96, 0.90], 0.08));
    }

    #[test]
    fn the_required_gain_is_the_noise_when_it_exceeds_the_floor() {
        assert_eq!(required_gain(&[]), MIN_GAIN);
        assert_eq!(required_gain(&[1.01, 0.99]), MIN_GAIN);
        assert!((required_gain(&[1.01, 0.9, 1.05]) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn candidates_skip_the_value_in_force_and_repeats() {
        let plan = PLAN
            .iter()
            .find(|p| p.name == "parallel_threshold")
            .unwrap();
        assert!(candidates(plan, 0, true).is_empty());
        assert_eq!(candidates(plan, 8, false), vec![2, 32, 4, 16]);
        assert_eq!(candidates(&PLAN[0], 2, true), vec![0, 1, 3]);
    }

    #[test]
    fn every_planned_knob_exists() {
        for plan in &PLAN {
            assert_eq!(knob(plan.name).name, plan.name);
        }
    }
}
