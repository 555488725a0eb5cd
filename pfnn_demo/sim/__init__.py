"""The headless simulation: character state and step, trajectory, areas, terrain, network runtime,
foot IK, skeleton and feature layout. Imports neither pygame nor moderngl."""
