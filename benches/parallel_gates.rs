//! Calibration bench: time every gate's ladder serial and parallel, sweep gemmkit's product
//! knobs, print the markdown report and rewrite `calibrations/RESULTS.md`. The ladders live in
//! the crate (`rustyml::calibration`), shared with `python -m rustyml calibrate`.
//!
//! `cargo bench --bench parallel_gates --features calibration [-- [--quick] [FILTER]]`:
//! FILTER keeps the ladders (and the sweep) whose title contains it; a filtered or quick run
//! prints its report but leaves `calibrations/RESULTS.md` unchanged.

use rustyml::calibration::{run, Options};

fn main() {
    // cargo passes `--bench` to harness-less benches; other flags than --quick are ignored.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = Options {
        quick: args.iter().any(|a| a == "--quick"),
        filter: args.iter().find(|a| !a.starts_with('-')).cloned(),
        max_rungs: None,
    };
    let result = run(&options, &mut |p| {
        eprintln!("[{}/{}] {}", p.done, p.total, p.step);
        true
    });
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let report = result.markdown(
        "cargo bench --bench parallel_gates --features calibration",
        &date,
    );
    println!("{report}");
    let path = "calibrations/RESULTS.md";
    if options.filter.is_some() || options.quick {
        println!("(filtered or quick run: {path} left unchanged)");
        return;
    }
    std::fs::create_dir_all("calibrations").expect("create calibrations/");
    std::fs::write(path, report).expect("write calibrations/RESULTS.md");
    println!("wrote {path}");
}
