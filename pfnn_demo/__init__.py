"""pfnn-demo: the Phase-Functioned Neural Network character controller in Python."""

__version__ = "0.1.0"
