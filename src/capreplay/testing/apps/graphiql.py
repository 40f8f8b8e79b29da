"""Strawberry's GraphQL server with its GraphiQL page, the page's scripts served by a local stand-in for unpkg.com.

GraphiQL POSTs the introspection query as JSON when it opens, and every query the user runs after that; the
answers it shows (the schema explorer, the result pane) come only from those POSTs. The schema is a small
book list in Strawberry's getting-started style. ``strawberry dev`` serves it with uvicorn on 127.0.0.1; the
page's React, GraphiQL and explorer files come from the npm registry (:mod:`.npm_cdn`), as unpkg.com serves them.
Strawberry itself calls nothing outside.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.npm_cdn import assets_of, fetch_assets, serving_cdn
from capreplay.testing.apps.process import Server, running_server

REQUIREMENTS = ["strawberry-graphql[cli]==0.341.2", "uvicorn==0.55.0", "starlette==1.10.0"]
QUERY = "{\n  books {\n    title\n    author\n  }\n}"
PATH = "/graphql?q=" + quote(QUERY, safe="")
"""GraphiQL takes its query from ``q``, so the page opens with it in the editor."""
RUN_BUTTON = ".graphiql-execute-button"
RESULT = "The Left Hand of Darkness"
"""A title only the query's answer holds."""
SCHEMA = '''"""A book list (written by capreplay's test launcher)."""
import strawberry


@strawberry.type
class Book:
    title: str
    author: str
    year: int


BOOKS = [
    Book(title="The Left Hand of Darkness", author="Ursula K. Le Guin", year=1969),
    Book(title="Kindred", author="Octavia E. Butler", year=1979),
    Book(title="The Dispossessed", author="Ursula K. Le Guin", year=1974),
]


@strawberry.type
class Query:
    @strawberry.field
    def books(self, author: str | None = None) -> list[Book]:
        return [b for b in BOOKS if author is None or b.author == author]


schema = strawberry.Schema(query=Query)
'''


def ensure_strawberry(cache: Path) -> Path:
    """The environment folder of Strawberry and its dev server, installed under ``cache`` if needed."""
    check = "import strawberry.cli, uvicorn"
    return ensure_env(cache / "apps" / "strawberry-0.341", REQUIREMENTS, check=check).bin_dir.parent


def _graphiql_html(venv: Path) -> str:
    found = sorted(venv.glob("lib/python*/site-packages/strawberry/static/graphiql.html"))
    return found[0].read_text() if found else ""


@contextmanager
def running_graphiql(cache: Path, work: Path) -> Iterator[Server]:
    """Strawberry's server for the book schema on 127.0.0.1, and the stand-in CDN, until the block ends."""
    venv = ensure_strawberry(cache)
    assets = assets_of(_graphiql_html(venv))
    files = fetch_assets(assets, cache / "apps" / "npm")
    work.mkdir(parents=True, exist_ok=True)
    (work / "books.py").write_text(SCHEMA)

    def command(port: int) -> list[str]:
        strawberry = str(venv / "bin" / "strawberry")
        return [strawberry, "dev", "books:schema", "--app-dir", str(work), "--host", "127.0.0.1", "--port", str(port)]

    with (
        serving_cdn("unpkg.com", files) as cdn,
        running_server(command, ready_path="/graphql", log=work / "strawberry.log", cwd=work) as server,
    ):
        yield replace(server, extra_maps=[cdn.map_arg], spki_pins=[cdn.spki_pin])
