"""The phase manifold (DeepPhase's periodic autoencoder): its training and file, the NumPy encoder
against the trained model, the shipped manifold of the captured clips against their foot
contacts, and the commands' pictures and errors."""

from __future__ import annotations


import numpy as np
import pytest

from pfnn_demo.errors import PfnnError
from pfnn_demo.tools.cli import main
from pfnn_demo.tools.phase_manifold import PhaseEncoder, correspondence, locking, velocity_features
from pfnn_demo.tools.plot_phases import compared_frames, correspondence_table, moving_frames
from pfnn_demo.tools.train.pipeline import load_clips

from conftest import REPO

SHIPPED_PHASES = REPO / "network" / "phases.npz"
CADENCE_TOLERANCE = 0.10
GAIT_CATEGORIES = ("walk", "walk-fast", "jog", "run")
LOCKING = 0.9              # 1: a fixed offset from the contact phase on every frame


@pytest.fixture(scope="module")
def captured():
    """The labelled captured clips of data/cmu (BVH) and data/cmu-amc."""
    return [clip for folder in ("cmu", "cmu-amc") for clip in load_clips(REPO / "data" / folder, log=lambda t: None)]


@pytest.fixture(scope="module")
def shipped():
    return PhaseEncoder.load(SHIPPED_PHASES)


@pytest.fixture(scope="module")
def manifolds(captured, shipped):
    return {clip.name: shipped.encode(velocity_features(clip.positions)) for clip in captured}


# -- the shipped manifold of the captured data ------------------------------------------------

def test_walks_and_runs_circle_at_their_cadence(captured, manifolds):
    """On every captured walk, jog and run cycle, the strongest channel's frequency is the gait's
    cadence from its foot contacts within 10 %: once per stride (walks) or once per step (runs,
    whose body bobs twice a stride), and never anything in between."""
    checked = 0
    for clip in captured:
        if clip.category not in GAIT_CATEGORIES or clip.one_shot:
            continue
        result = correspondence(manifolds[clip.name], clip.phase, compared_frames(clip))
        assert result["ratio"] in (1, 2), (clip.name, result)
        error = abs(result["frequency"] / (result["ratio"] * result["stride frequency"]) - 1)
        assert error < CADENCE_TOLERANCE, (clip.name, result)
        if clip.category.startswith("walk"):
            assert result["ratio"] == 1, (clip.name, result)
        checked += 1
    assert checked >= 8


def test_standing_makes_every_amplitude_fall(captured, shipped):
    """A captured stop and a captured start with their standing carried on (as training carries
    it): every channel's amplitude a second or more into standing is under half its amplitude
    while the subject walks."""
    from pfnn_demo.tools.train.synthesis import hold_standing

    clips = [hold_standing(clip, 4.0) for clip in captured if clip.name in ("143_02", "143_03")]
    assert len(clips) == 2
    for clip in clips:
        amplitude = shipped.encode(velocity_features(clip.positions)).amplitude
        moving = moving_frames(clip.positions)
        walking = amplitude[moving].mean(axis=0)
        settled = ~moving & ~np.convolve(moving, np.ones(121), mode="same").astype(bool)   # a second from any step
        assert settled.sum() >= 60, clip.name
        standing = amplitude[settled].mean(axis=0)
        assert np.all(standing < 0.5 * walking), (clip.name, standing, walking)


def test_the_learned_phase_follows_the_contact_phase(captured, manifolds):
    """The table of plot-phases: a row per moving clip; on captured walks and runs the strongest
    channel keeps a fixed offset from the contact phase (at its ratio: once per stride or step)."""
    table, rows = correspondence_table(captured, manifolds)
    by_clip = {row["clip"]: row for row in rows}
    gaits = [clip for clip in captured if clip.category in GAIT_CATEGORIES and not clip.one_shot]
    assert len(gaits) >= 8
    for clip in gaits:
        assert f"| {clip.name} | {clip.category} |" in table
        assert by_clip[clip.name]["locking"] > LOCKING, by_clip[clip.name]
    # Locked means a steady offset: the phase difference of unrelated curves scatters.
    walk = next(clip for clip in gaits if clip.category == "walk")
    compared = compared_frames(walk)
    learned = manifolds[walk.name].phase[compared, by_clip[walk.name]["channel"]]
    shuffled = np.random.default_rng(0).permutation(learned)
    assert locking(learned, walk.phase[compared], 1)[0] > LOCKING
    assert locking(shuffled, walk.phase[compared], 1)[0] < 0.3


# -- training, the file, the encoder -----------------------------------------------------------

def test_the_numpy_encoder_is_the_trained_model_and_training_repeats(captured, tmp_path):
    pytest.importorskip("torch")
    from pfnn_demo.tools.phase_manifold import cached_manifold
    from pfnn_demo.tools.train.pae import PhaseConfig, export_phases, train_pae

    clips = [c for c in captured if c.name in ("35_17", "143_32")]
    features = [velocity_features(c.positions) for c in clips]
    config = PhaseConfig(channels=3, epochs=1, windows_per_epoch=256)
    models = [train_pae(features, config, progress=False, log=lambda t: None) for _ in range(2)]
    (model, normalisation, history), (again, _, _) = models
    for name, value in model.state_dict().items():
        assert np.array_equal(value.numpy(), again.state_dict()[name].numpy()), name
    assert np.isfinite(history[0]["train_loss"])
    path = export_phases(model, normalisation, tmp_path / "phases.npz", "test", {"35_17": features[0]}, config.step)
    encoder = PhaseEncoder.load(path)
    assert encoder.channels == 3 and encoder.provenance == "test"
    mine, cached = encoder.encode(features[0]), cached_manifold(encoder, "35_17")
    assert mine.phase.shape == (clips[0].frames, 3)
    phase_error = np.abs(mine.phase - cached.phase)
    assert np.minimum(phase_error, 1 - phase_error).max() < 1e-4
    assert np.allclose(mine.frequency, cached.frequency, atol=1e-3)
    assert np.allclose(mine.amplitude, cached.amplitude, rtol=1e-3, atol=1e-5)
    assert cached_manifold(encoder, "no such clip") is None


def test_a_file_that_is_not_a_phases_file_is_refused_in_one_line(tmp_path):
    with pytest.raises(PfnnError, match="not a phases file"):
        PhaseEncoder.load(REPO / "network" / "pfnn.npz")
    broken = tmp_path / "broken.npz"
    broken.write_bytes(SHIPPED_PHASES.read_bytes()[:5000])
    with pytest.raises(PfnnError, match="not a readable .npz phases file: truncated or corrupt"):
        PhaseEncoder.load(broken)
    with pytest.raises(PfnnError, match="no such phases file"):
        PhaseEncoder.load(tmp_path / "missing.npz")


# -- the commands ------------------------------------------------------------------------------

def test_plot_phases_draws_the_chosen_clips_and_prints_the_table(tmp_path, capsys):
    out = tmp_path / "phases.png"
    assert main(["plot-phases", str(out), "--data", str(REPO / "data" / "cmu"), "--clip", "35_17",
                 "--clip", "143_02"]) == 0
    printed = capsys.readouterr().out
    assert "| 35_17 | jog |" in printed and "| 143_02 | stop |" in printed
    import pygame

    picture = pygame.image.load(str(out))
    assert picture.get_width() >= 1000 and picture.get_height() >= 500
    # The picture is drawn, not blank: many colours besides the white page.
    pixels = pygame.surfarray.array3d(picture).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 20


@pytest.mark.parametrize("arguments, message", [
    (["plot-phases", "x.png", "--data", "data/cmu", "--phases", "network/pfnn.npz"], "not a phases file"),
    (["plot-phases", "x.png", "--data", "data/cmu", "--clip", "nothing"], "no clip named nothing"),
    (["plot-phases", "x.txt", "--data", "data/cmu"], "must end in .png"),
    (["train-phases", "--data", "data/cmu", "--out", "p.npz", "--window", "60"], "--window must be odd"),
    (["train-phases", "--data", "no/such/folder", "--out", "p.npz"], "no such data folder"),
])
def test_user_mistakes_get_one_line(arguments, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    arguments = [a if not a.endswith((".png", ".txt")) or a.startswith("-") else str(tmp_path / a) for a in arguments]
    assert main(arguments) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not (tmp_path / "x.png").exists()
