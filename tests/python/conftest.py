import os

# Keras is a test oracle for the network layers; its JAX backend is the small install.
os.environ.setdefault("KERAS_BACKEND", "jax")
# Tests start from the compiled defaults, whichever host class runs them (a shipped profile
# would otherwise fill gates and gemmkit knobs at import). test_profiles.py exercises profile
# selection and precedence in subprocesses with their own RUSTYML_PROFILE.
os.environ["RUSTYML_PROFILE"] = "none"

import numpy as np
import pytest

import rustyml


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def gate():
    """Set gates for one test and restore them after: ``gate(module, name, value)``."""
    saved = []

    def set_gate(module, name, value):
        saved.append((module, name, getattr(module, f"get_{name}")()))
        getattr(module, f"set_{name}")(value)

    yield set_gate
    for module, name, value in reversed(saved):
        getattr(module, f"set_{name}")(value)


SERIAL = rustyml.tuning.SERIAL
PARALLEL = rustyml.tuning.PARALLEL
