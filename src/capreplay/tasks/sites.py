"""Sites of a snapshot: hosts grouped by registrable domain, as CAP's cards are made per website. Pure.

The registrable domain comes from the Public Suffix List bundled with ``tldextract`` (never fetched).
Hosts under a TLD the list does not know (``.test``, ``.example``, ``.localhost``: the reserved names of
RFC 2606 that fixtures use) count their last label as the suffix, so ``www.fellgear.test`` is on
``fellgear.test``; an IP address is its own site.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import cache
from urllib.parse import urlsplit

import tldextract


@cache
def _extract() -> tldextract.TLDExtract:
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def site_of(host: str) -> str:
    """The registrable domain of ``host`` (lower case, no port)."""
    host = host.lower().rstrip(".")
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return host
    parts = _extract()(host)
    if parts.suffix and parts.domain:
        return f"{parts.domain}.{parts.suffix}"
    labels = host.split(".")
    return ".".join(labels[-2:])


def site_of_url(url: str) -> str:
    """The registrable domain of a URL's host."""
    return site_of(urlsplit(url).hostname or "")


def sites_of(hosts: Iterable[str]) -> dict[str, list[str]]:
    """The hosts grouped by site, sites and hosts sorted."""
    grouped: dict[str, set[str]] = {}
    for host in hosts:
        grouped.setdefault(site_of(host), set()).add(host.lower())
    return {site: sorted(members) for site, members in sorted(grouped.items())}
