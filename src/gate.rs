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
//!
//! Deployment: each gate reads `RUSTYML_<FAMILY>_<NAME>` (`RUSTYML_REDUCTION_SUM_F64=100000`)
//! once, on first use. An unparsable value warns once on stderr, naming the variable, and the
//! default stays; a setter shadows the variable for the rest of the process — gemmkit's rules
//! for its `GEMMKIT_*` knobs, so one env file can carry both. Below the variable sits the
//! deployment profile ([`crate::tuning::profile`]): it only fills gates still at their default.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Once;

/// Where a gate's (or a gemmkit knob's) current value came from. Precedence, highest first:
/// setter, environment variable, profile, compiled default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateSource {
    /// The calibrated default compiled into the crate.
    Default,
    /// The deployment profile ([`crate::tuning::profile`]).
    Profile,
    /// The `RUSTYML_<FAMILY>_<NAME>` (or `GEMMKIT_*`) environment variable.
    Environment,
    /// A `set_*` call.
    Setter,
}

impl GateSource {
    /// `"default"`, `"profile"`, `"environment"` or `"setter"`.
    pub fn as_str(self) -> &'static str {
        match self {
            GateSource::Default => "default",
            GateSource::Profile => "profile",
            GateSource::Environment => "environment",
            GateSource::Setter => "setter",
        }
    }
}

const SOURCE_DEFAULT: u8 = 0;
const SOURCE_ENV: u8 = 1;
const SOURCE_SETTER: u8 = 2;
const SOURCE_PROFILE: u8 = 3;

/// One runtime-tunable work threshold.
#[derive(Debug)]
pub struct Gate {
    value: AtomicUsize,
    /// Guards the one read of the environment variable.
    env_read: Once,
    source: AtomicU8,
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
            env_read: Once::new(),
            source: AtomicU8::new(SOURCE_DEFAULT),
            family,
            name,
            default,
            unit,
        }
    }

    /// Current threshold.
    #[inline]
    pub fn get(&self) -> usize {
        // After the first call this is one branch on an already-completed `Once`.
        self.read_env_once();
        self.value.load(Ordering::Relaxed)
    }

    /// Replace the threshold. `usize::MAX` forces serial, `0` forces parallel.
    #[inline]
    pub fn set(&self, value: usize) {
        // The variable is consumed first so it can never overwrite a setter's value later.
        self.read_env_once();
        self.source.store(SOURCE_SETTER, Ordering::Relaxed);
        self.value.store(value, Ordering::Relaxed);
    }

    /// Where the current value came from.
    pub fn source(&self) -> GateSource {
        self.read_env_once();
        match self.source.load(Ordering::Relaxed) {
            SOURCE_ENV => GateSource::Environment,
            SOURCE_SETTER => GateSource::Setter,
            SOURCE_PROFILE => GateSource::Profile,
            _ => GateSource::Default,
        }
    }

    /// Take `value` from a deployment profile, unless the environment variable or a setter
    /// already decided this gate; returns whether the profile's value now applies.
    pub fn offer_profile_value(&self, value: usize) -> bool {
        self.read_env_once();
        let taken = self
            .source
            .compare_exchange(
                SOURCE_DEFAULT,
                SOURCE_PROFILE,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        if taken {
            self.value.store(value, Ordering::Relaxed);
        }
        taken
    }

    /// The environment variable this gate reads: `RUSTYML_<FAMILY>_<NAME>`, upper case.
    pub fn env_name(&self) -> String {
        format!("RUSTYML_{}_{}", self.family, self.name).to_ascii_uppercase()
    }

    #[inline]
    fn read_env_once(&self) {
        if !self.env_read.is_completed() {
            self.env_read.call_once(|| self.apply_env());
        }
    }

    #[cold]
    fn apply_env(&self) {
        let var = self.env_name();
        let Some(raw) = std::env::var_os(&var) else {
            return;
        };
        match parse_threshold(&raw.to_string_lossy()) {
            Some(v) => {
                self.value.store(v, Ordering::Relaxed);
                self.source.store(SOURCE_ENV, Ordering::Relaxed);
            }
            None => eprintln!(
                "rustyml: ignoring {var}={}: expected a non-negative integer up to {} (or 'max' for always serial); using the default {}",
                shown_value(&raw),
                usize::MAX,
                self.default
            ),
        }
    }

    /// Whether a kernel with this much estimated work should fork onto rayon.
    ///
    /// `work >= threshold`, except that a threshold of `usize::MAX` never forks, so
    /// "force serial" holds even for a saturated work estimate. With one worker requested
    /// (`parallel::set_num_threads(1)`, or a host asking for one) nothing forks.
    #[inline]
    pub fn allows_parallel(&self, work: usize) -> bool {
        let threshold = self.get();
        threshold != usize::MAX && work >= threshold && !crate::parallel::serial_only()
    }

    /// For size-cap knobs (`cache_resident_max_bytes`): whether `size` is within the cap.
    #[inline]
    pub fn admits(&self, size: usize) -> bool {
        size <= self.get()
    }
}

/// An environment variable's value for a warning: quoted, escaped (not UTF-8 shows as `\xNN`)
/// and cut to 200 characters (a variable can hold 128 KiB).
fn shown_value(raw: &std::ffi::OsStr) -> String {
    let quoted = format!("{raw:?}");
    match quoted.char_indices().nth(200) {
        None => quoted,
        Some((cut, _)) => format!("{}... ({} bytes)", &quoted[..cut], raw.len()),
    }
}

/// Registry entry submitted by [`declare_gate!`](crate::declare_gate).
/// A threshold as written in an environment variable: a non-negative integer (`_` allowed as
/// a digit separator) or `max` (`usize::MAX`, always serial).
pub fn parse_threshold(text: &str) -> Option<usize> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("max") {
        return Some(usize::MAX);
    }
    if t.is_empty() || t.starts_with('_') {
        return None;
    }
    t.replace('_', "").parse().ok()
}

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
    struct Restore<'a>(&'a Gate, usize, u8);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.0.value.store(self.1, Ordering::Relaxed);
            self.0.source.store(self.2, Ordering::Relaxed);
        }
    }
    let _restore = Restore(gate, gate.get(), gate.source.load(Ordering::Relaxed));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_like_integers_with_separators_or_max() {
        assert_eq!(parse_threshold("100000"), Some(100_000));
        assert_eq!(parse_threshold(" 4_000_000 "), Some(4_000_000));
        assert_eq!(parse_threshold("MAX"), Some(usize::MAX));
        assert_eq!(parse_threshold("0"), Some(0));
        for bad in ["", "-1", "1e5", "ten", "_1", "18446744073709551616"] {
            assert_eq!(parse_threshold(bad), None, "{bad:?}");
        }
    }

    // Each test uses its own gate (and so its own variable): the environment is read once per
    // gate, and tests run concurrently.
    static ENV_GATE: Gate = Gate::new("testfamily", "from_env", 7, "items");
    static BAD_ENV_GATE: Gate = Gate::new("testfamily", "bad_env", 9, "items");
    static SETTER_GATE: Gate = Gate::new("testfamily", "setter_first", 11, "items");

    #[test]
    fn environment_supplies_the_value_and_a_setter_shadows_it() {
        std::env::set_var("RUSTYML_TESTFAMILY_FROM_ENV", "123");
        assert_eq!(ENV_GATE.env_name(), "RUSTYML_TESTFAMILY_FROM_ENV");
        assert_eq!(ENV_GATE.get(), 123);
        assert_eq!(ENV_GATE.source(), GateSource::Environment);
        ENV_GATE.set(5);
        assert_eq!(ENV_GATE.get(), 5);
        assert_eq!(ENV_GATE.source(), GateSource::Setter);
        // Read once: a later change of the variable is not seen.
        std::env::set_var("RUSTYML_TESTFAMILY_FROM_ENV", "999");
        assert_eq!(ENV_GATE.get(), 5);
    }

    #[test]
    fn an_unparsable_variable_keeps_the_default() {
        std::env::set_var("RUSTYML_TESTFAMILY_BAD_ENV", "lots");
        assert_eq!(BAD_ENV_GATE.get(), 9);
        assert_eq!(BAD_ENV_GATE.source(), GateSource::Default);
    }

    #[test]
    fn a_setter_before_first_use_is_not_overwritten_by_the_variable() {
        std::env::set_var("RUSTYML_TESTFAMILY_SETTER_FIRST", "77");
        SETTER_GATE.set(3);
        assert_eq!(SETTER_GATE.get(), 3);
        assert_eq!(SETTER_GATE.source(), GateSource::Setter);
    }

    #[test]
    fn a_profile_fills_only_a_gate_still_at_its_default() {
        static FROM_PROFILE: Gate = Gate::new("testfamily", "profile_only", 21, "items");
        static ENV_OVER_PROFILE: Gate = Gate::new("testfamily", "env_over_profile", 22, "items");
        static SETTER_OVER_PROFILE: Gate =
            Gate::new("testfamily", "setter_over_profile", 23, "items");
        assert!(FROM_PROFILE.offer_profile_value(500));
        assert_eq!(
            (FROM_PROFILE.get(), FROM_PROFILE.source()),
            (500, GateSource::Profile)
        );
        FROM_PROFILE.set(4);
        assert_eq!(
            (FROM_PROFILE.get(), FROM_PROFILE.source()),
            (4, GateSource::Setter)
        );

        std::env::set_var("RUSTYML_TESTFAMILY_ENV_OVER_PROFILE", "600");
        assert!(!ENV_OVER_PROFILE.offer_profile_value(500));
        assert_eq!(
            (ENV_OVER_PROFILE.get(), ENV_OVER_PROFILE.source()),
            (600, GateSource::Environment)
        );

        SETTER_OVER_PROFILE.set(8);
        assert!(!SETTER_OVER_PROFILE.offer_profile_value(500));
        assert_eq!(SETTER_OVER_PROFILE.get(), 8);
    }

    #[test]
    fn with_gate_restores_value_and_source() {
        static G: Gate = Gate::new("testfamily", "restore", 13, "items");
        with_gate(&G, 0, || assert_eq!(G.get(), 0));
        assert_eq!(G.get(), 13);
        assert_eq!(G.source(), GateSource::Default);
    }
}
