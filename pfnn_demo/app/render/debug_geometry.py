"""Debug geometry of one frame (original-demo.md: Debug drawing and HUD) as vertex arrays: (N, 6) =
position, colour.

Trajectory points and direction arrows coloured by gait (jump red, bump green, crouch blue; black
otherwise), the side terrain samples, joints with velocities, walls, jump circles and crouch ceilings.
"""

from __future__ import annotations

import numpy as np

from ...sim.features import side_offsets
from ...sim.rotation import yaw_of
from ...sim.features import BUMP, CROUCH, JUMP
from ...sim.trajectory import SAMPLE_FRAMES
from ...sim.skeleton import CONTACT_JOINTS, PARENTS

LIFT = 2.0


def _with_colour(points: np.ndarray, colour) -> np.ndarray:
    colours = np.broadcast_to(np.asarray(colour, np.float32), points.shape)
    return np.concatenate([points.astype(np.float32), colours], axis=-1)


def _segments(starts: np.ndarray, ends: np.ndarray, colours) -> np.ndarray:
    """Interleave segment ends into a LINES vertex array."""
    starts, ends = _with_colour(starts, colours), _with_colour(ends, colours)
    return np.stack([starts, ends], axis=1).reshape(-1, 6)


def _polyline(points: np.ndarray, colour) -> np.ndarray:
    return _segments(points[:-1], points[1:], colour)


def debug_geometry(frame, options) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lines, small points and big points of a `frame.DrawnFrame`."""
    terrain = frame.scene.heightmap
    areas = frame.scene.areas
    lines, points, big_points = [], [], []
    joints = frame.drawn_transforms()[0, :, :3, 3]
    trajectory = frame.trajectory
    if trajectory is not None:
        positions = trajectory.positions + np.array([0, LIFT, 0], np.float32)
        points.append(_with_colour(positions[:110], trajectory.gaits[:110][:, [JUMP, BUMP, CROUCH]]))  # not the last 10
        _samples_geometry(trajectory.positions[SAMPLE_FRAMES], trajectory.directions[SAMPLE_FRAMES],
                          trajectory.gaits[SAMPLE_FRAMES], terrain, lines, points, big_points)
    others = frame.crowd_trajectory
    if options.crowd_trajectories and others is not None:
        # The others' trajectories as points (every second frame), coloured by gait as the player's.
        positions = others.positions[1:, :110:2] + np.array([0, LIFT, 0], np.float32)
        colours = others.gaits[1:, :110:2][..., [JUMP, BUMP, CROUCH]]
        points.append(_with_colour(positions, colours).reshape(-1, 6))
    samples = frame.trajectory_samples
    if samples is not None:
        _samples_geometry(*samples, terrain, lines, points, big_points)
    contacts = frame.contacts
    if options.show_contacts and contacts is not None:
        _contact_geometry(joints, contacts, big_points)

    velocities = frame.joint_velocities
    if options.debug_joints and velocities is not None:
        big_points.append(_with_colour(joints, (0.6, 0.3, 0.4)))
        lines.append(_segments(joints, joints - 5 * velocities, (0.6, 0.3, 0.4)))

    if options.show_areas:
        for x0, z0, x1, z1, _width in areas.walls:
            t = np.linspace(0, 1, 11)[:, None]
            p = np.concatenate([x0 + t * (x1 - x0), np.zeros_like(t), z0 + t * (z1 - z0)], axis=1)
            p[:, 1] = terrain.sample(p[:, 0], p[:, 2]) + 5
            lines.append(_polyline(p, (0.1, 0.7, 0.1)))
        circle = np.linspace(0, 2 * np.pi, 101)
        for x, y, z, radius, _falloff in areas.jumps:
            p = np.stack([x + radius * np.cos(circle), np.full_like(circle, y), z + radius * np.sin(circle)], 1)
            lines.append(_polyline(p, (0.9, 0.1, 0.1)))
        for cx, cy, cz, size_x, size_z in areas.crouches:
            lines.append(_crouch_ceiling(areas, cx, cy, cz, size_x, size_z))

    def stack(parts):
        parts = [p for p in parts if len(p)]
        return np.concatenate(parts) if parts else np.zeros((0, 6), np.float32)

    return stack(lines), stack(points), stack(big_points)


def skeleton_geometry(frame) -> tuple[np.ndarray, np.ndarray]:
    """The player's canonical skeleton as drawn (bones as lines, joints as points): what a
    character's body is driven by, to draw over it."""
    joints = frame.drawn_transforms()[0, :, :3, 3]
    bones = np.flatnonzero(PARENTS >= 0)
    return _segments(joints[PARENTS[bones]], joints[bones], (0.1, 0.9, 0.9)), _with_colour(joints, (0.1, 0.9, 0.9))


def _crouch_ceiling(areas, cx, cy, cz, size_x, size_z) -> np.ndarray:
    """The wavy ceiling's two long edges, its cross bars, and the corner posts (blue)."""
    colour = (0.1, 0.2, 0.9)
    t = np.linspace(0, 1, 21)
    xs = cx + size_x / 2 - t * size_x
    heights = areas.crouch_ceiling(xs)
    near = np.stack([xs, heights, np.full_like(xs, cz + size_z / 2)], 1)
    far = np.stack([xs, heights, np.full_like(xs, cz - size_z / 2)], 1)
    parts = [_polyline(near, colour), _polyline(far, colour), _segments(near, far, colour)]
    for x, z in ((cx + size_x / 2, cz + size_z / 2), (cx - size_x / 2, cz + size_z / 2),
                 (cx + size_x / 2, cz - size_z / 2), (cx - size_x / 2, cz - size_z / 2)):
        parts.append(_segments(np.array([[x, cy, z]]), np.array([[x, cy + areas.crouch_ceiling(x), z]]), colour))
    return np.concatenate(parts)


def _contact_geometry(joints: np.ndarray, contacts: np.ndarray, big_points) -> None:
    """Heels and toes as dots: orange while the network says the foot is planted (> 0.5), grey when not."""
    feet = joints[CONTACT_JOINTS] + np.array([0, LIFT, 0], np.float32)
    planted = (np.asarray(contacts) > 0.5)[:, None]
    big_points.append(_with_colour(feet, np.where(planted, (1.0, 0.55, 0.0), (0.55, 0.55, 0.55))))


def _samples_geometry(sample_positions, directions, gaits, terrain, lines, points, big_points) -> None:
    """The 12 trajectory samples of the network input, their side terrain samples and direction
    arrows, coloured by gait."""
    colours = gaits[:, [JUMP, BUMP, CROUCH]]
    samples = sample_positions + np.array([0, LIFT, 0], np.float32)
    big_points.append(_with_colour(samples, colours))

    # Side terrain samples of the network input.
    yaws = yaw_of(directions)
    side = side_offsets(yaws)
    for sign in (1, -1):
        p = sample_positions + sign * side
        p[:, 1] = terrain.sample(p[:, 0], p[:, 2]) + LIFT
        points.append(_with_colour(p, (0.2, 0.2, 0.2)))

    # Direction arrows: 15 long with two barbs.
    tips = samples + 15 * directions
    tips[:, 1] = terrain.sample(tips[:, 0], tips[:, 2]) + LIFT
    across = np.cross(directions, np.array([0, 1, 0], np.float32))
    lines.append(_segments(samples, tips, colours))
    lines.append(_segments(tips, tips + 4 * across - 4 * directions * [1, 0, 1], colours))
    lines.append(_segments(tips, tips - 4 * across - 4 * directions * [1, 0, 1], colours))
