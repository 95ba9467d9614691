//! Optimizers: SGD, Adam, AdamW, RMSprop, AdaGrad, over the public slice kernels in
//! [`kernels`]. Every optimizer supports clip-by-global-norm (`with_global_clipnorm`; the model
//! computes the norm and passes the factor to `update`) and never decays parameters marked
//! `ParamGrad::no_decay`.

pub mod ada_grad;
pub mod adam;
mod adam_core;
pub mod adam_w;
pub mod kernels;
pub mod rms_prop;
pub mod sgd;
mod state;
mod validation;

pub use ada_grad::AdaGrad;
pub use adam::Adam;
pub use adam_w::AdamW;
pub use rms_prop::RMSprop;
pub use sgd::SGD;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RustymlResult;
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
        fn forward(&mut self, input: &Tensor) -> RustymlResult<Tensor> {
            Ok(input.clone())
        }
        fn predict(&self, input: &Tensor) -> RustymlResult<Tensor> {
            Ok(input.clone())
        }
        fn backward(&mut self, grad_output: &Tensor) -> RustymlResult<Tensor> {
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
}
