"""The house's layout, read from the code's own imports: data flows one way, and the study is no hub.

Each package of ``src/capreplay`` has a floor; a module may import from its own package and from packages
on lower floors only. The floors are the pipeline of DESIGN.md read bottom-up (capture -> archive ->
replay -> browser -> study / agents / judge -> report), with the shared run layer and the models below
everything that runs. Imports inside functions count as much as those at the top.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "capreplay"

FLOORS: dict[str, int] = {
    "errors": 0, "__init__": 0,
    "util": 1, "certs": 2,
    "llm": 2,
    "models": 3,
    "archive": 4,
    "browser": 5, "runs": 5, "mitm": 5,
    "replay": 6,
    "capture": 7,
    "verify": 8, "testing": 8,
    "study": 9, "agents": 9,
    "judge": 10, "cluster": 10,
    "report": 11, "tasks": 11,
    "benchmark": 12,
    "view": 13,
    "cli": 14, "__main__": 15,
}  # fmt: skip
"""The floor of each top-level package or module of ``capreplay``."""

STUDY_USERS = {"cli/study.py", "cli/demo.py", "tasks/cards/annotate.py", "tasks/cards/validate.py",
               "benchmark/site_cards.py", "cluster/study_sessions.py"}
"""The only modules outside ``study/`` that may import it: the verb ``study``, the demo that runs it, the site
cards (made by a model or, for the benchmark, checked by hand), which read a page's views as the study does and
find an item's element as ACT targets are found, and the Ray backend's page sessions, which run the study's own
session on a node. ``capture`` stands above ``replay``: it makes the replay server's ready responses in its index
step."""


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``capreplay.*`` module ``path`` imports, with its line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if node.module != "capreplay" else [f"capreplay.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        yield from ((node.lineno, name) for name in names if name.startswith("capreplay."))


def _package(parts: tuple[str, ...]) -> str:
    return parts[0].removesuffix(".py")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def readme_floors(text: str) -> dict[str, int]:
    """The floors the README draws: the code block after its ``<!-- floors -->`` marker, one floor per line."""
    block = text.split("<!-- floors -->", 1)[1].split("```", 2)[1]
    floors: dict[str, int] = {}
    for line in block.splitlines():
        if line.strip():
            number, names = re.match(r"\s*(\d+)  (\w+(?:, \w+)*)", line).groups()  # type: ignore[union-attr]
            floors |= {name: int(number) for name in names.split(", ")}
    return floors


def test_the_layout_page_draws_the_floors_this_test_holds() -> None:
    """docs/layout.md draws the floors (the block after its ``<!-- floors -->`` marker) that this file enforces."""
    readme = (PACKAGE.parents[1] / "docs" / "layout.md").read_text(encoding="utf-8")
    assert readme_floors(readme) == FLOORS


def test_every_package_has_a_floor() -> None:
    packages = {_package(p.relative_to(PACKAGE).parts) for p in _modules()}
    assert packages <= set(FLOORS), f"packages without a floor: {sorted(packages - set(FLOORS))}"


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_floors(module: Path) -> None:
    here = _package(module.relative_to(PACKAGE).parts)
    upward = [f"line {line}: {name} (floor {FLOORS[name.split('.')[1]]} above {here}'s {FLOORS[here]})"
              for line, name in _imports(module)
              if name.split(".")[1] != here and FLOORS[name.split(".")[1]] >= FLOORS[here]]  # fmt: skip
    assert not upward, "\n".join(upward)


STUDY_EXPORTS = {"capreplay.study.records", "capreplay.study.run_files"}
"""What the study exports to every room: its run records and the files of a run's folder, which the cluster's page
sessions write and the report and viewer read."""


def test_only_the_study_verb_enters_the_study() -> None:
    entering = []
    for module in _modules():
        rel = module.relative_to(PACKAGE)
        if rel.parts[0] == "study" or str(rel) in STUDY_USERS:
            continue
        entering += [f"{rel}:{line}: {name}" for line, name in _imports(module)
                     if name.startswith("capreplay.study") and name not in STUDY_EXPORTS]  # fmt: skip
    assert not entering, "\n".join(entering)


def test_the_package_never_imports_the_tests() -> None:
    found = []
    for module in _modules():
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tests":
                found.append(f"{module.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, found


PARALLEL_NAMES = {
    "__init__.py": "every package",
    "__main__.py": "every runnable package",
    "build.py": "the pure builders of each archive format (archive/warc, archive/wacz)",
    "read.py": "the readers of each archive format (archive/warc, archive/wacz)",
    "live.py": "WebSocket messages and event streams in each archive format holding them (archive/warc, archive/har)",
    "streams.py": "event streams as the capture records them (capture/) and as the proxy passes them on "
    "(replay/proxy/)",
    "manifest.py": "a schema in models/ and its file I/O in archive/snapshot/",
    "episode.py": "an episode's record in models/ and judging one in judge/",
    "session.py": "a capture session (capture/) and a study page session (study/page/)",
    "report.py": "verify's report of a replay (verify/)",
    "agreement.py": "the judge against human labels (judge/) and one reviewer against another (tasks/review/)",
    "parse.py": "reading a model's site-card reply (tasks/cards/) and a filled review sheet (tasks/review/)",
    "files.py": "atomic file I/O (util/) and the files each task generator writes (tasks/multihop/, tasks/workflows/)",
    "app.py": "the aiohttp application factories of the replay server (replay/) and the viewer (view/)",
}
"""Names two library modules may share: parallel rooms, or a model beside its I/O. Verbs (cli/) and fixture
sets (testing/fixtures/) repeat names by design and are not counted."""


def test_no_two_modules_share_a_name_unless_they_are_parallel_rooms() -> None:
    seen: dict[str, list[str]] = {}
    for module in _modules():
        rel = module.relative_to(PACKAGE)
        if rel.parts[0] != "cli" and rel.parts[:2] != ("testing", "fixtures"):
            seen.setdefault(rel.name, []).append(str(rel))
    twice = {name: where for name, where in seen.items() if len(where) > 1 and name not in PARALLEL_NAMES}
    assert not twice, twice
