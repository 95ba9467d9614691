//! Seeding. Every random draw in the crate starts from [`resolve_seed`]: a model's own
//! `random_state` when it has one, else the next value of the thread-local global seed stream
//! (installed by [`set_global_seed`]), else fresh entropy. A seed then feeds a counter-free,
//! portable generator (ChaCha8), so a result never depends on the platform or the thread count.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;

thread_local! {
    static GLOBAL: RefCell<Option<ChaCha8Rng>> = const { RefCell::new(None) };
}

/// Installs a thread-local seeded stream used wherever no per-model `random_state` is set.
pub fn set_global_seed(seed: u64) {
    GLOBAL.with(|g| *g.borrow_mut() = Some(ChaCha8Rng::seed_from_u64(seed)));
}

/// Removes the thread-local global seed; unseeded draws use fresh entropy again.
pub fn clear_global_seed() {
    GLOBAL.with(|g| *g.borrow_mut() = None);
}

/// Whether a global seed is installed on this thread.
pub fn global_seed_is_set() -> bool {
    GLOBAL.with(|g| g.borrow().is_some())
}

/// The seed to use: `random_state` if given, else the next draw of the global stream, else
/// entropy.
pub fn resolve_seed(random_state: Option<u64>) -> u64 {
    if let Some(seed) = random_state {
        return seed;
    }
    GLOBAL.with(|g| match g.borrow_mut().as_mut() {
        Some(rng) => rng.next_u64(),
        None => rand::random::<u64>(),
    })
}

/// A portable generator seeded by [`resolve_seed`].
pub fn rng_from(random_state: Option<u64>) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(resolve_seed(random_state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_seed_makes_unseeded_draws_repeatable() {
        set_global_seed(42);
        let a = (resolve_seed(None), resolve_seed(None));
        set_global_seed(42);
        let b = (resolve_seed(None), resolve_seed(None));
        clear_global_seed();
        assert_eq!(a, b);
        assert_ne!(a.0, a.1);
        assert!(!global_seed_is_set());
    }

    #[test]
    fn explicit_state_wins_over_global_seed() {
        set_global_seed(1);
        assert_eq!(resolve_seed(Some(7)), 7);
        clear_global_seed();
    }
}
