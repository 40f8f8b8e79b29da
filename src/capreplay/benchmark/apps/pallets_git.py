"""The Pallets projects' source releases as git history: one bare repository per project, one commit per release.

Each pinned source release (:data:`capreplay.benchmark.sdists.SDISTS`, oldest first) becomes a commit of its
whole unpacked tree, dated at noon UTC on the day its own ``CHANGES.rst`` gives (a release without the file reads
the newest one of its project, as :func:`~capreplay.benchmark.sdists.changes_file` does), written by the
``PKG-INFO``'s Author (or, without one, its Maintainer), with the message ``Release <version>`` and that
release's changelog entries as the body, and tagged with an annotated tag named after the version. Every date,
name and file comes from the releases, so the same releases give the same commit hashes on every build.

Jinja 3.1.4 is the one release the data does not date: its source release ships no ``CHANGES.rst``, Jinja
3.1.2's stops before it, and its files carry no time stamps. Its date is the one its upstream ``CHANGES.rst``
gives (:data:`UNDATED_RELEASES`); its message has no body.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from email.parser import HeaderParser
from email.utils import parseaddr
from pathlib import Path

from capreplay.benchmark.changelog import Release, parse_changelog
from capreplay.benchmark.sdists import SDISTS, Sdist, changes_file
from capreplay.errors import CapreplayError

UNDATED_RELEASES: dict[tuple[str, str], date] = {("jinja2", "3.1.4"): date(2024, 5, 5)}
"""Release dates the source releases do not hold, from the project's own ``CHANGES.rst`` upstream
("Version 3.1.4 / Released 2024-05-05")."""
FALLBACK_NAME = "Pallets"
FALLBACK_EMAIL = "contact@palletsprojects.com"
BRANCH = "main"


@dataclass(frozen=True)
class Person:
    """A commit's author (and committer): name and email as ``PKG-INFO`` gives them."""

    name: str
    email: str


@dataclass(frozen=True)
class ReleaseCommit:
    """One release as the commit that records it."""

    version: str
    tree: Path
    """The unpacked release, committed whole."""
    when: datetime
    author: Person
    message: str


def pkg_info_fields(text: str) -> dict[str, str]:
    """The header fields of a ``PKG-INFO`` (its long description, after the blank line, is left out)."""
    headers = HeaderParser().parsestr(text, headersonly=True)
    return {name: str(value).strip() for name, value in headers.items() if str(value).strip() not in ("", "UNKNOWN")}


def release_author(fields: dict[str, str]) -> Person:
    """``Author`` with ``Author-email`` if the release names an author, else ``Maintainer`` with its email;
    an email field may carry the name itself (``Pallets <contact@...>``). "Pallets" when neither names one."""
    for role in ("Author", "Maintainer"):
        named_name, named_email = parseaddr(fields.get(f"{role}-email", ""))
        name = fields.get(role) or named_name
        if name:
            return Person(name, named_email or FALLBACK_EMAIL)
    return Person(FALLBACK_NAME, FALLBACK_EMAIL)


def commit_message(version: str, release: Release | None) -> str:
    """``Release <version>``, then each changelog entry of the release as a bullet wrapped at 72 columns."""
    lines = [f"Release {version}"]
    changes = release.changes if release else ()
    if changes:
        lines.append("")
        for change in changes:
            lines.extend(textwrap.wrap(change.text, width=72, initial_indent="- ", subsequent_indent="  ",
                                       break_long_words=False, break_on_hyphens=False))  # fmt: skip
    return "\n".join(lines) + "\n"


def release_day(project: str, version: str, release: Release | None) -> date:
    """The day ``version`` was released: its changelog's date, else :data:`UNDATED_RELEASES`."""
    if release is not None and release.released is not None:
        return release.released
    known = UNDATED_RELEASES.get((project, version))
    if known is None:
        raise CapreplayError(f"{project} {version}: no release date in its CHANGES.rst")
    return known


def history(project: str, unpacked: dict[Sdist, Path]) -> list[ReleaseCommit]:
    """The commits of ``project``'s repository, oldest first, read from its unpacked releases."""
    commits = []
    for sdist in (s for s in SDISTS if s.project == project):
        folder = unpacked[sdist]
        own = folder / "CHANGES.rst"
        changelog = own if own.is_file() else changes_file(project, unpacked)
        releases = {r.version: r for r in parse_changelog(changelog.read_text(encoding="utf-8"))}
        release = releases.get(sdist.version)
        fields = pkg_info_fields((folder / "PKG-INFO").read_text(encoding="utf-8"))
        noon = datetime.combine(release_day(project, sdist.version, release), time(12), tzinfo=UTC)
        commits.append(ReleaseCommit(version=sdist.version, tree=folder, when=noon, author=release_author(fields),
                                     message=commit_message(sdist.version, release)))  # fmt: skip
    return commits


def summary(unpacked: dict[Sdist, Path], project: str) -> tuple[str, str]:
    """The newest release's ``Summary`` (the repository's description) and its maintainer (its owner)."""
    newest = [s for s in SDISTS if s.project == project][-1]
    fields = pkg_info_fields((unpacked[newest] / "PKG-INFO").read_text(encoding="utf-8"))
    maintainer = parseaddr(fields.get("Maintainer-email", ""))[0] or fields.get("Maintainer") or FALLBACK_NAME
    return fields.get("Summary", ""), maintainer


def _git_env(home: Path) -> dict[str, str]:
    # no user or system configuration may change what is committed (excludes, autocrlf, hooks)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C", "TZ": "UTC"}  # fmt: skip


def _git(repo: Path, *args: str, env: dict[str, str], stdin: str | None = None) -> str:
    done = subprocess.run(["git", f"--git-dir={repo}", *args], input=stdin, env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise CapreplayError(f"git {' '.join(args[:3])} failed: {done.stderr.strip()[-800:]}", where=repo)
    return done.stdout.strip()


def build_repository(commits: list[ReleaseCommit], description: str, owner: str, repo: Path) -> str:
    """A bare repository at ``repo`` holding ``commits`` on ``main``, each tagged; returns the head commit."""
    base = _git_env(repo.parent)
    subprocess.run(["git", "init", "--bare", "--quiet", f"--initial-branch={BRANCH}", str(repo)], env=base,
                   check=True, capture_output=True)  # fmt: skip
    index = repo / "release-index"
    parent = ""
    for commit in commits:
        stamp = f"{int(commit.when.timestamp())} +0000"
        env = base | {"GIT_INDEX_FILE": str(index),
                      "GIT_AUTHOR_NAME": commit.author.name, "GIT_AUTHOR_EMAIL": commit.author.email,
                      "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_NAME": commit.author.name,
                      "GIT_COMMITTER_EMAIL": commit.author.email, "GIT_COMMITTER_DATE": stamp}  # fmt: skip
        # -f: a release ships files its own .gitignore names (egg-info); the commit holds the release whole
        _git(repo, f"--work-tree={commit.tree}", "add", "--all", "--force", ".", env=env)
        tree = _git(repo, "write-tree", env=env)
        parents = ["-p", parent] if parent else []
        parent = _git(repo, "commit-tree", tree, *parents, "-F", "-", env=env, stdin=commit.message)
        _git(repo, "update-ref", f"refs/heads/{BRANCH}", parent, env=env)
        _git(repo, "tag", "--annotate", commit.version, "-m", f"Release {commit.version}", parent, env=env)
    index.unlink(missing_ok=True)
    _git(repo, "config", "gitweb.owner", owner, env=base)
    (repo / "description").write_text(description + "\n", encoding="utf-8")
    return parent


def build_repositories(unpacked: dict[Sdist, Path], root: Path) -> dict[str, str]:
    """One bare repository ``<project>.git`` under ``root`` per project: project -> head commit."""
    root.mkdir(parents=True, exist_ok=True)
    heads = {}
    for project in dict.fromkeys(s.project for s in SDISTS):
        description, owner = summary(unpacked, project)
        heads[project] = build_repository(history(project, unpacked), description, owner, root / f"{project}.git")
    return heads
