"""The network core's gates reach Python through the tuning facade with their shipped defaults."""

from rustyml import tuning


def test_nn_core_gates_have_their_shipped_defaults():
    found = {(f, n): d for f, n, _v, d, _u in tuning.gates()}
    assert found[("elementwise", "fused_slice")] == 1_000_000
    assert found[("reduction", "sq_sum_f32")] == 65_536


def test_nn_core_gate_setters_round_trip():
    before = tuning.elementwise.get_fused_slice()
    try:
        tuning.elementwise.set_fused_slice(123)
        assert tuning.elementwise.get_fused_slice() == 123
    finally:
        tuning.elementwise.set_fused_slice(before)
    before = tuning.reduction.get_sq_sum_f32()
    try:
        tuning.reduction.set_sq_sum_f32(7)
        assert tuning.reduction.get_sq_sum_f32() == 7
    finally:
        tuning.reduction.set_sq_sum_f32(before)
