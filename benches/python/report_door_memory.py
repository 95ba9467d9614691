"""How much memory NumPy and Python hold at once during each unmodified scikit-learn script
of ``report_sklearn_patch.py``, stock and patched: tracemalloc's peak over the timed part
(data generation excluded). tracemalloc counts NumPy's allocations exactly, whatever the
allocator keeps resident; rustyml's own (Rust) allocations are not counted, so this shows
the copies a door makes on the Python side, against scikit-learn's own.

    python benches/python/report_door_memory.py [--only NAME]
"""

import argparse
import subprocess
import sys

from report_sklearn_patch import SCRIPTS

_MEASURE = """
import sys, textwrap, tracemalloc
import numpy as np
sys.path.insert(0, {here!r})
from report_sklearn_patch import SCRIPTS
if {patched!r}:
    import rustyml
    rustyml.patch_sklearn()
before, after = textwrap.dedent(SCRIPTS[{name!r}]).split("start()")
scope = {{"np": np, "rng": np.random.default_rng(0)}}
exec(before, scope)
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
tracemalloc.reset_peak()
exec(after, scope)
print((tracemalloc.get_traced_memory()[1] - base) / 2**20)
"""


def peak_mib(name, patched):
    here = sys.path[0]
    code = _MEASURE.format(here=here, patched=patched, name=name)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return float(out.split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the scripts whose name contains this")
    args = parser.parse_args()
    print("| script | stock (MiB) | patched (MiB) |")
    print("|---|---:|---:|")
    for name in SCRIPTS:
        if args.only and args.only not in name:
            continue
        stock, patched = peak_mib(name, False), peak_mib(name, True)
        print(f"| {name} | {stock:.1f} | {patched:.1f} |", flush=True)


if __name__ == "__main__":
    main()
