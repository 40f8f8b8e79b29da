"""The command lines of the blocks that are shown, not run: each ``capreplay`` and ``python scripts/NAME.py`` line a
reader could copy, found without running anything.

JSON data and Python files hold none. A block is read as its kind is written: a shell block saved as a file
(``bash file=shards.sbatch``) continues a line only after a trailing backslash; a ``text`` block also on lines
indented more than it (as the synopses wrap); in a ``yaml`` block only a line that starts with a command is one,
continued on lines indented as much (a folded scalar). In a block with ``$ `` prompts only the prompted lines are
commands (the rest is their output). Comments are dropped; a line is cut into commands at ``&&``, ``||``, ``;``,
``&`` and a spaced ``|`` outside brackets and quotes; ``VAR=value`` assignments and shell keywords before a
command are skipped; a quoted argument of another tool's command (``sbatch --wrap '...'``, ``sh -c '...'``) is
read as a line of its own.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from tests.docs.examples import PYTHON, SHELL, Block
from tests.support.paths import ROOT

Kind = Literal["concrete", "synopsis", "script"]

_SEPARATORS = ("&&", "||", ";", "&", "|")
_LEADING = re.compile(r"^(?:(?:[A-Za-z_]\w*=(?:'[^']*'|\"[^\"]*\"|\S*)|do|then|else|if|elif|while|until|time|!)\s+)*")
"""``VAR=value`` assignments and shell keywords that may come before a command's name."""
_SYNOPSIS = re.compile(r"[\[\]|]|\.\.\.|(?<![\w$-])[A-Z][A-Z0-9_]*(?!\w)")
"""Synopsis notation: brackets, bars, ellipses or an ALL-CAPS placeholder (``$VAR`` is a variable, not one)."""
_SCRIPT = re.compile(r"^(?:uv run )?python3? (scripts/\S+\.py)(?=\s|$)")
_REDIRECTION = re.compile(r"^\d*(?:>>?|<)(\S*)$")
_DATA = frozenset({"json", "jsonl"})


@dataclass(frozen=True)
class CommandLine:
    """One command a shown block names."""

    block: Block
    line: int
    """The page's line the command starts on, counted from 1."""
    text: str
    """The command as written: one line, continuations joined, without prompt, assignments or comment."""
    kind: Kind
    """``concrete``: a real capreplay command; ``synopsis``: one in synopsis notation; ``script``: a script's."""

    @property
    def where(self) -> str:
        """``page:line``, relative to the repository."""
        return f"{self.block.page.relative_to(ROOT)}:{self.line}"

    def words(self) -> list[str]:
        """The arguments as the shell would pass them (after ``capreplay``, or after the script's path), a
        variable's value taken to be ``1`` (a shard index, a port, a count), redirections dropped."""
        words = shlex.split(
            _SCRIPT.sub("", self.text) if self.kind == "script" else self.text.removeprefix("capreplay")
        )
        kept: list[str] = []
        target = False  # the word after a bare ``>`` is its file
        for word in (re.sub(r"\$\{?[A-Za-z_]\w*\}?", "1", w) for w in words):
            redirection = _REDIRECTION.match(word)
            if not target and not redirection:
                kept.append(word)
            target = redirection is not None and not redirection.group(1)
        return kept

    @property
    def script(self) -> str:
        """The script's path, relative to the repository (``""`` for a capreplay command)."""
        found = _SCRIPT.match(self.text)
        return found.group(1) if found else ""


def strip_comment(line: str) -> str:
    """``line`` without a shell comment (``#`` at the start of a word, outside quotes)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def split_commands(line: str) -> list[str]:
    """The commands of one shell line, cut at ``&&``, ``||``, ``;``, ``&`` and ``|`` outside quotes and brackets (a
    ``|`` only with spaces around it: ``FILE.wacz|FILE.har`` is a synopsis' choice, not a pipe)."""
    commands, start, quote, depth, i = [], 0, "", 0, 0
    while i < len(line):
        char = line[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[]":
            depth += 1 if char == "[" else -1
        elif depth == 0 and (sep := next((s for s in _SEPARATORS if line.startswith(s, i)), None)):
            cuts = sep != "|" or (line[i - 1 : i].isspace() and line[i + 1 : i + 2] in ("", " "))
            redirection = sep == "&" and line[i - 1 : i] in ("<", ">")  # 2>&1
            if cuts and not redirection:
                commands.append(line[start:i])
                start = i = i + len(sep)
                continue
        i += 1
    commands.append(line[start:])
    return [c.strip() for c in commands if c.strip()]


def logical_lines(block: Block) -> Iterator[tuple[int, str]]:
    """``(line, text)`` for each line of ``block`` that may hold commands, its continuations joined to it."""
    physical = [strip_comment(line) for line in block.source.splitlines()]
    prompted = any(line.startswith("$ ") for line in physical)
    i = 0
    while i < len(physical):
        first = physical[i]
        skipped = block.info == "yaml" and not _names_ours(first.strip())  # YAML's own lines
        if not first.strip() or (prompted and not first.startswith("$ ")) or skipped:
            i += 1
            continue
        indent = len(first) - len(first.lstrip())
        parts, start = [first.strip().removeprefix("$ ")], i
        while i + 1 < len(physical) and _continues(block, parts[-1], physical[i + 1], indent):
            parts[-1] = parts[-1].removesuffix("\\").rstrip()
            i += 1
            parts.append(physical[i].strip())
        yield block.line + 1 + start, " ".join(parts)
        i += 1


def _continues(block: Block, previous: str, following: str, indent: int) -> bool:
    if previous.endswith("\\"):
        return True
    depth = len(following) - len(following.lstrip())
    if not following.strip() or block.info in SHELL or following.startswith("$ "):
        return False
    return depth >= indent if block.info == "yaml" else depth > indent


def _names_ours(command: str) -> bool:
    return command == "capreplay" or command.startswith("capreplay ") or bool(_SCRIPT.match(command))


def commands_in(block: Block, line: int, text: str) -> Iterator[CommandLine]:
    """The capreplay and script commands of one logical line, those inside another tool's quoted arguments too."""
    for command in split_commands(text):
        command = _LEADING.sub("", command)
        if _SCRIPT.match(command):
            yield CommandLine(block, line, command, "script")
        elif _names_ours(command):
            kind: Kind = "synopsis" if _SYNOPSIS.search(command.removeprefix("capreplay")) else "concrete"
            yield CommandLine(block, line, command, kind)
        else:
            try:
                words = shlex.split(command)
            except ValueError:  # another tool's line the shell's quoting rules do not fit: nothing of ours in it
                continue
            for word in words:
                if any(c.isspace() for c in word):
                    yield from commands_in(block, line, word)


def shown_commands(block: Block) -> list[CommandLine]:
    """The commands of a block that is shown and not run (none for one that runs, a Python file or JSON data)."""
    if block.runs or block.info in PYTHON | _DATA:
        return []
    return [command for line, text in logical_lines(block) for command in commands_in(block, line, text)]
