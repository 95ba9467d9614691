//! The generator scikit-learn's liblinear fork draws its coordinate orders from: the C++
//! standard's 32-bit Mersenne Twister (`std::mt19937`, whose algorithm and constants the
//! standard fixes) and Lemire's multiply-shift draw below a bound, with the rejection step
//! scikit-learn's `newrand.h` uses.

const STATE_WORDS: usize = 624;
const SHIFT_WORDS: usize = 397;
const TWIST_MATRIX: u32 = 0x9908_b0df;
const UPPER_BIT: u32 = 0x8000_0000;
const LOWER_BITS: u32 = 0x7fff_ffff;
const INIT_MULTIPLIER: u32 = 1_812_433_253;

/// The seed a default-constructed `std::mt19937` starts from.
pub const DEFAULT_SEED: u32 = 5489;

/// A 32-bit Mersenne Twister, draw for draw `std::mt19937`.
#[derive(Clone)]
pub struct MersenneTwister {
    state: [u32; STATE_WORDS],
    next: usize,
}

impl MersenneTwister {
    /// The generator after `seed(seed)`.
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; STATE_WORDS];
        state[0] = seed;
        for k in 1..STATE_WORDS {
            let prev = state[k - 1];
            state[k] = INIT_MULTIPLIER
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(k as u32);
        }
        Self {
            state,
            next: STATE_WORDS,
        }
    }

    /// Regenerates the whole state block (the twist), as the standard's transition defines it.
    fn regenerate(&mut self) {
        for k in 0..STATE_WORDS {
            let mixed =
                (self.state[k] & UPPER_BIT) | (self.state[(k + 1) % STATE_WORDS] & LOWER_BITS);
            let mut word = self.state[(k + SHIFT_WORDS) % STATE_WORDS] ^ (mixed >> 1);
            if mixed & 1 == 1 {
                word ^= TWIST_MATRIX;
            }
            self.state[k] = word;
        }
        self.next = 0;
    }

    /// The next 32-bit output (tempered).
    pub fn next_u32(&mut self) -> u32 {
        if self.next >= STATE_WORDS {
            self.regenerate();
        }
        let mut y = self.state[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// A draw in `0..bound` (`bound >= 1`): the high word of `x * bound`, redrawing while the
    /// low word falls below `2^32 mod bound` (so every value is equally likely). A bound of 1
    /// still consumes one output, as liblinear's shuffle does.
    pub fn below(&mut self, bound: u32) -> u32 {
        let mut product = u64::from(self.next_u32()) * u64::from(bound);
        if (product as u32) < bound {
            // 2^32 mod bound, reduced with at most two subtractions before the division
            let mut threshold = bound.wrapping_neg();
            if threshold >= bound {
                threshold -= bound;
                if threshold >= bound {
                    threshold %= bound;
                }
            }
            while (product as u32) < threshold {
                product = u64::from(self.next_u32()) * u64::from(bound);
            }
        }
        (product >> 32) as u32
    }

    /// liblinear's shuffle of the coordinates a pass visits (the active prefix of its index):
    /// position `k` swaps with a draw in `k..len`, front to back.
    pub fn shuffle(&mut self, index: &mut [usize]) {
        let len = index.len();
        for k in 0..len {
            let pick = k + self.below((len - k) as u32) as usize;
            index.swap(k, pick);
        }
    }
}
