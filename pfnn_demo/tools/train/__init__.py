"""The training pipeline: labelling, database, synthesis, trainer (PyTorch only in the trainer)."""
