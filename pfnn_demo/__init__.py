"""pfnn-demo: the Phase-Functioned Neural Network character controller in Python.

The names below are the supported library API (see the README, "The controller as a library"):

    from pfnn_demo import Controller, InputState, load_network, load_scene
    controller = Controller(load_network(), load_scene("hills"))
    controller.step(InputState(move_y=1.0))
    pose = controller.pose()

None of them imports pygame or moderngl.
"""

__version__ = "0.1.0"

from .sim.controller import Controller, Pose
from .sim.controls import Controls
from .sim.crowd import Crowd
from .sim.wander import CrowdBehaviour, spawn_points
from .errors import NetworkOutputError, PfnnError
from .sim.input_script import InputScript
from .sim.input_state import InputState
from .library import load_network
from .sim.phase_network import MODES, PhaseFunctionedNetwork
from .sim.recording import Recorder, Recording, load_recording
from .sim.scene import Scene, load_scene, scene_files
from .sim.skeleton import JOINT_NAMES, PARENTS, REST_OFFSETS

__all__ = ["Controller", "Pose", "Crowd", "Controls", "CrowdBehaviour", "spawn_points", "InputState", "InputScript", "load_network", "load_scene", "scene_files",
           "Scene", "PhaseFunctionedNetwork", "MODES", "Recorder", "Recording", "load_recording",
           "JOINT_NAMES", "PARENTS", "REST_OFFSETS", "PfnnError", "NetworkOutputError", "__version__"]
