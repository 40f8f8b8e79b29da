"""A real Ray cluster on this machine for the cluster tests: a head node and a second node process, one core for
tasks each, every server bound to 127.0.0.1, the dashboard's web server off, an 80 MiB object store each."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capreplay.cluster.connect import LOOPBACK_SWITCH, USAGE_STATS, UV_RUN_PROPAGATION

# Read by Ray when it is imported: set before any test of the session imports it (the suite runs under `uv run`).
os.environ[LOOPBACK_SWITCH] = "0"
os.environ[USAGE_STATS] = "0"
os.environ[UV_RUN_PROPAGATION] = "0"

NODE = {"num_cpus": 1, "object_store_memory": 80 << 20, "include_dashboard": False}


@pytest.fixture(scope="package")
def cluster(private_cache: Path) -> Iterator[Any]:
    """A head node and a second node process on 127.0.0.1, the driver (this process) connected to it."""
    import ray
    from ray.cluster_utils import Cluster

    started = Cluster(initialize_head=True, head_node_args=NODE)
    try:
        started.add_node(**NODE)
        started.wait_for_nodes()
        yield started
    finally:
        ray.shutdown()
        started.shutdown()
