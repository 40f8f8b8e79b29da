"""The breadth-first frontier and the site graph."""

from capreplay.capture.crawl import Frontier, normalise_link


def test_normalise_link() -> None:
    assert normalise_link("https://A.test") == "https://a.test/"
    assert normalise_link("https://a.test/x#frag") == "https://a.test/x"
    assert normalise_link("https://a.test?q=1") == "https://a.test/?q=1"
    assert normalise_link("mailto:someone@a.test") is None
    assert normalise_link("javascript:void(0)") is None


def test_breadth_first_with_shortest_path_parents_and_limits() -> None:
    f = Frontier(["https://a.test/"], depth=2, max_pages=10, same_site=True)
    site = {
        "https://a.test/": ["https://a.test/1", "https://a.test/2", "https://other.test/"],
        "https://a.test/1": ["https://a.test/2", "https://a.test/1/deep"],
        "https://a.test/2": ["https://a.test/"],
        "https://a.test/1/deep": ["https://a.test/1/deep/deeper"],
    }
    order = []
    while (item := f.next()) is not None:
        url, _ = item
        order.append(url)
        f.add_links(url, site.get(url, []))
    assert order == ["https://a.test/", "https://a.test/1", "https://a.test/2", "https://a.test/1/deep"]
    graph = f.graph()
    parents = {p["url"]: p["parent"] for p in graph["pages"]}
    assert parents["https://a.test/2"] == "https://a.test/"  # reached first from the seed, not via /1
    assert parents["https://a.test/1/deep"] == "https://a.test/1"
    assert "https://a.test/1/deep/deeper" not in parents  # depth 3 > 2
    assert ("https://a.test/2", "https://a.test/") in [tuple(x) for x in graph["links"]]


def test_max_pages_and_cross_site() -> None:
    f = Frontier(["https://a.test/"], depth=5, max_pages=2, same_site=False)
    first = f.next()
    assert first == ("https://a.test/", 0)
    f.add_links("https://a.test/", ["https://other.test/", "https://a.test/x"])
    assert f.next() == ("https://other.test/", 1)
    assert f.next() is None
