"""`cultists completion SHELL`: a tab-completion script for bash, zsh or tcsh.

Written by shtab from the very parser `cultists` runs, so it names every subcommand,
flag and choice there is, files where a command takes a file, and never drifts:

    cultists completion bash > ~/.local/share/bash-completion/completions/cultists
    cultists completion zsh > "${fpath[1]}/_cultists"
"""

from __future__ import annotations

import argparse
import sys

from .options import command

SHELLS = ("bash", "zsh", "tcsh")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "completion",
        "print a shell completion script (bash, zsh or tcsh)",
        description=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    # The whole parser, subcommands and all: main.build_parser hands it down.
    sys.stdout.write(shtab.complete(args.root_parser, shell=args.shell) + "\n")
    return 0
