"""Deployment profiles: selection by host class, the precedence per-call > setter > environment
variable > profile > default for gates and gemmkit knobs, and bad files.

Each case runs in a fresh interpreter, because a profile applies once, at import.
"""

import json
import os
import platform
import subprocess
import sys

import pytest

import rustyml

REPORT = (
    "import json, rustyml.tuning as t\n"
    "b = t.matmul.backend\n"
    "EXTRA\n"
    "gates = {(f, n): (v,) for f, n, v, _d, _u in t.gates()}\n"
    "for f, n, s, _v in t.gate_sources(): gates[(f, n)] += (s,)\n"
    "knobs = {n: (v, s) for n, v, s, _e in t.knob_sources()}\n"
    "print(json.dumps({'profile': t.active_profile(),"
    " 'gates': {f + '.' + n: v for (f, n), v in gates.items()}, 'knobs': knobs}))\n"
)


# A hang (a profile read that blocks) must fail the test, not stall the suite; a healthy import
# takes a second or two, so this is generous for a loaded host.
IMPORT_TIMEOUT_S = 120


def run_python(extra="", **env):
    """Import rustyml with `env` (None removes a variable; bytes values are passed as they are);
    return its report and stderr."""
    full = dict(os.environ)
    full.pop("RUSTYML_PROFILE", None)
    for key, value in env.items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    out = subprocess.run(
        [sys.executable, "-c", REPORT.replace("EXTRA", extra)],
        env=full,
        capture_output=True,
        text=True,
        check=True,
        timeout=IMPORT_TIMEOUT_S,
    )
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def write_profile(tmp_path, lines, host=None):
    host = host or rustyml.tuning.host_class()
    match = f"arch={host['arch']} isa={host['isa']} cores={host['cores']}"
    if "vendor" in host:
        match += f" vendor={host['vendor']} family={host['family']}"
    text = f"# test profile\n# match: {match}\n# measured: by this test\n" + "\n".join(lines) + "\n"
    path = tmp_path / "test.env"
    path.write_text(text)
    return str(path)


def defaults():
    report, _ = run_python(RUSTYML_PROFILE="none")
    return report


def test_a_profile_file_fills_gates_and_knobs_and_says_so(tmp_path):
    base = defaults()
    sum_default = base["gates"]["reduction.sum_f64"][0]
    pool_default = base["knobs"]["pool_classes"][0]
    path = write_profile(
        tmp_path,
        [
            f"RUSTYML_REDUCTION_SUM_F64={sum_default + 11}",
            f"export GEMMKIT_POOL_CLASSES={pool_default + 1}",
        ],
    )
    report, stderr = run_python(RUSTYML_PROFILE=path)
    assert report["gates"]["reduction.sum_f64"] == [sum_default + 11, "profile"]
    assert report["knobs"]["pool_classes"] == [pool_default + 1, "profile"]
    # everything else stays at its default
    assert report["gates"]["reduction.scan_f64"] == base["gates"]["reduction.scan_f64"]
    assert report["knobs"]["kc"] == base["knobs"]["kc"]
    profile = report["profile"]
    assert profile["selection"] == "file" and profile["name"] == path
    assert profile["profile_host"] == profile["host"]
    assert "measured: by this test" in profile["header"]
    assert [e[2] for e in profile["entries"]] == ["profile", "profile"]
    assert stderr == ""


def test_environment_variables_beat_the_profile_and_setters_beat_both(tmp_path):
    path = write_profile(tmp_path, ["RUSTYML_REDUCTION_SUM_F64=111", "GEMMKIT_KC=96"])
    report, _ = run_python(RUSTYML_PROFILE=path, RUSTYML_REDUCTION_SUM_F64="222", GEMMKIT_KC="128")
    assert report["gates"]["reduction.sum_f64"] == [222, "environment"]
    assert report["knobs"]["kc"] == [128, "environment"]
    assert [e[2] for e in report["profile"]["entries"]] == ["environment", "environment"]

    setter = "t.reduction.set_sum_f64(333); b.set_kc(160)"
    report, _ = run_python(setter, RUSTYML_PROFILE=path, GEMMKIT_KC="128")
    assert report["gates"]["reduction.sum_f64"] == [333, "setter"]
    assert report["knobs"]["kc"] == [160, "setter"]


def test_a_malformed_environment_variable_leaves_the_knob_to_the_profile(tmp_path):
    path = write_profile(tmp_path, ["GEMMKIT_PARALLEL_OVERSAMPLE=3"])
    report, stderr = run_python(RUSTYML_PROFILE=path, GEMMKIT_PARALLEL_OVERSAMPLE="lots")
    assert report["knobs"]["parallel_oversample"] == [3, "profile"]
    assert "GEMMKIT_PARALLEL_OVERSAMPLE" in stderr  # gemmkit's own warning still reaches the user


def test_none_turns_profiles_off(tmp_path):
    report = defaults()
    assert report["profile"]["selection"] == "none"
    assert report["profile"]["entries"] == []
    assert {s for _v, s in report["gates"].values()} == {"default"}
    assert {s for _v, s in report["knobs"].values()} == {"default"}


def _shipped_match_lines():
    """Each shipped profile's `# match:` fields, read here independently of the Rust parser."""
    found = {}
    for name, text in rustyml.tuning.shipped_profiles():
        for line in text.splitlines():
            if line.startswith("# match:"):
                found[name] = dict(f.split("=") for f in line[len("# match:") :].split())
    return found


def _admits(match, host):
    """A match line admits a host when every key it names has the host's value."""
    return all(str(host[key]) == value for key, value in match.items())


def test_shipped_profiles_say_how_where_and_when_they_were_measured():
    shipped = rustyml.tuning.shipped_profiles()
    assert {"x86_64-avx2-2core", "x86_64-avx512-2core"} <= {name for name, _ in shipped}
    matches = _shipped_match_lines()
    for name, text in shipped:
        assert name in matches, f"{name} has no # match: line"
        match = matches[name]
        assert set(match) - {"vendor", "family"} == {"arch", "isa", "cores"}, name
        suffix = "".join(f"-{match[k]}" for k in ("vendor", "family") if k in match)
        assert name == f"{match['arch']}-{match['isa']}-{match['cores']}core{suffix}"
        header = [line for line in text.splitlines() if line.startswith("#")]
        assert any(line.startswith("# measured:") for line in header), name
        for line in text.splitlines():
            if line and not line.startswith("#"):
                var, value = line.removeprefix("export ").split("=")
                assert var.startswith(("RUSTYML_", "GEMMKIT_")) and int(value) >= 0


def test_without_a_selector_the_shipped_profile_of_this_host_class_applies():
    host = rustyml.tuning.host_class()
    assert host["vendor"] in ("intel", "amd", "other") and isinstance(host["family"], int)
    admitting = [(n, m) for n, m in _shipped_match_lines().items() if _admits(m, host)]
    # the most specific (naming the most of vendor and family) wins; the first on a tie
    expected = [n for n, m in sorted(admitting, key=lambda nm: -(len(nm[1]) - 3))]
    report, stderr = run_python()
    profile = report["profile"]
    if expected:
        assert profile["selection"] == "shipped" and profile["name"] == expected[0]
        assert profile["entries"] and all(e[2] == "profile" for e in profile["entries"])
        for var, value, _outcome in profile["entries"]:
            if var.startswith("GEMMKIT_"):
                name = var.removeprefix("GEMMKIT_").lower()
                assert report["knobs"][name] == [value, "profile"]
    else:
        assert profile["selection"] == "no match" and profile["entries"] == []
    assert stderr == ""


@pytest.mark.parametrize(
    "lines, needle",
    [
        (["GEMMKIT_KC=lots"], ":4:"),
        (["RUSTYML_REDUCTION_SUM_F64=1", "not an assignment"], ":5:"),
        (["GEMMKIT_KC=-3"], "GEMMKIT_KC"),
    ],
)
def test_a_malformed_profile_warns_naming_the_line_and_applies_nothing(tmp_path, lines, needle):
    path = write_profile(tmp_path, lines)
    report, stderr = run_python(RUSTYML_PROFILE=path)
    assert report["profile"]["selection"] == "failed"
    assert needle in stderr and "RUSTYML_PROFILE" in stderr
    assert report["profile"]["error"] and needle in report["profile"]["error"]
    assert {s for _v, s in report["gates"].values()} == {"default"}
    assert {s for _v, s in report["knobs"].values()} == {"default"}


def test_a_missing_file_warns_and_the_import_still_works(tmp_path):
    report, stderr = run_python(RUSTYML_PROFILE=str(tmp_path / "nowhere.env"))
    assert report["profile"]["selection"] == "failed"
    assert "nowhere.env" in stderr


def test_unknown_names_warn_and_the_other_lines_apply(tmp_path):
    path = write_profile(tmp_path, ["RUSTYML_NO_SUCH_GATE=5", "RUSTYML_REDUCTION_SCAN_F64=77"])
    report, stderr = run_python(RUSTYML_PROFILE=path)
    assert "RUSTYML_NO_SUCH_GATE" in stderr
    assert report["gates"]["reduction.scan_f64"] == [77, "profile"]
    assert [e[2] for e in report["profile"]["entries"]] == ["unknown", "profile"]


def test_the_main_job_reports_the_profile_and_every_source(tmp_path):
    path = write_profile(tmp_path, ["RUSTYML_REDUCTION_SCAN_F64=77", "GEMMKIT_KC=96"])
    env = dict(os.environ, RUSTYML_PROFILE=path, RUSTYML_REDUCTION_SUM_F64="1000")
    out = subprocess.run(
        [sys.executable, "-m", "rustyml"], env=env, capture_output=True, text=True, check=True
    )
    lines = out.stdout.splitlines()
    assert any(line.startswith("profile: " + path) for line in lines)
    scan = next(line for line in lines if "tuning.reduction.scan_f64" in line)
    assert "from the profile" in scan
    summed = next(line for line in lines if "tuning.reduction.sum_f64" in line)
    assert "from RUSTYML_REDUCTION_SUM_F64" in summed
    kc = next(line for line in lines if line.split()[:1] == ["kc"])
    assert "96" in kc and "from the profile" in kc


def test_a_per_call_worker_count_still_runs_under_any_profile(tmp_path):
    # gemmkit's per-call argument sits above every layer: a profile that makes every product
    # parallel cannot stop an explicit serial call, and the result is the same bits.
    path = write_profile(tmp_path, ["GEMMKIT_PARALLEL_THRESHOLD=0"])
    code = (
        "import numpy as np; from rustyml.math import matmul\n"
        "a = np.random.default_rng(0).standard_normal((300, 200))\n"
        "s = matmul.dot(a, a.T, parallelism='serial'); p = matmul.dot(a, a.T)\n"
        "print(s.tobytes() == p.tobytes())"
    )
    env = dict(os.environ, RUSTYML_PROFILE=path)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


def assert_refused(report, stderr, *needles):
    """The profile was refused with a one-line warning naming the problem; nothing applied."""
    profile = report["profile"]
    assert profile["selection"] == "failed"
    warning = [line for line in stderr.splitlines() if "RUSTYML_PROFILE" in line]
    assert len(warning) == 1, stderr
    assert len(warning[0]) < 1000
    for needle in needles:
        assert needle in warning[0] and needle in profile["error"], (needle, stderr)
    assert {s for _v, s in report["gates"].values()} == {"default"}
    assert {s for _v, s in report["knobs"].values()} == {"default"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_profile_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "profile.fifo"
    os.mkfifo(fifo)
    # With no writer, opening the FIFO for reading would block the import forever.
    report, stderr = run_python(RUSTYML_PROFILE=str(fifo))
    assert_refused(report, stderr, "a FIFO", "regular file")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_device_as_profile_is_refused_without_reading_it():
    # Read whole, /dev/zero would fill the memory.
    report, stderr = run_python(RUSTYML_PROFILE="/dev/zero")
    assert_refused(report, stderr, "a character device")


def test_a_directory_as_profile_is_refused(tmp_path):
    report, stderr = run_python(RUSTYML_PROFILE=str(tmp_path))
    assert_refused(report, stderr, "a directory")


def test_a_huge_file_as_profile_is_refused(tmp_path):
    path = tmp_path / "huge.env"
    with open(path, "wb") as f:
        f.truncate(64 << 30)  # sparse: 64 GiB that take no disk
    report, stderr = run_python(RUSTYML_PROFILE=str(path))
    assert_refused(report, stderr, "more than the 1048576")


def test_a_profile_just_under_the_limit_still_applies(tmp_path):
    path = write_profile(tmp_path, ["RUSTYML_REDUCTION_SCAN_F64=77"])
    with open(path, "a") as f:
        f.write(("# padding\n" * ((1 << 20) // 10))[: (1 << 20) - os.path.getsize(path)])
    assert os.path.getsize(path) == 1 << 20
    report, stderr = run_python(RUSTYML_PROFILE=path)
    assert report["gates"]["reduction.scan_f64"] == [77, "profile"]
    assert stderr == ""


def test_a_binary_profile_is_refused(tmp_path):
    path = tmp_path / "binary.env"
    path.write_bytes(b"GEMMKIT_KC=96\n\xff\xfe\n")
    report, stderr = run_python(RUSTYML_PROFILE=str(path))
    assert_refused(report, stderr, "not UTF-8")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths are bytes")
def test_a_non_utf8_profile_path_is_used_as_a_path(tmp_path):
    path = write_profile(tmp_path, ["RUSTYML_REDUCTION_SCAN_F64=77"])
    odd = os.fsencode(tmp_path) + b"/\xff.env"
    os.rename(path, odd)
    report, stderr = run_python(RUSTYML_PROFILE=odd)
    assert report["gates"]["reduction.scan_f64"] == [77, "profile"]
    assert report["profile"]["selection"] == "file"
    assert stderr == ""


def test_a_huge_profile_path_warns_briefly(tmp_path):
    report, stderr = run_python(RUSTYML_PROFILE="x" * 100_000)
    assert_refused(report, stderr, "more characters")


@pytest.mark.parametrize(
    "value",
    [
        "-5",
        "1e9",
        "99999999999999999999999999",  # past usize
        "9" * 100_000,
        "１２",  # full-width digits
        b"12\xff",  # not UTF-8
        "",
    ],
    ids=["negative", "float", "overflow", "huge", "fullwidth", "not-utf8", "empty"],
)
def test_a_bad_gate_variable_warns_and_keeps_the_default(value):
    base = defaults()
    report, stderr = run_python(RUSTYML_PROFILE="none", RUSTYML_REDUCTION_SUM_F64=value)
    assert report["gates"]["reduction.sum_f64"] == base["gates"]["reduction.sum_f64"]
    assert report["gates"]["reduction.sum_f64"][1] == "default"
    (warning,) = [line for line in stderr.splitlines() if "RUSTYML_REDUCTION_SUM_F64" in line]
    assert "ignoring" in warning and "default" in warning
    assert len(warning) < 1000


def test_a_non_utf8_gemmkit_variable_warns_and_keeps_the_default():
    base = defaults()
    report, stderr = run_python(RUSTYML_PROFILE="none", GEMMKIT_KC=b"96\xff")
    assert report["knobs"]["kc"] == base["knobs"]["kc"]
    assert "GEMMKIT_KC" in stderr and "not UTF-8" in stderr


@pytest.mark.parametrize(
    "value, warns",
    [
        ("frobnicate", True),
        ("neon", platform.machine().lower() not in ("aarch64", "arm64")),
        ("scalar", False),
        ("AUTO", False),
    ],
)
def test_require_isa_never_panics_a_product(value, warns):
    # gemmkit panics on the first product for an ISA it does not know or this CPU lacks: the
    # package warns and lets gemmkit choose; a value it can honour stays in force.
    product = (
        "import numpy as np; from rustyml.math import matmul\n"
        "a = np.arange(12.0).reshape(3, 4)\n"
        "assert np.array_equal(matmul.dot(a, a.T), a @ a.T)"
    )
    report, stderr = run_python(product, RUSTYML_PROFILE="none", GEMMKIT_REQUIRE_ISA=value)
    assert report["profile"]["selection"] == "none"
    assert ("GEMMKIT_REQUIRE_ISA" in stderr) == warns, stderr
    assert "panic" not in stderr.lower()
