#!/usr/bin/env bash
# Reproduces the shipped network/mann.npz from this repository alone (docs/controllers.md): the
# MANN recipe on all of data/ (one epoch, then 600 updates on runs fed their own poses), then one
# more epoch from it with another seed and every looped jog also turned to either side, three
# quarters of the first step's weights mixed back in.
# Usage: bash scripts/train_mann.sh [OUT.npz] [extra pfnn-demo train options, e.g. --device cuda]
set -euo pipefail
out=${1:-network/mann.npz}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pfnn-demo train --model mann --data data --out "$work/base.npz" "$@"
pfnn-demo train --model mann --data data --init "$work/base.npz" --epochs 1 --learning-rate 2e-4 --seed 1 \
    --keep-init 0.75 --jog-side-steps --out "$out" "$@"
