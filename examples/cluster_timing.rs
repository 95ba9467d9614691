//! Times KMeans, DBSCAN and MeanShift fits on the shapes of the speed goals (data written by
//! `python` beforehand as raw little-endian f64 files: `/tmp/ct/<name>.f64`, shape in the name).
//!
//! `cargo run --release --example cluster_timing -- <file> <rows> <cols> <model>`

use ndarray::Array2;
use rustyml::machine_learning::{KMeans, MeanShift, NInit, DBSCAN};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).expect("data file");
    let (n, d): (usize, usize) = (args[2].parse().unwrap(), args[3].parse().unwrap());
    let values: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let x = Array2::from_shape_vec((n, d), values).unwrap();
    let reps: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(5);
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        let summary = match args[4].as_str() {
            "kmeans" => {
                let mut km = KMeans::new(8)
                    .with_random_state(Some(0))
                    .with_n_init(NInit::Runs(1));
                km.fit(&x).unwrap();
                let p = km.predict(&x).unwrap();
                format!(
                    "inertia {} n_iter {} label0 {}",
                    km.inertia().unwrap(),
                    km.n_iter().unwrap(),
                    p[0]
                )
            }
            "kmeans10" => {
                let mut km = KMeans::new(8)
                    .with_random_state(Some(0))
                    .with_n_init(NInit::Runs(10));
                km.fit(&x).unwrap();
                format!(
                    "inertia {} n_iter {}",
                    km.inertia().unwrap(),
                    km.n_iter().unwrap()
                )
            }
            "dbscan" => {
                let labels = DBSCAN::new(0.3, 10).fit_predict(&x).unwrap();
                let k = labels.iter().max().unwrap() + 1;
                format!(
                    "clusters {k} noise {}",
                    labels.iter().filter(|&&l| l < 0).count()
                )
            }
            "radius" => {
                let nb = rustyml::math::radius::radius_neighbourhoods(
                    x.view(),
                    0.3,
                    rustyml::math::distance::Metric::Euclidean,
                    10,
                )
                .unwrap();
                format!("pairs {}", nb.counts().iter().sum::<usize>())
            }
            "meanshift" => {
                let mut ms = MeanShift::new(None);
                ms.fit(&x).unwrap();
                format!(
                    "centers {} bw {}",
                    ms.cluster_centers().unwrap().nrows(),
                    ms.fitted_bandwidth().unwrap()
                )
            }
            other => panic!("unknown model {other}"),
        };
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if times.len() == 1 {
            println!("{summary}");
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "median {:.2} ms (min {:.2})",
        times[times.len() / 2],
        times[0]
    );
}
