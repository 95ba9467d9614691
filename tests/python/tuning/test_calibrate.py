"""``python -m rustyml calibrate``: the profile, the report and the plots it writes, and its
refusals. Runs one small ladder with a capped rung count so the suite stays fast."""

import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rustyml
from rustyml import tuning
from rustyml._native import calibration
from rustyml.tuning.matmul import backend

LADDER = "f64 sum (SUM_F64)"
NAME_VALUE = re.compile(r"^([A-Z][A-Z0-9_]*)=([0-9]+)$")


# The child runs in another directory: it imports the rustyml this test imported (a relative
# PYTHONPATH would otherwise find an installed copy there, or none).
PACKAGE_ROOT = os.pathsep.join(
    [str(Path(rustyml.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]
).rstrip(os.pathsep)


def cli(*args, cwd, prelude="", env=None):
    """Run ``python -m rustyml ARGS`` in a fresh interpreter; ``prelude`` runs first."""
    code = f"{prelude}\nimport runpy, sys\nsys.argv = ['rustyml', *sys.argv[1:]]\n"
    code += "runpy.run_module('rustyml', run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=dict(os.environ, PYTHONPATH=PACKAGE_ROOT, **(env or {})),
    )


def known_names():
    gates = {f"RUSTYML_{family}_{name}".upper() for family, name, *_ in tuning.gates()}
    knobs = {backend.env_var_name(name) for name in backend.KNOBS}
    return gates | knobs


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibrate")
    run = cli("calibrate", "--quick", "--filter", LADDER, "--max-rungs", "3", cwd=out)
    assert run.returncode == 0, run.stderr
    return out, run


def test_profile_is_well_formed_and_matches_this_host(calibrated):
    out, _ = calibrated
    lines = (out / "rustyml-profile.env").read_text().splitlines()
    assert lines[0] == "# rustyml deployment profile"
    assert lines[1] == f"# match: {calibration.host_info()['match']}"
    assert re.match(
        r"^# match: arch=\S+ isa=(avx512|avx2|baseline) cores=[1-9][0-9]* "
        r"vendor=(intel|amd|other) family=[0-9]+$",
        lines[1],
    )
    assert lines[2].startswith("# measured: ")
    assert f"(rustyml {rustyml.__version__})" in lines[2]
    assigned = {}
    for line in lines:
        if line.startswith("#"):
            continue
        match = NAME_VALUE.match(line)
        assert match, f"not a comment nor NAME=VALUE: {line!r}"
        assigned[match[1]] = int(match[2])
    assert set(assigned) <= known_names()
    # The filtered run measured one gate and skipped the knob sweep.
    assert list(assigned) == ["RUSTYML_REDUCTION_SUM_F64"]


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64",
    reason="cross-checked against /proc/cpuinfo flags",
)
def test_host_isa_agrees_with_the_kernel_cpu_flags():
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if "avx512f" in flags:
        expected = "avx512"
    elif {"avx2", "fma"} <= flags:
        expected = "avx2"
    else:
        expected = "baseline"
    host = calibration.host_info()
    assert host["arch"] == "x86_64"
    assert host["isa"] == expected


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64",
    reason="cross-checked against /proc/cpuinfo",
)
def test_host_vendor_and_family_agree_with_proc_cpuinfo():
    fields = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
        if not line.strip():
            break  # the first processor's block is enough
    vendor = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}.get(fields["vendor_id"], "other")
    host = rustyml.tuning.host_class()
    assert (host["vendor"], host["family"]) == (vendor, int(fields["cpu family"]))
    assert calibration.host_info()["match"].endswith(f"vendor={vendor} family={host['family']}")


def test_report_has_a_table_per_ladder_run(calibrated):
    out, _ = calibrated
    report = (out / "rustyml-profile.md").read_text()
    assert report.startswith("# Gate calibration")
    assert f"## {LADDER}" in report
    assert report.count("| shape | work (elements) | serial (us) | parallel (us) | speedup |") == 1
    assert report.count("**Takeaway:**") == 1
    assert "Suggested" in report


def test_one_plot_per_ladder_iff_matplotlib(calibrated):
    out, _ = calibrated
    plots = sorted(out.glob("*.png"))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert plots == []
    else:
        assert len(plots) == 1
        assert plots[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_no_plot_is_written(tmp_path):
    run = cli(
        "calibrate",
        "--quick",
        "--filter",
        LADDER,
        "--max-rungs",
        "1",
        "--out",
        "p.env",
        cwd=tmp_path,
        prelude="import sys; sys.modules['matplotlib'] = None",
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "p.env").exists() and (tmp_path / "p.md").exists()
    assert list(tmp_path.glob("*.png")) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--filter", "no ladder has this title"], "matches no ladder"),
        (["--max-rungs", "0"], "positive integer"),
        (["--out", "missing-dir/p.env"], "does not exist"),
        (["--out", "p.md"], "pass --report"),
        (["--frobnicate"], "unrecognized arguments"),
    ],
)
def test_bad_arguments_exit_with_a_clear_error(tmp_path, args, message):
    run = cli("calibrate", *args, cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_unknown_command_is_refused(tmp_path):
    run = cli("calibrat", cwd=tmp_path)
    assert run.returncode == 2
    assert "invalid choice" in run.stderr


def test_no_command_still_reports_and_runs_the_example(tmp_path):
    run = cli(cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"rustyml {rustyml.__version__}\n")
    assert "gemmkit backend knobs" in run.stdout
    assert run.stdout.rstrip().endswith("prediction: 3.000")


def test_native_run_returns_plain_data_and_restores_the_gate():
    before = tuning.reduction.get_sum_f64()
    seen = []
    result = calibration.run(
        quick=True, filter=LADDER, max_rungs=2, progress=lambda *p: seen.append(p)
    )
    assert [p[:2] for p in seen] == [(1, 2), (2, 2)]
    assert tuning.reduction.get_sum_f64() == before
    (family,) = result["families"]
    assert family["gate_name"] == "sum_f64" and family["unit"] == "elements"
    assert [sorted(r) for r in family["rungs"]] == [
        ["label", "parallel_us", "serial_us", "work"]
    ] * 2
    assert isinstance(family["suggested"], int)
    assert result["sweep"] is None
    assert result["gates"][0]["env"] == "RUSTYML_REDUCTION_SUM_F64"


def test_an_exception_in_progress_stops_the_run():
    def fail(*_):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        calibration.run(quick=True, filter=LADDER, max_rungs=3, progress=fail)


def test_a_stopped_knob_sweep_restores_every_knob():
    before = {name: getattr(backend, name)() for name in backend.KNOBS}

    def stop_after_the_first_candidate(done, total, step):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibration.run(quick=True, filter="gemmkit", progress=stop_after_the_first_candidate)
    assert {name: getattr(backend, name)() for name in backend.KNOBS} == before


def test_ctrl_c_writes_nothing(tmp_path):
    interrupt = (
        "from rustyml._native import calibration\n"
        "def interrupted(**_):\n"
        "    raise KeyboardInterrupt\n"
        "calibration.run = interrupted"
    )
    run = cli("calibrate", "--quick", "--filter", LADDER, cwd=tmp_path, prelude=interrupt)
    assert run.returncode == 130
    assert "interrupted: nothing written" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_written_profile_is_what_the_package_applies(calibrated):
    # The loader (tuning::profile) reads what calibrate wrote: every line applies, with its
    # value, and the package reports the file as its active profile.
    out, _ = calibrated
    path = out / "rustyml-profile.env"
    written = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            name, value = line.split("=")
            written[name] = int(value)
    assert written, "calibrate wrote no NAME=VALUE line"
    code = (
        "import json, rustyml.tuning as t\n"
        "g = {('RUSTYML_' + f + '_' + n).upper(): (v, s) for (f, n, v, _d, _u), (_f, _n, s, _e)"
        " in zip(t.gates(), t.gate_sources())}\n"
        "k = {e: (v, s) for _n, v, s, e in t.knob_sources()}\n"
        "print(json.dumps({'active': t.active_profile(), 'values': {**g, **k}}))\n"
    )
    env = dict(os.environ, RUSTYML_PROFILE=str(path))
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    report = json.loads(run.stdout)
    assert report["active"]["selection"] == "file"
    assert report["active"]["profile_host"] == report["active"]["host"]
    assert {e[0]: e[2] for e in report["active"]["entries"]} == {n: "profile" for n in written}
    for name, value in written.items():
        assert report["values"][name] == [value, "profile"], name
    assert run.stderr == ""


def test_a_gate_whose_ladders_disagree_keeps_its_default_in_the_profile():
    from rustyml._calibrate import profile_text

    gate = {
        "env": "RUSTYML_REDUCTION_SCAN_F64",
        "default": 262144,
        "measured_by": ["a", "b", "c"],
    }
    result = {
        "quick": False,
        "sweep": None,
        "gates": [
            {
                **gate,
                "suggested": 34_000_000,
                "ladders_agree": False,
                "range": [20_000, 34_000_000],
            },
            {
                **gate,
                "env": "RUSTYML_REDUCTION_SUM_F64",
                "suggested": 530_000,
                "ladders_agree": True,
                "range": [270_000, 530_000],
            },
        ],
    }
    host = calibration.host_info()
    text = profile_text(result, host, "python -m rustyml calibrate", "now", "0 0 0", None)
    assigned = [line for line in text.splitlines() if not line.startswith("#")]
    assert assigned == ["RUSTYML_REDUCTION_SUM_F64=530000"]
    note = next(line for line in text.splitlines() if "SCAN_F64=34000000" in line)
    assert note.startswith("# ") and "20000 to 34000000" in note and "262144 stays" in note


QUICK = ("calibrate", "--quick", "--filter", LADDER, "--max-rungs", "1")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--out", ""], "--out: the file name is empty"),
        (["--out", "x" * 300 + ".env"], "longer than the"),
        (["--report", "r" * 300 + ".md"], "longer than the"),
        (["--out", "x" * 253 + ".e"], "the report (--out with .md)"),  # its .md is too long
        (["--out", "p/"], "names a directory"),
        (["--out", "."], "is a directory"),
        pytest.param(
            ["--out", "/dev/full"],
            "is a character device",
            marks=pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full"),
        ),
        pytest.param(
            ["--out", "/proc/x.env"],
            "cannot create a file there",
            marks=pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no procfs"),
        ),
        pytest.param(
            ["--report", "/proc/x.md"],
            "--report /proc/x.md: cannot create a file there",
            marks=pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no procfs"),
        ),
    ],
)
def test_an_unusable_output_is_refused_before_measuring(tmp_path, args, message):
    # Tell the child to fail loudly if it ever starts measuring.
    never = (
        "from rustyml._native import calibration\n"
        "def measured(**_):\n"
        "    raise SystemExit('measured although an output is unusable')\n"
        "calibration.run = measured"
    )
    run = cli(*QUICK, *args, cwd=tmp_path, prelude=never)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("python -m rustyml calibrate: error:")
    assert list(tmp_path.iterdir()) == []


def _lose_after_measuring(directory):
    """A prelude that runs the real measurement, then removes `directory` (where an output was
    to go): writing fails after the whole run, as on a disk that filled or went away."""
    return (
        "import shutil\n"
        "from rustyml._native import calibration\n"
        "measure = calibration.run\n"
        "def measure_then_lose(**kw):\n"
        "    result = measure(**kw)\n"
        f"    shutil.rmtree({str(directory)!r})\n"
        "    return result\n"
        "calibration.run = measure_then_lose"
    )


def _rescued(stderr, what):
    """The file named by the error message saying where `what` was saved instead."""
    match = re.search(rf"could not write {what} .*; saved it to (\S+) instead", stderr)
    assert match, stderr
    return Path(match[1])


def test_a_profile_that_cannot_be_written_after_measuring_is_saved_elsewhere(tmp_path):
    out, spare = tmp_path / "out", tmp_path / "spare"
    out.mkdir()
    spare.mkdir()
    run = cli(
        *QUICK,
        "--out",
        str(out / "p.env"),
        cwd=tmp_path,
        prelude=_lose_after_measuring(out),
        env={"TMPDIR": str(spare)},
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    profile = _rescued(run.stderr, "--out")
    assert profile.parent == spare and profile.suffix == ".env"
    assert profile.read_text().startswith("# rustyml deployment profile\n")
    assert "RUSTYML_REDUCTION_SUM_F64=" in profile.read_text()
    report = _rescued(run.stderr, "--report")
    assert report.read_text().startswith("# Gate calibration")


def test_a_report_that_cannot_be_written_after_measuring_keeps_the_profile(tmp_path):
    reports, spare = tmp_path / "reports", tmp_path / "spare"
    reports.mkdir()
    spare.mkdir()
    run = cli(
        *QUICK,
        "--report",
        str(reports / "r.md"),
        cwd=tmp_path,
        prelude=_lose_after_measuring(reports) + "\nimport sys; sys.modules['matplotlib'] = None",
        env={"TMPDIR": str(spare)},
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert (tmp_path / "rustyml-profile.env").read_text().startswith("# rustyml deployment")
    assert _rescued(run.stderr, "--report").read_text().startswith("# Gate calibration")


def test_a_full_disk_leaves_no_half_written_profile(tmp_path):
    # Every write to the output directory fails as on a full disk (ENOSPC at the flush); the
    # old profile stays whole, no temporary file is left, and the new one is saved elsewhere.
    out, spare = tmp_path / "out", tmp_path / "spare"
    out.mkdir()
    spare.mkdir()
    (out / "p.env").write_text("# the previous profile\n")
    full = (
        "import errno, os\n"
        "def full(fd):\n"
        "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
        "os.fsync = full"
    )
    run = cli(
        *QUICK,
        "--out",
        str(out / "p.env"),
        cwd=tmp_path,
        prelude=full + "\nimport sys; sys.modules['matplotlib'] = None",
        env={"TMPDIR": str(spare)},
    )
    assert run.returncode == 1
    assert "No space left on device" in run.stderr and "Traceback" not in run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["p.env"]
    assert (out / "p.env").read_text() == "# the previous profile\n"
    assert "RUSTYML_REDUCTION_SUM_F64=" in _rescued(run.stderr, "--out").read_text()


def test_an_existing_profile_is_replaced_whole_and_keeps_its_mode(tmp_path):
    path = tmp_path / "p.env"
    path.write_text("# the previous profile\n")
    path.chmod(0o640)
    run = cli(
        *QUICK,
        "--out",
        "p.env",
        cwd=tmp_path,
        prelude="import sys; sys.modules['matplotlib'] = None",
    )
    assert run.returncode == 0, run.stderr
    assert path.read_text().startswith("# rustyml deployment profile\n")
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.env", "p.md"]
