//! The runtime facade over every gate.
//!
//! Each gate is a process-global threshold declared next to its kernel; this module only
//! forwards a plain `set_<name>(usize)` / `get_<name>() -> usize` pair per gate, grouped by
//! kernel family. A gate picks serial or parallel execution, never a result: re-tuning is
//! always safe. `usize::MAX` forces serial, `0` forces parallel. rustyml never calls a setter
//! itself. [`crate::gate::all_gates`] enumerates them.

/// Caller-side tiling of products, plus the gemmkit backend's own knobs.
#[cfg(feature = "math")]
pub mod matmul {
    use crate::forward_gate;
    forward_gate!(crate::math::matmul::CHUNK_ELEMS => set_chunk_elems, get_chunk_elems);
    forward_gate!(crate::math::matmul::CACHE_RESIDENT_MAX_BYTES => set_cache_resident_max_bytes, get_cache_resident_max_bytes);

    /// gemmkit's knobs (work gate, worker ramp, pool tiers, packing and blocking), reached
    /// through the adapter so the setters write the same atomics the adapter reads. Getters are
    /// bare names (`parallel_threshold()`), setters `set_*`. Resolution order: per-call
    /// argument, programmatic `set_*`, `GEMMKIT_*` environment variable (read once), compiled
    /// default; a setter shadows the environment variable for the rest of the process.
    pub use gemmkit_ndarray::tuning as backend;
}

/// Deterministic reductions and short-row scans.
#[cfg(feature = "math")]
pub mod reduction {
    use crate::forward_gate;
    forward_gate!(crate::math::reduction::SUM_F64 => set_sum_f64, get_sum_f64);
    forward_gate!(crate::math::distance::SCAN_F64 => set_scan_f64, get_scan_f64);
}

/// Tree growing and tree walks (DecisionTree, IsolationForest).
#[cfg(feature = "machine_learning")]
pub mod tree {
    use crate::forward_gate;
    forward_gate!(crate::machine_learning::tree::TRAVERSAL_MIN_VISITS => set_traversal_min_visits, get_traversal_min_visits);
    forward_gate!(crate::machine_learning::decision_tree::SORT_SCAN_MIN_ELEMS => set_sort_scan_min_elems, get_sort_scan_min_elems);
}
