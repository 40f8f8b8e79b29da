"""The wiki's editing build (the part ``wikiedit``): its place among the parts, its document root and its settings."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from capreplay.benchmark.apps import mediawiki_app
from capreplay.benchmark.debian import ensure_debian
from capreplay.benchmark.roster import BUILDERS, part_application, part_names
from capreplay.capture.plan_file import load_plan

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"
UPLOAD_FORM = "http://wiki.bench.test/wiki/Special:Upload"

WIKIEDITOR = mediawiki_app.MEDIAWIKI / "extensions" / "WikiEditor" / "extension.json"
RESOURCES = mediawiki_app.MEDIAWIKI / "resources" / "Resources.php"


def test_the_editing_part_is_captured_from_the_wikis_editing_build_under_the_wikis_host() -> None:
    assert part_names().index("wikiedit") > len(BUILDERS)
    app = part_application("wikiedit")
    assert app is mediawiki_app.EDIT_APP
    assert app.host == "wiki.bench.test" and app.name == "wiki"
    assert app.start is mediawiki_app.running_wiki_editor
    assert part_application("wiki").start is mediawiki_app.running_mediawiki


def test_the_editing_root_serves_mediawiki_under_w_and_the_uploads_under_images(tmp_path: Path) -> None:
    root = mediawiki_app.edit_root(tmp_path / "root", tmp_path / "wiki" / "images")
    assert sorted(p.name for p in root.iterdir()) == ["images", "router.php", "w"]
    assert (root / "w").readlink() == Path("/usr/share/mediawiki")
    assert (root / "images").readlink() == tmp_path / "wiki" / "images"
    assert (tmp_path / "wiki" / "images").is_dir()
    router = (root / "router.php").read_text()
    assert "'/wiki/'" in router
    assert "require '/usr/share/mediawiki/index.php';" in router
    assert "return require '/usr/share/mediawiki/maintenance/dev/includes/router.php';" in router


def test_the_editing_settings_load_wikieditor_and_move_the_scripts_under_w() -> None:
    lines = mediawiki_app.EDIT_SETTINGS.splitlines()
    assert "wfLoadExtension( 'WikiEditor' );" in lines
    assert '$wgScriptPath = "/w";' in lines and '$wgResourceBasePath = "/w";' in lines
    assert '$wgUploadPath = "/images";' in lines and "$wgEnableUploads = true;" in lines
    assert "$wgAjaxEditStash = false;" in lines and "$wgUseImageMagick = false;" in lines
    # the edit form's module again, as Debian's Resources.php has it, with an empty stash.js
    files = "[ 'edit.js', [ 'name' => 'stash.js', 'content' => '// off' ], 'watchlistExpiry.js' ],"
    assert f"    'packageFiles' => {files}" in lines
    assert mediawiki_app.EDITOR == ("Editor", "manpages-editor")


@pytest.fixture(scope="module")
def debian_mediawiki() -> None:
    """Debian's mediawiki at the pinned version, installed with apt as the wiki's builder installs it (about a minute
    the first time, one dpkg query after)."""
    ensure_debian(mediawiki_app.PACKAGES)


@pytest.mark.slow
def test_the_pinned_wikieditor_is_the_one_debians_mediawiki_ships(debian_mediawiki: None) -> None:
    assert json.loads(WIKIEDITOR.read_text())["version"] == "0.5.3"
    assert "WikiEditor 0.5.3" in mediawiki_app.EDIT_APP.version


@pytest.mark.slow
def test_the_edit_module_registered_again_keeps_debians_files_and_dependencies(debian_mediawiki: None) -> None:
    core = RESOURCES.read_text()
    start = core.index("\t'mediawiki.action.edit' => [")
    entry = core[start : core.index("\n\t],", start)]
    assert "'edit.js',\n\t\t\t'stash.js',\n\t\t\t'watchlistExpiry.js'," in entry
    for dependency in ("mediawiki.action.edit.styles", "mediawiki.editfont.styles", "jquery.textSelection",
                       "oojs-ui-core", "mediawiki.widgets.visibleLengthLimit", "mediawiki.api", "mediawiki.util"):
        assert f"'{dependency}'," in entry and f"'{dependency}'" in mediawiki_app.EDIT_SETTINGS
    assert "'styles' => 'edit.css'," in entry


def test_the_editing_part_shares_no_page_with_the_wikis_part() -> None:
    """The editing part is joined after the wiki's part on the same host, and the replay serves a URL's recordings
    in capture order: its pages are under /w/ (and the upload form, which the plain wiki does not have), the wiki's
    never are."""
    edit = [page.url for page in load_plan(BENCHMARK / "plans" / "wikiedit.json").pages]
    wiki = [page.url for page in load_plan(BENCHMARK / "plans" / "wiki.json").pages]
    assert all(urlsplit(url).path.startswith("/w/") or url == UPLOAD_FORM for url in edit)
    assert not any(urlsplit(url).path.startswith("/w/") or url == UPLOAD_FORM for url in wiki)
