"""Processes and their listening sockets, read from /proc (Linux): what a cluster started, where it listens."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import subprocess
import time
from pathlib import Path
from typing import Any


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (children, their children, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                # the command name may hold spaces and parentheses: the fields after its last ')' are plain
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def command_line(pid: int) -> str:
    """The process's command line, or its title once it set one (Ray's workers say ``ray::<task>``)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
    return inodes


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    # /proc keeps an IPv6 address as four little-endian 32-bit words; an IPv4-mapped one is said as IPv4
    address = ipaddress.IPv6Address(b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4)))
    return str(address.ipv4_mapped or address)


def listening(pids: set[int]) -> list[tuple[str, int, int]]:
    """``(address, port, pid)`` of every TCP socket in the LISTEN state that one of ``pids`` holds."""
    owner = {inode: pid for pid in pids for inode in _socket_inodes(pid)}
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                local, state, inode = fields[1], fields[3], int(fields[9])
                if state == "0A" and inode in owner:
                    address, port = local.rsplit(":", 1)
                    found.append((_address(address), int(port, 16), owner[inode]))
    return found


# What a sandboxed kernel may answer to fork/exec under a burst of concurrent starts (EFAULT was seen once in CI in
# 2,513 tests): a failure to start the program, not of the program, so it is worth one more try.
_TRANSIENT_SPAWN = {errno.EFAULT, errno.EAGAIN, errno.ENOMEM}


def popen_retrying(args: list[str], *, attempts: int = 3, **kwargs: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen(args, text=True, **kwargs)``, tried again (at most ``attempts`` times in all, half a second
    apart) when the start itself fails with an error the kernel gives for want of resources."""
    for attempt in range(1, attempts + 1):
        try:
            return subprocess.Popen(args, text=True, **kwargs)
        except OSError as error:
            if error.errno not in _TRANSIENT_SPAWN or attempt == attempts:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable: the last attempt returns or raises")
