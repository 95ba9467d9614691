"""The Python tuning facade mirrors the Rust one and writes the atomics the kernels read."""

import os
import subprocess
import sys

import pytest

import rustyml
from rustyml import tuning
from rustyml.tuning.matmul import backend

EXPECTED_DEFAULTS = {
    ("matmul", "chunk_elems"): 33_554_432,
    ("matmul", "cache_resident_max_bytes"): 67_108_864,
    ("reduction", "sum_f64"): 262_144,
    ("reduction", "scan_f64"): 262_144,
}


def test_spine_gates_exist_with_their_shipped_defaults():
    found = {(f, n): d for f, n, _v, d, _u in tuning.gates()}
    for key, default in EXPECTED_DEFAULTS.items():
        assert found.get(key) == default, key


def test_every_gate_has_a_setter_and_getter_pair(gate):
    for family, name, value, _default, _unit in tuning.gates():
        module = getattr(tuning, family)
        assert getattr(module, f"get_{name}")() == value
        gate(module, name, 12345)
        assert getattr(module, f"get_{name}")() == 12345
        assert any(g[:3] == (family, name, 12345) for g in tuning.gates())


def test_setter_validation():
    with pytest.raises(ValueError, match="non-negative|integer in"):
        tuning.reduction.set_sum_f64(-1)
    with pytest.raises(TypeError):
        tuning.reduction.set_sum_f64("big")
    with pytest.raises(ValueError):
        tuning.reduction.set_sum_f64(2**64)


def test_module_paths_mirror_the_crate():
    import rustyml.tuning.reduction as red

    assert red is tuning.reduction
    assert rustyml.tuning.matmul.backend is backend


def test_backend_has_every_gemmkit_knob_with_a_working_setter():
    assert len(backend.KNOBS) == 30
    for name in backend.KNOBS:
        getter = getattr(backend, name)
        setter = getattr(backend, f"set_{name}")
        before = getter()
        setter(before)
        assert getter() == before
    before = backend.parallel_threshold()
    backend.set_parallel_threshold(before + 7)
    assert backend.parallel_threshold() == before + 7
    backend.set_parallel_threshold(before)
    assert backend.env_var_name("kc") == "GEMMKIT_KC"


def _run(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, check=True
    )


def test_gemmkit_env_var_is_read_and_a_setter_shadows_it():
    out = _run(
        "import rustyml.tuning.matmul.backend as b; print(b.parallel_threshold());"
        "b.set_parallel_threshold(5); print(b.parallel_threshold())",
        GEMMKIT_PARALLEL_THRESHOLD="1234",
    )
    assert out.stdout.split() == ["1234", "5"]


def test_malformed_gemmkit_env_var_warns_and_falls_back():
    out = _run(
        "import rustyml.tuning.matmul.backend as b; print(b.parallel_threshold())",
        GEMMKIT_PARALLEL_THRESHOLD="lots",
    )
    assert out.stdout.strip() == str(48 * 48 * 256)
    assert "GEMMKIT_PARALLEL_THRESHOLD" in out.stderr


def test_rayon_num_threads_is_honoured():
    out = _run(
        "import rustyml; print(rustyml.parallel.current_num_threads())", RAYON_NUM_THREADS="3"
    )
    assert out.stdout.strip() == "3"
    out = _run(
        "import rustyml; rustyml.parallel.build_global(5); print(rustyml.parallel.current_num_threads())"
    )
    assert out.stdout.strip() == "5"


def test_main_job_prints_the_report_and_the_chapter_example():
    out = subprocess.run(
        [sys.executable, "-m", "rustyml"], capture_output=True, text=True, check=True
    )
    assert "rayon threads:" in out.stdout
    assert "tuning.reduction.sum_f64" in out.stdout
    assert "parallel_threshold" in out.stdout
    assert out.stdout.strip().endswith("prediction: 3.000")


def test_gates_read_rustyml_environment_variables_once_and_setters_shadow_them():
    import os
    import subprocess
    import sys

    script = (
        "import rustyml.tuning as t\n"
        "print(t.reduction.get_sum_f64())\n"
        "src = {(f, n): s for f, n, s, _v in t.gate_sources()}\n"
        "print(src[('reduction', 'sum_f64')], src[('reduction', 'scan_f64')])\n"
        "t.reduction.set_sum_f64(5)\n"
        "print(t.reduction.get_sum_f64(), {(f, n): s for f, n, s, _v in t.gate_sources()}"
        "[('reduction', 'sum_f64')])\n"
    )
    env = dict(os.environ, RUSTYML_REDUCTION_SUM_F64="100_000", RUSTYML_REDUCTION_SCAN_F64="x")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[:3] == ["100000", "environment default", "5 setter"]
    assert "RUSTYML_REDUCTION_SCAN_F64" in out.stderr and "ignoring" in out.stderr
