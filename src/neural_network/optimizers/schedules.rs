//! Learning-rate schedules evaluated per optimizer step, as Keras 3's
//! `keras.optimizers.schedules` define them, and [`Scheduled`], which drives any optimizer's
//! learning rate by one.
//!
//! Keras evaluates the schedule at the optimizer's iteration count before it is incremented
//! (0 for the first batch) and uses that rate for the whole step, weight decay included; the
//! optimizer's `learning_rate` then reads the rate of the next step. The arithmetic is float32,
//! in Keras's order, as Keras computes it from a float initial rate.

use super::state::OptimizerState;
use crate::error::{Error, Result};
use crate::neural_network::traits::{Layer, Optimizer};
use serde::{Deserialize, Serialize};

/// A schedule, named and configured as Keras's classes are (unknown config keys such as
/// `name` are ignored).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "class_name", content = "config")]
pub enum LearningRateSchedule {
    /// `lr0 * rate^(step / decay_steps)`, the exponent floored with `staircase`.
    ExponentialDecay {
        initial_learning_rate: f32,
        decay_steps: f32,
        decay_rate: f32,
        #[serde(default)]
        staircase: bool,
    },
    /// `lr0 / (1 + rate * step / decay_steps)`, the ratio floored with `staircase`.
    InverseTimeDecay {
        initial_learning_rate: f32,
        decay_steps: f32,
        decay_rate: f32,
        #[serde(default)]
        staircase: bool,
    },
    /// `values[0]` while `step <= boundaries[0]`, `values[i]` while
    /// `boundaries[i-1] < step <= boundaries[i]`, `values[last]` after the last boundary.
    PiecewiseConstantDecay {
        boundaries: Vec<i64>,
        values: Vec<f32>,
    },
    /// `(lr0 - end) (1 - step / decay_steps)^power + end`, the step capped at `decay_steps`,
    /// or with `cycle` the decay length stretched to the first multiple of `decay_steps`
    /// reaching the step.
    PolynomialDecay {
        initial_learning_rate: f32,
        decay_steps: f32,
        #[serde(default = "default_end_learning_rate")]
        end_learning_rate: f32,
        #[serde(default = "one")]
        power: f32,
        #[serde(default)]
        cycle: bool,
    },
    /// Cosine decay from `lr0` (or, after a linear warm-up of `warmup_steps` from `lr0` to
    /// `warmup_target`, from the target) to `alpha` times it over `decay_steps`.
    CosineDecay {
        initial_learning_rate: f32,
        decay_steps: f32,
        #[serde(default)]
        alpha: f32,
        #[serde(default)]
        warmup_target: Option<f32>,
        #[serde(default)]
        warmup_steps: f32,
    },
}

fn default_end_learning_rate() -> f32 {
    1e-4
}

fn one() -> f32 {
    1.0
}

fn finite(name: &str, value: f32) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be finite, got {value}"),
        ))
    }
}

fn positive_steps(value: f32) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            "decay_steps",
            format!("must be > 0, got {value}"),
        ))
    }
}

impl LearningRateSchedule {
    /// Refuses what Keras refuses (`decay_steps <= 0`, mismatched piecewise lists) and
    /// non-finite numbers.
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::ExponentialDecay {
                initial_learning_rate,
                decay_steps,
                decay_rate,
                ..
            }
            | Self::InverseTimeDecay {
                initial_learning_rate,
                decay_steps,
                decay_rate,
                ..
            } => {
                finite("initial_learning_rate", *initial_learning_rate)?;
                finite("decay_rate", *decay_rate)?;
                positive_steps(*decay_steps)
            }
            Self::PiecewiseConstantDecay { boundaries, values } => {
                if boundaries.len() + 1 != values.len() {
                    return Err(Error::invalid_parameter(
                        "boundaries",
                        format!(
                            "must have one element fewer than values, got {} boundaries and {} values",
                            boundaries.len(),
                            values.len()
                        ),
                    ));
                }
                if boundaries.is_empty() {
                    return Err(Error::invalid_parameter(
                        "boundaries",
                        "must not be empty".to_string(),
                    ));
                }
                values.iter().try_for_each(|v| finite("values", *v))
            }
            Self::PolynomialDecay {
                initial_learning_rate,
                decay_steps,
                end_learning_rate,
                power,
                ..
            } => {
                finite("initial_learning_rate", *initial_learning_rate)?;
                finite("end_learning_rate", *end_learning_rate)?;
                finite("power", *power)?;
                positive_steps(*decay_steps)
            }
            Self::CosineDecay {
                initial_learning_rate,
                decay_steps,
                alpha,
                warmup_target,
                warmup_steps,
            } => {
                finite("initial_learning_rate", *initial_learning_rate)?;
                finite("alpha", *alpha)?;
                if let Some(t) = warmup_target {
                    finite("warmup_target", *t)?;
                }
                if !(warmup_steps.is_finite() && *warmup_steps >= 0.0) {
                    return Err(Error::invalid_parameter(
                        "warmup_steps",
                        format!("must be >= 0, got {warmup_steps}"),
                    ));
                }
                positive_steps(*decay_steps)
            }
        }
    }

    /// The learning rate at optimizer step `step` (0 for the first batch).
    pub fn at(&self, step: u64) -> f32 {
        match *self {
            Self::ExponentialDecay {
                initial_learning_rate,
                decay_steps,
                decay_rate,
                staircase,
            } => {
                let mut p = step as f32 / decay_steps;
                if staircase {
                    p = p.floor();
                }
                initial_learning_rate * decay_rate.powf(p)
            }
            Self::InverseTimeDecay {
                initial_learning_rate,
                decay_steps,
                decay_rate,
                staircase,
            } => {
                let mut p = step as f32 / decay_steps;
                if staircase {
                    p = p.floor();
                }
                initial_learning_rate / (1.0 + decay_rate * p)
            }
            Self::PiecewiseConstantDecay {
                ref boundaries,
                ref values,
            } => {
                let step = step.min(i64::MAX as u64) as i64;
                // The first boundary at or above the step names the interval.
                let interval = boundaries
                    .iter()
                    .position(|&b| step <= b)
                    .unwrap_or(boundaries.len());
                values[interval]
            }
            Self::PolynomialDecay {
                initial_learning_rate,
                decay_steps,
                end_learning_rate,
                power,
                cycle,
            } => {
                let mut global = step as f32;
                let mut steps = decay_steps;
                if cycle {
                    let multiplier = if global == 0.0 {
                        1.0
                    } else {
                        (global / decay_steps).ceil()
                    };
                    steps *= multiplier;
                } else {
                    global = global.min(steps);
                }
                let p = global / steps;
                (initial_learning_rate - end_learning_rate) * (1.0 - p).powf(power)
                    + end_learning_rate
            }
            Self::CosineDecay {
                initial_learning_rate,
                decay_steps,
                alpha,
                warmup_target,
                warmup_steps,
            } => {
                let cosine = |s: f32, from: f32| {
                    let fraction = s / decay_steps;
                    let decayed = 0.5 * (1.0 + (std::f32::consts::PI * fraction).cos());
                    from * ((1.0 - alpha) * decayed + alpha)
                };
                let global = step as f32;
                match warmup_target {
                    None => cosine(global.min(decay_steps), initial_learning_rate),
                    Some(target) => {
                        let global = global.min(decay_steps + warmup_steps);
                        if global < warmup_steps {
                            (target - initial_learning_rate) * (global / warmup_steps)
                                + initial_learning_rate
                        } else {
                            cosine(global - warmup_steps, target)
                        }
                    }
                }
            }
        }
    }
}

/// An optimizer whose learning rate follows a schedule: before each step its rate is set to
/// the schedule at the number of steps taken so far.
pub struct Scheduled {
    inner: Box<dyn Optimizer>,
    schedule: LearningRateSchedule,
    iterations: u64,
}

impl Scheduled {
    /// `inner` driven by a validated `schedule`, starting at step 0.
    pub fn new(inner: Box<dyn Optimizer>, schedule: LearningRateSchedule) -> Result<Self> {
        schedule.validate()?;
        let mut inner = inner;
        inner.set_learning_rate(schedule.at(0));
        Ok(Self {
            inner,
            schedule,
            iterations: 0,
        })
    }

    /// Steps taken so far (Keras's `optimizer.iterations`).
    pub fn iterations(&self) -> u64 {
        self.iterations
    }
}

impl Optimizer for Scheduled {
    fn step(&mut self) {
        self.inner
            .set_learning_rate(self.schedule.at(self.iterations));
        self.iterations += 1;
        self.inner.step();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.inner.global_clipnorm()
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        self.inner.update(layer, grad_scale);
    }

    /// The rate the next step will use.
    fn learning_rate(&self) -> f32 {
        self.schedule.at(self.iterations)
    }

    /// Sets the rate until the next step, when the schedule sets it again.
    fn set_learning_rate(&mut self, learning_rate: f32) {
        self.inner.set_learning_rate(learning_rate);
    }

    fn snapshot(&self) -> Option<Box<dyn Optimizer>> {
        let inner = self.inner.snapshot()?;
        Some(Box::new(Self {
            inner,
            schedule: self.schedule.clone(),
            iterations: self.iterations,
        }))
    }

    /// The inner optimizer's state with the schedule's step count appended to its counters.
    fn export_state(&self) -> Option<OptimizerState> {
        let mut state = self.inner.export_state()?;
        state.steps.push(self.iterations);
        Some(state)
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        let mut inner_state = state.clone();
        let iterations = inner_state.steps.pop().ok_or_else(|| {
            Error::invalid_input("the optimizer state has no learning-rate schedule step count")
        })?;
        self.inner.import_state(&inner_state)?;
        self.iterations = iterations;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f32, b: f64) -> bool {
        ((a as f64) - b).abs() <= 1e-6 * b.abs().max(1e-3)
    }

    /// `ExponentialDecay` from 0.1, halving every `decay_steps`.
    fn halving(decay_steps: f32, staircase: bool) -> LearningRateSchedule {
        LearningRateSchedule::ExponentialDecay {
            initial_learning_rate: 0.1,
            decay_steps,
            decay_rate: 0.5,
            staircase,
        }
    }

    /// `PolynomialDecay` from 0.1 to 0.01 over 4 steps.
    fn polynomial(power: f32, cycle: bool) -> LearningRateSchedule {
        LearningRateSchedule::PolynomialDecay {
            initial_learning_rate: 0.1,
            decay_steps: 4.0,
            end_learning_rate: 0.01,
            power,
            cycle,
        }
    }

    /// Each schedule against its formula by hand at a few steps.
    #[test]
    fn schedules_follow_their_formulas() {
        let exp = halving(4.0, false);
        assert!(close(exp.at(0), 0.1) && close(exp.at(2), 0.1 * 0.5f64.sqrt()));
        let stair = halving(4.0, true);
        assert!(close(stair.at(3), 0.1) && close(stair.at(4), 0.05));
        let inv = LearningRateSchedule::InverseTimeDecay {
            initial_learning_rate: 0.1,
            decay_steps: 2.0,
            decay_rate: 0.5,
            staircase: false,
        };
        assert!(close(inv.at(3), 0.1 / 1.75));
        let pw = LearningRateSchedule::PiecewiseConstantDecay {
            boundaries: vec![2, 5],
            values: vec![1.0, 0.5, 0.1],
        };
        let got: Vec<f32> = (0..8).map(|s| pw.at(s)).collect();
        assert_eq!(got, [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1]);
        let poly = polynomial(2.0, false);
        assert!(close(poly.at(1), 0.09 * 0.5625 + 0.01) && close(poly.at(9), 0.01));
        let cyc = polynomial(1.0, true);
        // Step 6: decay length 8, fraction 0.75.
        assert!(close(cyc.at(6), 0.09 * 0.25 + 0.01) && close(cyc.at(0), 0.1));
        let cos = LearningRateSchedule::CosineDecay {
            initial_learning_rate: 0.0,
            decay_steps: 4.0,
            alpha: 0.1,
            warmup_target: Some(0.2),
            warmup_steps: 2.0,
        };
        assert!(close(cos.at(0), 0.0) && close(cos.at(1), 0.1) && close(cos.at(2), 0.2));
        // Two steps into the decay: cos(pi / 2) = 0, so 0.2 * (0.9 * 0.5 + 0.1).
        assert!(close(cos.at(4), 0.2 * 0.55) && close(cos.at(50), 0.2 * 0.1));
    }

    #[test]
    fn bad_schedules_are_refused() {
        let bad = halving(0.0, false);
        assert!(bad.validate().is_err());
        let bad = LearningRateSchedule::PiecewiseConstantDecay {
            boundaries: vec![1],
            values: vec![1.0],
        };
        assert!(bad.validate().is_err());
    }
}
