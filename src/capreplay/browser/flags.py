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
)


def host_resolver_rules(endpoints: Iterable[tuple[str, int, int]]) -> str:
    """Rules that map each ``(host, port, local_port)`` to 127.0.0.1 and leave every other host unresolvable.

    ``MAP *`` also catches IP literals, so nothing but the listed endpoints can be reached.
    """
    rules = [f"MAP {host}:{port} 127.0.0.1:{local}" for host, port, local in sorted(set(endpoints))]
    rules.append("MAP * ~NOTFOUND")
    return "--host-resolver-rules=" + ", ".join(rules)


def replay_args(
    origins: Iterable[tuple[str, str, int]], *, http_port: int, https_port: int, spki_pin: str
) -> list[str]:
    """The arguments any Chromium needs to browse a snapshot served on the given local ports.

    ``origins`` are the snapshot's ``(scheme, host, port)`` triples: https ones go to the TLS port,
    http ones to the plain port.
    """
    endpoints = [(host, port, https_port if scheme == "https" else http_port) for scheme, host, port in origins]
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
