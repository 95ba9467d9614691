//! The elementwise merges: `Add`, `Subtract`, `Multiply`, `Average`, `Maximum`, `Minimum`.
//! Inputs have one shape (Keras's broadcasting of size-1 axes is not offered: a mismatch is
//! refused naming the shapes).

use super::{check_batches, check_count, per_sample_shapes, MergeLayer};
use crate::error::{Error, Result};
use crate::neural_network::Tensor;
use ndarray::Zip;

/// Which elementwise merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeOp {
    Add,
    Subtract,
    Multiply,
    Average,
    Maximum,
    Minimum,
}

impl MergeOp {
    /// Keras's class name.
    pub fn class_name(self) -> &'static str {
        match self {
            MergeOp::Add => "Add",
            MergeOp::Subtract => "Subtract",
            MergeOp::Multiply => "Multiply",
            MergeOp::Average => "Average",
            MergeOp::Maximum => "Maximum",
            MergeOp::Minimum => "Minimum",
        }
    }

    /// One step of the fold `acc = op(acc, x)` (Average folds sums, divided at the end).
    fn combine(self, acc: f32, x: f32) -> f32 {
        match self {
            MergeOp::Add | MergeOp::Average => acc + x,
            MergeOp::Subtract => acc - x,
            MergeOp::Multiply => acc * x,
            MergeOp::Maximum => acc.max(x),
            MergeOp::Minimum => acc.min(x),
        }
    }

    /// The shares of the gradient of `op(acc, x)` that go to `acc` and to `x`. For max/min
    /// a tie gives each half, as JAX differentiates `maximum`/`minimum`.
    fn shares(self, acc: f32, x: f32) -> (f32, f32) {
        let pick = |acc_wins: bool| if acc_wins { (1.0, 0.0) } else { (0.0, 1.0) };
        match self {
            MergeOp::Add | MergeOp::Average => (1.0, 1.0),
            MergeOp::Subtract => (1.0, -1.0),
            MergeOp::Multiply => (x, acc),
            MergeOp::Maximum if acc == x => (0.5, 0.5),
            MergeOp::Minimum if acc == x => (0.5, 0.5),
            MergeOp::Maximum => pick(acc > x),
            MergeOp::Minimum => pick(acc < x),
        }
    }
}

/// One of the elementwise merges; keeps its inputs for the backward pass.
pub struct ElementwiseMerge {
    op: MergeOp,
    inputs: Vec<Tensor>,
}

impl ElementwiseMerge {
    pub fn new(op: MergeOp) -> Self {
        Self {
            op,
            inputs: Vec::new(),
        }
    }

    pub fn op(&self) -> MergeOp {
        self.op
    }

    fn check(&self, inputs: &[&Tensor]) -> Result<()> {
        check_batches(self.op.class_name(), inputs)?;
        self.output_shape(&per_sample_shapes(inputs)).map(drop)
    }

    /// The folds' partial results: `prefix[k]` combines inputs `0..=k`.
    fn prefixes(&self, inputs: &[&Tensor]) -> Vec<Tensor> {
        let mut prefix = Vec::with_capacity(inputs.len());
        prefix.push(inputs[0].clone());
        for x in &inputs[1..] {
            let mut next = prefix.last().expect("seeded").clone();
            Zip::from(&mut next)
                .and(*x)
                .for_each(|a, &b| *a = self.op.combine(*a, b));
            prefix.push(next);
        }
        prefix
    }

    fn finish(&self, mut sum: Tensor, n: usize) -> Tensor {
        if self.op == MergeOp::Average {
            let n = n as f32;
            sum.mapv_inplace(|v| v / n);
        }
        sum
    }
}

impl MergeLayer for ElementwiseMerge {
    fn layer_type(&self) -> &str {
        self.op.class_name()
    }

    fn output_shape(&self, inputs: &[Vec<usize>]) -> Result<Vec<usize>> {
        let name = self.op.class_name();
        check_count(name, inputs.len())?;
        if self.op == MergeOp::Subtract && inputs.len() != 2 {
            return Err(Error::invalid_input(format!(
                "a Subtract layer must be called on exactly 2 inputs, got {}",
                inputs.len()
            )));
        }
        if inputs.iter().any(|s| s != &inputs[0]) {
            return Err(Error::invalid_input(format!(
                "{name}: inputs must all have the same shape, got per-sample shapes {inputs:?} \
                 (rustyml does not broadcast merge inputs)"
            )));
        }
        Ok(inputs[0].clone())
    }

    fn predict(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        self.check(inputs)?;
        let last = self.prefixes(inputs).pop().expect("at least two inputs");
        Ok(self.finish(last, inputs.len()))
    }

    fn forward(&mut self, inputs: &[&Tensor]) -> Result<Tensor> {
        let out = self.predict(inputs)?;
        self.inputs = inputs.iter().map(|t| (*t).clone()).collect();
        Ok(out)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Vec<Tensor>> {
        let n = self.inputs.len();
        if n == 0 {
            return Err(Error::invalid_input(format!(
                "{}: backward before forward",
                self.op.class_name()
            )));
        }
        if grad_output.shape() != self.inputs[0].shape() {
            return Err(Error::invalid_input(format!(
                "{}: gradient of shape {:?} for an output of shape {:?}",
                self.op.class_name(),
                grad_output.shape(),
                self.inputs[0].shape()
            )));
        }
        let mut g = grad_output.clone();
        if self.op == MergeOp::Average {
            let n = n as f32;
            g.mapv_inplace(|v| v / n);
        }
        // walk the fold backwards: prefix[k] = op(prefix[k-1], x_k)
        let refs: Vec<&Tensor> = self.inputs.iter().collect();
        let prefix = self.prefixes(&refs);
        let mut grads = vec![Tensor::zeros(grad_output.raw_dim()); n];
        for k in (1..n).rev() {
            let mut gx = g.clone();
            Zip::from(&mut g)
                .and(&mut gx)
                .and(&prefix[k - 1])
                .and(&self.inputs[k])
                .for_each(|ga, gb, &acc, &x| {
                    let (sa, sb) = self.op.shares(acc, x);
                    let gv = *ga;
                    *ga = gv * sa;
                    *gb = gv * sb;
                });
            grads[k] = gx;
        }
        grads[0] = g;
        Ok(grads)
    }
}
