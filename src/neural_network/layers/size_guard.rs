//! Size checks done before a layer allocates.
//!
//! Rust aborts the process when an allocation fails (`memory allocation of N bytes failed`),
//! and ndarray panics on a shape whose element count overflows `isize`. A layer asked for
//! weights or an output that cannot exist therefore checks the size first: the element count
//! by checked multiplication, the bytes against half the machine's physical memory (one array
//! larger than that leaves no room for its gradient, optimizer state or the next layer's
//! output). Either failure is an `InvalidParameter` naming the layer and the bytes, never an
//! abort or a panic.

use crate::error::{Error, Result};
use std::sync::OnceLock;

/// The machine's physical memory in bytes (`/proc/meminfo`'s MemTotal on Linux); where it
/// cannot be read, 1 TiB, which still refuses the sizes that could never be allocated.
pub fn physical_memory_bytes() -> u64 {
    static TOTAL: OnceLock<u64> = OnceLock::new();
    *TOTAL.get_or_init(|| read_mem_total().unwrap_or(1 << 40))
}

fn read_mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The most bytes one array may take: half the machine's physical memory.
pub fn array_byte_limit() -> u64 {
    (physical_memory_bytes() / 2).min(isize::MAX as u64)
}

/// The product of `dims`, or `None` when it overflows `usize`.
pub fn checked_product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Human-readable bytes: `4.00e12 bytes (3.6 TiB)`.
pub fn describe_bytes(bytes: u128) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 1024.0 {
        format!("{bytes} bytes ({:.1} TiB)", gib / 1024.0)
    } else {
        format!("{bytes} bytes ({gib:.1} GiB)")
    }
}

/// The element count of an `f32` array of shape `dims` that `layer` is about to allocate
/// for `what` (its weights, its output): refused when the count overflows, when ndarray
/// could not index it (`isize::MAX` bytes), or when the bytes exceed [`array_byte_limit`].
pub fn check_f32_alloc(layer: &str, what: &str, dims: &[usize]) -> Result<usize> {
    check_alloc_bytes(layer, what, dims, std::mem::size_of::<f32>())
}

/// As [`check_f32_alloc`] for elements of `elem_bytes` bytes.
pub fn check_alloc_bytes(
    layer: &str,
    what: &str,
    dims: &[usize],
    elem_bytes: usize,
) -> Result<usize> {
    let exact: u128 = dims
        .iter()
        .try_fold(elem_bytes as u128, |acc, &d| acc.checked_mul(d as u128))
        .unwrap_or(u128::MAX);
    let limit = array_byte_limit() as u128;
    if exact > limit {
        let shown = if exact == u128::MAX {
            "more than 2^128 bytes".to_string()
        } else {
            describe_bytes(exact)
        };
        return Err(Error::invalid_parameter(
            layer,
            format!(
                "{layer}: {what} of shape {dims:?} would need {shown}, more than half of this machine's memory ({}); use smaller sizes",
                describe_bytes(physical_memory_bytes() as u128)
            ),
        ));
    }
    // exact <= isize::MAX, so the element count fits usize
    Ok(checked_product(dims).expect("bounded by the byte check"))
}

/// `a * b` for a size, or an `InvalidParameter` naming `layer` and `what`.
pub fn mul_size(layer: &str, what: &str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| overflow(layer, what))
}

/// `a + b` for a size, or an `InvalidParameter` naming `layer` and `what`.
pub fn add_size(layer: &str, what: &str, a: usize, b: usize) -> Result<usize> {
    a.checked_add(b).ok_or_else(|| overflow(layer, what))
}

fn overflow(layer: &str, what: &str) -> Error {
    Error::invalid_parameter(
        layer,
        format!("{layer}: {what} overflows the largest array size; use smaller sizes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_memory_or_isize_are_refused() {
        assert_eq!(check_f32_alloc("Dense", "kernel", &[3, 4]).unwrap(), 12);
        let e = check_f32_alloc("Dense", "kernel", &[1000, 1_000_000_000]).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("Dense") && msg.contains("4000000000000 bytes"),
            "{msg}"
        );
        assert!(check_f32_alloc("Dense", "kernel", &[1 << 62, 1]).is_err());
        assert!(check_f32_alloc("X", "y", &[usize::MAX, usize::MAX, 2]).is_err());
        assert!(mul_size("X", "y", usize::MAX, 2).is_err());
        assert!(add_size("X", "y", usize::MAX, 1).is_err());
    }

    #[test]
    fn physical_memory_is_positive() {
        assert!(physical_memory_bytes() > 0);
    }
}
