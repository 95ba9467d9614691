//! The runtime facade over every gate.
//!
//! Each gate is a process-global threshold declared next to its kernel; this module only
//! forwards a plain `set_<name>(usize)` / `get_<name>() -> usize` pair per gate, grouped by
//! kernel family. A gate picks serial or parallel execution, never a result: re-tuning is
//! always safe. `usize::MAX` forces serial, `0` forces parallel. rustyml never calls a setter
//! itself. [`crate::gate::all_gates`] enumerates them.
//!
//! [`profile`] deploys measured values per host class ([`host`]): shipped `GEMMKIT_*` /
//! `RUSTYML_*` env files that fill whatever no setter and no environment variable has set.

pub mod host;
#[cfg(feature = "math")]
pub mod profile;

/// Caller-side tiling of products, plus the gemmkit backend's own knobs.
#[cfg(feature = "math")]
pub mod matmul {
    use crate::forward_gate;
    forward_gate!(crate::math::matmul::CHUNK_ELEMS => set_chunk_elems, get_chunk_elems);
    forward_gate!(crate::math::matmul::CACHE_RESIDENT_MAX_BYTES => set_cache_resident_max_bytes, get_cache_resident_max_bytes);

    use crate::gate::GateSource;
    use std::sync::atomic::{AtomicU8, Ordering};

    /// One gemmkit knob: its name, its `GEMMKIT_*` variable, getter and setter (the
    /// source-recording one of [`backend`]).
    #[derive(Debug, Clone, Copy)]
    pub struct BackendKnob {
        pub name: &'static str,
        pub env: &'static str,
        pub get: fn() -> usize,
        pub set: fn(usize),
        /// gemmkit's own setter: writes the value without recording a source.
        raw_set: fn(usize),
    }

    const KNOB_DEFAULT: u8 = 0;
    const KNOB_PROFILE: u8 = 1;
    const KNOB_SETTER: u8 = 2;

    impl BackendKnob {
        fn index(&self) -> usize {
            BACKEND_KNOBS
                .iter()
                .position(|k| k.env == self.env)
                .expect("every knob is listed")
        }

        /// The value of its `GEMMKIT_*` variable, parsed as gemmkit parses it (`None` when unset
        /// or malformed: gemmkit then keeps its default).
        pub fn env_value(&self) -> Option<usize> {
            std::env::var(self.env).ok()?.trim().parse().ok()
        }

        /// Where the knob's current value came from: setter > environment > profile > default.
        pub fn source(&self) -> GateSource {
            match KNOB_SOURCES[self.index()].load(Ordering::Relaxed) {
                KNOB_SETTER => GateSource::Setter,
                _ if self.env_value().is_some() => GateSource::Environment,
                KNOB_PROFILE => GateSource::Profile,
                _ => GateSource::Default,
            }
        }

        /// Take `value` from a deployment profile unless a setter or the environment variable
        /// already decided this knob; returns whether the profile's value now applies.
        pub fn offer_profile_value(&self, value: usize) -> bool {
            let slot = &KNOB_SOURCES[self.index()];
            if self.env_value().is_some() || slot.load(Ordering::Relaxed) != KNOB_DEFAULT {
                return false;
            }
            // gemmkit's first read resolves the variable, so a malformed one still gets its warning.
            (self.get)();
            (self.raw_set)(value);
            slot.store(KNOB_PROFILE, Ordering::Relaxed);
            true
        }

        /// Set the value without recording a setter call: for sweeps that try values and put
        /// the original back, leaving the knob's reported source as it was.
        pub(crate) fn set_unrecorded(&self, value: usize) {
            (self.raw_set)(value)
        }

        /// Run `body` with the knob at `value`, then restore its value and source (benches,
        /// calibration sweeps, tests; callers serialise themselves as for gates).
        pub fn with_value<R>(&self, value: usize, body: impl FnOnce() -> R) -> R {
            struct Restore<'a>(&'a BackendKnob, usize, u8);
            impl Drop for Restore<'_> {
                fn drop(&mut self) {
                    (self.0.raw_set)(self.1);
                    KNOB_SOURCES[self.0.index()].store(self.2, Ordering::Relaxed);
                }
            }
            let slot = &KNOB_SOURCES[self.index()];
            let _restore = Restore(self, (self.get)(), slot.load(Ordering::Relaxed));
            (self.raw_set)(value);
            body()
        }
    }

    fn record_setter(env: &str) {
        if let Some(i) = BACKEND_KNOBS.iter().position(|k| k.env == env) {
            KNOB_SOURCES[i].store(KNOB_SETTER, Ordering::Relaxed);
        }
    }

    macro_rules! backend_knobs {
        ($($name:ident / $set:ident / $env:literal),* $(,)?) => {
            /// gemmkit's knobs (work gate, worker ramp, pool tiers, packing and blocking),
            /// reached through the adapter so the setters write the same atomics the adapter
            /// reads. Getters are bare names (`parallel_threshold()`), setters `set_*`.
            /// Resolution order: per-call argument, `set_*`, `GEMMKIT_*` environment variable
            /// (read once), deployment profile, compiled default; a setter shadows the
            /// environment variable for the rest of the process. The setters here are gemmkit's,
            /// plus a note of the call so [`BackendKnob::source`] can report it.
            pub mod backend {
                pub use gemmkit_ndarray::tuning::*;
                $(
                    #[doc = concat!("Set gemmkit's `", stringify!($name), "`; shadows `", $env, "` for the rest of the process.")]
                    pub fn $set(value: usize) {
                        super::record_setter($env);
                        gemmkit_ndarray::tuning::$set(value)
                    }
                )*
            }

            /// Every knob of [`backend`], for front ends that enumerate them.
            pub const BACKEND_KNOBS: &[BackendKnob] = &[
                $(BackendKnob {
                    name: stringify!($name),
                    env: $env,
                    get: backend::$name,
                    set: backend::$set,
                    raw_set: gemmkit_ndarray::tuning::$set,
                }),*
            ];

            static KNOB_SOURCES: [AtomicU8; [$($env),*].len()] =
                [const { AtomicU8::new(KNOB_DEFAULT) }; [$($env),*].len()];
        };
    }

    backend_knobs! {
        parallel_threshold / set_parallel_threshold / "GEMMKIT_PARALLEL_THRESHOLD",
        rhs_pack_threshold / set_rhs_pack_threshold / "GEMMKIT_RHS_PACK_THRESHOLD",
        lhs_pack_threshold / set_lhs_pack_threshold / "GEMMKIT_LHS_PACK_THRESHOLD",
        lhs_pack_stride / set_lhs_pack_stride / "GEMMKIT_LHS_PACK_STRIDE",
        lhs_pack_span / set_lhs_pack_span / "GEMMKIT_LHS_PACK_SPAN",
        lhs_pack_reuse / set_lhs_pack_reuse / "GEMMKIT_LHS_PACK_REUSE",
        gemv_threshold / set_gemv_threshold / "GEMMKIT_GEMV_THRESHOLD",
        small_k_threshold / set_small_k_threshold / "GEMMKIT_SMALL_K_THRESHOLD",
        small_mn_dim / set_small_mn_dim / "GEMMKIT_SMALL_MN_DIM",
        small_mn_pack_min_k / set_small_mn_pack_min_k / "GEMMKIT_SMALL_MN_PACK_MIN_K",
        gemv_parallel_bytes / set_gemv_parallel_bytes / "GEMMKIT_GEMV_PARALLEL_BYTES",
        gemv_thread_cap / set_gemv_thread_cap / "GEMMKIT_GEMV_THREAD_CAP",
        gemv_tier_step / set_gemv_tier_step / "GEMMKIT_GEMV_TIER_STEP",
        gemv_axpy_par_min_rows / set_gemv_axpy_par_min_rows / "GEMMKIT_GEMV_AXPY_PAR_MIN_ROWS",
        parallel_oversample / set_parallel_oversample / "GEMMKIT_PARALLEL_OVERSAMPLE",
        par_mnk_per_worker / set_par_mnk_per_worker / "GEMMKIT_PAR_MNK_PER_WORKER",
        pool_classes / set_pool_classes / "GEMMKIT_POOL_CLASSES",
        full_width_mnk / set_full_width_mnk / "GEMMKIT_FULL_WIDTH_MNK",
        shared_lhs_mnk / set_shared_lhs_mnk / "GEMMKIT_SHARED_LHS_MNK",
        k_stream_max / set_k_stream_max / "GEMMKIT_K_STREAM_MAX",
        seq_internal_bytes_per_worker / set_seq_internal_bytes_per_worker / "GEMMKIT_SEQ_INTERNAL_BYTES_PER_WORKER",
        packed_oversample / set_packed_oversample / "GEMMKIT_PACKED_OVERSAMPLE",
        mc_reg_panels / set_mc_reg_panels / "GEMMKIT_MC_REG_PANELS",
        nc_no_l3_panels / set_nc_no_l3_panels / "GEMMKIT_NC_NO_L3_PANELS",
        tiny_block_dim / set_tiny_block_dim / "GEMMKIT_TINY_BLOCK_DIM",
        kc / set_kc / "GEMMKIT_KC",
        kc_min / set_kc_min / "GEMMKIT_KC_MIN",
        deep_kc_bytes / set_deep_kc_bytes / "GEMMKIT_DEEP_KC_BYTES",
        prefetch_min_bytes / set_prefetch_min_bytes / "GEMMKIT_PREFETCH_MIN_BYTES",
        pack_transpose_tile / set_pack_transpose_tile / "GEMMKIT_PACK_TRANSPOSE_TILE",
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn every_gemmkit_knob_is_listed_once() {
            let ours: Vec<&str> = super::BACKEND_KNOBS.iter().map(|k| k.env).collect();
            let theirs = super::backend::knob_env_names();
            assert_eq!(ours.len(), theirs.len());
            for env in theirs {
                assert_eq!(ours.iter().filter(|o| *o == env).count(), 1, "{env}");
            }
            for k in super::BACKEND_KNOBS {
                assert_eq!(k.env, format!("GEMMKIT_{}", k.name.to_ascii_uppercase()));
            }
        }

        #[test]
        fn setters_write_what_the_getters_and_the_adapter_read() {
            let _lock = crate::gate::GATE_TEST_LOCK
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let before = super::backend::parallel_threshold();
            super::backend::set_parallel_threshold(before + 1);
            assert_eq!(super::backend::parallel_threshold(), before + 1);
            super::backend::set_parallel_threshold(before);
            super::set_chunk_elems(1234);
            assert_eq!(super::get_chunk_elems(), 1234);
            assert_eq!(crate::math::matmul::CHUNK_ELEMS.get(), 1234);
            super::set_chunk_elems(crate::math::matmul::CHUNK_ELEMS.default);
        }
    }
}

/// Deterministic reductions and short-row scans.
#[cfg(feature = "math")]
pub mod reduction {
    use crate::forward_gate;
    forward_gate!(crate::math::reduction::SUM_F64 => set_sum_f64, get_sum_f64);
    forward_gate!(crate::math::distance::SCAN_F64 => set_scan_f64, get_scan_f64);
    forward_gate!(crate::math::losses::EXP_REDUCE => set_exp_reduce, get_exp_reduce);
    #[cfg(feature = "neural_network")]
    forward_gate!(crate::math::reduction::SQ_SUM_F32 => set_sq_sum_f32, get_sq_sum_f32);
}

/// Elementwise maps (every output element independent: gates never change a bit).
#[cfg(any(
    feature = "machine_learning",
    feature = "utils",
    feature = "neural_network"
))]
pub mod elementwise {
    #[allow(unused_imports)]
    use crate::forward_gate;
    #[cfg(any(feature = "machine_learning", feature = "utils"))]
    forward_gate!(crate::math::elementwise::EXP_MAP_F64 => set_exp_map_f64, get_exp_map_f64);
    #[cfg(any(feature = "machine_learning", feature = "utils"))]
    forward_gate!(crate::math::elementwise::CHEAP_MAP_F64 => set_cheap_map_f64, get_cheap_map_f64);
    #[cfg(feature = "neural_network")]
    forward_gate!(crate::neural_network::optimizers::kernels::FUSED_SLICE => set_fused_slice, get_fused_slice);
    #[cfg(feature = "neural_network")]
    forward_gate!(crate::neural_network::layers::activation::CHEAP_MAP_F32 => set_cheap_map_f32, get_cheap_map_f32);
    #[cfg(feature = "neural_network")]
    forward_gate!(crate::neural_network::layers::activation::EXP_MAP_F32 => set_exp_map_f32, get_exp_map_f32);
    #[cfg(feature = "neural_network")]
    forward_gate!(crate::neural_network::layers::regularization::stochastic::SPATIAL_DROPOUT_SCALE => set_spatial_dropout_scale, get_spatial_dropout_scale);
}

/// Evaluation metrics.
#[cfg(feature = "metrics")]
pub mod metrics {
    use crate::forward_gate;
    forward_gate!(crate::metrics::clustering::SILHOUETTE => set_silhouette, get_silhouette);
}

/// Tree growing and tree walks (DecisionTree, IsolationForest).
#[cfg(feature = "machine_learning")]
pub mod tree {
    use crate::forward_gate;
    forward_gate!(crate::machine_learning::tree::TRAVERSAL_MIN_VISITS => set_traversal_min_visits, get_traversal_min_visits);
    forward_gate!(crate::machine_learning::decision_tree::SORT_SCAN_MIN_ELEMS => set_sort_scan_min_elems, get_sort_scan_min_elems);
}

/// The liblinear replica behind scikit-learn's `LinearSVC` and liblinear logistic regression:
/// independent trainings side by side.
#[cfg(feature = "machine_learning")]
pub mod liblinear {
    use crate::forward_gate;
    forward_gate!(crate::machine_learning::sklearn_liblinear::SIDE_BY_SIDE_MIN_ENTRIES => set_side_by_side_min_entries, get_side_by_side_min_entries);
}

/// Normalisation layers (BatchNormalization, LayerNormalization, Group/InstanceNormalization).
#[cfg(feature = "neural_network")]
pub mod norm {
    use crate::forward_gate;
    use crate::neural_network::layers::regularization::normalization::engine as e;
    forward_gate!(e::BATCH_NORM => set_batch_norm, get_batch_norm);
    forward_gate!(e::BN_COL_STATS => set_bn_col_stats, get_bn_col_stats);
    forward_gate!(e::BN_PLANE_STATS => set_bn_plane_stats, get_bn_plane_stats);
    forward_gate!(e::LN_ROW => set_ln_row, get_ln_row);
    forward_gate!(e::LN_COL_STATS => set_ln_col_stats, get_ln_col_stats);
    forward_gate!(e::GN_ROW => set_gn_row, get_gn_row);
    forward_gate!(e::GN_PARAM_GRAD => set_gn_param_grad, get_gn_param_grad);

    /// The column folds (the original's later `col_fold` knob): sets `bn_col_stats`,
    /// `bn_plane_stats`, `ln_col_stats` and `gn_param_grad`.
    pub fn set_col_fold(value: usize) {
        for gate in [
            &e::BN_COL_STATS,
            &e::BN_PLANE_STATS,
            &e::LN_COL_STATS,
            &e::GN_PARAM_GRAD,
        ] {
            gate.set(value);
        }
    }

    /// The `col_fold` threshold: `bn_col_stats`'s.
    pub fn get_col_fold() -> usize {
        e::BN_COL_STATS.get()
    }

    /// The row passes (the original's later `row_pass` knob): sets `ln_row` and `gn_row`.
    pub fn set_row_pass(value: usize) {
        e::LN_ROW.set(value);
        e::GN_ROW.set(value);
    }

    /// The `row_pass` threshold: `ln_row`'s.
    pub fn get_row_pass() -> usize {
        e::LN_ROW.get()
    }
}

/// Convolution engines: im2col + GEMM (`parallel_min_flops`) and direct depthwise
/// (`naive_parallel_min_flops`); work = estimated FLOPs.
#[cfg(feature = "neural_network")]
pub mod conv {
    #[allow(unused_imports)]
    use crate::forward_gate;
    // nnconv: the im2col/GEMM engine
    forward_gate!(crate::neural_network::layers::convolution::engine::CONV_PARALLEL_MIN_FLOPS => set_parallel_min_flops, get_parallel_min_flops);
    // Depthwise and separable convolutions (nndepth).
    forward_gate!(crate::neural_network::layers::convolution::depthwise::engine::CONV_NAIVE_PARALLEL_MIN_FLOPS => set_naive_parallel_min_flops, get_naive_parallel_min_flops);
}

/// The pooling engine; work = window taps.
#[cfg(feature = "neural_network")]
pub mod pool {
    #[allow(unused_imports)]
    use crate::forward_gate;
    // pooling family
    forward_gate!(crate::neural_network::layers::pooling::engine::POOL_PARALLEL_MIN_OPS => set_parallel_min_ops, get_parallel_min_ops);
}

/// The recurrent layers' time loops (SimpleRNN, LSTM, GRU): blocks of batch rows run as
/// parallel tasks; work = FLOPs of the per-step recurrent products.
#[cfg(feature = "neural_network")]
pub mod recurrent {
    #[allow(unused_imports)]
    use crate::forward_gate;
    forward_gate!(crate::neural_network::layers::recurrent::time_loop::RECURRENT_PARALLEL_MIN_FLOPS => set_parallel_min_flops, get_parallel_min_flops);
}

/// The upsampling resize engine; work = destination elements x taps.
#[cfg(feature = "neural_network")]
pub mod upsampling {
    #[allow(unused_imports)]
    use crate::forward_gate;
    // nnshape family: the resize engine's gate.
    forward_gate!(crate::neural_network::layers::upsampling::engine::UPSAMPLING_PARALLEL_MIN_OPS => set_parallel_min_ops, get_parallel_min_ops);
}
