"""Run the simulation without a window: a script in, a recording out."""

from __future__ import annotations

import sys
import time

from .controller import Controller
from ..errors import NetworkOutputError
from .input_script import InputScript
from .recording import RecordedInput, Recorder
from .wander import CrowdBehaviour


def simulate(controller: Controller, script: InputScript | RecordedInput, frames: int, recorder: Recorder | None = None,
             progress: bool = False, crowd: CrowdBehaviour | None = None) -> tuple[float, NetworkOutputError | None]:
    """Step `frames` ticks of `script` (the player's input); returns the wall time and the network
    failure, if one stopped it. With `crowd`, the controller's other characters follow it.

    A failure keeps every frame recorded before it. A script with `mode(frame)` (a recording's
    inputs) also switches the network mode where the recording did.
    """
    start = time.perf_counter()
    report_every = max(frames // 20, 1)
    # A network without modes (a MANN) plays a PFNN's recorded inputs as they are.
    mode_of = getattr(script, "mode", None) if controller.network.modes else None
    for frame in range(frames):
        controls = script.state(frame)
        if mode_of is not None and mode_of(frame) not in (None, controller.network.mode):
            controller.network.set_mode(mode_of(frame))
        others = None if crowd is None else crowd.next_controls(controller.crowd.root_positions[:, [0, 2]])
        try:
            controller.step(controls, others)
        except NetworkOutputError as error:
            return time.perf_counter() - start, error
        if recorder is not None:
            recorder.capture(controller, controls)
        if progress and (frame + 1) % report_every == 0:
            done = (frame + 1) / frames
            bar = "#" * int(done * 30)
            print(f"\r  [{bar:<30}] {frame + 1}/{frames} frames", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return time.perf_counter() - start, None
