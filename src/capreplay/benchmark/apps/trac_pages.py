"""The tracker's wiki pages and reports: the start page over the projects, a page per project's README, and
reports over releases and changes (Trac's own reports list open tickets, and every ticket here is closed). Pure.
"""

from __future__ import annotations

from capreplay.benchmark.apps.trac_tickets import TITLES, Content
from capreplay.benchmark.sdists import PROJECTS

REPORTS: tuple[tuple[str, str, str], ...] = (
    (
        "Changes by project",
        "Number of changelog entries of each project, by type.",
        """\
SELECT component AS Project, count(*) AS Changes,
       sum(type = 'defect') AS Defects, sum(type = 'enhancement') AS Enhancements,
       count(DISTINCT milestone) AS Releases,
       date(min(time) / 1000000, 'unixepoch') AS "First change",
       date(max(time) / 1000000, 'unixepoch') AS "Last change"
  FROM ticket GROUP BY component ORDER BY component""",
    ),
    (
        "Releases by project",
        "Every release, newest first, with its date and number of changes.",
        """\
SELECT substr(m.name, 1, instr(m.name, ' ') - 1) AS __group__, m.name AS milestone,
       coalesce(date(m.completed / 1000000, 'unixepoch'), 'no date') AS Released,
       count(t.id) AS Changes, sum(t.type = 'defect') AS Defects
  FROM milestone m LEFT JOIN ticket t ON t.milestone = m.name
 GROUP BY m.name ORDER BY __group__, m.completed IS NULL, m.completed DESC, m.name""",
    ),
    (
        "Fixed defects by release",
        "Every change of type defect, grouped by release, newest release first.",
        """\
SELECT t.milestone AS __group__, t.id AS ticket, t.summary, t.component,
       date(t.time / 1000000, 'unixepoch') AS Released
  FROM ticket t WHERE t.type = 'defect' ORDER BY t.time DESC, t.milestone, t.id""",
    ),
    (
        "Largest releases",
        "The 25 releases with the most changelog entries.",
        """\
SELECT m.name AS milestone, date(m.completed / 1000000, 'unixepoch') AS Released, count(t.id) AS Changes
  FROM milestone m JOIN ticket t ON t.milestone = m.name
 GROUP BY m.name ORDER BY Changes DESC, m.name LIMIT 25""",
    ),
    (
        "Changes per year",
        "Changelog entries per year of release, one column per project.",
        """\
SELECT strftime('%Y', time / 1000000, 'unixepoch') AS Year,
       sum(component = 'flask') AS flask, sum(component = 'click') AS click,
       sum(component = 'jinja2') AS jinja2, sum(component = 'werkzeug') AS werkzeug,
       sum(component = 'markupsafe') AS markupsafe, sum(component = 'itsdangerous') AS itsdangerous,
       count(*) AS "All projects"
  FROM ticket GROUP BY Year ORDER BY Year DESC""",
    ),
    (
        "Releases with a codename",
        "The releases the changelogs give a codename.",
        """\
SELECT name AS milestone, coalesce(date(completed / 1000000, 'unixepoch'), 'no date') AS Released,
       description AS _description_
  FROM milestone WHERE description LIKE '%codename%' ORDER BY completed IS NULL, completed, name""",
    ),
    (
        "Flask defects by release",
        "A saved query: Flask's fixed defects, grouped by release.",
        "query:?component=flask&type=defect&group=milestone&groupdesc=1&order=id",
    ),
)
"""Trac's reports, in order (title, description, SQL or a ``query:`` string); numbered from 1."""


def start_page(content: Content, summaries: dict[str, str]) -> str:
    """The wiki start page: the projects, their releases and changes, and how the tickets were made."""
    oldest, newest = content.tickets[0], content.tickets[-1]
    rows = []
    for project in PROJECTS:
        tickets = [t for t in content.tickets if t.component == project]
        dated = [m for m in content.milestones if m.project == project and m.released]
        latest = max(dated, key=lambda m: (m.released, m.name))
        rows.append(
            f"|| [wiki:{TITLES[project]}] || [query:?component={project}&order=id&desc=1 {project}] "
            f"|| {summaries[project]} || {sum(m.project == project for m in content.milestones)} "
            f'|| {len(tickets)} || [milestone:"{latest.name}"] ({latest.released}) ||'
        )
    return "\n".join(
        [
            "= The Pallets projects =",
            "",
            "This tracker holds the change history of six Python libraries of the Pallets organisation, as their "
            "changelogs (the `CHANGES.rst` in each source release on PyPI) tell it: every release is a "
            "[/roadmap?show=completed milestone] and every entry of a release's changelog a closed ticket. "
            f"There are {len(content.tickets)} tickets in {len(content.milestones)} releases, from "
            f"{TITLES[oldest.component]} {oldest.milestone.split()[1]} ({oldest.when.date()}) to "
            f"{TITLES[newest.component]} {newest.milestone.split()[1]} ({newest.when.date()}).",
            "",
            "|| '''Project''' || '''Component''' || '''Description''' || '''Releases''' || '''Changes''' "
            "|| '''Newest release''' ||",
            *rows,
            "",
            "== Finding changes ==",
            " * [/roadmap?show=completed Roadmap]: every release with its date and number of changes.",
            " * [report:1 Reports]: changes by project, releases, fixed defects, changes per year.",
            " * [query:?status=closed&type=defect&group=component&order=id Custom query]: filter by project, "
            "release and type.",
            " * [search:?q=cookie Search] the summaries and descriptions of all changes.",
            "",
            "== How the tickets were made ==",
            " * The summary is the first sentence of the changelog entry; the description is the whole entry.",
            " * GitHub issue and pull request numbers are written as text, such as !#5160 (GitHub): the ticket "
            "numbers here are not GitHub's.",
            " * A ticket is a ''defect'' when its entry starts with a form of \"fix\" or \"correct\", otherwise an "
            "''enhancement''.",
            " * A ticket was opened and closed at noon UTC of its release's date. A release its changelog does not "
            "date stays an open milestone, and its tickets carry the date of the next newer dated release.",
            "",
        ]
    )


def project_page(project: str, readme_text: str) -> str:
    """A project's wiki page: its README, rendered by Trac's reStructuredText processor, and where its changes are."""
    return (
        f"{{{{{{#!rst\n{readme_text.strip()}\n}}}}}}\n\n"
        f"== Changes in this tracker ==\n"
        f" * [query:?component={project}&order=id&desc=1 All changes to {TITLES[project]}], "
        f"[query:?component={project}&type=defect&order=id&desc=1 fixed defects only]\n"
        f" * [report:2 Releases by project]\n"
    )
