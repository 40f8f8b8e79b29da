"""Reading a Pallets ``CHANGES.rst``: sections in every date form the real files use, bullets and references."""

from __future__ import annotations

from datetime import date

from capreplay.benchmark.changelog import Change, Release, parse_changelog

CHANGES = """\
.. currentmodule:: click

Version 8.1.7
-------------

Released 2023-08-17

-   Fix issue with regex flags in shell completion. :issue:`2581`
-   Drop support for Python 2.6 and 3.3. :pr:`967, 976`
-   Remove previously deprecated code. :pr:`4995`

    -   The ``push`` and ``pop`` methods are removed.


Version 0.11
------------

Released on November 8th 2015, codename Gleisbaumaschine.

- Fixed issue where ``empty`` could break libraries (pull request ``#675``)


Version 0.10.2
--------------

(bugfix release, released on March 26th 2015)

- Fix the reloader.
  It crashed on start.

Some prose after the list.


Version 2.3.8
-------------

Unreleased
"""


def test_sections_dates_codenames_and_changes() -> None:
    assert parse_changelog(CHANGES) == [
        Release("8.1.7", date(2023, 8, 17), None, (
            Change("Fix issue with regex flags in shell completion. :issue:`2581`", (2581,), ()),
            Change("Drop support for Python 2.6 and 3.3. :pr:`967, 976`", (), (967, 976)),
            Change("Remove previously deprecated code. :pr:`4995` The ``push`` and ``pop`` methods are removed.",
                   (), (4995,)),
        )),
        Release("0.11", date(2015, 11, 8), "Gleisbaumaschine", (
            Change("Fixed issue where ``empty`` could break libraries (pull request ``#675``)", (), (675,)),
        )),
        Release("0.10.2", date(2015, 3, 26), None, (Change("Fix the reloader. It crashed on start.", (), ()),)),
        Release("2.3.8", None, None, ()),
    ]  # fmt: skip
