"""The interactive app: window, input devices, the demo loop, menu and renderer."""
