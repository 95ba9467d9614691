from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml.utils._scaler_base import TransformerBase


class Normalizer(TransformerBase):
    """Scale every sample (row) to unit ``norm`` (``"l1"``, ``"l2"`` or ``"max"``); rows with
    a zero norm are left as they are. Stateless: ``fit`` only checks ``X``."""

    _native_class = _native.utils.Normalizer
    _native_params = ("norm",)

    def __init__(self, norm: Literal["l1", "l2", "max"] = "l2", *, copy: bool = True) -> None:
        self._store_params(locals())
