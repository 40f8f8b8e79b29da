"""The episodes of an agent run: ``episodes.jsonl``, one record per episode, appended and fsynced line by line."""

from __future__ import annotations

from pathlib import Path

from capreplay.models.episode import EpisodeKey, EpisodeRecord
from capreplay.runs.log import AppendLog, read_lines

EPISODES_FILE = "episodes.jsonl"


def _key(record: EpisodeRecord) -> EpisodeKey:
    return record.key


def _name(key: EpisodeKey) -> str:
    return f"episode {key.id()}"


class EpisodeLog(AppendLog[EpisodeRecord, EpisodeKey]):
    """``episodes.jsonl`` of a run, opened for appending."""

    def __init__(self, run_dir: Path) -> None:
        """Read the recorded episodes, cut off a torn last line, open for appending."""
        super().__init__(run_dir / EPISODES_FILE, EpisodeRecord, _key, "episode record", _name)


def read_episodes(run_dir: Path) -> list[EpisodeRecord]:
    """The recorded episodes of a run (an unfinished last line is ignored)."""
    return read_lines(run_dir / EPISODES_FILE, EpisodeRecord, _key, "episode record", _name).records
