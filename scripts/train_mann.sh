#!/usr/bin/env bash
# Reproduces the shipped network/mann.npz from this repository alone (docs/controllers.md), a MANN
# whose gate reads the phase too (--gate-phase):
#   1. the MANN recipe on all of data/ (one epoch, then 600 updates on runs fed their own poses);
#   2. one more epoch from it with another seed and every looped jog also turned to either side,
#      three quarters of the first step's weights mixed back in;
#   3. from that, 600 updates on runs fed their own poses and near future, half of them through
#      the furthest turns and a quarter through stops (--rollout-stops 0.25), twice: once as the
#      base recipe runs them and once with the experts blended as play blends them
#      (--rollout-eased), each character's blend moving 0.2 of the way to the gate's each frame
#      (--gate-ease 0.2, written into the file);
#   4. the two averaged weight for weight.
# Usage: bash scripts/train_mann.sh [OUT.npz] [extra pfnn-demo train options, e.g. --device cuda]
set -euo pipefail
out=${1:-network/mann.npz}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pfnn-demo train --model mann --data data --gate-phase --out "$work/base.npz" "$@"
pfnn-demo train --model mann --data data --gate-phase --init "$work/base.npz" --epochs 1 --learning-rate 2e-4 \
    --seed 1 --keep-init 0.75 --jog-side-steps --out "$work/tuned.npz" "$@"
pfnn-demo train --model mann --data data --gate-phase --init "$work/tuned.npz" --epochs 0 --rollout-turns 0.5 \
    --rollout-stops 0.25 --rollout-trajectory --jog-side-steps --seed 2 --gate-ease 0.2 --out "$work/runs.npz" "$@"
pfnn-demo train --model mann --data data --gate-phase --init "$work/tuned.npz" --epochs 0 --rollout-turns 0.5 \
    --rollout-stops 0.25 --rollout-trajectory --jog-side-steps --seed 2 --gate-ease 0.2 --rollout-eased \
    --out "$work/eased_runs.npz" "$@"
pfnn-demo average "$out" "$work/runs.npz" "$work/eased_runs.npz"
