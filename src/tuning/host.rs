//! The host class a deployment profile is measured on and matched against: architecture,
//! vector instruction set, logical core count, and the CPU's vendor and family
//! (`arch=x86_64 isa=avx512 cores=2 vendor=amd family=26`). The last two tell apart hosts
//! whose vectors are alike but whose cores are not: Zen 4 splits an AVX-512 instruction over
//! 256-bit units, Zen 5 (family 26) and Intel's cores do not, and their crossovers differ.
//! A profile's `# match:` line may leave them out, and then fits every vendor or family.

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

/// The CPU's vendor as CPUID reports it: `"intel"`, `"amd"`, else `"other"` (and on every
/// architecture but x86-64).
pub fn vendor() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        let id = std::arch::x86_64::__cpuid(0);
        let mut name = [0u8; 12];
        for (chunk, reg) in name.chunks_mut(4).zip([id.ebx, id.edx, id.ecx]) {
            chunk.copy_from_slice(&reg.to_le_bytes());
        }
        match &name {
            b"GenuineIntel" => return "intel",
            b"AuthenticAMD" => return "amd",
            _ => {}
        }
    }
    "other"
}

/// The CPU's display family (CPUID leaf 1: the base family, plus the extended family when the
/// base is 15): 6 for Intel's cores, 25 for AMD Zen 3 and 4, 26 for Zen 5; 0 off x86-64.
pub fn family() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let eax = std::arch::x86_64::__cpuid(1).eax;
        let base = (eax >> 8) & 0xf;
        let extended = (eax >> 20) & 0xff;
        return if base == 0xf { base + extended } else { base };
    }
    #[allow(unreachable_code)]
    0
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

/// This host's `# match:` line body: `arch=x86_64 isa=avx2 cores=2 vendor=intel family=6`.
pub fn match_line() -> String {
    HostClass::current().to_string()
}

/// A host class: what a profile's `# match:` line names. `vendor` and `family` are optional
/// in a match line (absent: any); a host's own class always has both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostClass {
    pub arch: String,
    pub isa: String,
    pub cores: usize,
    pub vendor: Option<String>,
    pub family: Option<u32>,
}

impl HostClass {
    /// This machine's class.
    pub fn current() -> Self {
        Self {
            arch: arch().to_string(),
            isa: isa().to_string(),
            cores: cores(),
            vendor: Some(vendor().to_string()),
            family: Some(family()),
        }
    }

    /// Whether `host` belongs to this class: the same architecture, instruction set and core
    /// count, and the same vendor and family where this class names them.
    pub fn admits(&self, host: &HostClass) -> bool {
        self.arch == host.arch
            && self.isa == host.isa
            && self.cores == host.cores
            && self
                .vendor
                .as_ref()
                .is_none_or(|v| host.vendor.as_ref() == Some(v))
            && self.family.is_none_or(|f| host.family == Some(f))
    }

    /// How narrowly the class is drawn: the optional keys it names (the most specific of the
    /// profiles that admit a host applies).
    pub fn specificity(&self) -> usize {
        usize::from(self.vendor.is_some()) + usize::from(self.family.is_some())
    }

    /// Parse `arch=x86_64 isa=avx2 cores=2 [vendor=amd] [family=26]` (any order; `arch`,
    /// `isa` and `cores` required).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (mut arch, mut isa, mut cores) = (None, None, None);
        let (mut vendor, mut family) = (None, None);
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
                "vendor" => vendor = Some(value.to_string()),
                "family" => {
                    family = Some(
                        value
                            .parse::<u32>()
                            .map_err(|_| format!("family must be an integer, got {value:?}"))?,
                    )
                }
                other => return Err(format!("unknown host key {other:?}")),
            }
        }
        match (arch, isa, cores) {
            (Some(arch), Some(isa), Some(cores)) => Ok(Self {
                arch,
                isa,
                cores,
                vendor,
                family,
            }),
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
        )?;
        if let Some(vendor) = &self.vendor {
            write!(f, " vendor={vendor}")?;
        }
        if let Some(family) = self.family {
            write!(f, " family={family}")?;
        }
        Ok(())
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
        assert_eq!((reordered.vendor, reordered.family), (None, None));
    }

    #[test]
    fn this_host_reports_what_proc_cpuinfo_says() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return; // not Linux: nothing independent to compare with
        };
        let field = |key: &str| {
            info.lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(key))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
        };
        if cfg!(target_arch = "x86_64") {
            let want_vendor = match field("vendor_id").as_deref() {
                Some("GenuineIntel") => "intel",
                Some("AuthenticAMD") => "amd",
                _ => "other",
            };
            assert_eq!(vendor(), want_vendor);
            let want_family: u32 = field("cpu family").unwrap().parse().unwrap();
            assert_eq!(family(), want_family);
        }
    }

    #[test]
    fn a_class_admits_hosts_by_its_named_keys() {
        let zen5 = HostClass::parse("arch=x86_64 isa=avx512 cores=2 vendor=amd family=26").unwrap();
        let intel =
            HostClass::parse("arch=x86_64 isa=avx512 cores=2 vendor=intel family=6").unwrap();
        let any = HostClass::parse("arch=x86_64 isa=avx512 cores=2").unwrap();
        let amd = HostClass::parse("arch=x86_64 isa=avx512 cores=2 vendor=amd").unwrap();
        let zen4 = HostClass::parse("arch=x86_64 isa=avx512 cores=2 vendor=amd family=25").unwrap();
        assert!(any.admits(&zen5) && any.admits(&intel));
        assert!(amd.admits(&zen5) && !amd.admits(&intel));
        assert!(!zen4.admits(&zen5) && zen4.admits(&zen4));
        let four_cores = HostClass {
            cores: 4,
            ..zen5.clone()
        };
        assert!(!any.admits(&four_cores));
        assert_eq!(
            (any.specificity(), amd.specificity(), zen4.specificity()),
            (0, 1, 2)
        );
        assert_eq!(
            zen5.to_string(),
            "arch=x86_64 isa=avx512 cores=2 vendor=amd family=26"
        );
    }

    #[test]
    fn incomplete_or_malformed_host_classes_are_refused() {
        for bad in [
            "arch=x86_64 isa=avx2",
            "arch=x86_64 isa=avx2 cores=two",
            "cores",
            "arch=x isa=y cores=1 gpu=1",
            "arch=x isa=y cores=1 family=zen5",
        ] {
            assert!(HostClass::parse(bad).is_err(), "{bad}");
        }
    }
}
