//! Calibration bench: for every gate, force the serial and the parallel path of its kernel on
//! a ladder of shapes on both sides of the gate, print one markdown table per family and
//! rewrite `calibrations/RESULTS.md`.
//!
//! `cargo bench --bench parallel_gates [-- FILTER]` (FILTER keeps families whose title
//! contains it).

#[path = "gates/harness.rs"]
mod harness;

#[path = "gates/reduction.rs"]
mod reduction;

#[path = "gates/elementwise.rs"]
mod elementwise;

#[path = "gates/cluster.rs"]
mod cluster;
#[path = "gates/losses.rs"]
mod losses;
#[path = "gates/metrics.rs"]
mod metrics;
#[path = "gates/tree.rs"]
mod tree;

#[path = "gates/matmul.rs"]
mod matmul;

#[path = "gates/tsne.rs"]
mod tsne;

#[path = "gates/nn_core.rs"]
mod nn_core;
#[path = "gates/nn_maps.rs"]
mod nn_maps;
#[path = "gates/nn_norm.rs"]
mod nn_norm;
// pooling family
#[path = "gates/nn_pool.rs"]
mod nn_pool;
// nnconv
#[path = "gates/nn_conv.rs"]
mod nn_conv;
// nnshape family
#[path = "gates/nn_upsampling.rs"]
mod nn_upsampling;
// Depthwise and separable convolutions (nndepth).
#[path = "gates/nn_depthwise.rs"]
mod nn_depthwise;

use harness::Family;

fn families() -> Vec<Family> {
    let mut all = Vec::new();
    all.extend(reduction::families());
    all.extend(elementwise::families());
    all.extend(cluster::families());
    all.extend(metrics::families());
    all.extend(losses::families());
    all.extend(tsne::families());
    all.extend(matmul::families());
    all.extend(tree::families());
    all.extend(nn_maps::families());
    all.extend(nn_core::families());
    all.extend(nn_norm::families());
    // pooling family
    all.extend(nn_pool::families());
    all.extend(nn_conv::families()); // nnconv
    all.extend(nn_upsampling::families()); // nnshape family
                                           // Depthwise and separable convolutions (nndepth).
    all.extend(nn_depthwise::families());
    all
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut report = harness::Report::new();
    for family in families() {
        if filter.as_deref().is_some_and(|f| !family.title.contains(f)) {
            continue;
        }
        report.run(family);
    }
    report.write("calibrations/RESULTS.md", filter.is_none());
}
