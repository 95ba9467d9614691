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
