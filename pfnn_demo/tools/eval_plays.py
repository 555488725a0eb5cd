"""The plays behind `pfnn-demo eval`: every network through every case, here or in worker processes.

A play is one network through one case (a script in a scene), and plays share nothing, so `jobs`
worker processes can take them in any order. Workers are started fresh (spawn) with one BLAS
thread each: N workers on N cores then each run a core's worth, where threaded BLAS in every
worker would fight over the cores. Each worker loads a network, script or scene once, from the
same files the caller named, and returns the play's metrics; results come back in case order.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from .evaluation import metrics, record

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass(frozen=True)
class Play:
    """One network through one case, named by the files to load, so that a worker can play it."""
    case: str
    label: str
    network: str              # path of the network file or folder
    mode: str | None
    script: str               # name of an example script, or a script file
    scene: str                # name of a shipped scene, or a scene file
    frames: int               # the script's length, to balance the workers and time the rest
    keep_bone_lengths: bool = True
    record_to: Path | None = None


_loaded: dict = {}


def _once(key, load):
    if key not in _loaded:
        _loaded[key] = load()
    return _loaded[key]


def network_of(path: str, mode: str | None):
    """The network runtime of a file, loaded once per process (a bad file: its one-line error)."""
    from ..sim.networks import load_network_file

    return _once(("network", path, mode), lambda: load_network_file(path, mode))


def script_of(name: str):
    from ..sim.input_script import InputScript

    return _once(("script", name), lambda: InputScript.load(name))


def scene_of(name: str):
    from ..sim.scene import load_scene

    return _once(("scene", name), lambda: load_scene(name))


def play(item: Play) -> dict:
    """The metrics of one play (with "recording": where it was saved, if anywhere)."""
    network, script, scene = network_of(item.network, item.mode), script_of(item.script), scene_of(item.scene)
    recording = record(network, scene, script, item.keep_bone_lengths, item.record_to, item.label)
    return metrics(recording, scene.heightmap, scene.areas.walls) | {"recording": item.record_to}


def play_all(plays: list[Play], jobs: int = 1, progress: bool = False) -> dict:
    """{case: {label: metrics}} for every play, cases and labels in the order of `plays`. With
    `jobs` > 1 the workers import the caller's main module afresh, as spawned processes do: a
    script calling this keeps its work under `if __name__ == "__main__":`."""
    results: dict = {}
    for item in plays:
        results.setdefault(item.case, {})[item.label] = None
    meter = _Progress(sum(item.frames for item in plays), progress)
    if jobs <= 1:
        for item in plays:
            results[item.case][item.label] = play(item)
            meter.advance(item.frames)
    else:
        with _single_threaded_blas(), ProcessPoolExecutor(jobs, multiprocessing.get_context("spawn")) as pool:
            # Longest first, so that no long play starts last while the other workers idle.
            pending = {pool.submit(play, item): item for item in sorted(plays, key=lambda p: -p.frames)}
            for done in as_completed(pending):
                item = pending[done]
                results[item.case][item.label] = done.result()
                meter.advance(item.frames)
    meter.close()
    return results


@contextlib.contextmanager
def _single_threaded_blas():
    """Workers spawned inside inherit one BLAS thread each, unless the caller chose otherwise."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _Progress:
    """A line on stderr: frames played of all, and the time left at the pace so far."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = max(total, 1), 0, enabled
        self.start = time.perf_counter()

    def advance(self, frames: int) -> None:
        self.done += frames
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed * (self.total - self.done) / max(self.done, 1)
        bar = "#" * int(30 * self.done / self.total)
        print(f"\r  [{bar:<30}] {self.done}/{self.total} frames played, about {_duration(left)} left ",
              end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"
