//! The host a calibration describes: what a deployment profile's `# match:` line records, so a
//! profile is applied only on the kind of machine it was measured on.

/// The target architecture (`x86_64`, `aarch64`, ...).
pub fn arch() -> &'static str {
    std::env::consts::ARCH
}

/// The widest SIMD level the products can use here: `avx512` (avx512f), `avx2` (avx2 and
/// fma), else `baseline`. Kernel speed, hence every crossover, moves with it.
pub fn isa() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "avx512";
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return "avx2";
        }
    }
    "baseline"
}

/// Logical CPUs available to this process (affinity and cgroup limits included).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU's model name as Linux reports it, or `unknown CPU`.
pub fn cpu_model() -> String {
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

/// The profile's match line body: `arch=x86_64 isa=avx2 cores=2`.
pub fn match_line() -> String {
    format!("arch={} isa={} cores={}", arch(), isa(), cores())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_line_names_the_three_keys() {
        let line = match_line();
        let keys: Vec<&str> = line
            .split(' ')
            .map(|kv| kv.split('=').next().unwrap())
            .collect();
        assert_eq!(keys, ["arch", "isa", "cores"]);
        assert!(["avx512", "avx2", "baseline"].contains(&isa()));
        assert!(cores() >= 1);
    }
}
