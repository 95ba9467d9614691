"""The layer map gates reach Python through the tuning facade with their shipped defaults."""

import pytest

from rustyml import tuning

DEFAULTS = {
    "cheap_map_f32": 4_000_000,
    "exp_map_f32": 131_072,
    "spatial_dropout_scale": 4_194_304,
}


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_layer_gate_default_and_round_trip(name):
    found = {(f, n): d for f, n, _v, d, _u in tuning.gates()}
    assert found[("elementwise", name)] == DEFAULTS[name]
    get = getattr(tuning.elementwise, f"get_{name}")
    set_ = getattr(tuning.elementwise, f"set_{name}")
    before = get()
    try:
        set_(321)
        assert get() == 321
    finally:
        set_(before)
