"""The pywb tests' tools: pywb 2.10 and py-wacz, each installed into an environment of its own on first use."""

from __future__ import annotations

import pytest

from capreplay.errors import CapreplayError
from capreplay.testing.pywb import ToolInstall, ensure_py_wacz, ensure_pywb
from tests.support.pywb import PY_WACZ_DIR, PYWB_DIR


@pytest.fixture(scope="session")
def pywb() -> ToolInstall:
    """pywb 2.10, installed on first use; a failed install fails the test (it is the point of the test)."""
    try:
        return ensure_pywb(PYWB_DIR)
    except CapreplayError as e:
        pytest.fail(f"could not set up pywb 2.10 for the WACZ tests: {e}", pytrace=False)


@pytest.fixture(scope="session")
def py_wacz() -> ToolInstall:
    """py-wacz, the WACZ reference implementation, installed on first use like pywb."""
    try:
        return ensure_py_wacz(PY_WACZ_DIR)
    except CapreplayError as e:
        pytest.fail(f"could not set up py-wacz for the WACZ tests: {e}", pytrace=False)
