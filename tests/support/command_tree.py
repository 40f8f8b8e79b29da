"""capreplay's command tree as argparse holds it: the verbs of the parser, the steps of a verb."""

from __future__ import annotations

import argparse


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The verbs (or steps) ``parser`` dispatches to, by name; empty for a parser without any."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}
