//! Run-time instruction-set dispatch for loops the compiler vectorises itself.
//!
//! The crate builds for baseline x86-64 (SSE2) so one wheel runs everywhere. [`widest_isa!`]
//! compiles a loop a second and third time with AVX-512 or AVX2 enabled and picks the widest
//! the CPU has. FMA is never enabled and Rust never contracts `a * b + c` on its own, so every
//! instantiation rounds the same operations the same way: the instruction set changes the
//! speed, never a result.

/// `widest_isa!(fn name(arg: Type, ...) => inner)` defines `fn name` that calls
/// `inner(arg, ...)` (an `#[inline(always)]` function, so it compiles into each wrapper)
/// under the widest of AVX-512F, AVX2 or the baseline that the running CPU supports.
macro_rules! widest_isa {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident : $ty:ty),* $(,)?) => $inner:path) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                unsafe fn avx512($($arg: $ty),*) {
                    $inner($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) {
                    $inner($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F, checked just above.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $inner($($arg),*)
        }
    };
}
pub(crate) use widest_isa;
