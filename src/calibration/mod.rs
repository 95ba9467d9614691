//! Gate calibration (feature `calibration`): the ladders behind every gate, the suggestion
//! rule, a sweep of gemmkit's product knobs, and the markdown report.
//!
//! Compiled into the crate so the same code serves `cargo bench --bench parallel_gates
//! --features calibration` and the installed wheel's `python -m rustyml calibrate`, which
//! needs no Rust toolchain. For each gate, a ladder of shapes on both sides of it is timed with
//! the kernel forced serial (gate at `usize::MAX`) and forced parallel (gate at `0`); the
//! crossover, with a margin toward serial ([`suggest`]), is the suggested value.
//!
//! Gates and knobs are process-global: a run sets them temporarily and restores them, so
//! nothing else should run kernels in the process meanwhile.

mod harness;
use crate::tuning::host;
mod suggest;
mod sweep;

mod cluster;
mod elementwise;
mod liblinear;
mod losses;
mod matmul;
mod metrics;
mod nn_conv;
mod nn_core;
mod nn_depthwise;
mod nn_maps;
mod nn_norm;
mod nn_pool;
mod nn_recurrent;
mod nn_upsampling;
mod reduction;
mod tree;
mod tsne;

pub use harness::{ladder, Family, FamilyResult, Rung, RungResult, Timing};
pub use suggest::{
    combine, ladders_agree, round_up_two_digits, suggest, Point, Suggestion, MARGIN_FACTOR,
    MAX_LADDER_SPREAD, WIN_SPEEDUP,
};
pub use sweep::{keeps, required_gain, KnobChange, SweepResult, SweepStep, MIN_GAIN, SWEEP_TITLE};

use crate::gate::Gate;

/// Every ladder. Cheap to call: rungs build their data only when timed.
pub fn families(quick: bool) -> Vec<Family> {
    [
        reduction::families(quick),
        elementwise::families(quick),
        cluster::families(quick),
        metrics::families(quick),
        losses::families(quick),
        tsne::families(quick),
        matmul::families(quick),
        tree::families(quick),
        liblinear::families(quick),
        nn_maps::families(quick),
        nn_core::families(quick),
        nn_norm::families(quick),
        nn_pool::families(quick),
        nn_recurrent::families(quick),
        nn_conv::families(quick),
        nn_upsampling::families(quick),
        nn_depthwise::families(quick),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every other rung ([`ladder`]), a shorter timing budget, a smaller sweep.
    pub quick: bool,
    /// Keep only the ladders (and the sweep) whose title contains this text.
    pub filter: Option<String>,
    /// Cap on rungs per ladder (tests use it to run in seconds).
    pub max_rungs: Option<usize>,
}

impl Options {
    fn selects(&self, title: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| title.contains(f))
    }

    /// The ladders this run times, rungs capped.
    fn families(&self) -> Vec<Family> {
        families(self.quick)
            .into_iter()
            .filter(|f| self.selects(&f.title))
            .map(|mut f| {
                f.rungs.truncate(self.max_rungs.unwrap_or(usize::MAX));
                f
            })
            .collect()
    }

    fn runs_sweep(&self) -> bool {
        self.selects(SWEEP_TITLE)
    }

    /// Titles of everything this run would time: ladders, then the sweep.
    pub fn titles(&self) -> Vec<String> {
        let mut titles: Vec<String> = self.families().into_iter().map(|f| f.title).collect();
        if self.runs_sweep() {
            titles.push(SWEEP_TITLE.to_string());
        }
        titles
    }
}

/// Where a run stands, passed to its progress callback after every step.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    /// What just finished: `family title: rung label`, the sweep's noise measurement, or a
    /// sweep candidate `GEMMKIT_X=v`.
    pub step: &'a str,
}

/// A gate's suggested value over every ladder that measured it.
#[derive(Debug, Clone)]
pub struct GateSuggestion {
    pub gate: &'static Gate,
    pub value: usize,
    /// The ladders' suggestions lie within [`MAX_LADDER_SPREAD`] of each other; when not, a
    /// profile keeps the compiled default.
    pub ladders_agree: bool,
    /// Smallest and largest of the ladders' suggestions.
    pub range: (usize, usize),
    /// Titles of the ladders that measured it.
    pub measured_by: Vec<String>,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub quick: bool,
    pub families: Vec<FamilyResult>,
    pub sweep: Option<SweepResult>,
    /// The progress callback asked to stop; results are partial.
    pub cancelled: bool,
}

/// Run the selected ladders, then the sweep. `progress` is called after every rung and every
/// sweep candidate; returning `false` stops the run (gates and knobs are restored either way).
pub fn run(options: &Options, progress: &mut dyn FnMut(Progress<'_>) -> bool) -> Calibration {
    let timing = Timing::for_mode(options.quick);
    let selected = options.families();
    let sweep_steps = if options.runs_sweep() {
        sweep::planned_steps(options.quick).len()
    } else {
        0
    };
    let total = selected.iter().map(|f| f.rungs.len()).sum::<usize>() + sweep_steps;
    let mut done = 0;
    let mut cancelled = false;
    let mut results = Vec::new();
    for Family { title, gate, rungs } in selected {
        let mut timed = Vec::with_capacity(rungs.len());
        for rung in rungs {
            let result = harness::time_rung(gate, rung, timing);
            done += 1;
            let step = format!("{title}: {}", result.label);
            timed.push(result);
            cancelled = !progress(Progress {
                done,
                total,
                step: &step,
            });
            if cancelled {
                break;
            }
        }
        results.push(FamilyResult::new(title, gate, timed));
        if cancelled {
            break;
        }
    }
    let sweep = (options.runs_sweep() && !cancelled).then(|| {
        sweep::sweep(options.quick, &mut |step| {
            done += 1;
            let go_on = progress(Progress { done, total, step });
            cancelled |= !go_on;
            go_on
        })
    });
    Calibration {
        quick: options.quick,
        families: results,
        sweep,
        cancelled,
    }
}

impl Calibration {
    /// One suggestion per measured gate (the most serial of its ladders'), in registry order.
    pub fn gates(&self) -> Vec<GateSuggestion> {
        crate::gate::all_gates()
            .into_iter()
            .filter_map(|gate| {
                let measured: Vec<&FamilyResult> = self
                    .families
                    .iter()
                    .filter(|f| std::ptr::eq(f.gate, gate) && !f.rungs.is_empty())
                    .collect();
                let values: Vec<usize> = measured.iter().map(|f| f.suggestion.value()).collect();
                let value = combine(values.iter().copied())?;
                Some(GateSuggestion {
                    gate,
                    value,
                    ladders_agree: ladders_agree(&values),
                    range: (
                        *values.iter().min().expect("measured"),
                        *values.iter().max().expect("measured"),
                    ),
                    measured_by: measured.iter().map(|f| f.title.clone()).collect(),
                })
            })
            .collect()
    }

    /// The markdown report (the format of `calibrations/RESULTS.md`): header, one summary
    /// table of suggested gates, one table per ladder, the sweep table. `command` names what
    /// wrote it; `date` is printed as given.
    pub fn markdown(&self, command: &str, date: &str) -> String {
        let mode = if self.quick {
            " (quick mode: fewer, smaller rungs and shorter timings)"
        } else {
            ""
        };
        let mut out = format!(
            "# Gate calibration\n\nWritten by `{command}` on {date}{mode}.\n\n- CPU: {}\n- host: {}\n- rayon threads: {}\n\nEach table forces the serial and the parallel path of one gate's kernel (gate at `usize::MAX`, then `0`); times are medians. Calibration output is evidence, not an instruction: a gate sits at the crossover with a margin toward serial. Suggested value: the work of the first rung from which parallel is at least {WIN_SPEEDUP}x faster on every larger rung, times {MARGIN_FACTOR} (rounded up to two digits); the smallest rung's work if parallel wins throughout; the default if it never wins clearly. A gate measured by several ladders takes the largest suggestion.\n\n",
            host::cpu_model(),
            host::match_line(),
            rayon::current_num_threads()
        );
        let gates = self.gates();
        if !gates.is_empty() {
            out.push_str(
                "## Suggested gates\n\n| gate | variable | default | suggested | ladders |\n|---|---|---:|---:|---:|\n",
            );
            for g in &gates {
                let suggested = if g.ladders_agree {
                    g.value.to_string()
                } else {
                    format!(
                        "{} (not deployed: ladders suggest {} to {}, over {}x apart)",
                        g.value, g.range.0, g.range.1, MAX_LADDER_SPREAD
                    )
                };
                out.push_str(&format!(
                    "| `tuning::{}::set_{}` | `{}` | {} | {} | {} |\n",
                    g.gate.family,
                    g.gate.name,
                    g.gate.env_name(),
                    g.gate.default,
                    suggested,
                    g.measured_by.len()
                ));
            }
            out.push('\n');
        }
        let mut sections: Vec<String> = self.families.iter().map(|f| f.markdown()).collect();
        if let Some(sweep) = &self.sweep {
            sections.push(sweep.markdown());
        }
        out.push_str(&sections.join("\n"));
        if self.cancelled {
            out.push_str("\n_Interrupted: the run stopped before every ladder was timed._\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ladder_names_a_registered_gate_and_quick_mode_thins_it() {
        let registered = crate::gate::all_gates();
        let full = families(false);
        let quick = families(true);
        assert_eq!(full.len(), quick.len());
        for (f, q) in full.iter().zip(&quick) {
            assert!(
                registered.iter().any(|g| std::ptr::eq(*g, f.gate)),
                "{}",
                f.title
            );
            assert_eq!(f.title, q.title);
            assert!(q.rungs.len() >= 2, "{}", f.title);
            assert!(q.rungs.len() < f.rungs.len(), "{}", f.title);
        }
    }

    /// A quick run of the f64 sum ladder alone, at most `max_rungs` rungs.
    fn sum_ladder_only(max_rungs: usize) -> Options {
        Options {
            quick: true,
            filter: Some("f64 sum (SUM_F64)".into()),
            max_rungs: Some(max_rungs),
        }
    }

    #[test]
    fn a_filtered_run_times_its_ladder_and_suggests_for_its_gate() {
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let options = sum_ladder_only(2);
        assert_eq!(options.titles(), ["f64 sum (SUM_F64)"]);
        let mut steps = Vec::new();
        let result = run(&options, &mut |p| {
            steps.push((p.done, p.total));
            true
        });
        assert_eq!(steps, [(1, 2), (2, 2)]);
        assert!(result.sweep.is_none() && !result.cancelled);
        let gates = result.gates();
        assert_eq!(gates.len(), 1);
        assert_eq!(gates[0].gate.name, "sum_f64");
        let report = result.markdown("test", "today");
        assert!(report.contains("## f64 sum (SUM_F64)"));
        assert!(report.contains("**Takeaway:**"));
    }

    #[test]
    fn a_cancelled_run_stops_after_the_step() {
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let result = run(&sum_ladder_only(3), &mut |_| false);
        assert!(result.cancelled);
        assert_eq!(result.families[0].rungs.len(), 1);
    }
}
