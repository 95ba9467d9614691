//! `exp`, `tanh` and `sigmoid` for f32 activations, written with plain adds, multiplies,
//! divides and bit operations only: no libm call and no fused multiply-add, so every loop
//! over them vectorises and every x86-64 host (SSE2, AVX2 or AVX-512 build, any glibc) gets
//! the same bits. Accuracy: within a few f32 ulps of the correctly rounded value (tested
//! against f64 over dense sweeps).

/// `e^x`: Cody-Waite reduction `x = k ln 2 + r`, `|r| <= ln 2 / 2`, a degree-7 Taylor
/// polynomial for `e^r` (truncation below `1e-9` relative), and `2^k` from exponent bits.
/// Below -87.3 the result is 0 (no subnormals), above 88.7 infinity; NaN stays NaN.
#[inline]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that k * LN2_HI is exact for |k| < 2^9
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // adding and removing 1.5 * 2^23 rounds to the nearest integer (ties to even) without
    // a rounding instruction, which baseline SSE2 lacks
    const SHIFTER: f32 = 12_582_912.0;
    let clamped = x.clamp(-87.3, 88.7);
    let shifted = clamped * LOG2E + SHIFTER;
    let k = shifted - SHIFTER;
    let r = (clamped - k * LN2_HI) - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2^k as two normal powers of two (k spans -126..=128, beyond one exponent field). k is
    // read off the low mantissa bits of `shifted` (one ulp there is 1): a float-to-int `as`
    // saturates and checks for NaN lane by lane, which keeps the loop from vectorising.
    let k = shifted.to_bits() as i32 - SHIFTER.to_bits() as i32;
    let half = k >> 1;
    let scale_a = f32::from_bits(((half + 127) as u32) << 23);
    let scale_b = f32::from_bits(((k - half + 127) as u32) << 23);
    let y = p * scale_a * scale_b;
    if x > 88.7 {
        f32::INFINITY
    } else if x < -87.3 {
        0.0
    } else if x.is_nan() {
        x
    } else {
        y
    }
}

/// The logistic function, `1 / (1 + e^-x)`, from the non-positive side of `exp` only (no
/// overflow; full precision near 0 and near 1).
#[inline]
pub fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    let positive = 1.0 / (1.0 + e);
    let negative = e / (1.0 + e);
    if x >= 0.0 {
        positive
    } else if x < 0.0 {
        negative
    } else {
        x // NaN
    }
}

/// `tanh x`: its odd Taylor series through `x^13` below |x| = 0.4 (truncation below 2e-9
/// relative), else `(1 - t) / (1 + t)` with `t = e^(-2|x|)`, sign restored.
#[inline]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let series = x
        * (1.0
            + z * (-1.0 / 3.0
                + z * (2.0 / 15.0
                    + z * (-17.0 / 315.0
                        + z * (62.0 / 2835.0
                            + z * (-1382.0 / 155_925.0 + z * (21844.0 / 6_081_075.0)))))));
    let t = exp(-2.0 * a);
    let magnitude = (1.0 - t) / (1.0 + t);
    let far = if x < 0.0 { -magnitude } else { magnitude };
    if a < 0.4 {
        series
    } else if a >= 0.4 {
        far
    } else {
        x // NaN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in f32 ulps between `got` and the f64 reference rounded to f32.
    fn ulps(got: f32, want: f64) -> u32 {
        let want = want as f32;
        if got == want {
            return 0;
        }
        let key = |v: f32| {
            let b = v.to_bits() as i64;
            if b < 0x8000_0000 {
                b
            } else {
                0x8000_0000 - b
            }
        };
        (key(got) - key(want)).unsigned_abs() as u32
    }

    fn sweep(lo: f32, hi: f32, n: usize) -> impl Iterator<Item = f32> {
        (0..=n).map(move |i| lo + (hi - lo) * i as f32 / n as f32)
    }

    #[test]
    fn exp_is_within_a_few_ulps_of_the_f64_value() {
        let worst = sweep(-87.0, 88.5, 400_000)
            .map(|x| ulps(exp(x), (x as f64).exp()))
            .max()
            .unwrap();
        assert!(worst <= 4, "worst {worst} ulps");
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(100.0), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_and_sigmoid_are_within_a_few_ulps_and_keep_their_limits() {
        let worst_tanh = sweep(-12.0, 12.0, 400_000)
            .chain(sweep(-1e-3, 1e-3, 10_000))
            .filter(|x| *x != 0.0)
            .map(|x| ulps(tanh(x), (x as f64).tanh()))
            .max()
            .unwrap();
        assert!(worst_tanh <= 4, "tanh worst {worst_tanh} ulps");
        let worst_sigmoid = sweep(-80.0, 80.0, 400_000)
            .map(|x| ulps(sigmoid(x), 1.0 / (1.0 + (-(x as f64)).exp())))
            .max()
            .unwrap();
        assert!(worst_sigmoid <= 4, "sigmoid worst {worst_sigmoid} ulps");
        assert_eq!(tanh(30.0), 1.0);
        assert_eq!(tanh(-30.0), -1.0);
        assert_eq!(sigmoid(100.0), 1.0);
        assert_eq!(sigmoid(-200.0), 0.0);
        assert!(tanh(f32::NAN).is_nan() && sigmoid(f32::NAN).is_nan());
        assert_eq!(tanh(-0.0).to_bits(), (-0.0f32).to_bits());
    }
}
