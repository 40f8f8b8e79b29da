"""``run merge`` on shard folders made by hand from the real models: one run as if made in one piece, or one
line naming the folder for every gap and overlap, with nothing written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from capreplay.agents.run import read_agent_run
from capreplay.errors import InputError, UsageError
from capreplay.runs.episode_log import EpisodeLog, read_episodes
from capreplay.runs.merge import merge_shards
from capreplay.runs.shards import sharded
from tests.support.shards import make_shard, make_shards, record, shot_bytes, whole_run, write_records


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def test_merged_shards_are_the_run_made_in_one_piece(tmp_path: Path) -> None:
    info = whole_run("exp")
    results = tmp_path / "results"
    folders = make_shards(results, info, 3)
    out = results / "runs" / "exp"
    merged = merge_shards(folders[::-1], out)  # the order they are named in does not matter
    assert (merged.shards, merged.episodes, merged.files) == (3, len(info.planned), 2 * len(info.planned))

    # run.json: the whole plan, exactly as `capreplay run` without --shard plans it
    stored = read_agent_run(out)
    assert stored == info and stored.shard is None
    # episodes.jsonl: one record per planned episode, in plan order, as the shards recorded them
    records = read_episodes(out)
    assert [r.key for r in records] == info.planned
    assert records == [record(k) for k in info.planned]
    # every screenshot, same bytes, hard-linked to the shard's file
    for rec in records:
        for step in rec.steps:
            assert step.screenshot is not None
            assert (out / step.screenshot).read_bytes() == shot_bytes(rec.key, step.n)
            shard = next(f for f in folders if (f / step.screenshot).exists())
            assert os.path.samefile(out / step.screenshot, shard / step.screenshot)
    # nothing else left beside it (the temporary folder is gone)
    assert sorted(p.name for p in (results / "runs").iterdir()) == sorted([*(f.name for f in folders), "exp"])
    # the merged run resumes as a finished run would: its plan is the one-piece plan
    with EpisodeLog(out) as log:
        assert log.finished == set(info.planned)


def test_more_shards_than_episodes_leave_empty_shards_that_still_merge(tmp_path: Path) -> None:
    info = whole_run("small", repeats=1).model_copy(update={"planned": whole_run(repeats=1).planned[:3]})
    folders = make_shards(tmp_path, info, 5)
    assert [len(read_episodes(f)) for f in folders] == [1, 1, 1, 0, 0]
    merged = merge_shards(folders, tmp_path / "runs" / "merged", "merged")
    assert [r.key for r in read_episodes(merged.folder)] == info.planned
    assert read_agent_run(merged.folder).run_id == "merged"


def _refused(folders: list[Path], out: Path, error: type[Exception], *needles: str) -> str:
    """Merging ``folders`` into ``out`` is refused with one line holding every needle; nothing is written."""
    parent = out.parent
    before = _tree(parent)
    with pytest.raises(error) as caught:
        merge_shards(folders, out)
    assert isinstance(caught.value, InputError)
    line = caught.value.line()
    assert "\n" not in line
    for needle in needles:
        assert needle in line, line
    assert _tree(parent) == before, "a refused merge wrote something"
    return line


def test_a_missing_shard_is_a_gap(tmp_path: Path) -> None:
    folders = make_shards(tmp_path, whole_run("exp"), 3)
    out = tmp_path / "runs" / "exp"
    _refused([folders[0], folders[2]], out, InputError, "gap: shard 1 of 3 is missing", "exp.shard-1-of-3")
    _refused([folders[0]], out, InputError, "gap: shard 1 of 3 is missing (and 1 more)")


def test_a_shard_with_unrecorded_episodes_is_a_gap(tmp_path: Path) -> None:
    info = whole_run("exp")
    folders = [make_shard(tmp_path, info, 0, 2), make_shard(tmp_path, info, 1, 2, complete=False)]
    last = sharded(info, 1, 2).planned[-1]
    _refused(folders, tmp_path / "runs" / "exp", InputError, str(folders[1]), "gap: 1 of its 10 episodes are not "
             f"recorded (first: {last.id()})", "--shard 1/2")  # fmt: skip


def test_two_folders_claiming_one_shard_overlap(tmp_path: Path) -> None:
    info = whole_run("exp")
    folders = make_shards(tmp_path, info, 2)
    again = make_shard(tmp_path, info, 1, 2, folder_name="exp.shard-1-of-2.again")
    _refused([*folders, again], tmp_path / "runs" / "exp", InputError, str(again),
             f"overlap: claims shard 1 of 2, as {folders[1]} does")  # fmt: skip


def test_an_episode_recorded_in_two_shards_overlaps(tmp_path: Path) -> None:
    info = whole_run("exp")
    folders = make_shards(tmp_path, info, 2)
    stray = sharded(info, 0, 2).planned[3]
    with EpisodeLog(folders[1]) as log:
        log.append(record(stray))
    _refused(folders, tmp_path / "runs" / "exp", InputError, str(folders[1] / "episodes.jsonl"),
             f"overlap: episode {stray.id()} is recorded here and in {folders[0]}")  # fmt: skip


def test_an_episode_outside_its_slice_overlaps(tmp_path: Path) -> None:
    info = whole_run("exp")
    shard0 = sharded(info, 0, 2)
    folders = [make_shard(tmp_path, info, 0, 2), make_shard(tmp_path, info, 1, 2, complete=False)]
    write_records(folders[0], [sharded(info, 1, 2).planned[-1]])  # shard 0 ran shard 1's missing episode
    assert len(read_episodes(folders[0])) == len(shard0.planned) + 1
    _refused(folders, tmp_path / "runs" / "exp", InputError, str(folders[0]), "which is not in shard 0 of 2")


@pytest.mark.parametrize(("change", "says"), [
    ({"registration": "other"}, "was run under registration other"),
    ({"seed": 8}, "was planned otherwise than"),
    ({"step_limit": 20}, "was planned otherwise than"),
    ({"run_id": "another"}, "is a shard of run another"),
])  # fmt: skip
def test_shards_of_another_run_are_refused(tmp_path: Path, change: dict[str, object], says: str) -> None:
    info = whole_run("exp")
    first = make_shard(tmp_path, info, 0, 2)
    other = info.model_copy(update=change)
    if "seed" in change:
        other = whole_run("exp", seed=8)
    second = make_shard(tmp_path, other, 1, 2, folder_name="second")
    _refused([first, second], tmp_path / "runs" / "exp", InputError, str(second), says)


def test_shards_cut_in_another_number_are_refused(tmp_path: Path) -> None:
    info = whole_run("exp")
    first = make_shard(tmp_path, info, 0, 2)
    third = make_shard(tmp_path, info, 1, 3)
    _refused([first, third], tmp_path / "runs" / "exp", InputError, str(third), "is shard 1 of 3", "one of 2")


def test_a_run_that_is_no_shard_is_refused(tmp_path: Path) -> None:
    from capreplay.agents.run import start_agent_run

    info = whole_run("exp")
    plain = tmp_path / "runs" / "plain"
    start_agent_run(plain, info)
    _refused([make_shard(tmp_path, info, 0, 1), plain], tmp_path / "runs" / "exp", InputError, str(plain),
             "is not a shard")  # fmt: skip
    _refused([tmp_path / "runs" / "nosuch"], tmp_path / "runs" / "exp", InputError, "not an agent run folder")


def test_an_edited_shard_plan_is_refused(tmp_path: Path) -> None:
    info = whole_run("exp")
    folder = make_shard(tmp_path, info, 0, 1)
    stored = read_agent_run(folder)
    (folder / "run.json").write_text(stored.model_copy(update={"planned": stored.planned[1:]}).model_dump_json())
    _refused([folder], tmp_path / "runs" / "exp", InputError, str(folder), "is not shard 0 of 1 of the plan")


def test_a_missing_screenshot_is_refused(tmp_path: Path) -> None:
    folders = make_shards(tmp_path, whole_run("exp"), 2)
    victim = read_episodes(folders[1])[2]
    assert victim.steps[1].screenshot is not None
    (folders[1] / victim.steps[1].screenshot).unlink()
    _refused(folders, tmp_path / "runs" / "exp", InputError, str(folders[1]), f"episode {victim.key.id()}: step 2")


def test_the_same_folder_twice_and_an_existing_output_are_refused(tmp_path: Path) -> None:
    folders = make_shards(tmp_path, whole_run("exp"), 2)
    _refused([folders[0], folders[0]], tmp_path / "runs" / "exp", UsageError, "named twice")
    out = tmp_path / "runs" / "exp"
    out.mkdir()
    _refused(folders, out, UsageError, str(out), "already exists")
    shutil.rmtree(out)
    merge_shards(folders, out)
    _refused(folders, out, UsageError, "already exists")
