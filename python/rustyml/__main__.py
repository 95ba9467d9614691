"""``python -m rustyml``: report the machine, the thread pool, every gate and every gemmkit
knob, then run the chapter's LinearRegression example.

``python -m rustyml calibrate [--quick] [--out FILE] [--report FILE] [--filter TEXT]``
measures this host's gates and product knobs and writes a deployment profile
(``rustyml._calibrate``)."""

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np

import rustyml
from rustyml import _calibrate
from rustyml.machine_learning import LinearRegression


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cache_sizes():
    """(level, type, size) per cache of cpu0, as Linux reports them."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    found = []
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        found.append((f"L{level}", kind, size))
    return found


def origin(source, variable, setter):
    return {
        "environment": f"from {variable}",
        "setter": f"set by {setter}",
        "profile": "from the profile",
    }.get(source, "default")


def print_profile():
    active = rustyml.tuning.active_profile()
    print(f"\nhost class: {active['host']}")
    selection = active["selection"]
    if selection == "none":
        print("profile: none (RUSTYML_PROFILE=none)")
    elif selection == "no match":
        print(
            "profile: none (no shipped profile matches this host; RUSTYML_PROFILE=<path> loads one)"
        )
    elif selection == "failed":
        print(f"profile: none ({active['error']})")
    else:
        print(
            f"profile: {active['name']} ({selection}; {active['profile_host'] or 'no match line'})"
        )
        for line in active["header"]:
            if line.startswith("measured:"):
                print(f"  {line}")
        kept = [(n, o) for n, _, o in active["entries"] if o != "profile"]
        for name, outcome in kept:
            print(f"  {name}: kept ({outcome})")


def report():
    print(f"rustyml {rustyml.__version__}")
    print(f"CPU: {cpu_model()}")
    print(f"cores (os.cpu_count): {os.cpu_count()}")
    caches = cache_sizes()
    if caches:
        print("caches: " + ", ".join(f"{lvl} {kind} {size}" for lvl, kind, size in caches))
    else:
        print("caches: not reported by this system")
    print(f"rayon threads: {rustyml.parallel.current_num_threads()}")

    print_profile()

    print("\ngates (tuning.<family>.get_<name>; RUSTYML_<FAMILY>_<NAME> deploys a value):")
    sources = {(f, n): (src, var) for f, n, src, var in rustyml.tuning.gate_sources()}
    for family, name, value, default, unit in rustyml.tuning.gates():
        src, var = sources[(family, name)]
        mark = "" if value == default else f" (default {default})"
        label = f"tuning.{family}.{name}"
        print(f"  {label:<42} {value:>20} {unit:<24} {origin(src, var, 'set_' + name)}{mark}")

    print("\ngemmkit backend knobs (tuning.matmul.backend):")
    for name, value, src, var in rustyml.tuning.knob_sources():
        print(f"  {name:<32} {value:>22}  {origin(src, var, 'set_' + name)}")

    print("\nchapter example: LinearRegression(fit_intercept=True) on x = 1..5, y = 2x + 1")
    x = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([3.0, 5.0, 7.0, 9.0, 11.0])
    model = LinearRegression(True).fit(x, y)
    preds = model.predict(x)
    print(f"prediction: {preds[0]:.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m rustyml",
        description="Without a command: report the machine, the thread pool, every gate and "
        "every gemmkit knob, then run the chapter's LinearRegression example.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _calibrate.add_parser(commands)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command is None:
        report()
        return 0
    return args.handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
