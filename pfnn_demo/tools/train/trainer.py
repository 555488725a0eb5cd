"""The PFNN trainer (PyTorch, in the optional `train` extra).

The paper's recipe (original-demo.md: The training recipe): 4 cyclic Catmull-Rom control points per layer,
ELU, dropout
keeping 0.7 on every layer's input, Adam, an L1 penalty on the weights, mini-batches of 32,
inputs and outputs normalised with group-shared deviations; changed where measured (see
TrainConfig): 256 hidden units, learning rate 1e-3, noise on the training inputs and phases. Checkpoints after every
epoch (resumable), a fixed seed, validation on held-out clips, export to the project's .npz.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

from ...errors import PfnnError
from ...sim.deepphase import channels_of
from ...sim.features import INPUT, INPUT_SIZE
from ...sim.weights import NetworkWeights, save_npz
from .manifold_noise import ManifoldNoise
from .rollout import ROLLOUT_GRADIENT_NORM, Rollouts


def _torch():
    try:
        import torch
    except ImportError:
        raise PfnnError("training needs PyTorch: pip install 'pfnn-demo[train]' "
                        "(on CPU-only machines install torch's CPU build first)") from None
    return torch


@dataclasses.dataclass
class TrainConfig:
    # The paper's 512 units and Adam at 1e-4 were measured against 256 units at 1e-3 on the
    # project's few-minute data sets: the larger network's poses exploded in play, and 1e-3
    # reaches in 20 epochs what 1e-4 does not. Batches of 256 rather than the paper's 32: on two
    # CPU cores an update step costs about as much for 32 windows as for 256 (Adam's pass over
    # the 3.7 M control-point weights dominates), so 256 trains 3x as many windows per second.
    # These defaults train the shipped network.
    hidden: int = 256
    epochs: int = 20
    batch_size: int = 256
    learning_rate: float = 1e-3   # the peak: it falls along a cosine to FINAL_RATE times this
    keep_probability: float = 0.7
    l1: float = 0.01
    input_noise: float = 0.2      # std of Gaussian noise on the normalised inputs while training
    # Noise on the training phases (std in cycles) keeps the weights' phase function smooth: with
    # minutes of capture the four control points otherwise differ so much that the phase alone,
    # moving on from frame to frame, shook the pose 3-4x as much as it does the original network's
    # (`pfnn-demo eval --shake-sources`).
    phase_noise: float = 0.1
    # Noise on the previous pose's inputs (joint positions and velocities) instead of input_noise
    # (None: input_noise there too). More of it than on the trajectory makes the network lean on
    # where the player wants to go rather than carry on with the pose it had: with 0.3 the shipped
    # network turns round in 0.99x-1.10x the original's time (the one before it, with 0.2, up to
    # 1.12x). Without the turning starts and direction changes in the data it side-stepped
    # or walked backwards away from a stick pushed to its side.
    pose_noise: float | None = 0.3
    # Noise on a DeepPhase controller's phase manifold inputs (None: input_noise there too). The
    # manifold, like the previous pose, is state the network carries from frame to frame.
    manifold_noise: float | None = None
    # Tempo noise on that manifold (manifold_noise.py; 0: none): the standard deviation of the
    # factor by which each window's manifold inputs run fast or slow against the captured motion.
    manifold_tempo: float = 0.0
    # Amplitude noise on it (manifold_noise.py; 0: none): the standard deviation of the log of the
    # factor by which each window's channels are scaled.
    manifold_amplitude: float = 0.0
    seed: int = 23456
    device: str = "cpu"
    # The controller kind to train: "pfnn", "mann" (the mode-adaptive network: `experts`
    # experts blended by a gate of two hidden layers of `gate_hidden` units, AdamW with
    # `weight_decay`; no phase goes in, so phase_noise does not apply, except to a gate that
    # reads the phase, `gate_phase`) or "deepphase" (the same,
    # its gate reading the phase manifold).
    model: str = "pfnn"
    experts: int = 8
    gate_hidden: int = 64
    # A MANN's gate also reads the phase (its cosine and sine; the labelled phase in training, the
    # phase it predicts and carries in play), as the Neural State Machine's gate does.
    gate_phase: bool = False
    # The share of the way each character's expert blend moves towards the gate's each frame in
    # play, written into the network file (mann.MannWeights.gate_ease); None: the --init
    # network's, else mann.DEFAULT_GATE_EASE.
    gate_ease: float | None = None
    weight_decay: float = 2.5e-3
    # Of the training clips on flat ground, the share given blocks beside their path
    # (synthesis.WallsBeside), so that a tall side height (a building's top beside the street)
    # is no slope to climb. With none, the urban scene shook the pose in bursts (jitter up to
    # 1.67x the original's); with a quarter, 21 of 96 eval cases miss a bar against 26, with
    # half, tracking near walls got worse (28), docs/evaluation.md.
    walls_share: float = 0.25
    # Jogs turned off their facing in the data (pipeline.jog_side_steps): "any" way (sideways,
    # diagonally, backwards), "sideways" only, or None. Off in the base recipe (trained from
    # scratch with them, 27 eval cases missed a bar against 20); in the shipped network's last
    # fine-tuning step they keep a strafing jog facing ahead (docs/training.md, "Jogging off the facing").
    jog_side_steps: str | None = None
    # After the epochs, updates on runs of `rollout_frames` consecutive windows played on the
    # network's own poses (rollout.py), `rollout_sequences` runs an update, the learning rate
    # falling from `rollout_rate` along a cosine. 0 frames: none.
    rollout_frames: int = 0
    rollout_updates: int = 600
    rollout_sequences: int = 16
    rollout_rate: float = 2e-4
    # Feed the runs' near future trajectory back too, as play does (rollout.py), not only the pose.
    rollout_trajectory: bool = False
    # A gated network's runs blend the experts as play does: each frame's blend `gate_ease` of
    # the way from the last one's to the gate's (False: the gate's own, as the base recipe's).
    rollout_eased: bool = False
    # The share of each update's runs drawn from the tenth of them that turn furthest
    # (rollout.turning_starts) rather than from all alike.
    rollout_turns: float = 0.0
    # The share drawn from the tenth that move furthest off the facing (rollout.strafing_starts).
    rollout_strafes: float = 0.0
    # The share drawn from the tenth that come to a stand most (rollout.stopping_starts).
    rollout_stops: float = 0.0


# What differs from the PFNN recipe above when training a MANN: the paper's two hidden layers of
# 512, and one epoch. Eight experts of 512 units fit the project's data within one pass (each
# window costs five times the PFNN's): validation loss was lowest after the first epoch of
# every longer run, and measured in play (`pfnn-demo eval`, all scripts in the plaza and the
# urban scene) 8 epochs missed a bar of the original in 18 of 24 cases, 2 epochs in 11, 1 in 9.
# Then 600 updates on runs of 30 frames played on its own poses, beside ordinary batches: over
# the 96 cases of `eval --scene all` the MANN trained without them missed a bar in 29, gliding
# (a frozen pose carried over the ground) in 3.0 % of frames; with them in 25 and 2.2 %
# (docs/training.md).
# The DeepPhase controller (a MANN whose gate reads the phase manifold, with the manifold as extra
# inputs and outputs) starts from the MANN's recipe, on the PFNN's data (blocks beside the path).
MODEL_DEFAULTS = {"pfnn": {}, "mann": {"hidden": 512, "epochs": 1, "walls_share": 0.0, "rollout_frames": 30},
                  "deepphase": {"hidden": 512, "epochs": 1}}


def recipe(model: str = "pfnn", **changes) -> TrainConfig:
    """The training recipe of controller kind `model`, with `changes` (None values ignored)."""
    settings = {**MODEL_DEFAULTS[model], **{k: v for k, v in changes.items() if v is not None}}
    return TrainConfig(model=model, **settings)


def weight_sets(torch, count: int, sizes: list[int]):
    """`count` weight sets per layer of a network of layer sizes `sizes` (the PFNN's control
    points, the MANN's experts): (weights (count, out, in), biases (count, out)) parameter lists,
    uniform in +-sqrt(6 / (in * out)) and zero."""
    nn = torch.nn
    weights, biases = nn.ParameterList(), nn.ParameterList()
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        bound = math.sqrt(6.0 / (n_in * n_out))
        weights.append(nn.Parameter(torch.empty(count, n_out, n_in).uniform_(-bound, bound)))
        biases.append(nn.Parameter(torch.zeros(count, n_out)))
    return weights, biases


def blended_layers(torch, model, x, blend):
    """The three layers of `model` (its weight sets, biases and dropout) on x (B, in), each
    layer's sets blended per sample by blend (B, K): each set's product, then the blend."""
    h = x
    for depth, (w, b) in enumerate(zip(model.weights, model.biases)):
        h = model.dropout(h)
        per_set = torch.einsum("koi,bi->kbo", w, h) + b[:, None, :]      # (K, B, out)
        h = torch.einsum("bk,kbo->bo", blend, per_set)
        if depth < 2:
            h = torch.nn.functional.elu(h)
    return h


def build_model(torch, input_size: int, output_size: int, hidden: int, keep: float):
    nn = torch.nn

    class PhaseFunctionedModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights, self.biases = weight_sets(torch, 4, [input_size, hidden, hidden, output_size])
            self.dropout = nn.Dropout(1 - keep)

        def forward(self, x, phase):
            """x (B, in) normalised, phase (B,) in cycles -> (B, out) normalised."""
            return blended_layers(torch, self, x, catmull_rom(torch, phase))

        def l1(self):
            return sum(w.abs().mean() for w in self.weights) / 6.0

    return PhaseFunctionedModel()


def build_mann_model(torch, input_size: int, output_size: int, config: TrainConfig, gate_inputs):
    nn = torch.nn
    hidden, experts = config.hidden, config.experts

    class ModeAdaptiveModel(nn.Module):
        kind = config.model      # "mann", or "deepphase" with the manifold as the gate's input

        def __init__(self):
            super().__init__()
            self.weights, self.biases = weight_sets(torch, experts, [input_size, hidden, hidden, output_size])
            self.register_buffer("gate_inputs", torch.as_tensor(gate_inputs, dtype=torch.long))
            self.gate_phase = config.gate_phase
            gate_size = len(gate_inputs) + (2 if config.gate_phase else 0)
            self.gate = nn.Sequential(nn.Linear(gate_size, config.gate_hidden), nn.ELU(),
                                      nn.Linear(config.gate_hidden, config.gate_hidden), nn.ELU(),
                                      nn.Linear(config.gate_hidden, experts))
            self.dropout = nn.Dropout(1 - config.keep_probability)

        def blend(self, x, phase=None):
            """x (B, in) normalised (and the phase (B,) in cycles, for a gate that reads it) ->
            (B, K) the experts' weights."""
            read = self.dropout(x[:, self.gate_inputs])
            if self.gate_phase:
                angle = (2.0 * math.pi * phase)[:, None]
                read = torch.cat([read, torch.cos(angle), torch.sin(angle)], dim=1)
            return torch.softmax(self.gate(read), dim=1)

        def forward(self, x, phase=None):
            """x (B, in) normalised -> (B, out) normalised (`phase` read only by a gate that reads it)."""
            return self.with_blend(x, self.blend(x, phase))

        def with_blend(self, x, blend):
            """x (B, in) normalised through the experts blended by blend (B, K) -> (B, out) normalised."""
            return blended_layers(torch, self, x, blend)

        def l1(self):
            return sum(w.abs().mean() for w in self.weights) / 6.0

    return ModeAdaptiveModel()


def catmull_rom(torch, phase):
    """(B,) phases in cycles -> (B, 4) control point weights (the runtime's basis)."""
    pscale = torch.remainder(phase, 1.0) * 4.0
    k1 = torch.floor(pscale)
    mu = (pscale - k1)[:, None]
    k1 = k1.long() % 4
    basis = torch.cat([-0.5 * mu ** 3 + mu ** 2 - 0.5 * mu, 1.5 * mu ** 3 - 2.5 * mu ** 2 + 1.0,
                       -1.5 * mu ** 3 + 2.0 * mu ** 2 + 0.5 * mu, 0.5 * mu ** 3 - 0.5 * mu ** 2], dim=1)
    weights = torch.zeros(phase.shape[0], 4, dtype=basis.dtype, device=phase.device)
    for offset in range(4):
        weights.scatter_add_(1, ((k1 + offset - 1) % 4)[:, None], basis[:, offset:offset + 1])
    return weights


def train(X: np.ndarray, Y: np.ndarray, P: np.ndarray, normalisation, config: TrainConfig,
          validation=None, checkpoint: Path | None = None, resume: bool = False, progress=True,
          log=print, follows: np.ndarray | None = None, initial=None) -> tuple[object, list[dict]]:
    """Train on (X, Y, P); returns the model and a history of per-epoch losses. `follows` (N,)
    marks the rows that are the frame after the row before them in one clip: what rollouts
    (config.rollout_frames) play through. `initial`: saved weights of the same kind and sizes to
    start from (fine-tuning) instead of random ones."""
    torch = _torch()
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    x_mean, x_std, y_mean, y_std = normalisation
    # On an accelerator the whole set lives there: no copy per batch.
    Xn = torch.as_tensor((X - x_mean) / x_std, dtype=torch.float32).to(config.device)
    Yn = torch.as_tensor((Y - y_mean) / y_std, dtype=torch.float32).to(config.device)
    Pt = torch.as_tensor(P, dtype=torch.float32).to(config.device)
    noise = torch.as_tensor(input_noise_scale(X.shape[1], config)).to(config.device)
    noise = noise if bool(noise.any()) else None    # asked once: a read waits for the device
    # A DeepPhase controller's inputs beyond the PFNN's are its phase manifold.
    channels = channels_of(X.shape[1], Y.shape[1]) if X.shape[1] > INPUT_SIZE else 0
    warp = (ManifoldNoise(torch, normalisation, channels, config.manifold_tempo, config.device,
                          config.manifold_amplitude)
            if channels and (config.manifold_tempo > 0 or config.manifold_amplitude > 0) else None)
    if config.model in GATE_INPUTS:     # a gated mixture of experts
        gate_inputs = GATE_INPUTS[config.model](X.shape[1])
        model = build_mann_model(torch, X.shape[1], Y.shape[1], config, gate_inputs).to(config.device)
        optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    else:
        model = build_model(torch, X.shape[1], Y.shape[1], config.hidden, config.keep_probability).to(config.device)
        optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    if initial is not None:
        start_from(torch, model, initial)
    if hasattr(model, "gate"):
        model.gate_ease = resolved_gate_ease(config, initial)    # what the file will say, and runs ease by
    history, start_epoch = [], 0
    if resume and checkpoint is not None and checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        history, start_epoch = state["history"], state["epoch"]
        rng = np.random.default_rng(config.seed + start_epoch)
        log(f"resumed from {checkpoint} after epoch {start_epoch}")
    batches = len(X) // config.batch_size
    if batches == 0:
        raise PfnnError(f"{len(X)} training windows are fewer than one batch of {config.batch_size}")
    bar = _progress(progress)
    for epoch in range(start_epoch, config.epochs):
        model.train()
        order = torch.as_tensor(rng.permutation(len(X))).to(config.device)
        started, total = time.perf_counter(), 0.0
        with bar(total=batches, desc=f"epoch {epoch + 1}/{config.epochs}") as meter:
            for b in range(batches):
                index = order[b * config.batch_size:(b + 1) * config.batch_size]
                for group in optimiser.param_groups:
                    group["lr"] = learning_rate(config, (epoch * batches + b) / (config.epochs * batches))
                loss = window_loss(torch, model, (Xn, Yn, Pt), index, noise, config, warp) + config.l1 * model.l1()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                total = total + loss.detach()   # read back only now and then: a read waits for the device
                meter.update(1)
                if b % 50 == 0:
                    meter.set_postfix(loss=f"{float(total) / (b + 1):.4f}")
        entry = {"epoch": epoch + 1, "train_loss": float(total) / batches, "seconds": time.perf_counter() - started}
        if validation is not None:
            entry["validation_loss"] = evaluate(model, *validation, normalisation, config)
        history.append(entry)
        left = (config.epochs - epoch - 1) * np.mean([h["seconds"] for h in history[-3:]])
        entry_text = " ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in entry.items())
        log(f"{entry_text}, about {left / 60:.0f} min left" if epoch + 1 < config.epochs else entry_text)
        if checkpoint is not None:
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(), "history": history,
                        "epoch": epoch + 1}, checkpoint)
    if config.rollout_frames > 0 and follows is not None and config.rollout_updates > 0:
        ease = model.gate_ease if config.rollout_eased and hasattr(model, "gate") else None
        rollouts = Rollouts(torch, X, Y, follows, normalisation, config.rollout_frames, config.device,
                            trajectory=config.rollout_trajectory, channels=channels, ease=ease)
        loss = train_on_rollouts(torch, model, optimiser, rollouts, (Xn, Yn, Pt), noise, config, bar, log, warp)
        if loss is not None and history:
            history[-1]["rollout_loss"] = loss
            if validation is not None:
                history[-1]["validation_loss_after_rollouts"] = evaluate(model, *validation, normalisation, config)
                log(f"validation loss after rollouts {history[-1]['validation_loss_after_rollouts']:.4f}")
    return model, history


def resolved_gate_ease(config: TrainConfig, initial=None) -> float:
    """The gate ease a gated network is trained for and written with: the recipe's, else the
    network it starts from's, else the default."""
    from ...sim.mann import DEFAULT_GATE_EASE

    if config.gate_ease is not None:
        return config.gate_ease
    return float(getattr(initial, "gate_ease", DEFAULT_GATE_EASE))


def file_parameters(model) -> list[tuple[str, object]]:
    """The model's parameters under their names in the project's network files: W0, b0, ... for
    each layer's weight sets and, for a gated network, G0, g0, ... for its gate's layers."""
    named = [(f"{name}{layer}", param) for layer, (w, b) in enumerate(zip(model.weights, model.biases))
             for name, param in (("W", w), ("b", b))]
    if hasattr(model, "gate"):
        linears = [m for m in model.gate if hasattr(m, "weight")]
        named += [(f"{name}{layer}", param) for layer, linear in enumerate(linears)
                  for name, param in (("G", linear.weight), ("g", linear.bias))]
    return named


def start_from(torch, model, weights) -> None:
    """Copy saved weights (NetworkWeights, or MannWeights for a gated network) into `model`."""
    if hasattr(model, "gate") and not (hasattr(weights, "gate_inputs") and
                                       np.array_equal(weights.gate_inputs, model.gate_inputs.cpu().numpy())):
        raise PfnnError("the network to start from has another gate input layout than this training's")
    if hasattr(model, "gate") and bool(getattr(weights, "gate_phase", False)) != model.gate_phase:
        raise PfnnError("the network to start from " + ("reads" if weights.gate_phase else "does not read") +
                        " the phase in its gate: train " + ("with" if weights.gate_phase else "without") + " --gate-phase")
    for name, param in file_parameters(model):
        saved = getattr(weights, name, None)
        if saved is None or tuple(saved.shape) != tuple(param.shape):
            raise PfnnError(f"the network to start from has {name} of shape "
                            f"{None if saved is None else tuple(saved.shape)} where this training's is "
                            f"{tuple(param.shape)}: train with the layer sizes it has")
        with torch.no_grad():
            param.copy_(torch.as_tensor(np.asarray(saved, np.float32)))


def keep_initial(torch, model, weights, share: float) -> None:
    """Mix `share` of saved weights (the network fine-tuning started from) back into `model`:
    weight-space ensembling of the fine-tuned network and its start (WiSE-FT, Wortsman et al.
    2022). Both lie in one basin, so the mix plays as a network: the fine-tune's gains, less
    of its drift from the start where the new data pulled it away from what it did well."""
    from ..average import weighted_sum

    with torch.no_grad():
        for name, param in file_parameters(model):
            mixed = weighted_sum([param.detach().cpu().numpy(), getattr(weights, name)], [1.0 - share, share])
            param.copy_(torch.as_tensor(mixed))


def window_loss(torch, model, tensors, index, noise, config: TrainConfig, warp=None):
    """Mean squared error on the windows `index` of the normalised (inputs, outputs, phases),
    the inputs (and a PFNN's phases) with the training noise (None: none) and a DeepPhase
    manifold's tempo and amplitude noise `warp` (ManifoldNoise, None: none)."""
    Xn, Yn, Pt = tensors
    inputs = Xn[index]
    if warp is not None:
        inputs = warp(torch, inputs, Yn[index])
    if noise is not None:   # robustness to the runtime's own, imperfect feedback
        inputs = inputs + noise * torch.randn_like(inputs)
    phases = Pt[index]
    if config.phase_noise > 0 and (config.model == "pfnn" or config.gate_phase):
        phases = phases + config.phase_noise * torch.randn_like(phases)
    return torch.mean((model(inputs, phases) - Yn[index]) ** 2)


# The runs drawn from pools of their own: the recipe's share, the pool (an attribute of Rollouts)
# and what the provenance calls them.
CHOSEN_RUNS = (("rollout_turns", "turning", "through the furthest turns"),
               ("rollout_strafes", "strafing", "moving furthest off the facing"),
               ("rollout_stops", "stopping", "coming to a stand"))


def drawn_starts(rollouts: Rollouts, config: TrainConfig, rng) -> np.ndarray:
    """One update's `config.rollout_sequences` run starts: `config.rollout_turns` of them from
    the runs that turn furthest, `config.rollout_strafes` from those that move furthest off
    the facing, `config.rollout_stops` from those that come to a stand, the rest from all."""
    counts = [int(round(getattr(config, share) * config.rollout_sequences)) for share, _, _ in CHOSEN_RUNS]
    if sum(counts) == 0:    # one draw over all runs, the recipe's draws unchanged
        return rollouts.starts[rng.integers(0, len(rollouts.starts), config.rollout_sequences)]
    counts.append(max(0, config.rollout_sequences - sum(counts)))
    drawn = []
    for name, count in zip([pool for _, pool, _ in CHOSEN_RUNS] + ["starts"], counts):
        if count > 0:     # a pool is read only when drawn from
            pool = getattr(rollouts, name)
            drawn.append(pool[rng.integers(0, len(pool), count)])
    return np.concatenate(drawn)


def train_on_rollouts(torch, model, optimiser, rollouts: Rollouts, tensors, noise, config: TrainConfig, bar, log,
                      warp=None):
    """`config.rollout_updates` updates, each on `config.rollout_sequences` runs (rollout.py) and
    a batch of ordinary windows beside them (trained on runs alone, the MANN turned slower: 20 of
    96 eval cases over the turning bar against 7), the rate falling along a cosine from
    `config.rollout_rate`. Returns the mean loss of the runs (None when there are none)."""
    if len(rollouts.starts) == 0:
        log(f"no clip has {rollouts.frames} consecutive windows: no rollout training")
        return None
    model.train()
    rng = np.random.default_rng(config.seed + 1)
    started, total = time.perf_counter(), 0.0
    with bar(total=config.rollout_updates, desc=f"rollouts of {rollouts.frames} frames") as meter:
        for update in range(config.rollout_updates):
            for group in optimiser.param_groups:
                group["lr"] = cosine_rate(config.rollout_rate, update / config.rollout_updates)
            starts = drawn_starts(rollouts, config, rng)
            loss = rollouts.loss(torch, model, *tensors, starts, noise)
            index = torch.as_tensor(rng.integers(0, len(tensors[0]), config.batch_size)).to(config.device)
            optimiser.zero_grad()
            (loss + window_loss(torch, model, tensors, index, noise, config, warp) + config.l1 * model.l1()).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), ROLLOUT_GRADIENT_NORM)
            optimiser.step()
            total = total + loss.detach()
            meter.update(1)
            if update % 50 == 0:
                meter.set_postfix(loss=f"{float(total) / (update + 1):.4f}")
    mean = float(total) / config.rollout_updates
    log(f"rollouts: {config.rollout_updates} updates of {config.rollout_sequences} runs of {rollouts.frames} frames, "
        f"loss {mean:.4f}, {time.perf_counter() - started:.0f} s")
    return mean


FINAL_RATE = 0.01


def _mann_gate(input_size: int) -> np.ndarray:
    from ...sim.mann import GATE_INPUTS as chosen
    return chosen


def _deepphase_gate(input_size: int) -> np.ndarray:
    from ...sim.deepphase import gate_inputs
    from ...sim.features import SAMPLES

    return gate_inputs((input_size - INPUT_SIZE) // (2 * SAMPLES))


# What the gate of each gated kind reads, given the size of the inputs: the MANN's chosen inputs;
# DeepPhase's phase manifold and the MANN's inputs (sim/deepphase.gate_inputs).
GATE_INPUTS = {"mann": _mann_gate, "deepphase": _deepphase_gate}


def input_noise_scale(input_size: int, config: TrainConfig) -> np.ndarray:
    """Per-input std of the training noise (normalised units)."""
    scale = np.full(input_size, config.input_noise, np.float32)
    if config.pose_noise is not None and input_size >= INPUT_SIZE:
        for group in ("joint_positions", "joint_velocities"):
            scale[INPUT[group]] = config.pose_noise
    if config.manifold_noise is not None and input_size > INPUT_SIZE:
        scale[INPUT_SIZE:] = config.manifold_noise
    return scale


def learning_rate(config: TrainConfig, progress: float) -> float:
    """The rate at `progress` (0 to 1) through training: a cosine from the configured rate down
    to FINAL_RATE times it. At a constant 1e-3 the weights kept jumping about to the last epoch
    (validation loss was lowest after the first), and the network's poses shook in play."""
    return cosine_rate(config.learning_rate, progress)


def cosine_rate(peak: float, progress: float) -> float:
    """`peak` at progress 0, falling along a cosine to FINAL_RATE times it at 1."""
    return peak * (FINAL_RATE + (1 - FINAL_RATE) * 0.5 * (1 + math.cos(math.pi * progress)))


def evaluate(model, X, Y, P, normalisation, config: TrainConfig) -> float:
    torch = _torch()
    x_mean, x_std, y_mean, y_std = normalisation
    model.eval()
    total = 0.0
    with torch.no_grad():
        for start in range(0, len(X), EVALUATION_BATCH):
            part = slice(start, start + EVALUATION_BATCH)
            prediction = model(torch.as_tensor((X[part] - x_mean) / x_std, dtype=torch.float32).to(config.device),
                               torch.as_tensor(P[part], dtype=torch.float32).to(config.device))
            target = torch.as_tensor((Y[part] - y_mean) / y_std, dtype=torch.float32).to(config.device)
            total += float(torch.sum((prediction - target) ** 2))
    return total / (len(X) * Y.shape[1])


EVALUATION_BATCH = 65536   # validation windows per forward pass: bounds the memory it takes


def export(model, normalisation, path: Path, provenance: str):
    """Save the weights and normalisation in the project's .npz format (the model's kind)."""
    x_mean, x_std, y_mean, y_std = normalisation
    if hasattr(model, "gate"):
        return _export_mann(model, normalisation, path, provenance, model.kind)
    arrays = _file_arrays(model)
    weights = NetworkWeights(**arrays, Xmean=x_mean, Xstd=x_std, Ymean=y_mean, Ystd=y_std, provenance=provenance,
                             heel_contacts=True)   # the automatic labels put heel strikes first
    path.parent.mkdir(parents=True, exist_ok=True)
    save_npz(weights, path)
    return weights


def _file_arrays(model) -> dict[str, np.ndarray]:
    return {name: param.detach().cpu().numpy().astype(np.float32) for name, param in file_parameters(model)}


def _export_mann(model, normalisation, path: Path, provenance: str, kind: str):
    from ...sim.mann import DEFAULT_GATE_EASE, MannWeights, save_mann

    x_mean, x_std, y_mean, y_std = normalisation
    arrays = _file_arrays(model)
    weights = MannWeights(**arrays, gate_inputs=model.gate_inputs.cpu().numpy(), Xmean=x_mean, Xstd=x_std,
                          Ymean=y_mean, Ystd=y_std, provenance=provenance, heel_contacts=True,
                          gate_phase=model.gate_phase, gate_ease=getattr(model, "gate_ease", DEFAULT_GATE_EASE))
    path.parent.mkdir(parents=True, exist_ok=True)
    save_mann(weights, path, kind=kind)
    return weights


def _progress(enabled: bool):
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm
        except ImportError:
            pass

    class Silent:
        def __init__(self, total=0, desc=""):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            pass

        def set_postfix(self, **kwargs):
            pass

        def close(self):
            pass

    return Silent
