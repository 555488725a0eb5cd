"""The `pfnn-demo` command line: one parser, one small function per subcommand.

`pfnn-demo [options]` with no subcommand means `pfnn-demo run [options]`.
User mistakes (bad files, bad arguments) print one clear line and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .errors import PfnnError
from .phase_network import MODES

SUBCOMMANDS = ("run", "convert-weights")

DESCRIPTION = """\
Phase-Functioned Neural Network character controller (Holden, Komura, Saito, SIGGRAPH 2017).

Run the demo, simulate headless from a script, or convert network weights.
With no subcommand, `pfnn-demo [options]` is `pfnn-demo run [options]`."""


def _add_network_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", metavar="PATH",
                        help="network weights: a .npz in the project format, or the original PFNN release "
                             "folder (W0_000.bin ... b2_049.bin, Xmean.bin ...). Default: the shipped network")
    parser.add_argument("--mode", choices=MODES, default="cubic",
                        help="how weights follow the phase: exact cubic Catmull-Rom (default), linear "
                             "between 10 samples, or constant over 50 samples (the original demo)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pfnn-demo", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pfnn-demo {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    run = commands.add_parser("run", help="play the demo (default), or simulate headless from a script",
                              description="Play the character, or with --headless simulate a script "
                                          "without a window and record the motion.")
    _add_network_options(run)
    run.set_defaults(handler=_run)

    convert = commands.add_parser(
        "convert-weights", help="convert an original PFNN network folder to the project's .npz",
        description="Read the original release folder (50 phase slices per layer), recover the 4 "
                    "Catmull-Rom control points by least squares, and save them as one .npz.")
    convert.add_argument("source", metavar="SRC", help="original network folder (W0_000.bin ...)")
    convert.add_argument("destination", metavar="DST.npz", help="output file")
    convert.add_argument("--provenance", help="text stored with the weights (default: names the source and licence)")
    convert.set_defaults(handler=_convert_weights)
    return parser


def _load_network(args):
    from .phase_network import PhaseFunctionedNetwork
    from .resources import default_network_path
    from .weights import load_weights

    path = Path(args.network) if args.network else default_network_path()
    if not args.network and not path.exists():
        raise PfnnError(
            "no network is installed with this copy of pfnn-demo (network/pfnn.npz is missing). "
            "Pass one with --network PATH: a .npz in the project format, or the original PFNN release "
            "folder (PFNN/demo/network/pfnn, holding W0_000.bin ... Ystd.bin).")
    return PhaseFunctionedNetwork(load_weights(path), args.mode)


def _run(args) -> int:
    network = _load_network(args)
    print(f"network: {network.weights.provenance or 'no provenance recorded'} ({network.mode} mode)")
    raise PfnnError("the interactive window is not available in this build; use `pfnn-demo run --headless`")


def _convert_weights(args) -> int:
    from .weights import load_original_folder, save_npz

    destination = Path(args.destination)
    if destination.suffix.lower() != ".npz":
        raise PfnnError("the destination must end in .npz", destination)
    weights = load_original_folder(args.source)
    if args.provenance:
        weights.provenance = args.provenance
    destination.parent.mkdir(parents=True, exist_ok=True)
    save_npz(weights, destination)
    sizes = f"{weights.input_size}-{weights.hidden_sizes[0]}-{weights.hidden_sizes[1]}-{weights.output_size}"
    print(f"wrote {destination} ({destination.stat().st_size / 2**20:.1f} MiB, network {sizes})")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "run")
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except PfnnError as error:
        print(f"pfnn-demo: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
