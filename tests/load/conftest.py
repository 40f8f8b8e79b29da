"""The load tests' fixture: one synthetic snapshot of about 2,000 responses per session, and its bytes (read
independently of the replay store, see :mod:`tests.support.load`)."""

from __future__ import annotations

import pytest

from capreplay.testing.synth import generate_snapshot, url_list
from tests.support.load import LARGE, RECORDS, SEED, SynthSnapshot, read_responses


@pytest.fixture(scope="session")
def synth_snapshot(tmp_path_factory: pytest.TempPathFactory) -> SynthSnapshot:
    """~2,000 responses on 50 plain-HTTP hosts plus two 8 MiB videos, generated once per session.

    Plain HTTP: the clients here measure the server, not TLS; the disconnect test also goes through TLS.
    """
    root = tmp_path_factory.mktemp("load") / "synth"
    generate_snapshot(root, RECORDS, SEED, scheme="http", large=LARGE)
    urls = url_list(root)
    return SynthSnapshot(root, urls[:RECORDS], urls[RECORDS:], read_responses(root))
