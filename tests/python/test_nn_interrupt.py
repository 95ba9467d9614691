"""Ctrl-C during ``fit`` stops at the next batch boundary and leaves the model usable."""

import os
import signal
import subprocess
import sys
import time

import pytest

SCRIPT = r"""
import numpy as np
from rustyml.neural_network import Sequential, layers, optimizers

rng = np.random.default_rng(0)
x = rng.standard_normal((20000, 64)).astype(np.float32)
y = (x[:, :1] * 0.5).astype(np.float32)
model = Sequential([layers.Dense(64, activation="relu", input_shape=(64,)), layers.Dense(1)], seed=0)
model.compile(optimizer=optimizers.Adam(1e-3), loss="mse")
before = [w.copy() for w in model.get_weights()]
print("ready", flush=True)
try:
    model.fit(x, y, epochs=10000, batch_size=32, verbose=0)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
after = model.get_weights()
print("trained", any(not np.array_equal(a, b) for a, b in zip(before, after)), flush=True)
print("finite", all(np.isfinite(w).all() for w in after), flush=True)
history = model.fit(x[:256], y[:256], epochs=1, batch_size=32, verbose=0)
print("refit", np.isfinite(history.history["loss"][0]), flush=True)
print("predict", model.predict(x[:4]).shape, flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX here")
def test_ctrl_c_stops_fit_at_a_batch_boundary_and_the_model_stays_usable():
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well inside the first of 10000 epochs
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = out.split("\n")
    assert proc.returncode == 0, err
    assert lines[0] == "interrupted", out + err
    assert "trained True" in lines
    assert "finite True" in lines
    assert "refit True" in lines
    assert "predict (4, 1)" in lines
