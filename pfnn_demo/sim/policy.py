"""What differs between controller kinds, behind the one small interface the crowd steps through.

A policy wraps a network runtime and holds the per-character state its kind carries (the
PFNN's phase, DeepPhase's manifold): it evaluates the network on a batch of inputs (adding
`extra_inputs` of its own after the crowd's 342), advances that state from the network's
output, puts it into start poses, and gives it to snapshots. The crowd's step is the
same pipeline for every kind (docs/architecture.md, "Adding things"); a new kind adds a policy
here and registers it under its network's `kind`.
"""

from __future__ import annotations

import math

import numpy as np

from . import deepphase

TWO_PI = 2.0 * math.pi


class _PhaseCarrier:
    """A phase per character, advanced by the network's phase step, slowed as the character
    stands (original-demo.md: Advancing)."""

    state_keys = ("phase",)
    extra_inputs = 0      # inputs the policy adds after the crowd's 342

    def __init__(self, network):
        self.network = network

    def initial_state(self, count: int) -> dict[str, np.ndarray]:
        return {"phase": np.zeros(count)}

    def start(self, state: dict, index: np.ndarray, pose: dict) -> None:
        """Characters `index` (re)start in `pose` (a start pose: its "phase")."""
        state["phase"][index] = pose["phase"]

    def advance(self, state: dict, y: np.ndarray, out: dict, stand_amount: np.ndarray) -> None:
        """Move the state on from the network's output y (N, outputs), read as `out` (read_output)."""
        state["phase"] = (state["phase"] + (0.9 * stand_amount + 0.1) * TWO_PI * out["phase_step"]) % TWO_PI

    def manifold_now(self, state: dict) -> np.ndarray | None:
        """(N, M, 3) the phase manifold now, for a kind that carries one."""
        return None

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
    """The mode-adaptive network: its gate blends the experts from the input alone, and each
    character's blend moves `gate_ease` of the way towards the gate's each frame (the network
    file's). The phase it predicts (its phase-step output, trained as the PFNN's) is carried for
    the HUD and recordings, and read back only by a gate that reads the phase
    (mann.MannWeights.gate_phase), never by the motion network; what the last step used is the
    experts' blend."""

    kind = "mann"
    state_keys = ("phase", "blend")

    # Why ease at all: the gate reads the trajectory's far future, which jumps when the stick
    # does: followed at once, the first shipped MANN's blend swung by 0.23-0.65 in one frame at
    # stick changes and the raw pose snapped with it. Moving half way each frame (its file's
    # default, mann.DEFAULT_GATE_EASE), random play in the plaza snapped in 70 frames instead of 95
    # and shook 12 % less (mean joint acceleration 430 against 488), turning as fast.
    @property
    def gate_ease(self) -> float:
        return self.network.gate_ease

    def initial_state(self, count: int) -> dict[str, np.ndarray]:
        return {**super().initial_state(count), "blend": np.full((count, self.network.experts), np.nan, np.float32)}

    def start(self, state: dict, index: np.ndarray, pose: dict) -> None:
        """A start pose settled by this kind brings its blend; the mean pose takes the gate's."""
        super().start(state, index, pose)
        state["blend"][index] = pose.get("blend", np.nan)

    def evaluate(self, x: np.ndarray, state: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        y = self.network.predict_batch(x, state["phase"], blend_from=state["blend"], ease=self.gate_ease)
        return y, {"experts_used": self.network.gate_weights}

    def advance(self, state: dict, y: np.ndarray, out: dict, stand_amount: np.ndarray) -> None:
        super().advance(state, y, out, stand_amount)
        state["blend"] = self.network.gate_weights.copy()      # the blend of this step's evaluate

    def snapshot(self, state: dict, index) -> dict[str, np.ndarray]:
        return {**super().snapshot(state, index), "blend": np.array(state["blend"][index], np.float32)}

    def restore(self, state: dict, snapshot: dict, index) -> None:
        """Put back a snapshot; one taken under another kind (or K) takes the gate's blend afresh."""
        super().restore(state, snapshot, index)
        blend = snapshot.get("blend")
        fits = blend is not None and np.shape(blend)[-1:] == (self.network.experts,)
        state["blend"][index] = blend if fits else np.nan

    @staticmethod
    def describe(used: dict[str, np.ndarray], character: int) -> str:
        weights = used["experts_used"][character]
        return "expert weights " + " ".join(f"{w:.2f}" for w in weights)


class ManifoldPolicy(ExpertPolicy):
    """The DeepPhase controller: each character carries its phase manifold (deepphase.py), read
    along the trajectory into the network's extra inputs and moved on by its predicted phases,
    amplitudes and frequencies; the gate blends the experts from it. A contact phase is carried
    beside it from the phase-step output, as for the MANN, for the HUD and recordings."""

    kind = deepphase.KIND
    state_keys = ("phase", "blend", "manifold")
    # Eased as the MANN's (its file's gate_ease): the manifold moves smoothly, but the gate also reads the
    # trajectory's far future, which jumps with the stick. Followed at once, the shipped network
    # snapped in 805 frames over eval's 96 cases, eased in 505 (the original 565).

    def __init__(self, network):
        super().__init__(network)
        self.channels = network.channels
        self.extra_inputs = deepphase.phase_input_size(self.channels)

    def initial_state(self, count: int) -> dict[str, np.ndarray]:
        return {**super().initial_state(count),
                "manifold": np.zeros((count, deepphase.MANIFOLD_FRAMES, self.channels, 3), np.float32)}

    def start(self, state: dict, index: np.ndarray, pose: dict) -> None:
        """A start pose settled by this kind brings its manifold; the mean pose starts at rest."""
        super().start(state, index, pose)
        state["manifold"][index] = pose.get("manifold", 0.0)

    def evaluate(self, x: np.ndarray, state: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return super().evaluate(np.concatenate([x, deepphase.manifold_input(state["manifold"])], axis=1), state)

    def advance(self, state: dict, y: np.ndarray, out: dict, stand_amount: np.ndarray) -> None:
        super().advance(state, y, out, stand_amount)
        deepphase.advance_manifold(state["manifold"], deepphase.read_phase_output(y, self.channels), stand_amount)

    def manifold_now(self, state: dict) -> np.ndarray:
        return state["manifold"][:, deepphase.NOW].copy()

    def snapshot(self, state: dict, index) -> dict[str, np.ndarray]:
        return {**super().snapshot(state, index), "manifold": np.array(state["manifold"][index], np.float32)}

    def restore(self, state: dict, snapshot: dict, index) -> None:
        """Put back a snapshot; one taken under another kind leaves the manifold as it is."""
        super().restore(state, snapshot, index)
        if "manifold" in snapshot and np.shape(snapshot["manifold"])[-2:] == (self.channels, 3):
            state["manifold"][index] = snapshot["manifold"]


POLICIES = {policy.kind: policy for policy in (PhasePolicy, ExpertPolicy, ManifoldPolicy)}


def policy_for(network):
    """The policy of a network runtime, by its `kind` (a network without one is a PFNN)."""
    kind = getattr(network, "kind", PhasePolicy.kind)
    if kind not in POLICIES:
        raise ValueError(f"no controller policy for networks of kind {kind!r}; known: {', '.join(POLICIES)}")
    return POLICIES[kind](network)
