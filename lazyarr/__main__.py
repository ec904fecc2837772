"""`python -m lazyarr COMMAND ...`: the command-line tools.

Each command lives in its own module exposing `configure_parser(parser)` and
`main(args) -> int` (the exit status). Only the module of the command being run is imported,
so a command whose module is missing or broken never stops the others.

    python -m lazyarr run-hlo dumps/module_0000.main.before_optimizations.txt --backend cpu
    python -m lazyarr aot model.py:model --arg f32[8,3] -o build
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# command -> (module defining configure_parser and main, one line for the command list)
COMMANDS = {
    "run-hlo": ("lazyarr.run_hlo", "replay an HLO module (e.g. a --dump_to file) on two backends and compare"),
    "aot": ("lazyarr.aot", "compile a function ahead of time to an object file and a C header"),
}


def build_parser(command: str | None = None, module=None) -> argparse.ArgumentParser:
    """The parser with every command listed; only `command`'s own arguments are configured
    (by `module`, the one defining it)."""
    parser = argparse.ArgumentParser(
        prog="python -m lazyarr", description="lazyarr command-line tools.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (_, summary) in COMMANDS.items():
        subparser = commands.add_parser(name, help=summary, description=summary)
        if name == command:
            module.configure_parser(subparser)
            subparser.set_defaults(handler=module.main)
    return parser


def load_command(command: str):
    """The module defining `command`, or None when this installation lacks it."""
    module_name = COMMANDS[command][0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise  # the command exists but one of its own imports is missing: show that
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: the process's), run the command, return its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in argv if not word.startswith("-")), None)
    module = None
    if command in COMMANDS:
        module = load_command(command)
        if module is None:
            print(f"python -m lazyarr {command}: not available in this installation "
                  f"({COMMANDS[command][0]} is missing)", file=sys.stderr)
            return 2
    parser = build_parser(command, module)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
