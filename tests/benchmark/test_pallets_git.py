"""A release as a commit: its author from PKG-INFO, its date and message from CHANGES.rst, in every form the real
releases use."""

from __future__ import annotations

from datetime import date

import pytest

from capreplay.benchmark.apps.pallets_git import (
    Person,
    commit_message,
    pkg_info_fields,
    release_author,
    release_day,
)
from capreplay.benchmark.changelog import parse_changelog
from capreplay.errors import CapreplayError

# the head of Flask 2.2.2's PKG-INFO, then of Flask 3.0.0's and click 8.1.7's
FLASK_222 = """\
Metadata-Version: 2.1
Name: Flask
Version: 2.2.2
Summary: A simple framework for building complex web applications.
Home-page: https://palletsprojects.com/p/flask
Author: Armin Ronacher
Author-email: armin.ronacher@active-4.com
Maintainer: Pallets
Maintainer-email: contact@palletsprojects.com
License: BSD-3-Clause

Flask
=====
"""
FLASK_300 = """\
Metadata-Version: 2.1
Name: Flask
Version: 3.0.0
Summary: A simple framework for building complex web applications.
Maintainer-email: Pallets <contact@palletsprojects.com>
Requires-Python: >=3.8
"""
CLICK_817 = """\
Metadata-Version: 2.1
Name: click
Version: 8.1.7
Summary: Composable command line interface toolkit
Maintainer: Pallets
Maintainer-email: contact@palletsprojects.com
"""
# MarkupSafe 2.1.3's own CHANGES.rst, its first section
MARKUPSAFE_CHANGES = """\
Version 2.1.3
-------------

Released 2023-06-02

-   Implement ``format_map``, ``casefold``, ``removeprefix``, and ``removesuffix``
    methods. :issue:`370`
-   Fix static typing for basic ``str`` methods on ``Markup``. :issue:`358`
-   Use ``Self`` for annotating return types. :pr:`379`
"""


def test_fields_leave_out_the_long_description() -> None:
    fields = pkg_info_fields(FLASK_222)
    assert fields["Summary"] == "A simple framework for building complex web applications."
    assert "Flask" not in fields


@pytest.mark.parametrize(
    ("pkg_info", "author"),
    [
        (FLASK_222, Person("Armin Ronacher", "armin.ronacher@active-4.com")),
        (FLASK_300, Person("Pallets", "contact@palletsprojects.com")),
        (CLICK_817, Person("Pallets", "contact@palletsprojects.com")),
        ("Metadata-Version: 2.1\nName: x\n", Person("Pallets", "contact@palletsprojects.com")),
    ],
)
def test_the_author_is_the_releases_own(pkg_info: str, author: Person) -> None:
    assert release_author(pkg_info_fields(pkg_info)) == author


def test_the_message_is_the_release_and_its_changes_wrapped() -> None:
    release = parse_changelog(MARKUPSAFE_CHANGES)[0]
    assert commit_message("2.1.3", release) == (
        "Release 2.1.3\n"
        "\n"
        "- Implement ``format_map``, ``casefold``, ``removeprefix``, and\n"
        "  ``removesuffix`` methods. :issue:`370`\n"
        "- Fix static typing for basic ``str`` methods on ``Markup``.\n"
        "  :issue:`358`\n"
        "- Use ``Self`` for annotating return types. :pr:`379`\n"
    )
    assert commit_message("3.1.4", None) == "Release 3.1.4\n"


def test_the_day_comes_from_the_changelog_or_the_known_exceptions() -> None:
    assert release_day("markupsafe", "2.1.3", parse_changelog(MARKUPSAFE_CHANGES)[0]) == date(2023, 6, 2)
    assert release_day("jinja2", "3.1.4", None) == date(2024, 5, 5)
    with pytest.raises(CapreplayError, match="no release date"):
        release_day("flask", "9.9", None)
