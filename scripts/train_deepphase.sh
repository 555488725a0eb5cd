#!/usr/bin/env bash
# Reproduces the shipped network/deepphase.npz from this repository alone (docs/controllers.md):
# one epoch of the DeepPhase recipe on all of data/, every frame given its phase manifold by
# network/phases.npz; one epoch from it with tempo and amplitude noise on the manifold inputs;
# then that network and a quarter of the first one's weights, averaged weight for weight.
# The second step reads the first step's training windows back (--window-cache) instead of
# encoding the manifold again. Peak memory about 21 GB.
# Usage: bash scripts/train_deepphase.sh [OUT.npz] [extra pfnn-demo train options, e.g. --device cuda]
set -euo pipefail
out=${1:-network/deepphase.npz}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pfnn-demo train --model deepphase --data data --window-cache "$work/windows" --out "$work/base.npz" "$@"
pfnn-demo train --model deepphase --data data --init "$work/base.npz" --epochs 1 --learning-rate 5e-4 \
    --manifold-tempo 0.2 --manifold-amplitude 0.5 --window-cache "$work/windows" --out "$work/tuned.npz" "$@"
pfnn-demo average "$out" "$work/tuned.npz:0.75" "$work/base.npz:0.25"
