"""The fenced code blocks of the README and ``docs/``, and the bash script that runs one page's examples.

A block's info string says what it is. ``sh``, ``bash``, ``shell`` and ``console`` blocks are shell examples and
``python`` blocks Python examples: they run (``test_examples.py``). ``text`` (synopses, output and commands too long
to run in the suite) and data formats (``json``, ``jsonl``, ``yaml``) are shown, not run: their ``capreplay`` and
script command lines are only parsed (``command_lines.py``, ``test_command_lines.py``). A block of any kind with
``file=NAME`` after its info string is a file the reader saves (a capture plan, an agent script, a Slurm script): it
is written to ``NAME`` when the page's examples reach it, so a later block can use it (a saved shell script's
command lines are parsed too). Any other info string, or none, is allowed only for a block that does not look like
code, so no example can drop out of the suite by being mislabelled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.paths import ROOT

SHELL = frozenset({"sh", "bash", "shell", "console"})
PYTHON = frozenset({"python"})
SHOWN = frozenset({"text", "json", "jsonl", "yaml"})
"""Info strings of blocks that are shown, not run (unless they carry ``file=``)."""

SETUP_COMMANDS = "bash scripts/demo.sh\nbash scripts/test.sh"
"""The README's first block: the two commands that set everything up, run the demo and run this suite (CI runs
the second through ``.ci/run``), so the suite does not run them itself."""

_FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`]*)$")
_CODE_LINE = re.compile(
    r"^(\$ |capreplay |python3? |uv |curl |bash |sh |cd |export |ls |cat |import |from |def |ray |sbatch |kubectl "
    r"|wb-manager |pip |git |for |if |while |[A-Z_]+=\S)"
)


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown page."""

    page: Path
    line: int
    """The line of its opening fence, counted from 1."""
    info: str
    """The info string's first word (``""`` for none)."""
    source: str
    attributes: dict[str, str] = field(default_factory=dict)
    """``key=value`` words after the first one (``file=plan.json``)."""

    @property
    def where(self) -> str:
        """``page:line``, relative to the repository."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        """Whether the block is an example that runs (not a file to save, not shown output)."""
        return self.info in SHELL | PYTHON and "file" not in self.attributes

    @property
    def saved(self) -> bool:
        """Whether the block is a file the reader saves."""
        return "file" in self.attributes

    def looks_like_code(self) -> bool:
        """Whether any of its lines reads like a command or a Python statement."""
        return any(_CODE_LINE.match(line.strip()) for line in self.source.splitlines())


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order (fences may be indented, as in a list item)."""
    found: list[Block] = []
    opened: tuple[int, int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        fence = _FENCE.match(line)
        if opened is None:
            if fence:
                opened, body = (number, len(fence["indent"]), fence["info"].strip()), []
            continue
        if fence and not fence["info"].strip():
            start, _, info = opened
            words = info.split()
            attributes = dict(word.split("=", 1) for word in words[1:] if "=" in word)
            found.append(Block(page, start, words[0] if words else "", "\n".join(body) + "\n", attributes))
            opened = None
            continue
        body.append(line[opened[1] :] if line[: opened[1]].strip() == "" else line)
    if opened is not None:
        raise ValueError(f"{page.relative_to(ROOT)}:{opened[0]}: a fence that never closes")
    return found


def pages() -> list[Path]:
    """The README and every page under ``docs/`` but the methodology's (measurements, not examples)."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "methodology" not in p.relative_to(ROOT / "docs").parts)
    return [ROOT / "README.md", *docs]


def misfiled(block: Block) -> str | None:
    """Why ``block`` would drop out of the suite unnoticed, or None when its info string says what it is."""
    if block.info in SHELL | PYTHON | SHOWN:
        return None
    if block.page == ROOT / "README.md" and block.source.strip() == SETUP_COMMANDS:
        return None
    if block.looks_like_code():
        kind = f"info string {block.info!r}" if block.info else "no info string"
        return f"{block.where}: a block that looks like code has {kind}: mark it sh, bash or python (or text)"
    return None


def script(page_blocks: list[Block], marker: Path) -> str:
    """One bash script that runs a page's examples in order in one session: shell blocks as they are, Python
    blocks through ``python -``, saved files written where the page says. Before each block its line is written
    to ``marker``, so a failure can name the block; background jobs still running at the end are stopped."""
    lines = ["trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for n, block in enumerate(page_blocks):
        if not (block.runs or block.saved):
            continue
        lines.append(f"echo {block.line} > {marker}")
        end = f"CAPREPLAY_DOCS_EOF_{n}"
        if block.saved:
            lines += [f"cat > {block.attributes['file']} <<'{end}'", block.source.rstrip("\n"), end]
        elif block.info in PYTHON:
            lines += [f"python - <<'{end}'", block.source.rstrip("\n"), end]
        elif block.info == "console":
            lines += [line[2:] for line in block.source.splitlines() if line.startswith("$ ")]
        else:
            lines.append(block.source.rstrip("\n"))
    return "\n".join(lines) + "\n"
