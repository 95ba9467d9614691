//! Test support shared across the network's modules.

/// Runs `body` in a fresh rayon pool of `threads` workers: the tests that compare a result's
/// bits across worker counts.
pub(crate) fn on_threads<R: Send>(threads: usize, body: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(body)
}
