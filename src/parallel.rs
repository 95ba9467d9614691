//! The number of workers rustyml's parallel kernels use, settable at any time.
//!
//! rayon's global pool is built once and cannot be resized, so the count is kept here and
//! applied in three ways, none of which changes a result (the gate contract: a kernel's bits do
//! not depend on how many workers run it):
//!
//! * **The global pool's own width.** At Python import the global pool is built with the width
//!   the host asked for ([`width_from_environment`]: `RAYON_NUM_THREADS`, else
//!   `OMP_NUM_THREADS`, which loky, Dask and Ray set in their workers). While the count equals
//!   that width, calls run exactly as before: no hop, no extra cost.
//! * **One worker means serial.** At a count of 1 every gate answers "serial"
//!   ([`serial_only`], read by `Gate::allows_parallel`) and products ask gemmkit for
//!   `Parallelism::Serial`, so no kernel forks.
//! * **Any other count runs in a pool of that width.** [`install`] runs the call inside a
//!   rayon pool of exactly that many threads (built on first need and cached, so toggling a
//!   limit does not respawn threads); every rayon region and every gemmkit product started from
//!   it stays in that pool, so even a region without a gate cannot escape the limit. Callers
//!   wrap their whole native call in it once (the Python bindings do so where they release the
//!   GIL); a call already on a rayon worker runs inline. The hop to the pool's thread costs a
//!   wake-up (microseconds), paid only while a count other than the global width is set.
//!   A thread-local seed (`random::set_global_seed`) stays on the caller's thread: inside
//!   [`install`] a model's own `random_state` is what makes draws repeatable.
//!
//! gemmkit keeps private pools sized from the core count; [`product_width_cap`] gives the
//! matmul adapter the cap to pass as `Parallelism::Rayon(n)` when the count is below the core
//! count, so products follow the setting too.
//!
//! A pool's worker must never block on a lock another caller may hold while waiting for the
//! pool (a worker waiting in a join may pick up a queued call and block under its own
//! lock-holder): take a model's lock first, then [`install`] the computation.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Width of rayon's global pool, read once (it never changes after it is built).
static GLOBAL_WIDTH: OnceLock<usize> = OnceLock::new();
/// The requested count; 0 follows the global pool's width.
static REQUESTED: AtomicUsize = AtomicUsize::new(0);
/// What [`reset_num_threads`] goes back to: the width chosen at start-up (0: the global pool).
static STARTUP: AtomicUsize = AtomicUsize::new(0);
/// Pools for counts other than the global width, most recently built last.
static POOLS: Mutex<Vec<Arc<rayon::ThreadPool>>> = Mutex::new(Vec::new());
/// How many such pools stay alive: enough for a limit toggled around calls and a few widths
/// tried in a sweep; their threads sleep when idle.
const POOL_CACHE: usize = 4;

thread_local! {
    /// Set while this thread runs the top of an [`install`]ed call: it is a pool worker, but
    /// not yet inside a parallel region, so its products may still fork.
    static ENTRY_ROOT: Cell<bool> = const { Cell::new(false) };
}

/// Logical cores this process may use (cached: the lookup walks cgroup state on Linux).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The most workers [`set_num_threads`] accepts: far more than any machine benefits from (16
/// per core, at least 256), small enough that building a pool takes milliseconds.
pub fn max_threads() -> usize {
    (16 * cores()).max(256)
}

/// The global pool's width (building the pool if nothing has yet).
pub fn global_width() -> usize {
    *GLOBAL_WIDTH.get_or_init(|| {
        if rayon::current_thread_index().is_none() {
            rayon::current_num_threads()
        } else {
            // On a worker of some other pool, `current_num_threads` reports that pool; a
            // fresh thread sees the global one.
            std::thread::spawn(rayon::current_num_threads)
                .join()
                .unwrap_or(1)
        }
    })
}

/// The worker count the host asks for: `RAYON_NUM_THREADS` if it holds a count, else the first
/// entry of `OMP_NUM_THREADS` (it may list one count per nesting level, `"4,2"`), else `None`
/// (the machine's width). `RAYON_NUM_THREADS=0` means rayon's automatic width, so it stops the
/// search; a value that is not a count is skipped, as rayon skips it.
pub fn width_from_environment() -> Option<(usize, &'static str)> {
    width_from(|name| std::env::var(name).ok())
}

fn width_from(var: impl Fn(&str) -> Option<String>) -> Option<(usize, &'static str)> {
    for name in ["RAYON_NUM_THREADS", "OMP_NUM_THREADS"] {
        let Some(text) = var(name) else { continue };
        let first = text.split(',').next().unwrap_or("").trim();
        match first.parse::<usize>() {
            Ok(0) if name == "RAYON_NUM_THREADS" => return None,
            Ok(n) if n >= 1 => return Some((n.min(max_threads()), name)),
            _ => continue,
        }
    }
    None
}

/// Start-up: build the global pool at `width` (when given and nothing built it yet). If it
/// was already built at another width, `width` becomes the requested count instead, so the
/// host's wish holds either way. Returns the resulting count.
pub fn init(width: Option<usize>) -> usize {
    if let Some(n) = width {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
        let requested = if n == global_width() { 0 } else { n };
        STARTUP.store(requested, Ordering::Relaxed);
        REQUESTED.store(requested, Ordering::Relaxed);
        if requested != 0 {
            let _ = pool_for(requested);
        }
    }
    num_threads()
}

/// The worker count calls use now.
pub fn num_threads() -> usize {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => global_width(),
        n => n,
    }
}

/// Use `n` workers from now on (calls already running keep theirs). `n` must be in
/// `1..=max_threads()`; a pool of that width is built here unless the global pool has it.
pub fn set_num_threads(n: usize) -> Result<(), String> {
    let max = max_threads();
    if n == 0 || n > max {
        return Err(format!(
            "num_threads must be between 1 and {max} (16 per core, at least 256), got {n}"
        ));
    }
    let requested = if n == global_width() { 0 } else { n };
    if requested != 0 {
        pool_for(requested)?;
    }
    REQUESTED.store(requested, Ordering::Relaxed);
    Ok(())
}

/// Back to the count chosen at start-up (the environment's, or the machine's width).
pub fn reset_num_threads() {
    REQUESTED.store(STARTUP.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Whether parallel kernels must stay on the calling thread: the count is 1.
#[inline]
pub fn serial_only() -> bool {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => GLOBAL_WIDTH.get().map_or_else(global_width, |w| *w) == 1,
        n => n == 1,
    }
}

/// The most workers a product may use when that is below the core count (gemmkit sizes its
/// own pools from the core count), `None` when gemmkit's automatic width may stand.
#[inline]
pub fn product_width_cap() -> Option<usize> {
    let n = num_threads();
    (n < cores()).then_some(n)
}

/// Whether this thread runs the top of an [`install`]ed call (a pool worker that is not yet
/// inside a parallel region).
#[inline]
pub fn at_entry_root() -> bool {
    ENTRY_ROOT.with(Cell::get)
}

fn pool_for(n: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(i) = pools.iter().position(|p| p.current_num_threads() == n) {
        let pool = pools.remove(i);
        pools.push(Arc::clone(&pool));
        return Ok(pool);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("rustyml-{i}"))
        .build()
        .map_err(|e| format!("cannot start a pool of {n} threads: {e}"))?;
    let pool = Arc::new(pool);
    pools.push(Arc::clone(&pool));
    if pools.len() > POOL_CACHE {
        // a call still running in it keeps its own reference; the threads end after it
        pools.remove(0);
    }
    Ok(pool)
}

/// Run one whole native call with the current worker count: inline when the global pool has
/// that width or the caller already is a rayon worker; otherwise inside a pool of that width.
/// Never wait for a lock inside `f` that another caller may hold while it waits for the pool
/// (see the module docs).
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let n = REQUESTED.load(Ordering::Relaxed);
    if n == 0 || rayon::current_thread_index().is_some() || n == global_width() {
        return f();
    }
    let Ok(pool) = pool_for(n) else {
        return f();
    };
    pool.install(|| {
        struct Root(bool);
        impl Drop for Root {
            fn drop(&mut self) {
                ENTRY_ROOT.with(|r| r.set(self.0));
            }
        }
        let _root = Root(ENTRY_ROOT.with(|r| r.replace(true)));
        f()
    })
}

/// Test helper: the largest number of threads seen working at once in a parallel loop of
/// `items` run under [`install`]. Each item waits (at most `wait`) until `target` items run at
/// once, so with `target` workers available the peak reaches it without racing a sleep; the
/// peak can never exceed the workers the call really has.
pub fn peak_workers(items: usize, target: usize, wait: std::time::Duration) -> usize {
    use rayon::prelude::*;
    use std::time::Instant;
    let running = AtomicUsize::new(0);
    let peak = AtomicUsize::new(0);
    let item = |_| {
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(now, Ordering::SeqCst);
        let start = Instant::now();
        // once `target` ran together the question is answered: later items do not wait
        while running.load(Ordering::SeqCst) < target
            && peak.load(Ordering::SeqCst) < target
            && start.elapsed() < wait
        {
            std::thread::yield_now();
        }
        peak.fetch_max(running.load(Ordering::SeqCst), Ordering::SeqCst);
        running.fetch_sub(1, Ordering::SeqCst);
    };
    install(|| {
        if serial_only() {
            (0..items).for_each(item);
        } else {
            (0..items).into_par_iter().with_max_len(1).for_each(item);
        }
    });
    peak.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests here change the process-wide count: one at a time.
    static LOCK: Mutex<()> = Mutex::new(());

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn rayon_variable_first_then_omp_first_level() {
        assert_eq!(
            width_from(env(&[("RAYON_NUM_THREADS", "3"), ("OMP_NUM_THREADS", "1")])),
            Some((3, "RAYON_NUM_THREADS"))
        );
        assert_eq!(
            width_from(env(&[("OMP_NUM_THREADS", " 4,2")])),
            Some((4, "OMP_NUM_THREADS"))
        );
        // rayon's own "automatic" stops the search; junk is skipped as rayon skips it
        assert_eq!(
            width_from(env(&[("RAYON_NUM_THREADS", "0"), ("OMP_NUM_THREADS", "1")])),
            None
        );
        assert_eq!(
            width_from(env(&[
                ("RAYON_NUM_THREADS", "many"),
                ("OMP_NUM_THREADS", "2")
            ])),
            Some((2, "OMP_NUM_THREADS"))
        );
        assert_eq!(width_from(env(&[("OMP_NUM_THREADS", "0")])), None);
        assert_eq!(width_from(env(&[])), None);
    }

    #[test]
    fn the_count_can_change_any_time_and_caps_the_workers() {
        let _guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        let wait = std::time::Duration::from_secs(5);
        let before = num_threads();
        set_num_threads(1).unwrap();
        assert!(serial_only());
        assert_eq!(num_threads(), 1);
        assert_eq!(peak_workers(64, 2, std::time::Duration::from_millis(50)), 1);
        // a width the global pool does not have: a pool of exactly that width
        let odd = global_width() + 1;
        set_num_threads(odd).unwrap();
        assert!(!serial_only());
        assert_eq!(install(rayon::current_num_threads), odd);
        assert_eq!(peak_workers(4 * odd, odd, wait), odd);
        assert!(install(at_entry_root));
        assert!(!at_entry_root());
        assert!(set_num_threads(0).is_err());
        assert!(set_num_threads(max_threads() + 1).is_err());
        assert_eq!(num_threads(), odd, "a refused count changes nothing");
        reset_num_threads();
        assert_eq!(num_threads(), before);
    }

    #[test]
    fn one_worker_makes_every_gate_serial() {
        let _guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        let gate = crate::gate::all_gates()[0];
        crate::gate::with_gate(gate, 0, || {
            if global_width() > 1 {
                assert!(gate.allows_parallel(usize::MAX - 1));
            }
            set_num_threads(1).unwrap();
            let allowed = gate.allows_parallel(usize::MAX - 1);
            reset_num_threads();
            assert!(!allowed);
        });
    }
}
