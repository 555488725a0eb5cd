"""The interactive demo's logic, apart from any window: input, fixed-tick simulation, menu, drawing.

`Demo` runs on any moderngl context, so the window app and the tests (offscreen, EGL) share it.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..sim.camera import PITCH_MAX, PITCH_MIN
from ..sim.controller import Controller
from .devices import MOUSE_TURN, PlayerInput, pygame
from ..errors import NetworkOutputError, PfnnError
from ..resources import shipped_network_path
from .memory import return_large_blocks_to_the_system
from ..sim.networks import describe_network, load_network_file
from ..sim.recording import DEFAULT_RECORD_DIR, Recorder, check_destination
from .render.hud import Hud
from .render.menu import Entry, Menu, Page
from .render.renderer import Renderer, ViewOptions
from ..sim.scene import load_scene, scene_files
from ..sim.wander import CrowdBehaviour, open_ground, spawn_points

TICK = 1.0 / 60.0
MAX_STEPS_PER_FRAME = 8     # beyond this the simulation slows instead of spiralling
NOTE_SECONDS = 4.0
RECORD_FORMATS = ("npz", "bvh")
CROWD_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)   # the menu's and the [ ] keys' steps (characters, the player included)

_MENU_KEYS = {pygame.K_UP: "up", pygame.K_w: "up", pygame.K_DOWN: "down", pygame.K_s: "down",
              pygame.K_LEFT: "left", pygame.K_a: "left", pygame.K_RIGHT: "right", pygame.K_d: "right",
              pygame.K_RETURN: "select", pygame.K_KP_ENTER: "select", pygame.K_SPACE: "select",
              pygame.K_ESCAPE: "back", pygame.K_BACKSPACE: "back"}
_MENU_BUTTONS = {"dpup": "up", "dpdown": "down", "dpleft": "left", "dpright": "right", "a": "select", "b": "back"}


class Demo:
    def __init__(self, ctx, network, scene: str = "plaza",
                 record_dir: str | Path = DEFAULT_RECORD_DIR, record_formats: tuple[str, ...] = RECORD_FORMATS,
                 characters: int = 1, seed: int = 0, character: str | Path | None = None,
                 character_map: str | Path | None = None, character_dir: str | Path = "characters",
                 network_path: str | Path | None = None):
        return_large_blocks_to_the_system()     # memory stays flat however often the scene changes
        self.ctx = ctx
        self.record_dir = Path(record_dir)
        self.record_formats = tuple(record_formats)
        self.recorder: Recorder | None = None
        self.failures = 0
        self.scene_names = list(scene_files())
        self.seed = seed
        self.network_files, self.networks = controller_files(network, network_path)
        self.controller = Controller(network, load_scene(scene))
        self.crowd_behaviour: CrowdBehaviour | None = None
        self._ground = None
        if characters > 1:
            self.set_characters(characters)
        self.renderer = Renderer(ctx)
        self.character_dir = Path(character_dir)
        from ..character import resolve_character

        self.character_path = None if character is None else resolve_character(character)
        self.character_map = character_map
        self.set_character(self.character_path)
        self.input = PlayerInput()
        self.hud = Hud()
        self.menu = Menu()
        self.options = ViewOptions()
        self.accumulator = 0.0
        self.fps = 60.0
        self.quit_requested = False
        self._note, self._note_until = "", 0.0
        self.last_input = self.input.state(None)

    # -- notes -----------------------------------------------------------------------------------

    def say(self, text: str, seconds: float = NOTE_SECONDS) -> None:
        self._note, self._note_until = text, time.monotonic() + seconds

    @property
    def note(self) -> str:
        return self._note if time.monotonic() < self._note_until else ""

    # -- actions -----------------------------------------------------------------------------------

    def load_scene(self, name: str) -> None:
        if self.recording:      # a recording holds one scene
            self.stop_recording()
        try:
            scene = load_scene(name)
        except PfnnError as error:
            self.say(f"Cannot load scene {name}: {error.detail}")
            return
        count = self.controller.characters
        self._ground = open_ground(scene) if count > 1 else None
        self.controller.load_scene(scene, spawn_points(scene, count, self.seed, self._ground) if count > 1 else None)
        self.crowd_behaviour = CrowdBehaviour(scene, count, self.seed, ground=self._ground) if count > 1 else None
        self.say(f"Scene: {scene.display_name}")

    @property
    def characters(self) -> int:
        return self.controller.characters

    def set_characters(self, count: int) -> None:
        """Change how many characters the scene holds (the player included): the player carries on,
        the others start afresh on open ground and wander."""
        count = max(1, int(count))
        if count == self.controller.characters:
            return
        if self.recording:      # a recording holds one crowd
            self.stop_recording()
        old, scene = self.controller, self.controller.scene
        player = old.crowd.state(0)
        if count > 1 and self._ground is None:
            self._ground = open_ground(scene)
        starts = spawn_points(scene, count, self.seed, self._ground) if count > 1 else None
        controller = Controller(old.network, scene, characters=count, starts=starts)
        controller.crowd.restore(player, 0)
        controller.camera = old.camera
        self.controller = controller
        self.crowd_behaviour = CrowdBehaviour(scene, count, self.seed, ground=self._ground) if count > 1 else None
        self.say(f"Characters: {count}" + ("" if count == 1 else f" (you and {count - 1} more)"))

    def step_characters(self, step: int) -> None:
        """The next crowd size up (+1) or down (-1) in CROWD_SIZES."""
        count = self.controller.characters
        bigger = [n for n in CROWD_SIZES if n > count]
        smaller = [n for n in CROWD_SIZES if n < count]
        if step > 0 and bigger:
            self.set_characters(bigger[0])
        elif step < 0 and smaller:
            self.set_characters(smaller[-1])

    def set_mode(self, mode: str) -> None:
        self.controller.network.set_mode(mode)
        self.say(f"Network mode: {mode}")

    def cycle_mode(self, step: int) -> None:
        modes = self.controller.network.modes
        if not modes:
            self.say(f"The {self.controller.network.kind.upper()} has no network modes")
            return
        self.set_mode(modes[(modes.index(self.controller.network.mode) + step) % len(modes)])

    # -- controllers -------------------------------------------------------------------------------

    @property
    def controller_name(self) -> str:
        return next((name for name, network in self.networks.items() if network is self.controller.network), "?")

    def set_network(self, name: str) -> None:
        """Drive every character with the network `name` (of self.networks' files, loaded on first
        use): the player and the crowd carry on where they are, in the other network's hands."""
        network = self.networks.get(name)
        if network is None:
            try:
                network = self.networks[name] = load_network_file(self.network_files[name])
            except PfnnError as error:
                self.say(f"Cannot load {name}: {error}", 8.0)
                return
        if network is self.controller.network:
            return
        if self.recording:      # a recording holds one network
            self.stop_recording()
        old = self.controller
        controller = Controller(network, old.scene, characters=old.characters, starts=None)
        controller.crowd.restore(old.crowd.state())
        controller.camera = old.camera
        self.controller = controller
        self.say(f"Controller: {name} ({describe_network(network)})")
        if self.menu.open and len(self.menu.stack) == 1:
            selected = self.menu.selected
            self.open_menu()     # the mode entry shows only for a network with modes
            self.menu.selected = min(selected, len(self.menu.stack[0].entries) - 1)

    def cycle_network(self, step: int) -> None:
        names = list(self.network_files)
        self.set_network(names[(names.index(self.controller_name) + step) % len(names)])

    # -- recording ---------------------------------------------------------------------------------

    @property
    def recording(self) -> bool:
        return self.recorder is not None

    def toggle_recording(self) -> None:
        if self.recording:
            self.stop_recording()
        else:
            self.start_recording()

    def start_recording(self) -> None:
        stem = time.strftime("pfnn-%Y%m%d-%H%M%S")
        base, count = self.record_dir / stem, 1
        while any(base.with_suffix("." + f).exists() for f in self.record_formats):
            count += 1
            base = self.record_dir / f"{stem}-{count}"
        try:
            for extension in self.record_formats:
                check_destination(base.with_suffix("." + extension))
        except PfnnError as error:
            self.say(f"Cannot record: {error}", 8.0)
            return
        self._record_base = base
        self._record_scene = self.controller.scene.name
        self.recorder = Recorder(self.controller)
        self.say("Recording (F5 or Y stops)")

    def stop_recording(self) -> list[Path]:
        """Write what was recorded in every chosen format; the note names the files."""
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return []
        if not len(recorder):
            self.say("Recording stopped before any frame")
            return []
        network = self.controller.network
        written = []
        try:
            for extension in self.record_formats:
                written.append(recorder.save(self._record_base.with_suffix("." + extension), self._record_scene,
                                             recorder.first_mode, network.weights.provenance,
                                             self.renderer.body.export_body(self.controller.scene.heightmap.sample)
                                             if extension == "glb" else None))
        except PfnnError as error:
            self.say(f"Cannot write the recording: {error}", 8.0)
            return written
        others = "".join(f" + {path.suffix}" for path in written[1:])
        self.say(f"Recorded {len(recorder)} frames: {written[0]}{others}", 8.0)
        return written

    def set_character(self, path: Path | None) -> None:
        """Draw every character as the rig at `path`, or as the mannequin (None). A rig that cannot
        be read or driven leaves the body as it was and says why."""
        if path is None:
            self.renderer.set_body(None)
            return
        from ..character import load_character
        from .render.body import RigBody

        given = self.character_path is not None and Path(path).resolve() == self.character_path.resolve()
        try:
            rig, _, retargeter = load_character(path, self.character_map if given else None)
        except PfnnError as error:
            self.say(str(error), 8.0)
            return
        self.renderer.set_body(RigBody(self.ctx, self.renderer.programs, rig, retargeter, path.stem))

    def character_files(self) -> list[Path]:
        """The menu's characters: --character's file, the bundled rigs, and every .glb and .gltf in
        the character folder (each file once)."""
        from ..character import bundled_characters, rig_files

        candidates = [] if self.character_path is None else [self.character_path]
        candidates += bundled_characters() + rig_files(self.character_dir)
        found, seen = [], set()
        for path in candidates:
            if path.resolve() not in seen:
                seen.add(path.resolve())
                found.append(path)
        return found

    # -- menu ------------------------------------------------------------------------------------

    def open_menu(self) -> None:
        toggles = self.input.toggles
        camera = self.controller.camera

        def flip(name):
            return lambda: setattr(toggles, name, not getattr(toggles, name))

        def on_off(value):
            return "on" if value else "off"

        def flip_invert():
            camera.invert_y = not camera.invert_y

        entries = [
            Entry(lambda: "Resume", self.menu.close),
            Entry(lambda: f"Scene: {self.controller.scene.display_name}  >", lambda: self.menu.push(self._scene_page())),
        ] + ([Entry(lambda: f"Controller:  < {self.controller_name} >", lambda: self.cycle_network(1),
                    lambda: self.cycle_network(-1), lambda: self.cycle_network(1))]
             if len(self.network_files) > 1 else []) + ([
            Entry(lambda: f"Network mode:  < {self.controller.network.mode} >", lambda: self.cycle_mode(1),
                  lambda: self.cycle_mode(-1), lambda: self.cycle_mode(1))] if self.controller.network.modes else []) + [
            Entry(lambda: f"Foot IK: {on_off(toggles.ik)}", flip("ik")),
            Entry(lambda: f"Debug drawing: {on_off(toggles.debug)}", flip("debug")),
            Entry(lambda: f"Debug joints and velocities: {on_off(self.options.debug_joints)}", self._flip_joints),
            Entry(lambda: f"Responsive: {on_off(toggles.responsive)}", flip("responsive")),
            Entry(lambda: f"Invert camera Y: {on_off(camera.invert_y)}", flip_invert),
            Entry(lambda: f"Character: {self.renderer.body.name}  >", lambda: self.menu.push(self._character_page())),
            Entry(lambda: f"Skeleton over the body: {on_off(self.options.skeleton)}", self._flip_skeleton),
            Entry(lambda: f"Characters:  < {self.characters} >", lambda: self.step_characters(1),
                  lambda: self.step_characters(-1), lambda: self.step_characters(1)),
            Entry(lambda: f"Everyone's trajectories: {on_off(self.options.crowd_trajectories)}", self._flip_crowd_trajectories),
            Entry(lambda: (f"Recording: stop and save ({len(self.recorder)} frames)" if self.recording
                           else f"Recording: start (into {self.record_dir}/)"), self._toggle_recording_from_menu),
            Entry(lambda: "About  >", lambda: self.menu.push(self._about_page())),
            Entry(lambda: "Quit", self.request_quit),
        ]
        self.menu.show(Page("pfnn-demo", entries))

    def _choices(self, labelled: list[tuple[str, object]], action) -> list[Entry]:
        """Menu entries that each apply `action` to their value and close the menu."""
        def chooser(value):
            def choose():
                action(value)
                self.menu.close()
            return choose
        return [Entry(lambda text=label: text, chooser(value)) for label, value in labelled]

    def _scene_page(self) -> Page:
        return Page("Scene", self._choices([(name, name) for name in self.scene_names], self.load_scene))

    def _character_page(self) -> Page:
        files = self.character_files()
        entries = self._choices([("mannequin", None)] + [(path.stem, path) for path in files], self.set_character)
        text = [] if files else [f"Put .glb or .gltf humanoids in {self.character_dir}/"]
        return Page("Character", entries, text=text)

    def _flip_skeleton(self) -> None:
        self.options.skeleton = not self.options.skeleton
        if self.options.skeleton:
            self.input.toggles.debug = True     # the skeleton is part of the debug drawing

    def _about_page(self) -> Page:
        provenance = self.controller.network.weights.provenance or "no provenance recorded"
        lines = _wrap("Network: " + provenance, 64) + [
            "Phase-Functioned Neural Networks for Character Control,",
            "Holden, Komura, Saito, SIGGRAPH 2017."]
        return Page("About", [Entry(lambda: "Back", self.menu.back)], text=lines)

    def _toggle_recording_from_menu(self) -> None:
        self.toggle_recording()
        self.menu.close()

    def _flip_crowd_trajectories(self) -> None:
        self.options.crowd_trajectories = not self.options.crowd_trajectories

    def _flip_joints(self) -> None:
        self.options.debug_joints = not self.options.debug_joints

    def request_quit(self) -> None:
        self.quit_requested = True

    # -- events ------------------------------------------------------------------------------------

    def on_key(self, key: int, pressed: bool) -> None:
        keyboard = self.input.keyboard
        if not pressed:
            keyboard.down.discard(key)
            return
        if self.menu.open:
            if key in _MENU_KEYS:
                self.menu.navigate(_MENU_KEYS[key])
            return
        keyboard.down.add(key)
        toggles = self.input.toggles
        if key == pygame.K_ESCAPE:
            self.open_menu()
        elif key == pygame.K_c:
            toggles.crouch = not toggles.crouch
        elif key == pygame.K_F1:
            toggles.debug = not toggles.debug
        elif key == pygame.K_F2:
            toggles.ik = not toggles.ik
        elif key == pygame.K_r:
            toggles.responsive = not toggles.responsive
        elif key == pygame.K_m:
            self.cycle_mode(1)
        elif key == pygame.K_F5:
            self.toggle_recording()
        elif key == pygame.K_RIGHTBRACKET:
            self.step_characters(1)
        elif key == pygame.K_LEFTBRACKET:
            self.step_characters(-1)
        elif pygame.K_1 <= key <= pygame.K_9 and key - pygame.K_1 < len(self.scene_names):
            self.load_scene(self.scene_names[key - pygame.K_1])

    def on_mouse_drag(self, dx: float, dy: float) -> None:
        if self.menu.open:
            return
        camera = self.controller.camera
        camera.yaw += dx * MOUSE_TURN
        tilt = -dy if camera.invert_y else dy
        camera.pitch = min(max(camera.pitch + tilt * MOUSE_TURN, PITCH_MIN), PITCH_MAX)

    def on_scroll(self, dy: float) -> None:
        self.input.wheel_zoom -= 2.0 * dy

    def on_click(self, x: int, y: int, size) -> None:
        if self.menu.open:
            self.menu.click(x, y, size)

    def on_mouse_move(self, x: int, y: int, size) -> None:
        if self.menu.open:
            self.menu.hover(x, y, size)

    # -- frame ---------------------------------------------------------------------------------------

    def update(self, seconds: float) -> int:
        """Poll devices and advance the simulation in fixed 1/60 s ticks; returns the ticks taken."""
        if seconds > 0:
            self.fps += 0.05 * (1.0 / max(seconds, 1e-4) - self.fps)
        note = self.input.gamepad.poll()
        if note:
            self.say(note)
        reading = self.input.gamepad.read()
        axes = None
        if reading is not None:
            axes, pressed = reading
            if self.menu.open:
                for button, action in _MENU_BUTTONS.items():
                    if button in pressed:
                        self.menu.navigate(action)
                if "start" in pressed:
                    self.menu.close()
            else:
                if "start" in pressed and "back" in pressed:
                    self.open_menu()
                if "y" in pressed:
                    self.toggle_recording()
                self.input.gameplay_buttons(pressed)
        controls = self.input.state(None if self.menu.open else axes)
        if self.menu.open:   # the character stands still while the menu is up
            controls.move_x = controls.move_y = controls.look_x = controls.look_y = 0.0
            controls.jog = controls.strafe = controls.zoom = 0.0
        self.options.debug = controls.debug
        self.last_input = controls

        self.accumulator = min(self.accumulator + seconds, MAX_STEPS_PER_FRAME * TICK)
        steps = 0
        while self.accumulator >= TICK - 1e-9:
            self.accumulator -= TICK
            controller = self.controller
            behaviour = self.crowd_behaviour
            others = None if behaviour is None else behaviour.next_controls(controller.crowd.root_positions[:, [0, 2]])
            try:
                controller.step(controls, others)
                if self.recorder is not None:
                    self.recorder.capture(controller, controls)
            except NetworkOutputError as error:
                self.failures += 1
                self.stop_recording()        # keeps the frames before the failure
                self._reset_failed(error.characters or (0,))
                self.say("Network failure, character reset: " + error.detail[:60])
            steps += 1
        return steps

    def _reset_failed(self, characters) -> None:
        """Put the characters whose network output failed back on their feet: the player at the
        scene's start, the others on open ground."""
        controller = self.controller
        for index in characters:
            if index == 0:
                controller.reset(controller.scene.start)
            else:
                ground = self._ground if self._ground is not None else open_ground(controller.scene)
                controller.crowd.reset(index, ground[(index * 7919 + controller.frame) % len(ground)])

    def render(self, framebuffer, size: tuple[int, int] | None = None) -> None:
        size = tuple(size or framebuffer.size)
        recorded = len(self.recorder) / 60.0 if self.recorder is not None else None
        overlays = [("hud", self.hud.draw(self.last_input, self.controller, self.fps,
                                          self.controller.scene.display_name, recorded), (12, 12))]
        if self.note:
            overlays.append(("note", self.hud.note(self.note), (12, 12 + self.hud.SIZE[1] + 8)))
        if self.menu.open:
            overlays.append(("menu", self.menu.draw(size), (0, 0)))
        self.renderer.render(framebuffer, self.controller, self.options, overlays, size)


SHIPPED_CONTROLLERS = {"pfnn": "PFNN", "mann": "MANN", "deepphase": "DeepPhase"}


def controller_files(network, path: str | Path | None) -> tuple[dict[str, Path | None], dict[str, object]]:
    """The networks the menu's "Controller" entry switches between: the shipped ones by kind
    (PFNN, MANN, DeepPhase) and `network` itself (read from `path`, if known), under its file's
    name where it is not a shipped one. Returns ({name: file}, {name: the networks already loaded})."""
    files = {title: shipped_network_path(kind) for kind, title in SHIPPED_CONTROLLERS.items()}
    files = {name: file for name, file in files.items() if file.is_file()}
    given = next((name for name, file in files.items()
                  if path is not None and Path(path).resolve() == file.resolve()), None)
    if given is None:
        given = Path(path).stem if path is not None else f"{network.kind.upper()} (given)"
        files[given] = None if path is None else Path(path)
    return files, {given: network}


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width and line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])
