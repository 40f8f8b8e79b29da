"""The edges of the workflow stages: the cards file read, ``proposals.json`` written, the batch of instances proven.

The stages themselves (:func:`~capreplay.tasks.workflows.propose.propose`,
:func:`~capreplay.tasks.workflows.instantiate.instantiate`) take and return models; these functions do the
file work around them for ``tasks propose`` and ``tasks instantiate``, each through a fresh
:class:`~capreplay.tasks.meter.Meter`, so a file's cost is the calls made for it.
"""

from __future__ import annotations

from pathlib import Path

from capreplay.errors import InputError, OutputError, os_reason
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelSettings
from capreplay.tasks.batch import file_sha256, prove_and_write
from capreplay.tasks.generation import BatchInfo, CardsFile, Made, ProposalsFile
from capreplay.tasks.meter import Meter
from capreplay.tasks.prompts import prompt_hashes
from capreplay.tasks.snapshot_pages import open_snapshot
from capreplay.tasks.workflows.instantiate import PROMPTS as INSTANTIATE_PROMPTS, instantiate
from capreplay.tasks.workflows.propose import propose
from capreplay.util.files import read_model, write_atomic


async def write_proposals(
    cards_path: Path, out: Path, client: ModelClient, settings: ModelSettings, *, per_call: int = 2
) -> ProposalsFile:
    """``tasks propose``: the proposals made from the cards file ``cards_path`` with ``client``, written to ``out``."""
    cards = read_model(cards_path, CardsFile, invalid="not a cards file")
    try:
        proposals = await propose(cards, file_sha256(cards_path), Meter(client), settings.output_settings(),
                                  per_call=per_call)  # fmt: skip
    except InputError as e:
        if e.where is not None:
            raise
        raise InputError(e.message, cards_path) from e
    try:
        write_atomic(out, proposals.model_dump_json(indent=1).encode("utf-8") + b"\n")
    except OSError as e:
        raise OutputError(f"cannot write the proposals file: {os_reason(e)}", out) from e
    return proposals


async def instantiate_batch(
    proposals: ProposalsFile,
    cards: CardsFile,
    snapshot: Path,
    out: Path,
    client: ModelClient,
    settings: ModelSettings,
    *,
    max_attempts: int = 3,
    inputs: dict[str, str] | None = None,
) -> BatchInfo:
    """``tasks instantiate``: the instances of ``proposals`` proven on ``snapshot``, written as the batch ``out``.

    ``out`` is already claimed; the files are assumed checked to be of ``snapshot`` and of each other. The
    batch's cost is the instantiation's calls (instances and rubrics); the judge of the proof uses ``client``
    too. ``inputs`` (sha256 by role) defaults to the cards' hash the proposals recorded.
    """
    view = open_snapshot(snapshot)
    meter = Meter(client)
    tasks, rejected = await instantiate(proposals, cards, view, meter, max_attempts=max_attempts)
    made = Made(
        snapshot_id=view.snapshot_id,
        model=settings.output_settings(),
        prompts=prompt_hashes(*INSTANTIATE_PROMPTS),
        cost=meter.cost(),
    )
    return await prove_and_write(
        out,
        generator="workflows",
        snapshot=snapshot,
        made=made,
        settings=settings,
        candidates=tasks,
        rejected=rejected,
        judge_client=client,
        inputs=inputs if inputs is not None else {"cards": proposals.cards_sha256},
    )
