//! The gate mechanism: a calibrated work threshold per parallel kernel.
//!
//! A gate is a process-global [`Gate`] (an `AtomicUsize` plus its metadata) declared by
//! [`declare_gate!`](crate::declare_gate) right beside the kernel that reads it. Kernels
//! estimate their work and fork onto rayon only when [`Gate::allows_parallel`] says so.
//! Loads and stores are `Relaxed`: a gate picks a strategy, never a result, so a racing read
//! at worst picks a slightly worse strategy.
//!
//! Every declared gate also lands in a link-time registry ([`all_gates`]) so the calibration
//! bench, `python -m rustyml` and the Python `tuning` facade enumerate gates without a second
//! hand-kept list.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One runtime-tunable work threshold.
#[derive(Debug)]
pub struct Gate {
    value: AtomicUsize,
    /// `tuning` submodule the gate is exposed under (`"reduction"`, `"matmul"`, ...).
    pub family: &'static str,
    /// Name without the `set_`/`get_` prefix (`"sum_f64"`).
    pub name: &'static str,
    /// The calibrated default shipped with the crate.
    pub default: usize,
    /// What the work estimate counts (`"elements"`, `"node visits"`, ...).
    pub unit: &'static str,
}

impl Gate {
    #[doc(hidden)]
    pub const fn new(
        family: &'static str,
        name: &'static str,
        default: usize,
        unit: &'static str,
    ) -> Self {
        Self {
            value: AtomicUsize::new(default),
            family,
            name,
            default,
            unit,
        }
    }

    /// Current threshold.
    #[inline]
    pub fn get(&self) -> usize {
        self.value.load(Ordering::Relaxed)
    }

    /// Replace the threshold. `usize::MAX` forces serial, `0` forces parallel.
    #[inline]
    pub fn set(&self, value: usize) {
        self.value.store(value, Ordering::Relaxed);
    }

    /// Whether a kernel with this much estimated work should fork onto rayon.
    ///
    /// `work >= threshold`, except that a threshold of `usize::MAX` never forks, so
    /// "force serial" holds even for a saturated work estimate.
    #[inline]
    pub fn allows_parallel(&self, work: usize) -> bool {
        let threshold = self.get();
        threshold != usize::MAX && work >= threshold
    }

    /// For size-cap knobs (`cache_resident_max_bytes`): whether `size` is within the cap.
    #[inline]
    pub fn admits(&self, size: usize) -> bool {
        size <= self.get()
    }
}

/// Registry entry submitted by [`declare_gate!`](crate::declare_gate).
#[doc(hidden)]
pub struct GateEntry(pub &'static Gate);

inventory::collect!(GateEntry);

/// Every gate compiled into this build, sorted by family then name.
pub fn all_gates() -> Vec<&'static Gate> {
    let mut gates: Vec<&'static Gate> = inventory::iter::<GateEntry>
        .into_iter()
        .map(|entry| entry.0)
        .collect();
    gates.sort_by_key(|g| (g.family, g.name));
    gates
}

/// Look a gate up by `family` and `name`.
pub fn find_gate(family: &str, name: &str) -> Option<&'static Gate> {
    all_gates()
        .into_iter()
        .find(|g| g.family == family && g.name == name)
}

/// Declare a gate next to the kernel it governs.
///
/// ```ignore
/// declare_gate! {
///     /// f64 sum-like reductions.
///     pub SUM_F64: reduction::sum_f64 = 262_144, "elements"
/// }
/// ```
///
/// expands to a `static SUM_F64: Gate` initialised to the default and registers it, so the
/// `tuning` facade only needs to forward `set_sum_f64`/`get_sum_f64` to it.
#[macro_export]
macro_rules! declare_gate {
    ($(#[$meta:meta])* $vis:vis $ident:ident : $family:ident :: $name:ident = $default:expr, $unit:literal) => {
        $(#[$meta])*
        $vis static $ident: $crate::gate::Gate =
            $crate::gate::Gate::new(stringify!($family), stringify!($name), $default, $unit);
        ::inventory::submit! { $crate::gate::GateEntry(&$ident) }
    };
}

/// Generate the `set_<name>` / `get_<name>` pair of a `tuning` submodule forwarding to a
/// gate declared elsewhere.
#[macro_export]
macro_rules! forward_gate {
    ($gate:path => $set:ident, $get:ident) => {
        #[doc = concat!("Set the `", stringify!($gate), "` threshold (`usize::MAX` forces serial, `0` forces parallel).")]
        pub fn $set(value: usize) {
            $gate.set(value)
        }
        #[doc = concat!("Current `", stringify!($gate), "` threshold.")]
        pub fn $get() -> usize {
            $gate.get()
        }
    };
}

/// Run `body` with `gate` temporarily set to `value`, restoring the previous value after.
///
/// Test and bench helper. Gates are process-global, so callers that run concurrently must
/// serialise themselves (the crate's tests hold [`GATE_TEST_LOCK`]).
pub fn with_gate<R>(gate: &Gate, value: usize, body: impl FnOnce() -> R) -> R {
    struct Restore<'a>(&'a Gate, usize);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.0.set(self.1);
        }
    }
    let _restore = Restore(gate, gate.get());
    gate.set(value);
    body()
}

/// Serialises tests that flip process-global gates.
#[doc(hidden)]
pub static GATE_TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Run `kernel` forced serial and forced parallel; return both results.
#[doc(hidden)]
pub fn serial_and_parallel<R>(gate: &Gate, kernel: impl Fn() -> R) -> (R, R) {
    let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let serial = with_gate(gate, usize::MAX, &kernel);
    let parallel = with_gate(gate, 0, &kernel);
    (serial, parallel)
}
