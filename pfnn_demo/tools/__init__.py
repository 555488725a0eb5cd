"""Tools around the simulation: the command line, evaluation, training and terrain authoring."""
