//! Optimizers: SGD, Adam, AdamW, RMSprop, AdaGrad, Nadam, Adamax (and learning-rate
//! schedules driving any of them, [`schedules`]), over the public slice kernels in
//! [`kernels`]. Every optimizer supports clip-by-global-norm (`with_global_clipnorm`; the model
//! computes the norm and passes the factor to `update`) and never decays parameters marked
//! `ParamGrad::no_decay`. The choices on which frameworks differ (weight decay's coupling and
//! scope, epsilon's placement, per-variable clipping) are explicit options in [`rules`].

pub mod ada_grad;
pub mod adam;
mod adam_core;
pub mod adam_w;
pub mod adamax;
mod common;
pub mod kernels;
mod moment_pair;
pub mod nadam;
pub mod rms_prop;
pub mod rules;
pub mod schedules;
pub mod sgd;
mod state;
mod validation;

pub use ada_grad::AdaGrad;
pub use adam::Adam;
pub use adam_w::AdamW;
pub use adamax::Adamax;
pub use nadam::Nadam;
pub use rms_prop::RMSprop;
pub use rules::{
    AdamEpsilon, DecayCoupling, DecayScope, EpsilonPlacement, GradientClip, WeightDecayRule,
};
pub use schedules::{LearningRateSchedule, Scheduled};
pub use sgd::SGD;
pub use state::OptimizerState;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::neural_network::layers::layer_weight::LayerWeight;
    use crate::neural_network::layers::TrainingParameters;
    use crate::neural_network::traits::{Layer, Optimizer, ParamGrad};
    use crate::neural_network::Tensor;

    /// A layer holding one decaying weight and one non-decaying bias with fixed gradients.
    struct Two {
        w: Vec<f32>,
        b: Vec<f32>,
        gw: Vec<f32>,
        gb: Vec<f32>,
    }

    impl Two {
        fn new(w: f32, b: f32, gw: f32, gb: f32) -> Self {
            Self {
                w: vec![w],
                b: vec![b],
                gw: vec![gw],
                gb: vec![gb],
            }
        }
    }

    impl Layer for Two {
        fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
            Ok(input.clone())
        }
        fn predict(&self, input: &Tensor) -> Result<Tensor> {
            Ok(input.clone())
        }
        fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
            Ok(grad_output.clone())
        }
        fn param_count(&self) -> TrainingParameters {
            TrainingParameters::Trainable(2)
        }
        fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
            vec![
                ParamGrad::weight(&mut self.w, &self.gw),
                ParamGrad::no_decay(&mut self.b, &self.gb),
            ]
        }
        fn get_weights(&self) -> LayerWeight<'_> {
            LayerWeight::Empty
        }
    }

    fn one_step(opt: &mut dyn Optimizer, layer: &mut Two, scale: f32) -> (f64, f64) {
        opt.step();
        opt.update(layer, scale);
        (layer.w[0] as f64, layer.b[0] as f64)
    }

    /// Plain SGD at learning rate 1 with a per-variable gradient clip.
    fn clipped_sgd(clip: GradientClip) -> SGD {
        SGD::new(1.0, 0.0, false, 0.0)
            .unwrap()
            .with_gradient_clip(clip)
            .unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    /// First Adam step: m̂ = g, v̂ = g², so p moves by lr * g / (|g| + eps).
    #[test]
    fn adam_couples_and_adamw_decouples_decay_but_neither_touches_the_bias() {
        let (lr, wd, eps) = (0.1f64, 0.5f64, 1e-8f64);
        let (w0, b0, gw, gb) = (2.0f64, 1.0f64, 0.3f64, -0.4f64);
        let step = |g: f64| lr * g / (g.abs() + eps);

        let mut adam = Adam::new(0.1, 0.9, 0.999, 1e-8, 0.5).unwrap();
        let (w, b) = one_step(&mut adam, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
        assert!(close(w, w0 - step(gw + wd * w0)));
        assert!(close(b, b0 - step(gb)));

        let mut adamw = AdamW::new(0.1, 0.9, 0.999, 1e-8, 0.5).unwrap();
        let (w, b) = one_step(&mut adamw, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
        assert!(close(w, w0 * (1.0 - lr * wd) - step(gw)));
        assert!(close(b, b0 - step(gb)));
    }

    /// L2-coupled RMSprop and AdaGrad, and SGD's decoupled decay, on one step by hand; the
    /// gradient scale multiplies the gradient before the decay term is added.
    #[test]
    fn rmsprop_adagrad_sgd_single_steps_by_hand() {
        let (w0, b0) = (2.0f64, 1.0f64);
        let (gw, gb) = (0.5 * 0.3f64, 0.5 * -0.4f64); // scale 0.5

        let mut rms = RMSprop::new(0.1, 0.9, 1e-7, 0.5).unwrap();
        let (w, b) = one_step(&mut rms, &mut Two::new(2.0, 1.0, 0.3, -0.4), 0.5);
        let g = gw + 0.5 * w0;
        assert!(close(w, w0 - 0.1 * g / ((0.1 * g * g).sqrt() + 1e-7)));
        assert!(close(b, b0 - 0.1 * gb / ((0.1 * gb * gb).sqrt() + 1e-7)));

        let mut ada = AdaGrad::new(0.1, 1e-7, 0.5).unwrap();
        let (w, b) = one_step(&mut ada, &mut Two::new(2.0, 1.0, 0.3, -0.4), 0.5);
        assert!(close(w, w0 - 0.1 * g / (g.abs() + 1e-7)));
        assert!(close(b, b0 - 0.1 * gb / (gb.abs() + 1e-7)));

        let mut sgd = SGD::new(0.1, 0.0, false, 0.5).unwrap();
        let (w, b) = one_step(&mut sgd, &mut Two::new(2.0, 1.0, 0.3, -0.4), 0.5);
        assert!(close(w, w0 * (1.0 - 0.05) - 0.1 * gw));
        assert!(close(b, b0 - 0.1 * gb));
    }

    /// Two layers updated in turn keep separate momentum buffers across steps.
    #[test]
    fn state_follows_each_layer_across_steps() {
        let mut sgd = SGD::new(0.1, 0.9, false, 0.0).unwrap();
        let (mut a, mut b) = (Two::new(0.0, 0.0, 1.0, 0.0), Two::new(0.0, 0.0, -2.0, 0.0));
        for _ in 0..2 {
            sgd.step();
            sgd.update(&mut a, 1.0);
            sgd.update(&mut b, 1.0);
        }
        // v1 = -0.1 g, v2 = 0.9 v1 - 0.1 g = -0.19 g; p2 = v1 + v2 = -0.29 g.
        assert!(close(a.w[0] as f64, -0.29));
        assert!(close(b.w[0] as f64, 0.58));
    }

    /// Every optimizer's exported state (buffers and step count), imported into a fresh one
    /// of the same options, continues with the original's bits; a fresh one without it does
    /// not, and a state of another kind is refused.
    #[test]
    fn an_imported_state_continues_where_the_exported_one_stopped() {
        let makers: Vec<fn() -> Box<dyn Optimizer>> = vec![
            || Box::new(SGD::new(0.1, 0.9, true, 0.0).unwrap()),
            || {
                Box::new(
                    Adam::new(0.1, 0.9, 0.99, 1e-3, 0.0)
                        .unwrap()
                        .with_amsgrad(true),
                )
            },
            || Box::new(AdamW::new(0.1, 0.9, 0.99, 1e-3, 0.1).unwrap()),
            || {
                Box::new(
                    RMSprop::new(0.1, 0.9, 1e-3, 0.0)
                        .unwrap()
                        .with_momentum(0.5)
                        .unwrap()
                        .with_centered(true),
                )
            },
            || Box::new(AdaGrad::new(0.1, 1e-3, 0.0).unwrap()),
        ];
        let run = |opt: &mut dyn Optimizer, layer: &mut Two, steps: usize| {
            for k in 0..steps {
                layer.gw[0] = 0.5 - k as f32;
                layer.gb[0] = 0.25 * k as f32;
                opt.step();
                opt.update(layer, 1.0);
            }
        };
        for (i, make) in makers.iter().enumerate() {
            let mut original = make();
            let mut layer = Two::new(1.0, -1.0, 0.0, 0.0);
            run(original.as_mut(), &mut layer, 3);
            let state = original.export_state().unwrap();
            let mut imported = make();
            imported.import_state(&state).unwrap();
            assert_eq!(imported.export_state().unwrap(), state);
            let (mut a, mut b, mut c) = (
                Two::new(layer.w[0], layer.b[0], 0.0, 0.0),
                Two::new(layer.w[0], layer.b[0], 0.0, 0.0),
                Two::new(layer.w[0], layer.b[0], 0.0, 0.0),
            );
            run(original.as_mut(), &mut a, 2);
            run(imported.as_mut(), &mut b, 2);
            run(make().as_mut(), &mut c, 2);
            assert_eq!(
                (a.w[0].to_bits(), a.b[0].to_bits()),
                (b.w[0].to_bits(), b.b[0].to_bits())
            );
            assert_ne!(a.w[0].to_bits(), c.w[0].to_bits(), "optimizer {i}");
            let other = makers[(i + 1) % makers.len()]().export_state().unwrap();
            if other.steps.len() != state.steps.len() || other.groups.len() != state.groups.len() {
                assert!(make().import_state(&other).is_err());
            }
        }
    }

    const KERAS_DECAY: WeightDecayRule =
        WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable);

    /// Epsilon on the raw root: alpha m / (sqrt(v) + eps) with alpha = lr sqrt(1 - b2) /
    /// (1 - b1) at t = 1 equals lr g / (|g| + eps / sqrt(1 - b2)); decoupled decay of every
    /// variable shrinks the bias as well, by lr * wd, before the step.
    #[test]
    fn adam_uncorrected_root_and_decay_of_all_trainable_by_hand() {
        let (lr, wd, eps, b2) = (0.1f64, 0.5f64, 1e-2f64, 0.999f64);
        let step = |g: f64| lr * g / (g.abs() + eps / (1.0 - b2).sqrt());
        for amsgrad in [false, true] {
            let mut adam = Adam::new(0.1, 0.9, 0.999, 1e-2, 0.5)
                .unwrap()
                .with_epsilon_placement(AdamEpsilon::UncorrectedRoot)
                .with_weight_decay_rule(KERAS_DECAY)
                .with_amsgrad(amsgrad);
            let (w, b) = one_step(&mut adam, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
            assert!(close(w, 2.0 * (1.0 - lr * wd) - step(0.3)), "{w}");
            assert!(close(b, 1.0 * (1.0 - lr * wd) - step(-0.4)), "{b}");
        }
        // AMSGrad keeps the larger second moment: b2 = 0.5, g = 1 then 0.1 gives v = 0.5 then
        // 0.255, but the denominator keeps sqrt(0.5). b1 = 0: m = g, alpha = lr sqrt(1 - b2²).
        let mut ams = Adam::new(0.1, 0.0, 0.5, 1e-12, 0.0)
            .unwrap()
            .with_epsilon_placement(AdamEpsilon::UncorrectedRoot)
            .with_amsgrad(true);
        let mut layer = Two::new(0.0, 0.0, 1.0, 0.0);
        one_step(&mut ams, &mut layer, 1.0);
        layer.gw[0] = 0.1;
        let before = layer.w[0] as f64;
        let (w, _) = one_step(&mut ams, &mut layer, 1.0);
        let alpha = 0.1 * (1.0 - 0.25f64).sqrt();
        assert!(close(w, before - alpha * 0.1 / 0.5f64.sqrt()), "{w}");
    }

    /// RMSprop with epsilon inside the root, centring and momentum; AdaGrad with epsilon
    /// inside the root and accumulators starting at 0.1; all with Keras's decay rule.
    #[test]
    fn rmsprop_and_adagrad_options_by_hand() {
        let (lr, wd, eps) = (0.1f64, 0.5f64, 1e-2f64);
        let shrink = 1.0 - lr * wd;
        let mut rms = RMSprop::new(0.1, 0.9, 1e-2, 0.5)
            .unwrap()
            .with_epsilon_placement(EpsilonPlacement::InsideRoot)
            .with_weight_decay_rule(KERAS_DECAY);
        let (w, b) = one_step(&mut rms, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
        let inc = |g: f64| lr * g / (0.1 * g * g + eps).sqrt();
        assert!(close(w, 2.0 * shrink - inc(0.3)));
        assert!(close(b, shrink - inc(-0.4)));

        // Centred: a = 0.1 g, statistic 0.1 g² - 0.01 g² = 0.09 g²; momentum 0.5: the second
        // step moves by 0.5 * inc1 + inc2.
        let mut rms = RMSprop::new(0.1, 0.9, 1e-2, 0.0)
            .unwrap()
            .with_epsilon_placement(EpsilonPlacement::InsideRoot)
            .with_centered(true)
            .with_momentum(0.5)
            .unwrap();
        let mut layer = Two::new(0.0, 0.0, 1.0, 0.0);
        let (w1, _) = one_step(&mut rms, &mut layer, 1.0);
        let inc1 = lr / (0.09f64 + eps).sqrt();
        assert!(close(w1, -inc1), "{w1}");
        let (w2, _) = one_step(&mut rms, &mut layer, 1.0);
        // c = 0.9 * 0.1 + 0.1 = 0.19, a = 0.9 * 0.1 + 0.1 = 0.19, statistic 0.19 - 0.0361.
        let inc2 = lr / (0.19 - 0.19f64 * 0.19 + eps).sqrt();
        assert!(close(w2, -inc1 - (0.5 * inc1 + inc2)), "{w2}");

        let mut ada = AdaGrad::new(0.1, 1e-2, 0.5)
            .unwrap()
            .with_epsilon_placement(EpsilonPlacement::InsideRoot)
            .with_initial_accumulator(0.1)
            .unwrap()
            .with_weight_decay_rule(KERAS_DECAY);
        let (w, b) = one_step(&mut ada, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
        let step = |g: f64| lr * g / (0.1 + g * g + eps).sqrt();
        assert!(close(w, 2.0 * shrink - step(0.3)));
        assert!(close(b, shrink - step(-0.4)));
    }

    /// Nadam's first step and Adamax's first two by hand; both decay every variable
    /// (decoupled) by default; both continue from an exported state.
    #[test]
    fn nadam_and_adamax_by_hand() {
        let (lr, g) = (0.1f64, 0.3f64);
        let u1 = 0.9 * (1.0 - 0.5 * 0.96f64);
        let u2 = 0.9 * (1.0 - 0.5 * 0.96f64 * 0.96);
        let m = 0.1 * g;
        let m_hat = u2 * m / (1.0 - u1 * u2) + (1.0 - u1) * g / (1.0 - u1);
        let v_hat = 0.001 * g * g / (1.0 - 0.999);
        let mut nadam = Nadam::new(0.1, 0.9, 0.999, 1e-3, 0.5).unwrap();
        let (w, b) = one_step(&mut nadam, &mut Two::new(2.0, 1.0, 0.3, 0.0), 1.0);
        assert!(
            close(
                w,
                2.0 * (1.0 - lr * 0.5) - lr * m_hat / (v_hat.sqrt() + 1e-3)
            ),
            "{w}"
        );
        assert!(close(b, 1.0 - lr * 0.5), "{b}");

        // Adamax, b1 = 0.9, b2 = 0.5: g = 0.3 then -0.1. Step 1: m = 0.03, u = 0.3,
        // p -= lr m / (0.1 (u + eps)). Step 2: m = 0.027 - 0.01 = 0.017, u = max(0.15, 0.1).
        let mut adamax = Adamax::new(0.1, 0.9, 0.5, 1e-3, 0.0).unwrap();
        let mut layer = Two::new(0.0, 0.0, 0.3, 0.0);
        let (w1, _) = one_step(&mut adamax, &mut layer, 1.0);
        let want1 = -lr * 0.03 / (0.1 * (0.3 + 1e-3));
        assert!(close(w1, want1), "{w1}");
        layer.gw[0] = -0.1;
        let (w2, _) = one_step(&mut adamax, &mut layer, 1.0);
        assert!(
            close(w2, want1 - lr * 0.017 / (0.19 * (0.15 + 1e-3))),
            "{w2}"
        );

        // An imported state continues with the same bits (the Nadam product is recomputed).
        for make in [
            || Box::new(Nadam::new(0.1, 0.9, 0.99, 1e-3, 0.0).unwrap()) as Box<dyn Optimizer>,
            || Box::new(Adamax::new(0.1, 0.9, 0.99, 1e-3, 0.0).unwrap()) as Box<dyn Optimizer>,
        ] {
            let mut original = make();
            let mut layer = Two::new(1.0, -1.0, 0.5, 0.25);
            for _ in 0..3 {
                one_step(original.as_mut(), &mut layer, 1.0);
            }
            let mut imported = make();
            imported
                .import_state(&original.export_state().unwrap())
                .unwrap();
            let (mut a, mut b) = (
                Two::new(layer.w[0], layer.b[0], -0.5, 0.25),
                Two::new(layer.w[0], layer.b[0], -0.5, 0.25),
            );
            one_step(original.as_mut(), &mut a, 1.0);
            one_step(imported.as_mut(), &mut b, 1.0);
            assert_eq!(a.w[0].to_bits(), b.w[0].to_bits());
        }
    }

    /// A schedule sets the rate of each step from the steps taken before it, and reads the
    /// next step's rate; its step count travels with the exported state.
    #[test]
    fn a_schedule_drives_the_rate_per_step() {
        let schedule = LearningRateSchedule::PiecewiseConstantDecay {
            boundaries: vec![0, 1],
            values: vec![1.0, 0.5, 0.25],
        };
        let sgd = SGD::new(1.0, 0.0, false, 0.0).unwrap();
        let mut opt = Scheduled::new(Box::new(sgd), schedule).unwrap();
        assert_eq!(opt.learning_rate(), 1.0);
        let mut layer = Two::new(0.0, 0.0, 1.0, 0.0);
        let moves: Vec<f64> = (0..3)
            .map(|_| {
                let before = layer.w[0] as f64;
                one_step(&mut opt, &mut layer, 1.0).0 - before
            })
            .collect();
        assert_eq!(moves, [-1.0, -0.5, -0.25]);
        assert_eq!(opt.learning_rate(), 0.25);
        let state = opt.export_state().unwrap();
        assert_eq!(state.steps, vec![3]);
        let mut again = Scheduled::new(
            Box::new(SGD::new(1.0, 0.0, false, 0.0).unwrap()),
            LearningRateSchedule::PiecewiseConstantDecay {
                boundaries: vec![0, 1],
                values: vec![1.0, 0.5, 0.25],
            },
        )
        .unwrap();
        again.import_state(&state).unwrap();
        assert_eq!(again.learning_rate(), 0.25);
    }

    /// SGD's decay of every variable, per-variable clipping by norm and by value, and a
    /// learning rate of 0 set after construction (the constructor still refuses it).
    #[test]
    fn sgd_decay_scope_clipping_and_zero_learning_rate() {
        let mut sgd = SGD::new(0.1, 0.0, false, 0.5)
            .unwrap()
            .with_weight_decay_rule(KERAS_DECAY);
        let (w, b) = one_step(&mut sgd, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
        assert!(close(w, 2.0 * 0.95 - 0.1 * 0.3));
        assert!(close(b, 0.95 + 0.1 * 0.4));

        // Norm 0.2: |0.3| -> 0.2 and |-0.4| -> 0.2 (each variable by its own norm).
        let mut sgd = clipped_sgd(GradientClip::Norm(0.2));
        let (w, b) = one_step(&mut sgd, &mut Two::new(0.0, 0.0, 0.3, -0.4), 1.0);
        assert!(close(w, -0.2) && close(b, 0.2));
        // A gradient inside the bound passes unchanged.
        let (w, _) = one_step(&mut sgd, &mut Two::new(0.0, 0.0, 0.1, 0.0), 1.0);
        assert!(close(w, -0.1));
        // By value: 0.3 passes, -0.4 becomes -0.35.
        let mut sgd = clipped_sgd(GradientClip::Value(0.35));
        let (w, b) = one_step(&mut sgd, &mut Two::new(0.0, 0.0, 0.3, -0.4), 1.0);
        assert!(close(w, -0.3) && close(b, 0.35));

        assert!(SGD::new(0.0, 0.0, false, 0.0).is_err());
        let mut frozen = SGD::new(0.1, 0.9, true, 0.5)
            .unwrap()
            .with_weight_decay_rule(KERAS_DECAY)
            .with_learning_rate(0.0)
            .unwrap();
        let (w, b) = one_step(&mut frozen, &mut Two::new(2.0, 1.0, 0.3, -0.4), 1.0);
        assert_eq!((w, b), (2.0, 1.0));
        for bad in [-0.1, f32::NAN, f32::INFINITY] {
            assert!(SGD::new(0.1, 0.0, false, 0.0)
                .unwrap()
                .with_learning_rate(bad)
                .is_err());
            assert!(AdaGrad::new(0.1, 1e-7, 0.0)
                .unwrap()
                .with_learning_rate(bad)
                .is_err());
        }
        for bad in [0.0, -1.0, f32::NAN] {
            assert!(SGD::new(0.1, 0.0, false, 0.0)
                .unwrap()
                .with_gradient_clip(GradientClip::Norm(bad))
                .is_err());
        }
        assert!(AdaGrad::new(0.1, 1e-7, 0.0)
            .unwrap()
            .with_initial_accumulator(-0.1)
            .is_err());
    }
}
