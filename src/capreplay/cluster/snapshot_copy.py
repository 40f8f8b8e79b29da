"""A snapshot shipped to a Ray node: put in the object store once by the driver, copied to each node once.

The driver puts ``manifest.json`` and every file it lists into Ray's object store (:func:`ship`). A task
asks for the node's copy (:func:`node_snapshot`): the first task on a node writes the files into
``$CAPREPLAY_CACHE_DIR/ray-snapshots/<snapshot id>/`` and checks every one against the manifest before the
copy is used; later tasks on that node find it there, checked again as every snapshot is before it is
served (files unchanged since their last check are not hashed again). A copy that no longer matches is
replaced. Tasks of one node wait for each other on a lock, so a node copies a snapshot once.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capreplay.archive.snapshot.manifest import MANIFEST_NAME, load_manifest
from capreplay.errors import SnapshotError
from capreplay.replay.store import SnapshotStore
from capreplay.util.cache_folder import cache_dir
from capreplay.util.files import locked

COPIES_DIR = "ray-snapshots"


@dataclass(frozen=True)
class ShippedSnapshot:
    """A snapshot in Ray's object store: its id, its manifest's bytes and one object per listed file."""

    snapshot_id: str
    manifest: bytes
    files: dict[str, Any]
    """Path in the snapshot -> the ``ray.ObjectRef`` of its bytes (fetched by the node that copies it)."""


def ship(ray: Any, root: Path) -> ShippedSnapshot:
    """Put the snapshot at ``root`` into the object store: its manifest and each file it lists, one object each
    (a file is read whole, one at a time)."""
    manifest = load_manifest(root)
    files = {entry.path: ray.put((root / entry.path).read_bytes()) for entry in manifest.files}
    return ShippedSnapshot(manifest.snapshot_id, (root / MANIFEST_NAME).read_bytes(), files)


def node_snapshot(ray: Any, shipped: ShippedSnapshot) -> Path:
    """This node's checked copy of ``shipped``, made now if it has none (or a changed one)."""
    copies = cache_dir() / COPIES_DIR
    copies.mkdir(parents=True, exist_ok=True)
    root = copies / shipped.snapshot_id
    with locked(copies / f"{shipped.snapshot_id}.lock"):
        if root.is_dir():
            try:
                SnapshotStore(root)
                return root
            except SnapshotError:
                shutil.rmtree(root)
        part = copies / f"{shipped.snapshot_id}.part"
        shutil.rmtree(part, ignore_errors=True)
        for rel, ref in shipped.files.items():
            path = part / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(ray.get(ref))
        (part / MANIFEST_NAME).write_bytes(shipped.manifest)
        if load_manifest(part).snapshot_id != shipped.snapshot_id:
            raise SnapshotError(f"the shipped manifest is not snapshot {shipped.snapshot_id}'s", where=part)
        # Checked under its own name: the check is remembered by folder, so the tasks after it hash nothing.
        part.rename(root)
        try:
            SnapshotStore(root)
        except SnapshotError:
            shutil.rmtree(root)
            raise
    return root
