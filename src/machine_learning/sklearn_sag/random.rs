//! The sample chooser of scikit-learn's sequential datasets: a 32-bit xorshift generator
//! (shifts 13, 17, 5) whose output is reduced to 31 bits, then taken modulo the number of
//! rows. One draw picks each SAG step's sample.

/// The largest value the generator returns, plus one (its outputs are reduced modulo this).
const OUTPUT_RANGE: u32 = 1 << 31;

/// scikit-learn's `rand_r` replacement over a 32-bit state.
#[derive(Clone, Debug)]
pub struct XorShiftSampler {
    state: u32,
}

impl XorShiftSampler {
    /// A generator over `seed`; a zero seed, which the xorshift would never leave, starts
    /// from one, as scikit-learn's datasets (and the generator itself) do.
    pub fn new(seed: u32) -> Self {
        Self { state: seed.max(1) }
    }

    /// The next 31-bit output.
    pub fn next_output(&mut self) -> u32 {
        if self.state == 0 {
            self.state = 1;
        }
        let mut s = self.state;
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        self.state = s;
        s % OUTPUT_RANGE
    }

    /// A row index below `n_rows` (at least one), the draw reduced modulo the count.
    pub fn next_row(&mut self, n_rows: usize) -> usize {
        // scikit-learn reduces the unsigned draw modulo the (int) row count.
        (self.next_output() % n_rows as u32) as usize
    }
}
