"""The moderngl renderer: terrain, skinned character, shadows, debug drawing, HUD and menu overlays."""
