"""A Ray of the run's own that misses its startup deadline is started once more, then given up with one line.

Ray's node waits a fixed 30 s for its raylet to register (``ray._private.node``) and raises a bare ``Exception``
when it does not; under a load average above 20 on two cores that happened once in this suite. The start is
taken as two functions (Ray's ``init`` and ``shutdown``), so the tries can be counted without a machine that slow.
"""

from __future__ import annotations

import pytest

from capreplay.cluster.connect import start_local
from capreplay.errors import ClusterError

RAY_TIMEOUT = (
    "The current node timed out during startup. This could happen because some of the raylet failed to startup "
    "or the GCS has become overloaded."
)


class Starts:
    """``init`` fails its first ``failures`` calls as Ray's does; ``shutdown`` is counted."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inits = 0
        self.shutdowns = 0

    def init(self) -> None:
        self.inits += 1
        if self.inits <= self.failures:
            raise Exception(RAY_TIMEOUT)

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_start_that_times_out_once_is_tried_again() -> None:
    starts = Starts(failures=1)
    start_local(starts.init, starts.shutdown)
    assert (starts.inits, starts.shutdowns) == (2, 1)


def test_a_start_that_always_times_out_is_one_line_naming_rays_reason() -> None:
    starts = Starts(failures=5)
    with pytest.raises(ClusterError) as raised:
        start_local(starts.init, starts.shutdown)
    assert (starts.inits, starts.shutdowns) == (2, 2)
    assert raised.value.line() == f"a Ray of the run's own did not start (2 tries): {RAY_TIMEOUT}"
    assert raised.value.exit_code == 1


def test_a_first_start_that_works_is_not_repeated() -> None:
    starts = Starts(failures=0)
    start_local(starts.init, starts.shutdown)
    assert (starts.inits, starts.shutdowns) == (1, 0)
