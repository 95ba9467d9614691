//! This machine's peak fused multiply-add rate: the roofline every product is measured against.
//!
//!     cargo bench --bench fma_peak [-- THREADS]      (or: rustc -O benches/fma_peak.rs)
//!
//! Each worker runs independent FMA chains on registers only (no memory traffic): enough
//! accumulators to cover the FMA latency on every x86-64 core we target (4 cycles, 2 ports:
//! 8 in flight; 12 are used), for the widest vectors the CPU has (AVX-512 when present, else
//! AVX2). Prints GFLOP/s per precision for one worker and for THREADS workers (default: the
//! logical CPUs this process may use), best of five runs of about 0.2 s each. Std only, so it
//! builds with plain `rustc` on a machine without the crate's dependencies.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// FMAs per accumulator per call; each call is about 0.1-0.3 s on a 2-5 GHz core.
const ITERS: u64 = 40_000_000;
const CHAINS: usize = 12;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Avx512F32,
    Avx512F64,
    Avx2F32,
    Avx2F64,
}

impl Kind {
    fn lanes(self) -> u64 {
        match self {
            Kind::Avx512F32 => 16,
            Kind::Avx512F64 | Kind::Avx2F32 => 8,
            Kind::Avx2F64 => 4,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Avx512F32 => "f32, AVX-512",
            Kind::Avx512F64 => "f64, AVX-512",
            Kind::Avx2F32 => "f32, AVX2",
            Kind::Avx2F64 => "f64, AVX2",
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    macro_rules! fma_chains {
        ($name:ident, $feature:literal, $vec:ty, $set1:ident, $fma:ident, $add:ident, $cvt:expr) => {
            #[target_feature(enable = $feature)]
            pub unsafe fn $name(iters: u64, seed: f64) -> f64 {
                let mut acc: [$vec; super::CHAINS] = [$set1(seed as _); super::CHAINS];
                let a = $set1(0.999_999 as _);
                let b = $set1(1e-7 as _);
                for _ in 0..iters {
                    // unrolled by the compiler over the 12 independent chains
                    for x in acc.iter_mut() {
                        *x = $fma(*x, a, b);
                    }
                }
                let mut s = acc[0];
                for x in &acc[1..] {
                    s = $add(s, *x);
                }
                $cvt(s)
            }
        };
    }

    fma_chains!(
        avx512_f32,
        "avx512f",
        __m512,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_add_ps,
        |s| _mm512_reduce_add_ps(s) as f64
    );
    fma_chains!(
        avx512_f64,
        "avx512f",
        __m512d,
        _mm512_set1_pd,
        _mm512_fmadd_pd,
        _mm512_add_pd,
        |s| _mm512_reduce_add_pd(s)
    );
    fma_chains!(
        avx2_f32,
        "avx2,fma",
        __m256,
        _mm256_set1_ps,
        _mm256_fmadd_ps,
        _mm256_add_ps,
        |s| {
            let mut out = [0f32; 8];
            _mm256_storeu_ps(out.as_mut_ptr(), s);
            out.iter().map(|&v| v as f64).sum::<f64>()
        }
    );
    fma_chains!(
        avx2_f64,
        "avx2,fma",
        __m256d,
        _mm256_set1_pd,
        _mm256_fmadd_pd,
        _mm256_add_pd,
        |s| {
            let mut out = [0f64; 4];
            _mm256_storeu_pd(out.as_mut_ptr(), s);
            out.iter().sum::<f64>()
        }
    );
}

#[cfg(target_arch = "x86_64")]
fn run_kind(kind: Kind, iters: u64) -> f64 {
    let seed = black_box(1.0);
    // SAFETY: `kinds()` lists a kind only when the CPU reports its features.
    unsafe {
        match kind {
            Kind::Avx512F32 => kernels::avx512_f32(iters, seed),
            Kind::Avx512F64 => kernels::avx512_f64(iters, seed),
            Kind::Avx2F32 => kernels::avx2_f32(iters, seed),
            Kind::Avx2F64 => kernels::avx2_f64(iters, seed),
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn kinds() -> Vec<Kind> {
    let mut out = Vec::new();
    if is_x86_feature_detected!("avx512f") {
        out.extend([Kind::Avx512F32, Kind::Avx512F64]);
    }
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        out.extend([Kind::Avx2F32, Kind::Avx2F64]);
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
fn kinds() -> Vec<Kind> {
    Vec::new()
}

#[cfg(not(target_arch = "x86_64"))]
fn run_kind(_: Kind, _: u64) -> f64 {
    unreachable!()
}

/// GFLOP/s of `workers` threads running `kind` at once (wall time of the slowest).
fn gflops(kind: Kind, workers: usize) -> f64 {
    let barrier = Arc::new(Barrier::new(workers + 1));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                black_box(run_kind(kind, ITERS));
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for h in handles {
        h.join().expect("worker");
    }
    let secs = start.elapsed().as_secs_f64();
    let flops = 2.0 * (ITERS * CHAINS as u64 * kind.lanes() * workers as u64) as f64;
    flops / secs / 1e9
}

/// `rustyml::tuning::host::cpu_model`, restated: this file must build without the crate.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn main() {
    let threads = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("CPU: {}; workers: 1 and {threads}", cpu_model());
    println!("| precision, vectors | 1 worker (GFLOP/s) | {threads} workers (GFLOP/s) |");
    println!("|---|---:|---:|");
    for kind in kinds() {
        black_box(run_kind(kind, ITERS / 4)); // wake the core up to its vector clock
        let best = |w: usize| (0..5).map(|_| gflops(kind, w)).fold(0.0, f64::max);
        println!(
            "| {} | {:.1} | {:.1} |",
            kind.label(),
            best(1),
            best(threads)
        );
    }
}
