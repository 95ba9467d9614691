"""Alias the native extension's submodules under the public package names."""

import sys
from types import ModuleType


def alias_tree(native: ModuleType, public_name: str) -> None:
    """Register ``native`` and its module children as ``public_name`` and below."""
    sys.modules.setdefault(public_name, native)
    for attr in dir(native):
        child = getattr(native, attr)
        if isinstance(child, ModuleType) and child.__name__.startswith(native.__name__ + "."):
            alias_tree(child, f"{public_name}.{attr}")
