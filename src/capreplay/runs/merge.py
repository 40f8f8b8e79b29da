"""``capreplay run merge``: the N shard folders of one run joined into one run folder, as if run in one piece.

The shards must be one run's: the same registration, the same whole plan (tasks, agents, seed, repeats, limits,
snapshot), the same N, and every shard 0..N-1 given exactly once, each complete (every episode of its slice
recorded) and recording nothing outside its slice. A gap (a missing shard, an unrecorded episode) or an overlap
(two folders claiming one shard, an episode recorded twice) is one ``InputError`` line naming the folder, and
nothing is written. The merged folder holds ``run.json`` of the whole plan, ``episodes.jsonl`` in plan order and
every episode's screenshots (hard links where the file system allows, else copies); it is built in a hidden
folder beside the output and renamed into place, so it appears whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from capreplay.errors import InputError, OutputError, UsageError, os_reason
from capreplay.models.episode import AgentRunInfo, EpisodeKey, EpisodeRecord
from capreplay.runs.episode_log import EPISODES_FILE, read_episodes
from capreplay.runs.folder import RUN_FILE, read_run_info
from capreplay.runs.shards import plan_sha256, shard_run_id, shard_slice, whole
from capreplay.util.files import refuse_unmakeable_folder, write_atomic


@dataclass(frozen=True)
class Shard:
    """One shard folder, read and checked."""

    folder: Path
    info: AgentRunInfo
    records: dict[EpisodeKey, EpisodeRecord]


@dataclass(frozen=True)
class Merged:
    """What a merge wrote."""

    folder: Path
    info: AgentRunInfo
    shards: int
    episodes: int
    files: int


def episode_folder(key: EpisodeKey) -> Path:
    """An episode's screenshot folder inside its run folder (``<agent>/<repeat>/<task>``, as the harness makes it)."""
    return Path(key.agent, str(key.repeat), key.task)


def read_shard(folder: Path) -> Shard:
    """A shard folder's plan and records; a folder that is not a shard of a run is one ``InputError``."""
    info = read_run_info(folder, AgentRunInfo, "an agent run")
    shard = info.shard
    if shard is None:
        raise InputError("is not a shard (its run.json has no shard): only `capreplay run --shard` folders merge",
                         folder)  # fmt: skip
    if plan_sha256(shard.plan) != shard.plan_sha256 or info.planned != shard_slice(shard.plan, shard.index,
                                                                                   shard.count):  # fmt: skip
        raise InputError(f"its {RUN_FILE} is not shard {shard.index} of {shard.count} of the plan it holds", folder)
    return Shard(folder, info, {r.key: r for r in read_episodes(folder)})


def _same_run(shard: Shard, first: Shard) -> None:
    """An ``InputError`` naming ``shard``'s folder unless it belongs to the run ``first`` belongs to."""
    a, b = shard.info, first.info
    assert a.shard is not None and b.shard is not None
    if a.registration != b.registration:
        raise InputError(f"was run under registration {a.registration}, {first.folder} under {b.registration}: "
                         "shards of one run share its registration", shard.folder)  # fmt: skip
    if a.shard.count != b.shard.count:
        raise InputError(f"is shard {a.shard.index} of {a.shard.count}, {first.folder} one of {b.shard.count}: "
                         "shards of one run are cut the same", shard.folder)  # fmt: skip
    if a.shard.run_id != b.shard.run_id:
        raise InputError(f"is a shard of run {a.shard.run_id}, {first.folder} of run {b.shard.run_id}", shard.folder)
    plan = {"run_id", "created_at", "planned", "shard"}
    if a.model_dump(exclude=plan) != b.model_dump(exclude=plan) or a.shard.plan_sha256 != b.shard.plan_sha256:
        raise InputError(f"was planned otherwise than {first.folder} (tasks, agents, seed, repeats, limits or "
                         "snapshot): not a shard of the same run", shard.folder)  # fmt: skip


def check_shards(folders: list[Path]) -> list[Shard]:
    """The shards of one run, in shard order, every check passed; the first failed check is one ``InputError``."""
    if not folders:
        raise UsageError("name the shard folders to merge")
    shards: list[Shard] = []
    seen: dict[Path, Path] = {}
    for folder in folders:
        real = folder.resolve()
        if real in seen:
            raise UsageError(f"named twice (as {seen[real]} too)", folder)
        seen[real] = folder
        shards.append(read_shard(folder))
    first = shards[0]
    assert first.info.shard is not None
    count = first.info.shard.count
    by_index: dict[int, Shard] = {}
    for shard in shards:
        _same_run(shard, first)
        assert shard.info.shard is not None
        index = shard.info.shard.index
        if index in by_index:
            raise InputError(f"overlap: claims shard {index} of {count}, as {by_index[index].folder} does",
                             shard.folder)  # fmt: skip
        by_index[index] = shard
    missing = [i for i in range(count) if i not in by_index]
    if missing:
        name = shard_run_id(first.info.shard.run_id, missing[0], count)
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(f"gap: shard {missing[0]} of {count} is missing{more}; no folder named claims it",
                         first.folder.parent / name)  # fmt: skip
    recorded_in: dict[EpisodeKey, Shard] = {}
    for shard in (by_index[i] for i in range(count)):
        for key in shard.records:
            if key in recorded_in:
                raise InputError(f"overlap: episode {key.id()} is recorded here and in {recorded_in[key].folder}",
                                 shard.folder / EPISODES_FILE)  # fmt: skip
            recorded_in[key] = shard
    for shard in (by_index[i] for i in range(count)):
        _complete(shard)
    return [by_index[i] for i in range(count)]


def _complete(shard: Shard) -> None:
    """An ``InputError`` unless ``shard`` recorded exactly its slice, every screenshot present."""
    assert shard.info.shard is not None
    index, count = shard.info.shard.index, shard.info.shard.count
    planned = set(shard.info.planned)
    outside = [k for k in shard.records if k not in planned]
    if outside:
        raise InputError(f"overlap: records episode {outside[0].id()}, which is not in shard {index} of {count}",
                         shard.folder / EPISODES_FILE)  # fmt: skip
    unrecorded = [k for k in shard.info.planned if k not in shard.records]
    if unrecorded:
        raise InputError(f"gap: {len(unrecorded)} of its {len(planned)} episodes are not recorded (first: "
                         f"{unrecorded[0].id()}); rerun its `capreplay run ... --shard {index}/{count}` to finish it",
                         shard.folder)  # fmt: skip
    for record in shard.records.values():
        for step in record.steps:
            if step.screenshot and not (shard.folder / step.screenshot).is_file():
                raise InputError(f"episode {record.key.id()}: step {step.n}'s screenshot {step.screenshot} is missing",
                                 shard.folder)  # fmt: skip


def merged_info(shards: list[Shard], run_id: str) -> AgentRunInfo:
    """``run.json`` of the merged run: the whole plan, as a run made in one piece has it; made when the first
    shard was."""
    info = whole(shards[0].info, run_id)
    return info.model_copy(update={"created_at": min(s.info.created_at for s in shards)})


def merge_shards(folders: list[Path], out: Path, run_id: str | None = None) -> Merged:
    """Check the shard ``folders`` and write their merged run into the new folder ``out``.

    ``run_id`` names the merged run (default: the whole run's id the shards record). Any failed check, or an
    ``out`` that exists, is an ``InputError``/``UsageError`` before anything is written.
    """
    shards = check_shards(folders)
    first = shards[0].info.shard
    assert first is not None
    return write_merged(shards, out, run_id or first.run_id)


def write_merged(shards: list[Shard], out: Path, run_id: str) -> Merged:
    """Write the checked ``shards`` (from :func:`check_shards`) as run ``run_id`` into the new folder ``out``."""
    info = merged_info(shards, run_id)
    if out.exists() or out.is_symlink():
        raise UsageError("already exists: a merge writes a new run folder and never replaces one", out)
    refuse_unmakeable_folder(out)
    records = [rec for s in shards for rec in s.records.values()]
    by_key = {r.key: r for r in records}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".merging"))
    except OSError as e:
        raise OutputError(f"cannot create the run folder: {os_reason(e)}", out) from e
    files = 0
    try:
        write_atomic(tmp / RUN_FILE, (info.model_dump_json(indent=1) + "\n").encode("utf-8"))
        lines = b"".join(by_key[k].model_dump_json().encode("utf-8") + b"\n" for k in info.planned)
        write_atomic(tmp / EPISODES_FILE, lines)
        for shard in shards:
            for key in shard.info.planned:
                source = shard.folder / episode_folder(key)
                if source.is_dir():
                    files += _link_tree(source, tmp / episode_folder(key))
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a run folder is as readable as any the run verb makes
        os.rename(tmp, out)
        _sync(out.parent)
    except OSError as e:
        raise OutputError(f"cannot write the merged run: {os_reason(e)}", out) from e
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return Merged(out, info, len(shards), len(info.planned), files)


def _link_tree(source: Path, target: Path) -> int:
    """``source``'s files under ``target``, hard-linked (copied where links fail); returns how many."""
    count = 0

    def link(src: str, dst: str) -> None:
        nonlocal count
        try:
            os.link(src, dst)
        except OSError:  # another file system, or one without hard links
            shutil.copy2(src, dst)
        count += 1

    shutil.copytree(source, target, copy_function=link)
    return count


def _sync(folder: Path) -> None:
    """fsync ``folder``, so the rename into it survives a crash."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
