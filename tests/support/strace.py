"""Finding every packet a process tree sent off the machine, from ``strace -f`` output. Pure parsing.

A TCP ``connect()`` sends a SYN, so it counts as a packet; a UDP ``connect()`` sends nothing (Chromium
does one to learn a route) until something is sent on that socket. The DNS probe of Chromium's error
page connects a UDP socket to the resolver and then calls ``sendto(fd, ..., NULL, 0)``, so where each
socket was connected is remembered, per process: threads share descriptors, processes do not, and
``close``/``dup`` end or copy what a descriptor means.
"""

from __future__ import annotations

import ipaddress
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

STRACE_SYSCALLS = "trace=network,close,dup,dup2,dup3,clone,clone3,fork,vfork"

_LINE = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)")
_V4 = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_V6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')


@dataclass(frozen=True)
class Packet:
    """One send to an address that is not on this machine."""

    pid: int
    syscall: str
    address: str
    port: int
    line: str


def is_local(address: str) -> bool:
    """Loopback or unspecified (which also reaches this machine)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def _address(args: str) -> tuple[str, int] | None:
    m = _V4.search(args) or _V6.search(args)
    return (m.group(2), int(m.group(1))) if m else None


def _first_int(args: str) -> int | None:
    m = re.match(r"\s*(\d+)", args)
    return int(m.group(1)) if m else None


_CLOSED = "close"
"""What :func:`_joined` remembers of an interrupted ``close``: it was counted already, where it started."""


def _joined(lines: Iterable[str]) -> Iterable[tuple[int, str]]:
    """(pid, complete call text), with ``<unfinished ...>``/``<... resumed>`` pairs put back together.

    An interrupted ``close`` counts where it started: the kernel frees the descriptor as ``close`` starts, so
    while one thread is still in ``close(23)`` another can get descriptor 23 from ``socket()``, and a close taken
    where it ended would forget the new socket's kind (a UDP socket Chromium only connects, to learn a route,
    would look like a TCP connection leaving the machine).
    """
    pending: dict[int, str] = {}
    for raw in lines:
        m = _LINE.match(raw.strip())
        if not m:
            continue
        pid, text = int(m.group(1)), m.group(2)
        if text.endswith("<unfinished ...>"):
            call = text[: -len("<unfinished ...>")].rstrip()
            if call.startswith("close("):
                pending[pid] = _CLOSED
                yield pid, f"{call}) = 0"
            else:
                pending[pid] = call
            continue
        resumed = re.match(r"^<\.\.\. \w+ resumed>\s?(.*)$", text)
        if resumed:
            before = pending.pop(pid, "")
            if before == _CLOSED:
                continue
            text = before + resumed.group(1)
        yield pid, text


def off_machine_packets(lines: Iterable[str]) -> list[Packet]:
    """Every TCP connect and every send, in ``lines`` of ``strace -f`` output, that left the machine."""
    process: dict[int, int] = {}  # thread id -> process id (threads share one descriptor table)
    udp: set[tuple[int, int]] = set()
    peer: dict[tuple[int, int], tuple[str, int]] = {}
    found: list[Packet] = []
    for tid, text in _joined(lines):
        call = _CALL.match(text)
        if not call:
            continue
        name, args, result = call.group(1), call.group(2), call.group(3)
        pid = process.setdefault(tid, tid)
        ret = int(result) if result.lstrip("-").isdigit() else -1
        fd = _first_int(args)
        if name in ("clone", "clone3", "fork", "vfork") and ret > 0:
            process[ret] = pid if "CLONE_THREAD" in args else ret
        elif name == "socket" and ret >= 0:
            peer.pop((pid, ret), None)
            if "SOCK_DGRAM" in args:
                udp.add((pid, ret))
            else:
                udp.discard((pid, ret))
        elif name == "close" and fd is not None:
            peer.pop((pid, fd), None)
            udp.discard((pid, fd))
        elif name.startswith("dup") and fd is not None and ret >= 0:
            if (pid, fd) in peer:
                peer[(pid, ret)] = peer[(pid, fd)]
            if (pid, fd) in udp:
                udp.add((pid, ret))
        elif name == "connect" and fd is not None:
            addr = _address(args)
            if addr is None:
                continue
            peer[(pid, fd)] = addr
            if (pid, fd) not in udp and not is_local(addr[0]):
                found.append(Packet(tid, name, addr[0], addr[1], text))
        elif name in ("sendto", "sendmsg", "sendmmsg") and fd is not None:
            addr = _address(args) or peer.get((pid, fd))
            if addr is not None and not is_local(addr[0]):
                found.append(Packet(tid, name, addr[0], addr[1], text))
    return found


def traced_project(real: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the adapter project ``real`` whose interpreter runs the real one under ``strace -f`` (children
    followed, so a browser it launches is traced too); the copy and the trace log."""
    strace = shutil.which("strace")
    assert strace, "strace is missing: scripts/setup.sh installs it (apt-get install strace)"
    project = tmp_path / "adapter"
    (project / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(real / "pyproject.toml", project)
    log = tmp_path / "strace.log"
    wrapper = project / ".venv" / "bin" / "python"
    python = real / ".venv" / "bin" / "python"
    wrapper.write_text(f'#!/bin/sh\nexec {strace} -f -qq -e {STRACE_SYSCALLS} -o {log} {python} "$@"\n')
    wrapper.chmod(0o755)
    return project, log
