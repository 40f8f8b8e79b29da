"""Changelog entries of the Pallets projects turned into Trac tickets and milestones (real entries, by hand)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from capreplay.benchmark.apps.trac_tickets import build_content, plain_text, summary, ticket_type, wiki_markup
from capreplay.benchmark.changelog import parse_changelog

DEPRECATE = (
    "Deprecate the ``__version__`` attribute. Use feature detection, or "
    '``importlib.metadata.version("flask")``, instead. :issue:`5230`'
)
"""Flask 3.0.0's second entry, joined into one line as the changelog parser does."""

WERKZEUG = """\
Version 2.3.8
-------------

Unreleased


Version 2.3.7
-------------

Released 2023-08-14

-   Use ``flit_core`` instead of ``setuptools`` as build backend.
-   Fix parsing of multipart bodies. :issue:`2734`


Version 0.9.7
-------------

(bugfix release, release date to be decided)

-   Fix unicode problems in ``werkzeug.debug.tbtools``.


Version 0.9.6
-------------

(bugfix release, released on June 7th 2014)

-   Added a safe conversion for IRI to URI conversion.


Version 0.9.7
-------------

-   Fixed uri_to_iri() not re-encoding hashes in query string parameters.


Version 0.5
-----------

Released on April 24th, codename Schlagbohrer.

- requires Python 2.4 now
"""


def test_the_type_is_defect_for_fixes_and_corrections_only() -> None:
    assert ticket_type("Fix slow multipart parsing for large parts potentially enabling DoS attacks.") == "defect"
    assert ticket_type("fixed a bug in :class:`~contrib.IterIO`") == "defect"
    assert ticket_type("Correctly handle raising deferred errors in CLI lazy loading.") == "defect"
    assert ticket_type("Security issue: Corrected the security fix for the cache folder.") == "enhancement"
    assert ticket_type("Python 3.12 compatibility.") == "enhancement"


def test_the_summary_is_the_first_sentence_in_plain_text() -> None:
    assert summary(DEPRECATE) == "Deprecate the __version__ attribute"
    assert summary("Refactor how an app's root and instance paths are determined. :issue:`5160`") == (
        "Refactor how an app's root and instance paths are determined"
    )
    assert plain_text("The :class:`~middleware.shared_data.SharedDataMiddleware` default") == (
        "The SharedDataMiddleware default"
    )
    assert (
        plain_text("Rely on :pep:`538` and :pep:`540` to handle decoding")
        == "Rely on PEP 538 and PEP 540 to handle decoding"
    )
    assert plain_text("attacks. :cwe:`CWE-407`") == "attacks. CWE-407"


def test_a_long_summary_is_cut_at_a_word() -> None:
    text = (
        "``Request.get_json()`` will raise a 400 ``BadRequest`` error if the ``Content-Type`` header is not "
        "``application/json``. This makes a very common source of confusion more visible. :issue:`2339`"
    )
    assert summary(text) == ("Request.get_json() will raise a 400 BadRequest error if the Content-Type header is not…")


def test_the_description_keeps_literals_and_writes_github_numbers_as_text() -> None:
    assert wiki_markup(DEPRECATE) == (
        'Deprecate the `__version__` attribute. Use feature detection, or `importlib.metadata.version("flask")`, '
        "instead. !#5230 (GitHub)"
    )
    assert wiki_markup("Drop support for Python 2.6 and 3.3. :pr:`967, 976`") == (
        "Drop support for Python 2.6 and 3.3. !#967 (GitHub), !#976 (GitHub)"
    )
    assert wiki_markup("(issue ``#658``)") == "(issue !#658 (GitHub))"
    assert wiki_markup("See `cachelib <https://github.com/pallets/cachelib>`_.") == (
        "See [https://github.com/pallets/cachelib cachelib]."
    )


def test_undated_releases_stay_open_and_their_tickets_take_the_next_newer_date() -> None:
    content = build_content({"werkzeug": parse_changelog(WERKZEUG)})
    names = [(m.name, m.released) for m in content.milestones]
    assert names == [
        ("werkzeug 2.3.8", None),
        ("werkzeug 2.3.7", date(2023, 8, 14)),
        ("werkzeug 0.9.7", None),
        ("werkzeug 0.9.6", date(2014, 6, 7)),
        ("werkzeug 0.5", None),
    ]
    assert "codename ''Schlagbohrer''" in content.milestones[-1].description
    by_number = [(t.id, t.milestone, t.when, t.type) for t in content.tickets]
    assert by_number == [
        (1, "werkzeug 0.5", datetime(2014, 6, 7, 12, tzinfo=UTC), "enhancement"),
        (2, "werkzeug 0.9.6", datetime(2014, 6, 7, 12, tzinfo=UTC), "enhancement"),
        (3, "werkzeug 0.9.7", datetime(2023, 8, 14, 12, tzinfo=UTC), "defect"),
        (4, "werkzeug 0.9.7", datetime(2023, 8, 14, 12, tzinfo=UTC), "defect"),
        (5, "werkzeug 2.3.7", datetime(2023, 8, 14, 12, tzinfo=UTC), "enhancement"),
        (6, "werkzeug 2.3.7", datetime(2023, 8, 14, 12, tzinfo=UTC), "defect"),
    ]
    assert content.tickets[3].summary == "Fixed uri_to_iri() not re-encoding hashes in query string parameters"
