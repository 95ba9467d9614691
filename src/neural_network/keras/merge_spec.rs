//! The merge layers' configs (Keras's class names and arguments) and their builders.

use super::AxisSpec;
use crate::error::Error;
use crate::error::Result;
use crate::neural_network::layers::merge::{
    Concatenate, Dot, ElementwiseMerge, MergeLayer, MergeOp,
};
use serde::{Deserialize, Serialize};

fn default_axis() -> i64 {
    -1
}

/// A merge layer's config.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "class_name", content = "config")]
pub enum MergeSpec {
    Add {},
    Subtract {},
    Multiply {},
    Average {},
    Maximum {},
    Minimum {},
    Concatenate {
        #[serde(default = "default_axis")]
        axis: i64,
    },
    Dot {
        axes: AxisSpec,
        #[serde(default)]
        normalize: bool,
    },
}

impl MergeSpec {
    /// Whether `class_name` names a merge layer.
    pub fn is_merge(class_name: &str) -> bool {
        matches!(
            class_name,
            "Add"
                | "Subtract"
                | "Multiply"
                | "Average"
                | "Maximum"
                | "Minimum"
                | "Concatenate"
                | "Dot"
        )
    }

    pub fn build(&self) -> Result<Box<dyn MergeLayer>> {
        let elementwise = |op| -> Box<dyn MergeLayer> { Box::new(ElementwiseMerge::new(op)) };
        Ok(match self {
            MergeSpec::Add {} => elementwise(MergeOp::Add),
            MergeSpec::Subtract {} => elementwise(MergeOp::Subtract),
            MergeSpec::Multiply {} => elementwise(MergeOp::Multiply),
            MergeSpec::Average {} => elementwise(MergeOp::Average),
            MergeSpec::Maximum {} => elementwise(MergeOp::Maximum),
            MergeSpec::Minimum {} => elementwise(MergeOp::Minimum),
            MergeSpec::Concatenate { axis } => Box::new(Concatenate::new(*axis)),
            MergeSpec::Dot { axes, normalize } => {
                let axes = match axes {
                    AxisSpec::One(a) => [*a, *a],
                    AxisSpec::Many(v) if v.len() == 2 => [v[0], v[1]],
                    AxisSpec::Many(v) => {
                        return Err(Error::invalid_input(format!(
                            "Dot: axes must be one integer or a pair, got {v:?}"
                        )))
                    }
                };
                Box::new(Dot::new(axes, *normalize))
            }
        })
    }
}
