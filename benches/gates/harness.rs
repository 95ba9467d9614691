//! Shared machinery of the calibration bench: time a kernel forced serial and forced
//! parallel through its gate, format the markdown tables.

use rustyml::gate::{with_gate, Gate};
use std::time::{Duration, Instant};

/// One rung of a ladder: a label, its work in the gate's unit, and the kernel to time.
pub struct Rung {
    pub label: String,
    pub work: usize,
    pub kernel: Box<dyn FnMut()>,
}

impl Rung {
    pub fn new(label: impl Into<String>, work: usize, kernel: impl FnMut() + 'static) -> Self {
        Self {
            label: label.into(),
            work,
            kernel: Box::new(kernel),
        }
    }
}

/// A gate's ladder.
pub struct Family {
    pub title: String,
    pub gate: &'static Gate,
    pub rungs: Vec<Rung>,
}

/// Median time of `f` over enough repetitions to fill roughly 0.2 s (at least 5 runs).
fn median_us(f: &mut dyn FnMut()) -> f64 {
    f(); // warm up caches and pools
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(100));
    let reps =
        ((Duration::from_millis(200).as_secs_f64() / once.as_secs_f64()) as usize).clamp(5, 2000);
    let mut samples: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

pub struct Report {
    sections: Vec<String>,
}

impl Report {
    pub fn new() -> Self {
        Self {
            sections: Vec::new(),
        }
    }

    pub fn run(&mut self, mut family: Family) {
        let gate = family.gate;
        let mut table = format!(
            "## {} (`tuning::{}::set_{}`, default {})\n\n| shape | work ({}) | serial (us) | parallel (us) | speedup |\n|---|---:|---:|---:|---:|\n",
            family.title, gate.family, gate.name, gate.default, gate.unit
        );
        let mut last_loss: Option<usize> = None;
        let mut first_win: Option<usize> = None;
        for rung in family.rungs.iter_mut() {
            let serial = with_gate(gate, usize::MAX, || median_us(&mut rung.kernel));
            let parallel = with_gate(gate, 0, || median_us(&mut rung.kernel));
            let speedup = serial / parallel;
            table.push_str(&format!(
                "| {} | {} | {:.1} | {:.1} | {:.2}x |\n",
                rung.label, rung.work, serial, parallel, speedup
            ));
            if speedup > 1.0 {
                first_win.get_or_insert(rung.work);
            } else {
                first_win = None;
                last_loss = Some(rung.work);
            }
        }
        let takeaway = match (last_loss, first_win) {
            (Some(lo), Some(hi)) => format!("**Takeaway:** crossover between {lo} and {hi} {}.", gate.unit),
            (None, Some(hi)) => format!("**Takeaway:** parallel already pays at the smallest rung ({hi} {}); no crossover seen.", gate.unit),
            _ => format!("**Takeaway:** no crossover seen: serial wins on every rung up to the largest ({}).", gate.unit),
        };
        table.push_str(&format!("\n{takeaway}\n"));
        println!("{table}");
        self.sections.push(table);
    }

    pub fn write(&self, path: &str, complete: bool) {
        if !complete {
            println!("(filtered run: {path} left unchanged)");
            return;
        }
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let date = std::process::Command::new("date")
            .arg("-u")
            .arg("+%Y-%m-%d")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let mut out = format!(
            "# Gate calibration\n\nWritten by `cargo bench --bench parallel_gates` on {date}.\n\n- CPU: {cpu}\n- rayon threads: {}\n\nEach table forces the serial and the parallel path of one gate's kernel (gate at `usize::MAX`, then `0`); times are medians. Calibration output is evidence, not an instruction: a gate sits at the crossover with a margin toward serial.\n\n",
            rayon::current_num_threads()
        );
        out.push_str(&self.sections.join("\n"));
        std::fs::create_dir_all("calibrations").ok();
        std::fs::write(path, out).expect("write calibrations/RESULTS.md");
        println!("wrote {path}");
    }
}
