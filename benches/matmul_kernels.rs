//! GFLOP/s of `math::matmul` products: forced serial, automatic, and forced worker counts,
//! over a shape ladder from tiny to 2048² (square and thin), next to ndarray's own `dot`.
//!
//! `cargo bench --bench matmul_kernels [-- f32|f64]`

use ndarray::{Array2, LinalgScalar};
use rustyml::math::matmul::{dot_par, Parallelism};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn best_secs(mut f: impl FnMut()) -> f64 {
    f();
    let budget = Duration::from_millis(300);
    let start = Instant::now();
    let mut best = f64::INFINITY;
    let mut runs = 0;
    while runs < 3 || (start.elapsed() < budget && runs < 1000) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    best
}

fn ladder<T>(name: &str)
where
    T: gemmkit_ndarray::GemmScalar + LinalgScalar + From<f32>,
{
    let shapes: &[(usize, usize, usize, &str)] = &[
        (8, 8, 8, "tiny"),
        (32, 32, 32, "small"),
        (64, 64, 64, "square"),
        (128, 128, 128, "square"),
        (256, 256, 256, "square"),
        (512, 512, 512, "square"),
        (1024, 1024, 1024, "square"),
        (2048, 2048, 2048, "square"),
        (4096, 64, 64, "thin (tall m)"),
        (2048, 16, 2048, "shallow k"),
        (64, 4096, 64, "deep k"),
        (8192, 256, 8, "thin (narrow n)"),
    ];
    let workers = [2usize, 4, 8];
    println!(
        "\n## {name} products (GFLOP/s, best of repeated runs; {} rayon threads)\n",
        rayon::current_num_threads()
    );
    print!("| m x k x n | kind | serial | auto |");
    for w in workers {
        print!(" {w} workers |");
    }
    println!(" ndarray dot | auto / ndarray |");
    print!("|---|---|---:|---:|");
    for _ in workers {
        print!("---:|");
    }
    println!("---:|---:|");
    for &(m, k, n, kind) in shapes {
        let a = Array2::<T>::from_shape_fn((m, k), |(i, j)| {
            T::from(((i * 7 + j * 3) % 17) as f32 / 17.0)
        });
        let b = Array2::<T>::from_shape_fn((k, n), |(i, j)| {
            T::from(((i * 5 + j * 11) % 13) as f32 / 13.0)
        });
        let flops = 2.0 * (m * k * n) as f64;
        let gf = |secs: f64| flops / secs / 1e9;
        let serial = best_secs(|| {
            black_box(dot_par(a.view(), b.view(), Parallelism::Serial).unwrap());
        });
        let auto = best_secs(|| {
            black_box(dot_par(a.view(), b.view(), Parallelism::Rayon(0)).unwrap());
        });
        print!(
            "| {m} x {k} x {n} | {kind} | {:.1} | {:.1} |",
            gf(serial),
            gf(auto)
        );
        for w in workers {
            let t = best_secs(|| {
                black_box(dot_par(a.view(), b.view(), Parallelism::Rayon(w)).unwrap());
            });
            print!(" {:.1} |", gf(t));
        }
        let nd = best_secs(|| {
            black_box(a.dot(&b));
        });
        println!(" {:.1} | {:.2}x |", gf(nd), nd / auto);
    }
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.as_deref().is_none_or(|f| f == "f64") {
        ladder::<f64>("f64");
    }
    if filter.as_deref().is_none_or(|f| f == "f32") {
        ladder::<f32>("f32");
    }
}
