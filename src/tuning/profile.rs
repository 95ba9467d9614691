//! Deployment profiles: sourceable env files of `RUSTYML_*` gate thresholds and `GEMMKIT_*`
//! backend knobs, measured on one host class and shipped inside the crate (and so the wheel).
//!
//! ```text
//! # rustyml deployment profile
//! # match: arch=x86_64 isa=avx2 cores=2
//! # measured: ...
//! GEMMKIT_POOL_CLASSES=0
//! RUSTYML_REDUCTION_SUM_F64=262144
//! ```
//!
//! [`apply_from_environment`] (called when the Python package is imported; Rust programs call
//! it themselves) picks the profile: `RUSTYML_PROFILE=none` turns profiles off, a path chooses
//! a file, and otherwise the shipped profile whose `# match:` line admits this host's class
//! ([`super::host::HostClass`]; the most specific one) applies. A profile only fills what is still at its compiled
//! default: precedence stays per-call > `set_*` > environment variable > profile > default.

use super::host::HostClass;
use super::matmul::BACKEND_KNOBS;
use crate::gate::{all_gates, parse_threshold, GateSource};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The profiles compiled into the crate: `(name, text)`, one per measured host class.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "x86_64-avx2-2core",
        include_str!("../../calibrations/x86_64-avx2-2core.env"),
    ),
    (
        "x86_64-avx512-2core",
        include_str!("../../calibrations/x86_64-avx512-2core.env"),
    ),
    (
        "x86_64-avx512-2core-intel",
        include_str!("../../calibrations/x86_64-avx512-2core-intel.env"),
    ),
];

/// The variable that selects the profile: `none`, a path, or unset (match the host).
pub const SELECTOR_VAR: &str = "RUSTYML_PROFILE";

/// One `NAME=VALUE` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEntry {
    /// 1-based line number in the file.
    pub line: usize,
    pub name: String,
    pub value: usize,
}

/// A parsed profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The shipped name or the file's path.
    pub name: String,
    /// The host class of its `# match:` line, if it has one.
    pub host: Option<HostClass>,
    /// Its comment lines (how, where and when it was measured), without the `#`.
    pub header: Vec<String>,
    pub entries: Vec<ProfileEntry>,
}

/// Parse a profile. Blank lines and `#` comments are skipped, `export NAME=VALUE` is accepted;
/// values follow the variable's own rules (`GEMMKIT_*`: a non-negative integer; `RUSTYML_*`:
/// the gates' rule, `_` separators and `max` allowed). Any malformed line refuses the whole
/// file, naming the line: half a profile is worse than none.
pub fn parse(name: &str, text: &str) -> Result<Profile, String> {
    let mut profile = Profile {
        name: name.to_string(),
        host: None,
        header: Vec::new(),
        entries: Vec::new(),
    };
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.trim();
            if let Some(host) = comment.strip_prefix("match:") {
                let host = HostClass::parse(host).map_err(|e| format!("{name}:{line}: {e}"))?;
                profile.host = Some(host);
            }
            profile.header.push(comment.to_string());
            continue;
        }
        let assignment = trimmed.strip_prefix("export ").unwrap_or(trimmed);
        let (var, value) = assignment
            .split_once('=')
            .ok_or_else(|| format!("{name}:{line}: expected NAME=VALUE, got {trimmed:?}"))?;
        let var = var.trim();
        let valid_name = !var.is_empty()
            && var
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !valid_name {
            return Err(format!("{name}:{line}: {var:?} is not a variable name"));
        }
        let parsed = if var.starts_with("GEMMKIT_") {
            value.trim().parse::<usize>().ok()
        } else {
            parse_threshold(value)
        };
        let value = parsed.ok_or_else(|| {
            format!("{name}:{line}: {var}={value:?} is not a non-negative integer")
        })?;
        profile.entries.push(ProfileEntry {
            line,
            name: var.to_string(),
            value,
        });
    }
    Ok(profile)
}

/// The largest profile file [`load`] reads: a real one is a few hundred bytes.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// At most this many characters of a path or value go into a message (an environment variable
/// can hold a 128 KiB string).
const SHOWN_CHARS: usize = 200;

/// `text` for a one-line message: at most [`SHOWN_CHARS`] characters, then how many more.
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}... ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

/// What kind of file `meta` describes, for a refusal ("a directory", "a FIFO", ...).
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The text of the profile at `path`: a regular file of at most [`MAX_PROFILE_BYTES`], UTF-8.
/// Anything else (a FIFO, a device such as `/dev/zero`, a directory, a huge file) is refused
/// without blocking and without reading more than the limit plus one byte.
fn read_profile_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let shown = shorten(&path.display().to_string());
    let cannot = |e: std::io::Error| format!("cannot read profile {shown}: {e}");
    let refuse = |meta: &std::fs::Metadata| {
        format!(
            "profile {shown} is {}, expected a regular file",
            file_kind(meta)
        )
    };
    // Refuse special files before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(refuse(&meta));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Non-blocking, so a file swapped for a FIFO between the check and the open cannot hang
    // the open either; reading a regular file ignores the flag.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(cannot)?;
    // What was opened is what is read: check it again.
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(refuse(&meta));
    }
    if meta.len() > MAX_PROFILE_BYTES {
        return Err(format!(
            "profile {shown} holds {} bytes, more than the {MAX_PROFILE_BYTES} a profile may have",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PROFILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(format!(
            "profile {shown} holds more than the {MAX_PROFILE_BYTES} bytes a profile may have"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "profile {shown} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Read and parse a profile file (see [`read_profile_file`] for what is refused).
pub fn load(path: &Path) -> Result<Profile, String> {
    let text = read_profile_file(path)?;
    parse(&path.display().to_string(), &text)
}

/// Every shipped profile, parsed.
pub fn shipped() -> Vec<Profile> {
    SHIPPED
        .iter()
        .map(|(name, text)| parse(name, text).expect("shipped profiles parse (unit-tested)"))
        .collect()
}

/// The shipped profile for `host`: of those whose `# match:` class admits it, the one that
/// names the most of vendor and family (the first listed on a tie).
pub fn shipped_for(host: &HostClass) -> Option<Profile> {
    let mut best: Option<(usize, Profile)> = None;
    for p in shipped() {
        let Some(class) = p.host.as_ref().filter(|c| c.admits(host)) else {
            continue;
        };
        let rank = class.specificity();
        if best.as_ref().is_none_or(|(r, _)| rank > *r) {
            best = Some((rank, p));
        }
    }
    best.map(|(_, p)| p)
}

/// What became of one profile line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedEntry {
    pub name: String,
    pub value: usize,
    /// `Profile` when the profile's value applies; otherwise the source that kept its own
    /// value (`Setter`, `Environment`). `None`: no gate or knob of that name in this build.
    pub outcome: Option<GateSource>,
}

/// Offer every entry to its gate or knob; each takes it only if still at its default.
pub fn apply(profile: &Profile) -> Vec<AppliedEntry> {
    let gates = all_gates();
    profile
        .entries
        .iter()
        .map(|entry| {
            let outcome = if let Some(gate) = gates.iter().find(|g| g.env_name() == entry.name) {
                if gate.offer_profile_value(entry.value) {
                    Some(GateSource::Profile)
                } else {
                    Some(gate.source())
                }
            } else if let Some(knob) = BACKEND_KNOBS.iter().find(|k| k.env == entry.name) {
                if knob.offer_profile_value(entry.value) {
                    Some(GateSource::Profile)
                } else {
                    Some(knob.source())
                }
            } else {
                None
            };
            AppliedEntry {
                name: entry.name.clone(),
                value: entry.value,
                outcome,
            }
        })
        .collect()
}

/// gemmkit's variable that forces a kernel ISA. gemmkit panics on the first product when it
/// names an ISA it does not know or one this CPU lacks, so the package checks it first.
pub const REQUIRE_ISA_VAR: &str = "GEMMKIT_REQUIRE_ISA";

/// Why gemmkit would panic on `GEMMKIT_REQUIRE_ISA=value` on this host, or `None` when it
/// accepts it (the spellings and CPU features are those gemmkit 0.1 checks, for every element
/// type it dispatches).
pub fn require_isa_problem(value: &str) -> Option<String> {
    let v = value.trim().to_ascii_lowercase();
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let has = |features: &[&str]| {
        features.iter().all(|f| match *f {
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512vnni" => std::arch::is_x86_feature_detected!("avx512vnni"),
            "avx512bf16" => std::arch::is_x86_feature_detected!("avx512bf16"),
            _ => false,
        })
    };
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let has = |_: &[&str]| false;
    let needs: &[&str] =
        match v.as_str() {
            "" | "auto" | "scalar" => return None,
            "fma" | "avx2" => &["avx2", "fma"],
            "avx512f" => &["avx512f"],
            "avx512vnni" | "vnni" => &["avx512f", "avx512bw", "avx512vnni"],
            "avx512bf16" | "bf16" => &["avx512f", "avx512bf16"],
            "neon" => {
                return (!cfg!(target_arch = "aarch64"))
                    .then(|| "neon needs an aarch64 CPU".to_string())
            }
            "simd128" | "wasm" => {
                return (!cfg!(all(target_arch = "wasm32", target_feature = "simd128")))
                    .then(|| "simd128 needs a wasm32 build with simd128".to_string())
            }
            _ => return Some(
                "not an ISA gemmkit knows (scalar, fma, avx512f, avx512vnni, avx512bf16, neon, \
                 simd128 or auto)"
                    .to_string(),
            ),
        };
    if cfg!(not(any(target_arch = "x86", target_arch = "x86_64"))) || !has(needs) {
        return Some(format!("this CPU does not report {}", needs.join("+")));
    }
    None
}

/// Check the `GEMMKIT_*` variables gemmkit reads in ways that would hurt: a non-UTF-8 value
/// (gemmkit ignores it without a word) warns, and a `GEMMKIT_REQUIRE_ISA` gemmkit would panic
/// on warns and is removed from the environment, so gemmkit picks the ISA itself. Returns the
/// warnings printed.
pub fn check_backend_environment() -> Vec<String> {
    let mut warnings = Vec::new();
    for knob in BACKEND_KNOBS {
        if let Some(raw) = std::env::var_os(knob.env) {
            if raw.to_str().is_none() {
                warnings.push(format!(
                    "rustyml: ignoring {}={}: not UTF-8 text, expected a non-negative integer; \
                     gemmkit keeps its default",
                    knob.env,
                    shorten(&format!("{raw:?}"))
                ));
            }
        }
    }
    if let Some(raw) = std::env::var_os(REQUIRE_ISA_VAR) {
        match raw.to_str() {
            None => warnings.push(format!(
                "rustyml: ignoring {REQUIRE_ISA_VAR}={}: not UTF-8 text; gemmkit picks the ISA",
                shorten(&format!("{raw:?}"))
            )),
            Some(text) => {
                if let Some(problem) = require_isa_problem(text) {
                    warnings.push(format!(
                        "rustyml: ignoring {REQUIRE_ISA_VAR}={}: {problem}; gemmkit picks the ISA",
                        shorten(&format!("{text:?}"))
                    ));
                    // gemmkit reads it on its first product and would panic there. This runs
                    // once, at start-up (the package's import), before any product.
                    std::env::remove_var(REQUIRE_ISA_VAR);
                }
            }
        }
    }
    for warning in &warnings {
        eprintln!("{warning}");
    }
    warnings
}

/// How the active profile was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// `RUSTYML_PROFILE=none`.
    Off,
    /// No `RUSTYML_PROFILE`, and no shipped profile matches this host.
    NoMatch,
    /// No `RUSTYML_PROFILE`: the shipped profile of this host's class.
    Shipped(String),
    /// `RUSTYML_PROFILE=<path>`.
    File(PathBuf),
    /// `RUSTYML_PROFILE=<path>` could not be used (the message says why; nothing applied).
    Failed(String),
}

/// The profile in force for this process.
#[derive(Debug, Clone)]
pub struct ActiveProfile {
    pub host: HostClass,
    pub selection: Selection,
    pub profile: Option<Profile>,
    pub entries: Vec<AppliedEntry>,
}

static ACTIVE: OnceLock<ActiveProfile> = OnceLock::new();

/// Choose and apply the profile once per process (later calls return the first result).
/// Problems (an unreadable or malformed file, names this build does not know) warn once on
/// stderr, as malformed `GEMMKIT_*`/`RUSTYML_*` variables do, and never fail.
pub fn apply_from_environment() -> &'static ActiveProfile {
    ACTIVE.get_or_init(|| {
        let host = HostClass::current();
        check_backend_environment();
        // A path need not be UTF-8: read the raw value (an unreadable one is no reason to fall
        // back to the shipped profile silently).
        let raw = std::env::var_os(SELECTOR_VAR).unwrap_or_default();
        let selector = match raw.to_str() {
            Some(text) => PathBuf::from(text.trim()),
            None => PathBuf::from(raw),
        };
        let (selection, profile) = if selector
            .to_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("none"))
        {
            (Selection::Off, None)
        } else if selector.as_os_str().is_empty() {
            match shipped_for(&host) {
                Some(p) => (Selection::Shipped(p.name.clone()), Some(p)),
                None => (Selection::NoMatch, None),
            }
        } else {
            let path = selector;
            match load(&path) {
                Ok(p) => (Selection::File(path), Some(p)),
                Err(message) => {
                    eprintln!("rustyml: {SELECTOR_VAR}: {message}; no profile applied");
                    (Selection::Failed(message), None)
                }
            }
        };
        let entries = profile.as_ref().map(apply).unwrap_or_default();
        for unknown in entries.iter().filter(|e| e.outcome.is_none()) {
            eprintln!(
                "rustyml: profile line {}={} names no gate or gemmkit knob of this build; ignored",
                unknown.name, unknown.value
            );
        }
        ActiveProfile {
            host,
            selection,
            profile,
            entries,
        }
    })
}

/// The profile applied by [`apply_from_environment`], if it has run.
pub fn active() -> Option<&'static ActiveProfile> {
    ACTIVE.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Gate;

    #[test]
    fn every_shipped_profile_parses_names_only_known_variables_and_has_a_host() {
        for profile in shipped() {
            let host = profile.host.as_ref().expect("a # match: line");
            assert!(profile.name.contains(&host.isa), "{}", profile.name);
            assert!(!profile.entries.is_empty());
            assert!(profile.header.iter().any(|h| h.starts_with("measured:")));
            for entry in &profile.entries {
                let known = all_gates().iter().any(|g| g.env_name() == entry.name)
                    || BACKEND_KNOBS.iter().any(|k| k.env == entry.name);
                assert!(known, "{} in {}", entry.name, profile.name);
            }
        }
    }

    #[test]
    fn the_most_specific_shipped_profile_admitting_a_host_applies() {
        let host = |text: &str| HostClass::parse(text).unwrap();
        let pick = |text: &str| shipped_for(&host(text)).map(|p| p.name);
        let intel = "arch=x86_64 isa=avx512 cores=2 vendor=intel family=6";
        assert_eq!(pick(intel).as_deref(), Some("x86_64-avx512-2core-intel"));
        for amd in [
            "arch=x86_64 isa=avx512 cores=2 vendor=amd family=25",
            "arch=x86_64 isa=avx512 cores=2 vendor=amd family=26",
        ] {
            assert_eq!(pick(amd).as_deref(), Some("x86_64-avx512-2core"), "{amd}");
        }
        let avx2 = "arch=x86_64 isa=avx2 cores=2 vendor=intel family=6";
        assert_eq!(pick(avx2).as_deref(), Some("x86_64-avx2-2core"));
        assert_eq!(
            pick("arch=x86_64 isa=avx512 cores=4 vendor=intel family=6"),
            None
        );
        assert_eq!(
            pick("arch=aarch64 isa=neon cores=2 vendor=other family=0"),
            None
        );
    }

    #[test]
    fn parsing_reads_assignments_exports_comments_and_the_host() {
        let text = "# rustyml deployment profile\n# match: arch=x86_64 isa=avx2 cores=2\n\n\
                    GEMMKIT_POOL_CLASSES=0\nexport RUSTYML_REDUCTION_SUM_F64=100_000\n\
                    RUSTYML_TREE_SORT_SCAN_MIN_ELEMS=max\n";
        let p = parse("t", text).unwrap();
        assert_eq!(p.host.unwrap().cores, 2);
        let got: Vec<(&str, usize, usize)> = p
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.value, e.line))
            .collect();
        assert_eq!(
            got,
            [
                ("GEMMKIT_POOL_CLASSES", 0, 4),
                ("RUSTYML_REDUCTION_SUM_F64", 100_000, 5),
                ("RUSTYML_TREE_SORT_SCAN_MIN_ELEMS", usize::MAX, 6)
            ]
        );
    }

    #[test]
    fn a_malformed_line_refuses_the_file_and_names_the_line() {
        for (text, needle) in [
            ("GEMMKIT_KC=lots\n", "t:1"),
            ("# ok\nGEMMKIT_KC=-1\n", "t:2"),
            ("GEMMKIT_KC=max\n", "t:1"), // gemmkit's own rule: integers only
            ("lowercase=1\n", "not a variable name"),
            ("JUST_A_NAME\n", "expected NAME=VALUE"),
            ("# match: arch=x86_64 isa=avx2\n", "t:1"),
        ] {
            let err = parse("t", text).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn only_a_regular_file_within_the_limit_is_read() {
        let dir = std::env::temp_dir().join(format!("rustyml-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = load(&dir).unwrap_err();
        assert!(err.contains("a directory"), "{err}");
        let at_limit = dir.join("at-limit.env");
        let line = "# padding\n";
        let mut text = line.repeat(MAX_PROFILE_BYTES as usize / line.len());
        text.push_str(&"#".repeat(MAX_PROFILE_BYTES as usize - text.len() - 1));
        text.push('\n');
        std::fs::write(&at_limit, &text).unwrap();
        assert!(load(&at_limit).unwrap().entries.is_empty());
        let over = dir.join("over.env");
        std::fs::write(&over, text + "\n").unwrap();
        let err = load(&over).unwrap_err();
        assert!(err.contains("more than the 1048576"), "{err}");
        #[cfg(unix)]
        {
            let err = load(Path::new("/dev/zero")).unwrap_err();
            assert!(err.contains("a character device"), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn messages_cut_long_names() {
        assert_eq!(shorten("short"), "short");
        let long = shorten(&"x".repeat(1000));
        assert!(long.starts_with(&"x".repeat(200)) && long.ends_with("(800 more characters)"));
    }

    #[test]
    fn require_isa_accepts_what_gemmkit_honours_here() {
        for ok in ["", " auto ", "Scalar"] {
            assert_eq!(require_isa_problem(ok), None, "{ok}");
        }
        assert!(require_isa_problem("frobnicate")
            .unwrap()
            .contains("not an ISA"));
        if !cfg!(target_arch = "aarch64") {
            assert!(require_isa_problem("neon").is_some());
        }
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            assert_eq!(require_isa_problem("fma").is_none(), avx2);
            let avx512 = std::arch::is_x86_feature_detected!("avx512f");
            assert_eq!(require_isa_problem("AVX512F").is_none(), avx512);
        }
    }

    #[test]
    fn apply_fills_defaults_only_and_reports_every_line() {
        static PROFILED: Gate = Gate::new("profiletest", "fill", 10, "items");
        static SET_FIRST: Gate = Gate::new("profiletest", "set_first", 10, "items");
        inventory::submit! { crate::gate::GateEntry(&PROFILED) }
        inventory::submit! { crate::gate::GateEntry(&SET_FIRST) }
        SET_FIRST.set(3);
        let p = parse(
            "t",
            "RUSTYML_PROFILETEST_FILL=77\nRUSTYML_PROFILETEST_SET_FIRST=78\nRUSTYML_NO_SUCH_GATE=1\n",
        )
        .unwrap();
        let outcomes: Vec<Option<GateSource>> = apply(&p).into_iter().map(|e| e.outcome).collect();
        assert_eq!(
            outcomes,
            [Some(GateSource::Profile), Some(GateSource::Setter), None]
        );
        assert_eq!(PROFILED.get(), 77);
        assert_eq!(SET_FIRST.get(), 3);
    }

    #[test]
    fn a_backend_knob_takes_a_profile_value_below_a_setter() {
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // gemm_threshold-style knobs are global: use one no other test reads, and restore it.
        let knob = BACKEND_KNOBS
            .iter()
            .find(|k| k.name == "prefetch_min_bytes")
            .unwrap();
        let before = (knob.get)();
        knob.with_value(before, || {
            let p = parse("t", &format!("{}={}\n", knob.env, before + 5)).unwrap();
            // No other test touches this knob and the test environment sets no GEMMKIT_*.
            assert!(knob.env_value().is_none() && knob.source() == GateSource::Default);
            assert_eq!(apply(&p)[0].outcome, Some(GateSource::Profile));
            assert_eq!((knob.get)(), before + 5);
            assert_eq!(knob.source(), GateSource::Profile);
            (knob.set)(before + 1);
            assert_eq!(knob.source(), GateSource::Setter);
            assert_eq!(apply(&p)[0].outcome, Some(GateSource::Setter));
            assert_eq!((knob.get)(), before + 1);
        });
        assert_eq!((knob.get)(), before);
    }
}
