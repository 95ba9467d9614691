//! The host class a deployment profile is measured on and matched against: architecture,
//! vector instruction set and logical core count (`arch=x86_64 isa=avx2 cores=2`).

use std::fmt;

/// `std::env::consts::ARCH` (`"x86_64"`, `"aarch64"`, ...).
pub fn arch() -> &'static str {
    std::env::consts::ARCH
}

/// The widest instruction-set class gemmkit's kernels use here: `"avx512"` (AVX-512F), `"avx2"`
/// (AVX2 with FMA), `"neon"` on aarch64, else `"baseline"`.
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
    #[cfg(target_arch = "aarch64")]
    {
        return "neon";
    }
    #[allow(unreachable_code)]
    "baseline"
}

/// Logical CPUs this process may run on (affinity and cgroup limits included).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU's model name as Linux reports it, or `unknown CPU` (for reports and profile headers).
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

/// This host's `# match:` line body: `arch=x86_64 isa=avx2 cores=2`.
pub fn match_line() -> String {
    HostClass::current().to_string()
}

/// A host class: what a profile's `# match:` line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostClass {
    pub arch: String,
    pub isa: String,
    pub cores: usize,
}

impl HostClass {
    /// This machine's class.
    pub fn current() -> Self {
        Self {
            arch: arch().to_string(),
            isa: isa().to_string(),
            cores: cores(),
        }
    }

    /// Parse `arch=x86_64 isa=avx2 cores=2` (any order, every key required).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (mut arch, mut isa, mut cores) = (None, None, None);
        for field in text.split_whitespace() {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got {field:?}"))?;
            match key {
                "arch" => arch = Some(value.to_string()),
                "isa" => isa = Some(value.to_string()),
                "cores" => {
                    cores = Some(
                        value
                            .parse::<usize>()
                            .map_err(|_| format!("cores must be an integer, got {value:?}"))?,
                    )
                }
                other => return Err(format!("unknown host key {other:?}")),
            }
        }
        match (arch, isa, cores) {
            (Some(arch), Some(isa), Some(cores)) => Ok(Self { arch, isa, cores }),
            _ => Err("a host class needs arch=, isa= and cores=".to_string()),
        }
    }
}

impl fmt::Display for HostClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "arch={} isa={} cores={}",
            self.arch, self.isa, self.cores
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_class_round_trips_through_its_text() {
        let host = HostClass::current();
        assert_eq!(HostClass::parse(&host.to_string()), Ok(host));
        let reordered = HostClass::parse("cores=4 isa=avx512 arch=x86_64").unwrap();
        assert_eq!(reordered.cores, 4);
        assert_eq!(reordered.isa, "avx512");
    }

    #[test]
    fn incomplete_or_malformed_host_classes_are_refused() {
        for bad in [
            "arch=x86_64 isa=avx2",
            "arch=x86_64 isa=avx2 cores=two",
            "cores",
            "arch=x isa=y cores=1 gpu=1",
        ] {
            assert!(HostClass::parse(bad).is_err(), "{bad}");
        }
    }
}
