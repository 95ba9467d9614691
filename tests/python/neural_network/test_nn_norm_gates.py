"""The normalisation gates reach Python through the tuning facade with their shipped defaults."""

import pytest

from rustyml import tuning

NAMES = [
    "batch_norm",
    "bn_col_stats",
    "bn_plane_stats",
    "gn_param_grad",
    "gn_row",
    "ln_col_stats",
    "ln_row",
]


@pytest.mark.parametrize("name", NAMES)
def test_norm_gate_default_and_round_trip(name):
    found = {(f, n): d for f, n, _v, d, _u in tuning.gates()}
    assert found[("norm", name)] == 262_144
    get = getattr(tuning.norm, f"get_{name}")
    set_ = getattr(tuning.norm, f"set_{name}")
    before = get()
    try:
        set_(321)
        assert get() == 321
    finally:
        set_(before)
