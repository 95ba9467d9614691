"""pytest plugin: run scikit-learn's own test modules with scikit-learn patched.

Loaded with ``-p rustyml_patched_plugin`` (this folder on ``sys.path``) so the patch is in
place before pytest imports any scikit-learn test module. At the end it prints, per test
module, how many door calls ran natively and how many fell back to scikit-learn.
"""

import collections

from rustyml.sklearn import dispatch_stats, patch_sklearn

patch_sklearn()

_per_module = collections.defaultdict(collections.Counter)


def pytest_runtest_setup(item):
    dispatch_stats(reset=True)


def pytest_runtest_teardown(item):
    module = item.module.__name__ if item.module else "?"
    for (_cls, _method, path), n in dispatch_stats(reset=True).items():
        _per_module[module][path] += n


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
    n, f = total["rustyml"], total["scikit-learn"]
    if n + f:
        tr.write_line(f"all: {n} native, {f} scikit-learn ({n / (n + f):.0%} native)")
