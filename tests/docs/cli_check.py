"""Checks of shown command lines against what they name: capreplay's own argument parser, and the scripts' ``--help``.

Nothing runs: a concrete ``capreplay`` line goes through the parser the ``capreplay`` command builds (its type checks
too), a synopsis line's verb, step and options are looked up in it, a script line's options in its ``--help``.
Each check returns the problems it finds, one line each, empty when there are none.
"""

from __future__ import annotations

import argparse
import functools
import io
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

from capreplay.cli import StepsWithDefault, build_parser
from tests.docs.command_lines import CommandLine
from tests.support.command_tree import subcommands
from tests.support.paths import ROOT

_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
_STEP_LIKE = re.compile(r"[a-z][a-z-]*")
_VALUES = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)[ =]([a-z][\w.+-]*(?:\|[a-z][\w.+-]*)*)")
"""An option and the lower-case value or ``a|b`` choices a synopsis gives it (``--kind study|agents|judge``)."""
HELP_TIMEOUT_S = 120


@functools.cache
def parser() -> argparse.ArgumentParser:
    """capreplay's full command-line parser, built once (building it imports the verb modules and nothing more),
    taking no abbreviation: ``--kin`` for ``--kind`` works when typed, but a page that shows it would still parse
    after ``--kind`` became ``--kind-of``."""
    built = build_parser()
    todo = [built]
    while todo:
        p = todo.pop()
        p.allow_abbrev = False
        todo += subcommands(p).values()
    return built


def default_step(p: argparse.ArgumentParser) -> str | None:
    """The step taken when the words after a verb name none (``judge RUN_DIR`` is ``judge score RUN_DIR``)."""
    return next((a.default_step for a in p._actions if isinstance(a, StepsWithDefault)), None)


def options(p: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``p`` (``-o``, ``--out``, ``--help`` ...)."""
    return {s for action in p._actions for s in action.option_strings}


def parse_problem(command: CommandLine) -> str | None:
    """What argparse says about a concrete line (argparse's own message), or None when it parses."""
    try:
        words = command.words()
    except ValueError as e:  # shlex's: an unclosed quote
        return f"{command.where}: {command.text}: the shell cannot split it ({e})"
    said = io.StringIO()
    with redirect_stderr(said), redirect_stdout(io.StringIO()):
        try:
            parser().parse_args(words)
        except SystemExit as e:  # argparse's way to refuse (status 2), and --help's to stop (status 0)
            if e.code:
                return f"{command.where}: {command.text}: {said.getvalue().strip() or f'exit status {e.code}'}"
    return None


def resolve(words: list[str]) -> tuple[str, str | None, str | None]:
    """``(verb, step, problem)`` named by a synopsis' words (brackets and bars already dropped): the step is None
    for a verb without steps; the problem None when both exist. A lower-case word where a step goes must be one
    (a synopsis writes a value as a placeholder or a path); any other word there is the default step's."""
    verbs = subcommands(parser())
    verb = words[0] if words else ""
    if verb not in verbs:
        return verb, None, f"no verb {verb!r} (capreplay has {', '.join(sorted(verbs))})"
    steps = subcommands(verbs[verb])
    word = words[1] if len(words) > 1 else ""
    if not steps or word in steps:
        return verb, word if steps else None, None
    default = default_step(verbs[verb])
    if default is not None and not _STEP_LIKE.fullmatch(word):
        return verb, default, None
    return verb, None, f"capreplay {verb} has no step {word!r} (its steps: {', '.join(steps)})"


def synopsis_words(command: CommandLine) -> list[str]:
    """A synopsis' words after ``capreplay``, without its brackets and bars (``[score]`` is ``score``)."""
    return re.findall(r"[^\s\[\]|]+", command.text.removeprefix("capreplay"))


def synopsis_problems(command: CommandLine) -> list[str]:
    """Whether a synopsis line's verb and step exist, each option it names is one of theirs, and each value it
    gives an option with choices (``--kind study|agents|judge``, ``--backend ray``) is one of them."""
    words = synopsis_words(command)
    verb, step, problem = resolve(words)
    if problem:
        return [f"{command.where}: {command.text}: {problem}"]
    verb_parser = subcommands(parser())[verb]
    target = subcommands(verb_parser)[step] if step else verb_parser
    known = options(target) | options(verb_parser)
    named = [m for w in words for m in _OPTION.findall(w.split("=", 1)[0])]
    name = f"capreplay {verb}" + (f" {step}" if step else "")
    where = f"{command.where}: {command.text}: {name}"
    problems = [f"{where} has no option {o}" for o in named if o not in known]
    by_option = {s: a for a in (*target._actions, *verb_parser._actions) for s in a.option_strings}
    for option, values in _VALUES.findall(command.text):
        allowed = by_option[option].choices if option in by_option else None
        if allowed is not None:
            names = [str(c) for c in allowed]
            wrong = [v for v in values.split("|") if v not in names]
            problems += [f"{where}: {option} takes no {v!r} (its choices: {', '.join(names)})" for v in wrong]
    return problems


def unnamed_options(verb: str, page: str) -> list[str]:
    """The options of ``verb`` and of its steps that its page's text never names (``--help`` aside), each as
    ``step --option`` (``--option`` for a verb without steps)."""
    verb_parser = subcommands(parser())[verb]
    steps = subcommands(verb_parser) or {"": verb_parser}
    missing = []
    for step, p in steps.items():
        for action in p._actions:
            strings = action.option_strings
            if strings and "--help" not in strings and not any(_named(o, page) for o in strings):
                missing.append(f"{step} {strings[-1]}".strip())
    return missing


@functools.cache
def script_help(script: str) -> str | None:
    """``python SCRIPT --help``'s output, run from the repository with this interpreter (None when it fails)."""
    run = subprocess.run(
        [sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=HELP_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    return run.stdout if run.returncode == 0 else None


def script_problems(command: CommandLine) -> list[str]:
    """Whether a script line's script exists and each ``--option`` it passes is in the script's ``--help``."""
    where = f"{command.where}: {command.text}"
    if not (ROOT / command.script).is_file():
        return [f"{where}: no script {command.script}"]
    text = script_help(command.script)
    if text is None:
        return [f"{where}: python {command.script} --help fails"]
    named = [w.split("=", 1)[0] for w in command.words() if w.startswith("-")]
    return [f"{where}: {command.script} has no option {o}" for o in named if not _named(o, text)]


def _named(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None
