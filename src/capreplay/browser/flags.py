"""Chromium command-line flags, as pure functions of what the browser must reach."""

from __future__ import annotations

from collections.abc import Iterable

# Flags every capreplay browser gets. QUIC is off because an archived ``Alt-Svc: h3`` would make
# Chromium try UDP against the local port; the empty optimization-guide override stops a download.
BASE_ARGS: tuple[str, ...] = (
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-sync",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--metrics-recording-only",
    "--no-pings",
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
    # WebRTC sends UDP past resolver rules and proxies alike (STUN to an IP literal, mDNS to 224.0.0.251, DNS
    # for a STUN host's name), seen with strace from a replayed page; this policy lets it send none.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)

# Where every host outside the snapshot goes, IP literals included: port 0 of loopback. No socket can listen on
# port 0 (binding it picks another port), so the kernel refuses every connection there at once, nothing on this
# machine can answer, and no packet leaves it. Not ``~NOTFOUND``: a main-frame navigation that fails to resolve
# starts the error page's DNS probe, which sends real DNS queries to the system resolver and to 8.8.8.8 past every
# resolver rule (seen with strace); only a profile preference stops it, and printed arguments cannot carry one.
# A refused connection starts no probe, so ``chromium_args`` alone keep a user's own Chromium offline.
REFUSED = "127.0.0.1:0"

# How Chromium fails a request for a host outside the snapshot (a page, a fetch, a WebSocket): it is refused at
# :data:`REFUSED`. The replay ports are always listening, so no request to the snapshot fails this way.
BLOCKED_ERRORS: tuple[str, ...] = ("net::ERR_CONNECTION_REFUSED",)


def host_resolver_rules(endpoints: Iterable[tuple[str, int, int]]) -> str:
    """Rules that map each ``(host, port, local_port)`` to 127.0.0.1 and every other host to :data:`REFUSED`.

    ``MAP *`` also catches IP literals and ``localhost``, so nothing but the listed endpoints can be reached.
    """
    rules = [f"MAP {host}:{port} 127.0.0.1:{local}" for host, port, local in sorted(set(endpoints))]
    rules.append(f"MAP * {REFUSED}")
    return "--host-resolver-rules=" + ", ".join(rules)


def replay_endpoints(
    origins: Iterable[tuple[str, str, int]], *, http_port: int, https_port: int
) -> list[tuple[str, int, int]]:
    """The ``(host, port, local_port)`` endpoints that serve a snapshot's ``(scheme, host, port)`` origins.

    Every archived host answers on 80 and 443 whichever scheme it was archived under, because Chromium
    upgrades some requests to https by itself (HSTS preload such as ``.dev`` or Wikipedia, mixed content)
    and an archive may hold only the http form; the replay matches across schemes (``ignore-scheme``). Any
    other archived port goes to the local port of its scheme; a port archived under both schemes goes to
    the TLS port, since Chromium only ever upgrades. A host's ``www.`` twin (``www.vk.com`` for ``vk.com``
    and the reverse) is mapped too and answered through the ``ignore-www`` rule, as pywb answers it.
    """
    local = {"https": https_port, "http": http_port}
    endpoints: dict[tuple[str, int], int] = {}
    for scheme, host, port in sorted(origins):
        for name in (host, _www_twin(host)):
            endpoints.setdefault((name, 80), http_port)
            endpoints.setdefault((name, 443), https_port)
        if port not in (80, 443) and (scheme == "https" or (host, port) not in endpoints):
            endpoints[(host, port)] = local.get(scheme, http_port)
    return [(host, port, to) for (host, port), to in sorted(endpoints.items())]


def _www_twin(host: str) -> str:
    """The same host with a ``www.`` added or taken away: pages and archives name a site both ways."""
    if host.startswith("www.") and host.count(".") >= 2:
        return host[4:]
    return host if host.replace(".", "").isdigit() or ":" in host else "www." + host


def replay_args(
    origins: Iterable[tuple[str, str, int]], *, http_port: int, https_port: int, spki_pin: str
) -> list[str]:
    """The arguments any Chromium needs to browse a snapshot served on the given local ports.

    ``origins`` are the snapshot's ``(scheme, host, port)`` triples; see :func:`replay_endpoints`.
    """
    endpoints = replay_endpoints(origins, http_port=http_port, https_port=https_port)
    return [host_resolver_rules(endpoints), f"--ignore-certificate-errors-spki-list={spki_pin}", *BASE_ARGS]


def capture_args(proxy_port: int, spki_pin: str) -> list[str]:
    """The arguments that send every request of a capturing Chromium through the local proxy."""
    return [
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        # Chromium bypasses the proxy for loopback by default; "<-loopback>" removes that exception.
        "--proxy-bypass-list=<-loopback>",
        f"--ignore-certificate-errors-spki-list={spki_pin}",
        *BASE_ARGS,
    ]
