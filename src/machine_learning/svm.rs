//! Support vector machines (the original crate's `machine_learning::svm`).

pub use super::{linear_svc, svc};
pub use crate::machine_learning::types::{Gamma, KernelType};
pub use linear_svc::{LinearSVC, Loss};
pub use svc::SVC;
