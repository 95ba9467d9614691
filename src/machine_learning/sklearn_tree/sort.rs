//! scikit-learn's `simultaneous_sort` with three-way partitions (an introsort: median-of-three
//! quicksort, heapsort past `2 log2(n)` levels, insertion sort below 16 values). It is not
//! stable, so the order it leaves among equal values is part of what a replica must repeat:
//! the splitter sorts the node's samples in place feature after feature, and the last order
//! is the one its partition, and so every later sum, starts from.

/// Sorts `values` ascending and applies the same moves to `indices`.
pub(super) fn simultaneous_sort(values: &mut [f32], indices: &mut [usize]) {
    let n = values.len();
    if n == 0 {
        return;
    }
    if n > TIE_FREE_MIN && sort_if_tie_free(values, indices) {
        return;
    }
    let max_depth = 2 * ((n as f64).log2() as isize);
    introsort(values, indices, max_depth);
}

/// Below this many values the introsort is an insertion sort, as fast as any other.
const TIE_FREE_MIN: usize = 16;

/// Where no two values are equal, every sort leaves one order: the introsort's. This sorts
/// the values by a faster sort (of integer keys: each value's order-preserving bits above
/// its position) and keeps the result only if no two values were equal (`-0.0` counts as
/// equal to `0.0`, as the introsort compares them); otherwise, or with a NaN, nothing is
/// moved and it returns false, leaving the order among equal values to the introsort.
fn sort_if_tie_free(values: &mut [f32], indices: &mut [usize]) -> bool {
    let n = values.len();
    if u32::try_from(n).is_err() {
        return false;
    }
    let mut keys = Vec::with_capacity(n);
    for (position, &v) in values.iter().enumerate() {
        if v.is_nan() {
            return false;
        }
        keys.push((u64::from(order_bits(v)) << 32) | position as u64);
    }
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] >> 32 == w[1] >> 32) {
        return false;
    }
    let (old_values, old_indices) = (values.to_vec(), indices.to_vec());
    for (slot, key) in keys.into_iter().enumerate() {
        let position = (key & u64::from(u32::MAX)) as usize;
        values[slot] = old_values[position];
        indices[slot] = old_indices[position];
    }
    true
}

/// Bits of a non-NaN `v` whose unsigned order is the values' order (`-0.0` taken as `0.0`).
fn order_bits(v: f32) -> u32 {
    let bits = if v == 0.0 { 0 } else { v.to_bits() };
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

fn introsort(mut values: &mut [f32], mut indices: &mut [usize], mut max_depth: isize) {
    while values.len() > 15 {
        if max_depth <= 0 {
            heapsort(values, indices);
            return;
        }
        max_depth -= 1;
        let pivot = median3(values);
        let (mut i, mut l, mut r) = (0, 0, values.len());
        while i < r {
            if values[i] < pivot {
                values.swap(i, l);
                indices.swap(i, l);
                i += 1;
                l += 1;
            } else if values[i] > pivot {
                r -= 1;
                values.swap(i, r);
                indices.swap(i, r);
            } else {
                i += 1;
            }
        }
        // values[..l] < pivot, values[l..r] == pivot, values[r..] > pivot
        let (low_values, rest_values) = std::mem::take(&mut values).split_at_mut(r);
        let (low_indices, rest_indices) = std::mem::take(&mut indices).split_at_mut(r);
        introsort(&mut low_values[..l], &mut low_indices[..l], max_depth);
        values = rest_values;
        indices = rest_indices;
    }
    insertion_sort(values, indices);
}

/// Bentley and McIlroy's median of the first, middle and last values.
fn median3(values: &[f32]) -> f32 {
    let n = values.len();
    let (a, b, c) = (values[0], values[n / 2], values[n - 1]);
    if a < b {
        if b < c {
            b
        } else if a < c {
            c
        } else {
            a
        }
    } else if b < c {
        if a < c {
            a
        } else {
            c
        }
    } else {
        b
    }
}

fn heapsort(values: &mut [f32], indices: &mut [usize]) {
    let n = values.len();
    let mut start = (n as isize - 2) / 2;
    loop {
        sift_down(values, indices, start.max(0) as usize, n);
        if start <= 0 {
            break;
        }
        start -= 1;
    }
    let mut end = n - 1;
    while end > 0 {
        values.swap(0, end);
        indices.swap(0, end);
        sift_down(values, indices, 0, end);
        end -= 1;
    }
}

/// Restores the heap order of `values[start..end]` by moving the largest value to `start`.
fn sift_down(values: &mut [f32], indices: &mut [usize], start: usize, end: usize) {
    let mut root = start;
    loop {
        let child = root * 2 + 1;
        let mut max = root;
        if child < end && values[max] < values[child] {
            max = child;
        }
        if child + 1 < end && values[max] < values[child + 1] {
            max = child + 1;
        }
        if max == root {
            return;
        }
        values.swap(root, max);
        indices.swap(root, max);
        root = max;
    }
}

fn insertion_sort(values: &mut [f32], indices: &mut [usize]) {
    for i in 1..values.len() {
        let (value, index) = (values[i], indices[i]);
        let mut j = i;
        while j > 0 && values[j - 1] > value {
            values[j] = values[j - 1];
            indices[j] = indices[j - 1];
            j -= 1;
        }
        values[j] = value;
        indices[j] = index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values with many repeats, long enough to reach the quicksort, the heapsort fallback
    /// (a sawtooth defeats the median of three) and the insertion sort.
    fn cases() -> Vec<Vec<f32>> {
        let mut state = 12345u64;
        let mut random = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % m) as f32
        };
        vec![
            (0..10).map(|_| random(4)).collect(),
            (0..200).map(|_| random(7)).collect(),
            (0..1000).map(|_| random(1000)).collect(),
            (0..513).map(|i| (i % 17) as f32).collect(),
            (0..300).rev().map(|i| i as f32).collect(),
            vec![],
        ]
    }

    #[test]
    fn sorts_and_carries_the_indices_along() {
        for values in cases() {
            let mut sorted = values.clone();
            let mut indices: Vec<usize> = (0..values.len()).collect();
            simultaneous_sort(&mut sorted, &mut indices);
            assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
            for (v, &i) in sorted.iter().zip(&indices) {
                assert_eq!(*v, values[i]);
            }
            let mut seen = indices.clone();
            seen.sort_unstable();
            assert!(seen.iter().copied().eq(0..values.len()));
        }
    }

    #[test]
    fn tie_free_values_take_the_fast_sort_and_the_introsorts_order() {
        // distinct values (negative, zero, positive, subnormal, infinite): the fast sort
        // answers, with the order the introsort gives
        let mut state = 99u64;
        let mut distinct: Vec<f32> = (0..3000)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 - 8_388_608.0) * 1e-3 + i as f32 * 1e-9
            })
            .collect();
        distinct.sort_by(f32::total_cmp);
        distinct.dedup();
        distinct.retain(|v| v.abs() > 1e-30); // room for the special values below
        distinct.extend([0.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-40]);
        let mut state = 7u64;
        for i in (1..distinct.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            distinct.swap(i, (state >> 33) as usize % (i + 1));
        }
        let mut fast = distinct.clone();
        let mut fast_indices: Vec<usize> = (0..fast.len()).map(|i| i * 3).collect();
        assert!(sort_if_tie_free(&mut fast, &mut fast_indices));
        let mut replica = distinct.clone();
        let mut replica_indices: Vec<usize> = (0..replica.len()).map(|i| i * 3).collect();
        let max_depth = 2 * ((replica.len() as f64).log2() as isize);
        introsort(&mut replica, &mut replica_indices, max_depth);
        assert_eq!(fast, replica);
        assert_eq!(fast_indices, replica_indices);
        // a tie (-0.0 and 0.0 among them) or a NaN: nothing moved, the introsort decides
        for spoiler in [distinct[5], -0.0, f32::NAN] {
            let mut tied = distinct.clone();
            tied.push(spoiler);
            let before = tied.clone();
            let mut indices: Vec<usize> = (0..tied.len()).collect();
            assert!(!sort_if_tie_free(&mut tied, &mut indices));
            assert!(tied
                .iter()
                .zip(&before)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
            assert!(indices.iter().copied().eq(0..tied.len()));
        }
    }

    #[test]
    fn the_heapsort_fallback_sorts() {
        let values: Vec<f32> = (0..100).map(|i| ((i * 37) % 101) as f32).collect();
        let mut sorted = values.clone();
        let mut indices: Vec<usize> = (0..values.len()).collect();
        heapsort(&mut sorted, &mut indices);
        assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        assert!(indices.iter().zip(&sorted).all(|(&i, v)| values[i] == *v));
    }
}
