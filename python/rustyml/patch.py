"""``python -m rustyml.patch script.py [args...]``: run a script with scikit-learn patched.

Also ``python -m rustyml.patch -m package.module [args...]``; ``-v`` first logs, per door call,
which path ran (rustyml or scikit-learn) and why.
"""

import runpy
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while argv and argv[0] in ("-v", "--verbose"):
        verbose = True
        argv.pop(0)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    from rustyml.sklearn import patch_sklearn

    patch_sklearn(verbose=verbose)
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m rustyml.patch -m: a module name is needed", file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
