"""The Keras programs under examples/keras run as written on rustyml.keras, and with the
import switched back to Keras 3 (JAX) they reach comparable metrics.

The two runs start from different random weights and batch orders, so their metrics differ
by run-to-run spread, not rounding: the margins below are wider than the spread of each
example over seeds, and far narrower than an untrained model's metric (accuracy 0.1 for ten
classes, 0.5 for two; an autoencoder's or forecaster's error several times larger).
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples" / "keras"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))


def _run(source, tmp_path, name, env):
    path = tmp_path / name
    path.write_text(source)
    out = subprocess.run(
        [sys.executable, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    found = re.findall(r"^RESULT (\w+)=([0-9.eE+-]+)$", out.stdout, re.MULTILINE)
    assert found, out.stdout[-2000:]
    return found[-1][0], float(found[-1][1])


def test_there_are_examples():
    assert len(SCRIPTS) >= 8


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_on_rustyml_and_matches_keras(script, tmp_path):
    pytest.importorskip("keras")
    source = (EXAMPLES / script).read_text()
    assert "import rustyml.keras as keras" in source
    as_keras = source.replace("import rustyml.keras as keras", "import keras").replace(
        "from rustyml.keras import", "from keras import"
    )
    # Only the import lines differ between the two programs.
    differing = [(a, b) for a, b in zip(source.splitlines(), as_keras.splitlines()) if a != b]
    assert all("import" in a and "rustyml.keras" in a for a, _ in differing)

    env = dict(os.environ)
    package_root = pathlib.Path(__import__("rustyml").__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(package_root), env.get("PYTHONPATH", "")])
    env["KERAS_BACKEND"] = "jax"
    name, ours = _run(source, tmp_path, "ours_" + script, env)
    keras_name, theirs = _run(as_keras, tmp_path, "keras_" + script, env)
    assert name == keras_name
    if name == "accuracy":
        assert ours >= theirs - 0.08, (ours, theirs)
    else:  # an error metric
        assert ours <= 1.5 * theirs + 0.01, (ours, theirs)
