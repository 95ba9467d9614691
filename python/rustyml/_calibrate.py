"""``python -m rustyml calibrate``: measure this host's gate crossovers and gemmkit product
knobs with the ladders compiled into the wheel, and write

- a sourceable deployment profile (``NAME=VALUE`` lines under ``#`` comments, the first of
  which, ``# match:``, names the kind of host it was measured on),
- the markdown report (the format of ``calibrations/RESULTS.md``),
- one PNG per ladder when matplotlib is installed (optional).
"""

import argparse
import contextlib
import datetime
import os
import re
import shlex
import stat
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

import rustyml
from rustyml._native import calibration as native

DEFAULT_PROFILE = "rustyml-profile.env"


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_parser(commands):
    parser = commands.add_parser(
        "calibrate",
        help="measure this host's gates and product knobs, write a deployment profile",
        description="Time every gate's kernel serial and parallel on a ladder of shapes, sweep "
        "gemmkit's product knobs, and write a sourceable profile (NAME=VALUE lines), a "
        "markdown report and, with matplotlib installed, one plot per ladder.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="fewer and smaller rungs, shorter timings, a smaller knob sweep (a few minutes)",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        default=DEFAULT_PROFILE,
        help=f"the profile to write (default: {DEFAULT_PROFILE} in the current directory)",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="the markdown report to write (default: the profile's path with .md); plots go "
        "next to it",
    )
    parser.add_argument(
        "--filter",
        metavar="TEXT",
        help="run only the ladders (and the knob sweep) whose title contains TEXT",
    )
    # Caps every ladder's rungs: the test suite's way to run the CLI in seconds.
    parser.add_argument("--max-rungs", type=positive_int, help=argparse.SUPPRESS)
    parser.set_defaults(handler=calibrate, parser=parser)
    return parser


def _kind(mode):
    """What a non-regular file is, for a refusal."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _name_max(directory):
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def check_output(text, option):
    """The problem with writing ``option``'s file at ``text``, or None. Checked before
    measuring, so a run never ends with nowhere to put its result: the name is a valid file
    name, any existing file is a regular one, and a file can be created in its directory
    (probed by creating and removing a temporary file there)."""
    if not text:
        return f"{option}: the file name is empty"
    if text.endswith(("/", os.sep)):
        return f"{option} {text}: names a directory, expected a file"
    path = Path(text)
    try:
        directory = path.parent
        if not directory.is_dir():
            return f"{option} {text}: directory {directory} does not exist"
        name_max = _name_max(directory)
        if len(os.fsencode(path.name)) > name_max:
            return (
                f"{option}: the file name is {len(os.fsencode(path.name))} bytes long, longer "
                f"than the {name_max} this file system allows"
            )
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            return f"{option} {text} is {_kind(mode)}, expected a regular file"
        if mode is not None and not os.access(path, os.W_OK):
            return f"{option} {text}: the file is not writable"
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".rustyml-probe-")
        os.close(fd)
        os.unlink(probe)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"{option} {text}: cannot create a file there ({reason})"
    return None


def output_paths(args):
    """The profile and report paths, or a parser error naming what is wrong with them."""
    parser = args.parser
    problem = check_output(args.out, "--out")
    if problem is None and args.report is not None:
        problem = check_output(args.report, "--report")
    if problem:
        parser.error(problem)
    profile = Path(args.out)
    report = Path(args.report) if args.report else profile.with_suffix(".md")
    if profile.resolve() == report.resolve():
        parser.error(f"the profile and the report would both be {profile}: pass --report FILE")
    if args.report is None:
        problem = check_output(str(report), "the report (--out with .md)")
        if problem:
            parser.error(problem + ": pass --report FILE")
    return profile, report


def write_file(path, text):
    """Write ``text`` to ``path`` whole or not at all: a temporary file in the same directory,
    then renamed over ``path`` (a symlink is followed), so a failure (a full disk) never
    leaves half a profile behind."""
    target = Path(os.path.realpath(path))
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".rustyml-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)  # an existing file keeps its mode
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save_or_rescue(path, text, option, what):
    """Write ``text`` to ``path``; if that fails (after the whole measurement), keep it: in a
    file of the temporary directory, or else on stdout. Returns the error message, or None."""
    try:
        write_file(path, text)
        return None
    except OSError as exc:
        reason = exc.strerror or str(exc)
    suffix = Path(path).suffix or ".txt"
    try:
        fd, rescue = tempfile.mkstemp(prefix=f"rustyml-{what}-", suffix=suffix)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        kept = f"saved it to {rescue} instead"
    except OSError:
        print(text, end="" if text.endswith("\n") else "\n")
        kept = "printed it on stdout above instead"
    return f"could not write {option} {path} ({reason}); {kept}"


def load_average():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "not reported by this system"


def command_line(argv):
    return shlex.join(["python", "-m", "rustyml", *argv])


def profile_text(result, host, command, measured_at, load_at_start, filter_text):
    """The deployment profile: `#` comments, then one NAME=VALUE line per measured gate and per
    gemmkit knob the sweep changed."""
    threads = rustyml.parallel.current_num_threads()
    measured = (
        f"# measured: {measured_at} by `{command}` (rustyml {rustyml.__version__}) on "
        f"{host['cpu']} ({host['cores']} cores, rayon threads {threads})"
    )
    gate_rule = (
        f"# gates: each kernel timed serial and parallel on a ladder of shapes; value = work of "
        f"the first rung from which parallel is >= {native.WIN_SPEEDUP}x faster on every larger "
        f"rung, times {native.MARGIN_FACTOR} toward serial (rounded up to two digits); the "
        f"default when parallel never wins; a gate measured by several ladders takes the largest, "
        f"unless their suggestions lie more than {native.MAX_LADDER_SPREAD}x apart: then the line "
        f"is commented out and the compiled default stays"
    )
    knob_rule = (
        f"# gemmkit knobs: coordinate descent over products through rustyml.math.matmul; a value "
        f"is kept when faster (geometric mean) in every interleaved round and by at least "
        f"{native.MIN_GAIN:.0%} or the measured run-to-run noise, whichever is larger; only "
        f"changed knobs are listed"
    )
    lines = [
        "# rustyml deployment profile",
        f"# match: {host['match']}",
        measured,
        gate_rule,
        knob_rule,
        f"# load average at start: {load_at_start}",
    ]
    if result["sweep"] is not None:
        lines.append(
            f"# gemmkit knob sweep: required gain {result['sweep']['required_gain']:.1%} "
            f"(noise of the knobs in force against themselves)"
        )
    if result["quick"]:
        lines.append("# quick mode: fewer, smaller rungs and shorter timings")
    if filter_text is not None:
        lines.append(f"# filtered: only ladders whose title contains {filter_text!r} were run")
    for g in result["gates"]:
        if g["ladders_agree"]:
            lines.append(f"{g['env']}={g['suggested']}")
        else:
            lo, hi = g["range"]
            lines.append(
                f"# {g['env']}={g['suggested']} not deployed: its {len(g['measured_by'])} ladders "
                f"suggest {lo} to {hi}, more than {native.MAX_LADDER_SPREAD}x apart (one threshold "
                f"cannot serve those kernels); the default {g['default']} stays"
            )
    if result["sweep"] is not None:
        lines += [f"{c['env']}={c['to']}" for c in result["sweep"]["changes"]]
    return "\n".join(lines) + "\n"


def slug(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]


def write_plots(families, report):
    """One log-log plot per ladder next to the report, or [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    for index, family in enumerate(families, start=1):
        rungs = sorted(family["rungs"], key=lambda r: r["work"])
        if not rungs:
            continue
        work = [r["work"] for r in rungs]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ax.loglog(work, [r["serial_us"] for r in rungs], "o-", label="serial")
        ax.loglog(work, [r["parallel_us"] for r in rungs], "s-", label="parallel")
        if family["crossover"] is not None:
            below, above = family["crossover"]
            ax.axvspan(below, above, color="tab:green", alpha=0.15, label="crossover")
        ax.axvline(
            family["suggested"],
            color="tab:red",
            linestyle="--",
            label=f"suggested {family['suggested']:,}",
        )
        ax.axvline(
            family["default"],
            color="tab:gray",
            linestyle=":",
            label=f"default {family['default']:,}",
        )
        ax.set_xlabel(f"work ({family['unit']})")
        ax.set_ylabel("median time (us)")
        ax.set_title(family["title"], fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = report.with_name(f"{report.stem}-{index:02d}-{slug(family['title'])}.png")
        try:
            fig.savefig(path, dpi=100)
        except OSError as exc:
            # A plot is an extra: the measurement is in the profile and the report.
            print(f"rustyml calibrate: warning: plot {path} not written ({exc})", file=sys.stderr)
        else:
            written.append(path)
        finally:
            plt.close(fig)
    return written


def calibrate(args):
    profile, report = output_paths(args)
    planned = native.titles(args.quick, args.filter)
    if not planned:
        args.parser.error(f"--filter {args.filter!r} matches no ladder title (and not the sweep)")
    host = native.host_info()
    command = command_line(args.argv)
    started = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc)
    load_at_start = load_average()
    print(
        f"calibrating {len(planned)} ladders{' (quick)' if args.quick else ''} on {host['cpu']} "
        f"({host['match']}); load average {load_at_start}",
        file=sys.stderr,
    )
    try:
        with tqdm(total=None, unit="step", mininterval=0.5, dynamic_ncols=True) as bar:

            def progress(done, total, step):
                bar.total = total
                bar.set_postfix_str(step[-60:], refresh=False)
                bar.update(done - bar.n)

            result = native.run(
                quick=args.quick,
                filter=args.filter,
                progress=progress,
                max_rungs=args.max_rungs,
                command=command,
                date=now.strftime("%Y-%m-%d %H:%M UTC"),
            )
    except KeyboardInterrupt:
        # The run stopped after the step in progress, with gates and knobs restored.
        print("interrupted: nothing written", file=sys.stderr)
        return 130
    # The measurement is done: from here on a failure to write loses nothing (save_or_rescue).
    failures = []
    failure = save_or_rescue(
        profile,
        profile_text(
            result,
            host,
            command,
            now.strftime("%Y-%m-%dT%H:%MZ"),
            load_at_start,
            args.filter,
        ),
        "--out",
        "profile",
    )
    if failure:
        failures.append(failure)
    plots = write_plots(result["families"], report)
    text = result["report"]
    if plots:
        text += "\n## Plots\n\n" + "".join(f"![{p.stem}]({p.name})\n" for p in plots)
    failure = save_or_rescue(report, text, "--report", "report")
    if failure:
        failures.append(failure)
    if failures:
        for failure in failures:
            print(f"rustyml calibrate: error: {failure}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    changed = len(result["sweep"]["changes"]) if result["sweep"] else 0
    print(f"wrote {profile} ({len(result['gates'])} gates, {changed} gemmkit knobs changed)")
    print(
        f"wrote {report}" + (f" and {len(plots)} plots" if plots else " (no matplotlib: no plots)")
    )
    print(f"took {elapsed:.0f} s; deploy with: set -a; . {profile}; set +a")
    return 0
