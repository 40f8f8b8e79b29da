"""Chromium flags: offline resolver rules and the proxy arguments."""

from capreplay.browser.flags import capture_args, host_resolver_rules, replay_args


def test_rules_map_each_endpoint_and_block_everything_else() -> None:
    rules = host_resolver_rules([("shop.test", 443, 8443), ("shop.test", 80, 8080)])
    assert rules == (
        "--host-resolver-rules=MAP shop.test:80 127.0.0.1:8080, MAP shop.test:443 127.0.0.1:8443, MAP * 127.0.0.1:0"
    )


def test_replay_args_send_https_origins_to_the_tls_port() -> None:
    args = replay_args([("https", "a.test", 443), ("http", "b.test", 80), ("https", "c.test", 8443)],
                       http_port=1, https_port=2, spki_pin="PIN")
    assert "MAP a.test:443 127.0.0.1:2" in args[0]
    assert "MAP b.test:80 127.0.0.1:1" in args[0]
    assert "MAP c.test:8443 127.0.0.1:2" in args[0]
    assert args[0].endswith("MAP * 127.0.0.1:0")
    assert "--ignore-certificate-errors-spki-list=PIN" in args
    assert "--disable-quic" in args
    assert not any(a.startswith("--disable-features") for a in args)  # would replace Playwright's own list


def test_capture_args_route_loopback_through_the_proxy_too() -> None:
    args = capture_args(1234, "PIN")
    assert "--proxy-server=http://127.0.0.1:1234" in args
    assert "--proxy-bypass-list=<-loopback>" in args


def test_every_archived_host_answers_on_both_schemes() -> None:
    # An http-only host is still reachable on 443 (HSTS preload, mixed-content upgrades) and the reverse.
    args = replay_args([("http", "wiki.dev", 80), ("https", "img.test", 443)], http_port=1, https_port=2,
                       spki_pin="PIN")
    for rule in ("MAP wiki.dev:80 127.0.0.1:1", "MAP wiki.dev:443 127.0.0.1:2",
                 "MAP img.test:80 127.0.0.1:1", "MAP img.test:443 127.0.0.1:2"):
        assert rule in args[0]


def test_a_port_archived_under_both_schemes_goes_to_tls() -> None:
    args = replay_args([("http", "a.test", 8000), ("https", "a.test", 8000), ("http", "b.test", 8001)],
                       http_port=1, https_port=2, spki_pin="PIN")
    assert "MAP a.test:8000 127.0.0.1:2" in args[0]
    assert "MAP a.test:8000 127.0.0.1:1" not in args[0]
    assert "MAP b.test:8001 127.0.0.1:1" in args[0]


def test_the_www_twin_of_every_archived_host_is_mapped_too() -> None:
    args = replay_args([("https", "vk.com", 443), ("http", "www.iana.org", 80), ("http", "127.0.0.1", 8000)],
                       http_port=1, https_port=2, spki_pin="PIN")
    for rule in ("MAP www.vk.com:443 127.0.0.1:2", "MAP www.vk.com:80 127.0.0.1:1",
                 "MAP iana.org:80 127.0.0.1:1", "MAP iana.org:443 127.0.0.1:2"):
        assert rule in args[0]
    assert "www.127.0.0.1" not in args[0]
