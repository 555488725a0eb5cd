#!/usr/bin/env bash
# Reproduces the shipped network/pfnn.npz from this repository alone, in three steps (docs/training.md):
# the base recipe on the BVH and DeepMimic clips, two epochs with more noise on the phases, then
# two epochs on all of data/ (the ASF/AMC capture included, its jumps on the spot left out) with every
# planted foot on its ground and every looped jog also turned sideways, a quarter of the second step's
# weights mixed back in.
# Usage: bash scripts/train_pfnn.sh [OUT.npz] [extra pfnn-demo train options, e.g. --device cuda]
set -euo pipefail
out=${1:-network/pfnn.npz}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pfnn-demo train --data data/cmu --data data/motions --out "$work/base.npz" "$@"
pfnn-demo train --data data/cmu --data data/motions --init "$work/base.npz" --epochs 2 \
    --learning-rate 2e-4 --phase-noise 0.2 --out "$work/smooth.npz" "$@"
pfnn-demo train --data data --init "$work/smooth.npz" --epochs 2 \
    --learning-rate 2e-4 --phase-noise 0.2 --ground-feet --jog-side-steps --leave-out 01_01.amc --leave-out 02_04.amc \
    --keep-init 0.25 --out "$out" "$@"
