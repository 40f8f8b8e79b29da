"""Every verb and every step has ``--help``, and every option in it says what it does."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

import pytest

from capreplay.cli import build_parser
from tests.support.command_tree import subcommands

Command = tuple[tuple[str, ...], argparse.ArgumentParser]


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[Command]:
    """Every parser of the command line with the words that reach it: each verb, each step of a verb."""
    yield words, parser
    for name, sub in subcommands(parser).items():
        yield from _commands(sub, (*words, name))


COMMANDS = list(_commands(build_parser()))


def test_the_command_tree_has_every_verb_and_step() -> None:
    names = {" ".join(words) for words, _ in COMMANDS}
    assert {"capture", "import", "export", "serve", "verify", "open", "demo", "register", "run", "report", "view",
            "study selftest", "study views", "study run", "study report",
            "judge score", "judge make-rubric", "judge agreement"} <= names  # fmt: skip


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=[" ".join(w) or "capreplay" for w, _ in COMMANDS])
def test_every_option_is_explained(words: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
    options = [action for action in parser._actions if not isinstance(action, argparse._SubParsersAction)]
    assert options, "every command has at least --help"
    unexplained = [action.dest for action in options if not (action.help or "").strip()]
    assert not unexplained, f"capreplay {' '.join(words)}: options without help: {unexplained}"


@pytest.mark.parametrize("words", [("judge",), ("judge", "score"), ("judge", "make-rubric"), ("judge", "agreement"),
                                   ("study", "report"), ("report",)])  # fmt: skip
def test_help_prints_the_usage_and_exits_0(words: tuple[str, ...]) -> None:
    done = subprocess.run([sys.executable, "-m", "capreplay", *words, "--help"], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: capreplay {' '.join(words)}")


HANDLED = [(words, parser) for words, parser in COMMANDS if words and "run" in parser._defaults]


@pytest.mark.parametrize(("words", "parser"), HANDLED, ids=[" ".join(words) for words, _ in HANDLED])
def test_every_handler_is_named_by_one_rule(words: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
    # A verb's handler is run, a step's run_<step>: cli/__init__.py's rule, so a handler is found from its words.
    handler = parser._defaults["run"]
    expected = "run" if len(words) == 1 else "run_" + words[-1].replace("-", "_")
    assert handler.__name__ == expected and handler.__module__.startswith("capreplay.cli."), handler


def test_a_file_or_folder_to_write_is_spelled_out_by_every_verb() -> None:
    # One spelling across verbs; export's first spelling, --output, is kept as a second one.
    for words, parser in COMMANDS:
        for action in parser._actions:
            if "--output" in action.option_strings:
                assert "--out" in action.option_strings, f"capreplay {' '.join(words)}: --output without --out"
    export = build_parser().parse_args(["export", "snap", "--out", "a.wacz"])
    assert export.out == build_parser().parse_args(["export", "snap", "--output", "a.wacz"]).out
