#!/usr/bin/env bash
# Before/after on one machine in one run: two builds' own estimator and network reports,
# alternated round by round so both see the same load.
#
#   benches/python/compare_builds.sh BEFORE_DIR AFTER_DIR [ROUNDS]
#
# Each DIR holds a `rustyml` package (a release `_native.so` copied in) and that commit's
# benches/python/*.py, e.g. for a commit C:
#   git worktree add /tmp/c C && (cd /tmp/c && cargo build --release --features python --lib)
#   mkdir -p D && cp -r /tmp/c/python/rustyml D/ && cp /tmp/c/target/release/librustyml.so \
#     D/rustyml/_native.so && cp /tmp/c/benches/python/*.py D/
# The scikit-learn and Keras columns of each report are the load's witness.
set -euo pipefail
before=$(realpath "$1")
after=$(realpath "$2")
rounds=${3:-3}
for r in $(seq "$rounds"); do
  for dir in "$before" "$after"; do
    echo "## report_ml $(basename "$dir") round $r $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$dir" && PYTHONPATH="$dir" python report_ml.py)
  done
done
for r in $(seq "$rounds"); do
  for dir in "$before" "$after"; do
    echo "## report_nn $(basename "$dir") round $r $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$dir" && PYTHONPATH="$dir" KERAS_BACKEND=jax python report_nn.py --quick)
  done
done
# The MLP step and single-row prediction alone (copy report_mlp_step.py and _host.py into a
# BEFORE dir from a commit that lacks them: they only use report_nn.py's model).
for r in $(seq "$rounds"); do
  for dir in "$before" "$after"; do
    echo "## report_mlp_step $(basename "$dir") round $r $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$dir" && PYTHONPATH="$dir" KERAS_BACKEND=jax python report_mlp_step.py)
  done
done
