"""What differs between controller kinds, behind the one small interface the crowd steps through.

A policy wraps a network runtime and holds the per-character state its kind carries (the
PFNN's phase): it evaluates the network on a batch of inputs, advances that state from the
network's output, puts it into start poses, and gives it to snapshots. The crowd's step is the
same pipeline for every kind (docs/architecture.md, "Adding things"); a new kind adds a policy
here and registers it under its network's `kind`.
"""

from __future__ import annotations

import math

import numpy as np

TWO_PI = 2.0 * math.pi


class _PhaseCarrier:
    """A phase per character, advanced by the network's phase step, slowed as the character
    stands (original-demo.md: Advancing)."""

    state_keys = ("phase",)

    def __init__(self, network):
        self.network = network

    def initial_state(self, count: int) -> dict[str, np.ndarray]:
        return {"phase": np.zeros(count)}

    def start(self, state: dict, index: np.ndarray, pose: dict) -> None:
        """Characters `index` (re)start in `pose` (a start pose: its "phase")."""
        state["phase"][index] = pose["phase"]

    def advance(self, state: dict, out: dict, stand_amount: np.ndarray) -> None:
        state["phase"] = (state["phase"] + (0.9 * stand_amount + 0.1) * TWO_PI * out["phase_step"]) % TWO_PI

    def snapshot(self, state: dict, index) -> dict[str, np.ndarray]:
        return {"phase": np.array(state["phase"][index], np.float64)}

    def restore(self, state: dict, snapshot: dict, index) -> None:
        """Put back a snapshot; one taken under another kind without a phase leaves it as it is."""
        if "phase" in snapshot:
            state["phase"][index] = snapshot["phase"]


class PhasePolicy(_PhaseCarrier):
    """The phase-functioned network: a phase per character picks the weights."""

    kind = "pfnn"

    def evaluate(self, x: np.ndarray, state: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Outputs (N, 311) for inputs x (N, 342), and what was used beside the input."""
        used = state["phase"].copy()
        return self.network.predict_batch(x, used), {"phase_used": used}

    @staticmethod
    def describe(used: dict[str, np.ndarray], character: int) -> str:
        """Words for a failure report: what the network was evaluated at."""
        return f"phase {used['phase_used'][character]:.3f}"


class ExpertPolicy(_PhaseCarrier):
    """The mode-adaptive network: its gate blends the experts from the input alone. The phase it
    predicts (its phase-step output, trained as the PFNN's) is carried for the HUD and recordings,
    never fed back; what the last step used is the gate's expert weights."""

    kind = "mann"

    def evaluate(self, x: np.ndarray, state: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        y = self.network.predict_batch(x)
        return y, {"experts_used": self.network.gate_weights}

    @staticmethod
    def describe(used: dict[str, np.ndarray], character: int) -> str:
        weights = used["experts_used"][character]
        return "expert weights " + " ".join(f"{w:.2f}" for w in weights)


POLICIES = {policy.kind: policy for policy in (PhasePolicy, ExpertPolicy)}


def policy_for(network):
    """The policy of a network runtime, by its `kind` (a network without one is a PFNN)."""
    kind = getattr(network, "kind", PhasePolicy.kind)
    if kind not in POLICIES:
        raise ValueError(f"no controller policy for networks of kind {kind!r}; known: {', '.join(POLICIES)}")
    return POLICIES[kind](network)
