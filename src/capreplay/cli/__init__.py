"""The ``capreplay`` command: one thin module per verb, joined here in one argument parser.

Every verb module has ``add_parser(subparsers)`` and ``run(args) -> int``. Errors capreplay raises on
purpose become one line on stderr and their exit status (2 for the user's input); nothing else is caught.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from capreplay.errors import CapreplayError

_VERB_MODULES = (
    "capture", "import_cmd", "serve", "verify", "open_page", "demo", "export", "register", "study", "run", "judge",
    "report", "tasks", "view", "benchmark",
)  # fmt: skip
"""The verbs' modules in the order ``--help`` lists them (``VERBS``: the modules themselves)."""


def _verb(module: str) -> ModuleType:
    return importlib.import_module(f"capreplay.cli.{module}")


def __getattr__(name: str) -> Any:
    # Verb modules are imported when asked for, so that ``capreplay serve`` does not wait for the libraries of
    # every other verb (capture's and the models' cost a third of a second) before it answers.
    if name == "VERBS":
        return tuple(_verb(m) for m in _VERB_MODULES)
    if name in _VERB_MODULES:
        return _verb(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Parser(argparse.ArgumentParser):
    """The one parser class of every verb and step (argparse hands it down to each subparser)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own usage errors are bad input too: one line, exit status 2.
        sys.stderr.write(f"{self.prog}: {message}\n")
        raise SystemExit(2)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full command-line parser; ``only``: the parser of that one verb module's verb (the same options)."""
    parser = _Parser(prog="capreplay", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the servers do")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB", parser_class=_Parser)
    for module in (only,) if only is not None else _VERB_MODULES:
        _verb(module).add_parser(sub)
    return parser


def _with_default_steps(argv: list[str]) -> list[str]:
    """``argv`` with the default step of a verb that has one put in (``judge RUN_DIR`` is ``judge score RUN_DIR``,
    ``run --agent gold`` is ``run start --agent gold``)."""
    verb = next((i for i, word in enumerate(argv) if not word.startswith("-")), None)
    if verb is not None and argv[verb] == "judge":
        return [*argv[: verb + 1], *_verb("judge").default_step(argv[verb + 1 :])]
    if verb is not None and argv[verb] == "run":
        return [*argv[: verb + 1], *_verb("run").default_step(argv[verb + 1 :])]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``capreplay`` console script."""
    words = _with_default_steps(list(sys.argv[1:] if argv is None else argv))
    verb = next((word for word in words if not word.startswith("-")), None)
    # serve's start-up is a goal of its own (first response under a second): it builds only its own parser
    args = build_parser("serve" if verb == "serve" else None).parse_args(words)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(name)s: %(message)s")
    # Replay misses are worth a line even when quiet: each names the URL and the nearest archived one.
    logging.getLogger("capreplay.replay").setLevel(logging.INFO if args.verbose else logging.WARNING)
    try:
        code: int = args.run(args)
    except CapreplayError as e:
        sys.stderr.write(f"capreplay {args.verb}: {e.line()}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"capreplay {args.verb}: interrupted\n")
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
