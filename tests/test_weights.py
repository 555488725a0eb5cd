"""Weight formats: the project's .npz, the original release folder, and every corrupt-input error."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.errors import WeightsError
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.weights import (LAYERS, NORMALISATION, load_npz, load_original_folder, load_weights,
                               save_npz, save_original_folder)



def assert_same_weights(a, b, rtol):
    for name in LAYERS + NORMALISATION:
        expected = getattr(a, name)
        scale = np.max(np.abs(expected))
        assert np.max(np.abs(getattr(b, name) - expected)) <= rtol * scale, name


def test_npz_round_trip_keeps_arrays_and_metadata(tmp_path, random_weights):
    path = tmp_path / "net.npz"
    save_npz(random_weights, path)
    loaded = load_npz(path)
    assert_same_weights(random_weights, loaded, 0)
    assert loaded.provenance == "random test network"
    assert (loaded.joint_count, loaded.trajectory_samples) == (31, 12)
    with np.load(path) as data:
        assert int(data["format_version"]) == 1


def test_original_folder_round_trip_recovers_reference_control_points(tmp_path, original_weights, golden_frame):
    folder = tmp_path / "pfnn"
    save_original_folder(original_weights, folder)
    assert len(list(folder.glob("W0_*.bin"))) == 50
    loaded = load_weights(folder)
    assert_same_weights(original_weights, loaded, 1e-5)
    assert "non-commercial" in loaded.provenance
    # Constant mode reads set i at phase 2*pi*i/50: equal to a direct evaluation of file i.
    network = PhaseFunctionedNetwork(loaded, "constant")
    x = golden_frame["X"]
    for i in (0, 13, 37, 49):
        files = {name: np.fromfile(folder / f"{name}_{i:03d}.bin", "<f4") for name in LAYERS}
        h = (x - loaded.Xmean) / loaded.Xstd
        for depth, (w, b) in enumerate((("W0", "b0"), ("W1", "b1"), ("W2", "b2"))):
            h = files[w].reshape(files[b].size, -1) @ h + files[b]
            if depth < 2:
                h = np.where(h > 0, h, np.expm1(np.minimum(h, 0)))
        direct = h * loaded.Ystd + loaded.Ymean
        np.testing.assert_allclose(network.predict(x, 2 * np.pi * i / 50), direct, atol=1e-4)


def test_small_original_folder_round_trip_without_reference(tmp_path, random_weights):
    folder = tmp_path / "pfnn"
    save_original_folder(random_weights, folder, count=10)
    assert_same_weights(random_weights, load_original_folder(folder), 1e-5)


def test_folder_that_is_not_a_catmull_rom_precompute_is_refused(tmp_path, random_weights):
    folder = tmp_path / "pfnn"
    save_original_folder(random_weights, folder, count=10)
    np.random.default_rng(1).normal(size=random_weights.W1.shape[1:]).astype("<f4").tofile(folder / "W1_004.bin")
    with pytest.raises(WeightsError, match="not samples of a 4-point Catmull-Rom"):
        load_original_folder(folder)


@pytest.fixture
def folder(tmp_path, random_weights):
    path = tmp_path / "pfnn"
    save_original_folder(random_weights, path, count=10)
    return path


def test_missing_slice_file_is_named(folder):
    (folder / "b1_003.bin").unlink()
    with pytest.raises(WeightsError, match="b1_003.bin: file missing"):
        load_weights(folder)


def test_missing_normalisation_file_is_named(folder):
    (folder / "Ystd.bin").unlink()
    with pytest.raises(WeightsError, match="Ystd.bin: file missing"):
        load_weights(folder)


def test_gap_in_slices_is_named(folder):
    (folder / "W0_006.bin").unlink()
    with pytest.raises(WeightsError, match="W0_006.bin is missing"):
        load_weights(folder)


def test_truncated_file_is_named_with_sizes(folder):
    data = (folder / "W2_002.bin").read_bytes()
    (folder / "W2_002.bin").write_bytes(data[:-400])
    with pytest.raises(WeightsError, match=r"W2_002.bin: has \d+ values, expected \d+"):
        load_weights(folder)


def test_nan_in_file_is_named(folder):
    values = np.fromfile(folder / "b0_001.bin", "<f4")
    values[3] = np.nan
    values.tofile(folder / "b0_001.bin")
    with pytest.raises(WeightsError, match="b0_001.bin: holds 1 NaN or infinite"):
        load_weights(folder)


def test_inconsistent_normalisation_sizes(folder):
    np.zeros(100, "<f4").tofile(folder / "Xstd.bin")
    with pytest.raises(WeightsError, match="Xstd.bin: has 100 values but Xmean has 342"):
        load_weights(folder)


def test_not_a_network_folder(tmp_path):
    with pytest.raises(WeightsError, match="not an original PFNN network folder"):
        load_weights(tmp_path)


def test_missing_path(tmp_path):
    with pytest.raises(WeightsError, match="no such"):
        load_weights(tmp_path / "nothing.npz")


def test_corrupt_npz(tmp_path):
    path = tmp_path / "broken.npz"
    path.write_bytes(b"PK\x03\x04 this is not a zip archive")
    with pytest.raises(WeightsError, match="broken.npz: not a readable .npz"):
        load_weights(path)


def test_npz_missing_arrays(tmp_path, random_weights):
    path = tmp_path / "partial.npz"
    np.savez(path, W0=random_weights.W0, b0=random_weights.b0)
    with pytest.raises(WeightsError, match="missing arrays W1, b1, W2, b2, Xmean"):
        load_weights(path)


def test_npz_inconsistent_shapes(tmp_path, random_weights):
    random_weights.W1 = random_weights.W1[:, :, :10]
    path = tmp_path / "bad.npz"
    np.savez(path, **{name: getattr(random_weights, name) for name in LAYERS + NORMALISATION})
    with pytest.raises(WeightsError, match="W1 takes 10 inputs but the layer before gives 64"):
        load_weights(path)


def test_npz_with_infinity(tmp_path, random_weights):
    random_weights.Xmean[5] = np.inf
    path = tmp_path / "inf.npz"
    np.savez(path, **{name: getattr(random_weights, name) for name in LAYERS + NORMALISATION})
    with pytest.raises(WeightsError, match="Xmean holds 1 NaN or infinite"):
        load_weights(path)


def test_npz_from_the_future(tmp_path, random_weights):
    path = tmp_path / "future.npz"
    np.savez(path, format_version=np.int32(99),
             **{name: getattr(random_weights, name) for name in LAYERS + NORMALISATION})
    with pytest.raises(WeightsError, match="format version 99 is newer"):
        load_weights(path)


def test_the_heel_contact_flag_round_trips_and_steers_the_foot_ik(tmp_path, random_weights):
    import dataclasses

    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
    from pfnn_demo.sim.scene import load_scene

    save_npz(random_weights, tmp_path / "toes.npz")
    save_npz(dataclasses.replace(random_weights, heel_contacts=True), tmp_path / "heels.npz")
    toes, heels = load_npz(tmp_path / "toes.npz"), load_npz(tmp_path / "heels.npz")
    assert (toes.heel_contacts, heels.heel_contacts) == (False, True)
    scene = load_scene("plaza")
    assert Controller(PhaseFunctionedNetwork(heels), scene).ik.use_heel_contacts
    assert not Controller(PhaseFunctionedNetwork(toes), scene).ik.use_heel_contacts
    assert not Controller(PhaseFunctionedNetwork(heels), scene, use_heel_contacts=False).ik.use_heel_contacts
    # A heel in contact with its toe in the air: only a heel-contact IK counts that leg as planted.
    contacts = np.array([0.9, 0.1, 0.0, 0.0])
    assert Controller(PhaseFunctionedNetwork(heels), scene).ik.leg_contacts(contacts)[0] > 0.5
    assert Controller(PhaseFunctionedNetwork(toes), scene).ik.leg_contacts(contacts)[0] < 0.5
