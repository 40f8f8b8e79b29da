"""The ``capreplay`` command: one thin module per verb, joined here in one argument parser.

Every verb module has ``add_parser(subparsers)``; the handler of a verb is ``run(args) -> int``, that of a verb's
step ``run_<step>(args) -> int`` (``judge make-rubric``: ``run_make_rubric``). Errors capreplay raises on purpose
become one line on stderr and their exit status (2 for the user's input); nothing else is caught.
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


class StepsWithDefault(argparse._SubParsersAction):  # type: ignore[type-arg]
    """A verb's steps, one of which is taken when the words after the verb name none: ``capreplay judge RUN_DIR``
    is ``capreplay judge score RUN_DIR``, ``capreplay run --agent gold`` is ``capreplay run start --agent gold``.

    ``verb.add_subparsers(action=StepsWithDefault, default_step="score", ...)``. The verb's parser hands every word
    it has no option for to the steps (:meth:`_Parser._parse_optional`), so the default step parses its own."""

    def __init__(self, *args: Any, default_step: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_step = default_step

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        if not values or values[0] not in self._name_parser_map:
            values = [self.default_step, *values]
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """The one parser class of every verb and step (argparse hands it down to each subparser)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own usage errors are bad input too: one line, exit status 2.
        sys.stderr.write(f"{self.prog}: {message}\n")
        raise SystemExit(2)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if not isinstance(action, StepsWithDefault):  # a word that names no step is the default step's
            super()._check_value(action, value)

    def _parse_optional(self, arg_string: str) -> Any:
        # A verb with a default step owns only its own options (--help); any other option is the default step's.
        with_default = any(isinstance(a, StepsWithDefault) for a in self._actions)
        if with_default and arg_string.startswith("-") and arg_string not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full command-line parser; ``only``: the parser of that one verb module's verb (the same options)."""
    parser = _Parser(prog="capreplay", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the servers do")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB", parser_class=_Parser)
    for module in (only,) if only is not None else _VERB_MODULES:
        _verb(module).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``capreplay`` console script."""
    words = list(sys.argv[1:] if argv is None else argv)
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
