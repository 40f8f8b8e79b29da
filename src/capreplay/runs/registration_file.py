"""A pre-registration: the hashes of everything that decides a run's results, written before the run. No I/O.

:mod:`capreplay.runs.registration` computes :class:`RegisteredInputs` from disk, writes a
:class:`Registration` to ``results/registrations/<id>.json``, and before a run computes them again: a run
starts only when every compared field is equal. The git commit is kept for the record but not compared,
because committing the registration itself moves it; the source tree hash is what proves the code unchanged.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from capreplay.models.schema import check_schema

REGISTRATION_SCHEMA_VERSION = 1
"""The registration schema this code reads and writes."""
SchemaVersion = Annotated[int, AfterValidator(partial(check_schema, supported=REGISTRATION_SCHEMA_VERSION))]
"""A ``schema_version`` that must be REGISTRATION_SCHEMA_VERSION."""

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""A registration id: a file name on every system (letters, digits, '.', '_', '-'; no leading dot)."""

_SHA256_HEX = r"^[0-9a-f]{64}$"



class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SnapshotInput(_Model):
    """One snapshot the tasks file names."""

    path: str = Field(description="The snapshot folder as the tasks file gives it (relative to that file).")
    manifest_sha256: str = Field(pattern=_SHA256_HEX, description="sha256 of the bytes of its manifest.json.")
    snapshot_id: str = Field(description="The snapshot id the manifest states (a hash of its file list).")


class CodeVersion(_Model):
    """The code that runs: the installed package's source tree, its version and its dependencies' versions."""

    package_version: str = Field(description="Version of the installed capreplay distribution.")
    source_sha256: str = Field(
        pattern=_SHA256_HEX,
        description="sha256 over every file of the installed capreplay package (path and content, sorted by path, "
        "bytecode caches left out).",
    )
    python: str = Field(description="Python version, e.g. 3.12.1.")
    dependencies: dict[str, str] = Field(description="Installed version of every direct dependency of capreplay.")
    git_commit: str | None = Field(
        None, description="HEAD of the git work tree holding the package, if any; recorded, not compared."
    )
    git_dirty: bool | None = Field(
        None, description="Whether that work tree had uncommitted changes under the package; recorded, not compared."
    )


class RegisteredInputs(_Model):
    """Everything compared between a registration and a run; a section's parts are None when the file has none."""

    tasks_sha256: str = Field(pattern=_SHA256_HEX, description="sha256 of the bytes of the tasks file.")
    prompt_sha256: str | None = Field(
        description="sha256 of the canonical JSON of the prompt template and the answer formats (all prompt text)."
    )
    model_settings: dict[str, Any] | None = Field(
        description="The protocol's model settings, without the endpoint (base_url), which decides where a "
        "call goes, not what it asks."
    )
    model_settings_sha256: str | None = Field(description="sha256 of the canonical JSON of ``model_settings``.")
    protocol_sha256: str | None = Field(description="sha256 of the canonical JSON of the whole protocol.")
    study_tasks_sha256: str | None = Field(description="sha256 of the canonical JSON of the study's pages and tasks.")
    workflow_tasks_sha256: str | None = Field(
        None, description="sha256 of the canonical JSON of the workflow tasks (descriptions, rubrics, gold paths)."
    )
    judge_sha256: str | None = Field(None, description="sha256 of the canonical JSON of the judge's settings.")
    agent_model_sha256: str | None = Field(
        None, description="sha256 of the canonical JSON of the model-driven agents' settings (endpoint left out)."
    )
    agent_settling: str | None = Field(
        None,
        description="How agent runs settle pages (capreplay.models.episode.Settling), when the file has workflows; "
        "None in a registration made before it was recorded, whose runs settled by network-idle.",
    )
    snapshots: dict[str, SnapshotInput] = Field(description="Every snapshot the tasks file names, by name.")
    code: CodeVersion


class Registration(_Model):
    """One pre-registration file."""

    schema_version: SchemaVersion = Field(default=REGISTRATION_SCHEMA_VERSION, description="Version of this schema.")
    id: str = Field(pattern=ID_PATTERN, description="The registration id; also the file's name without .json.")
    created_at: AwareDatetime = Field(description="When it was written (timezone-aware).")
    tasks_file: str = Field(description="The tasks file, as given to `capreplay register`.")
    inputs: RegisteredInputs
