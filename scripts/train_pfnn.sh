#!/usr/bin/env bash
# Reproduces the shipped network/pfnn.npz from this repository alone (docs/training.md): the base
# recipe on the BVH and DeepMimic clips; two epochs with more noise on the phases; then twice two
# epochs on all of data/ (the ASF/AMC capture included, its jumps on the spot left out) with every
# planted foot on its ground, once as it is and once with every looped jog also turned to either
# side, each with a quarter of the second step's weights mixed back in; and last the second step
# and the two averaged weight for weight, 0.6 / 0.2 / 0.2.
# Usage: bash scripts/train_pfnn.sh [OUT.npz] [extra pfnn-demo train options, e.g. --device cuda]
set -euo pipefail
out=${1:-network/pfnn.npz}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pfnn-demo train --data data/cmu --data data/motions --out "$work/base.npz" "$@"
pfnn-demo train --data data/cmu --data data/motions --init "$work/base.npz" --epochs 2 \
    --learning-rate 2e-4 --phase-noise 0.2 --out "$work/smooth.npz" "$@"
pfnn-demo train --data data --init "$work/smooth.npz" --epochs 2 --learning-rate 2e-4 --phase-noise 0.2 --ground-feet \
    --leave-out 01_01.amc --leave-out 02_04.amc --keep-init 0.25 --out "$work/ahead.npz" "$@"
pfnn-demo train --data data --init "$work/smooth.npz" --epochs 2 --learning-rate 2e-4 --phase-noise 0.2 --ground-feet \
    --leave-out 01_01.amc --leave-out 02_04.amc --keep-init 0.25 --jog-side-steps sideways --out "$work/sideways.npz" "$@"
pfnn-demo average "$out" "$work/smooth.npz:0.6" "$work/ahead.npz:0.2" "$work/sideways.npz:0.2"
