"""pytest plugin: run scikit-learn's own test modules with scikit-learn patched.

Loaded with ``-p rustyml_patched_plugin`` (this folder on ``sys.path``) so the patch is in
place before pytest imports any scikit-learn test module. At the end it prints, per test
module, how many door calls ran natively and how many fell back to scikit-learn.
"""

import collections
import pathlib
import sys

import pytest

import rustyml
from rustyml.sklearn import dispatch_stats, patch_sklearn

patch_sklearn()

# The folder this process imported rustyml from.
_ROOT = str(pathlib.Path(rustyml.__file__).resolve().parents[1])


def _import_this_rustyml_in_workers():
    # Importing scikit-learn's test packages puts their base folder (site-packages) first
    # on sys.path; worker processes (joblib's loky) start with a copy of sys.path and
    # unpickle door objects there, so they must find this very rustyml first, not another
    # one installed in site-packages.
    if sys.path[:1] != [_ROOT]:
        sys.path.insert(0, _ROOT)


_per_module = collections.defaultdict(collections.Counter)
# (module, door class or metric group) -> Counter of paths
_per_class = collections.defaultdict(collections.Counter)


def pytest_runtest_setup(item):
    dispatch_stats(reset=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    _import_this_rustyml_in_workers()


def pytest_runtest_teardown(item):
    module = item.module.__name__ if item.module else "?"
    for (cls, _method, path), n in dispatch_stats(reset=True).items():
        _per_module[module][path] += n
        _per_class[(module, cls)][path] += n


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    tr.section("rustyml door calls per scikit-learn test module")
    total = collections.Counter()
    for module in sorted(_per_module):
        counts = _per_module[module]
        total.update(counts)
        native, fallback = counts["rustyml"], counts["scikit-learn"]
        share = native / (native + fallback) if native + fallback else 0.0
        tr.write_line(f"{module}: {native} native, {fallback} scikit-learn ({share:.0%} native)")
        for (mod, cls), by_path in sorted(_per_class.items()):
            if mod == module:
                tr.write_line(
                    f"    {cls}: {by_path['rustyml']} native, "
                    f"{by_path['scikit-learn']} scikit-learn"
                )
    n, f = total["rustyml"], total["scikit-learn"]
    if n + f:
        tr.write_line(f"all: {n} native, {f} scikit-learn ({n / (n + f):.0%} native)")
