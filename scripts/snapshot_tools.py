"""Capturing a fixture origin into a snapshot with the real command line, for the scripts that
(re)generate committed snapshots or capture pages to measure.

The origin is started on a free local port, the plan is written to a temporary file, and
``capreplay capture --map`` records it so that the archive keeps the real hostnames.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Protocol

from capreplay.util.local_server import LocalServer


class Origin(Protocol):
    """A fixture origin: a local server that says how to map its hostnames to its port."""

    async def __aenter__(self) -> LocalServer: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def map_args(self) -> list[str]: ...


async def capture(origin: Origin, plan: dict[str, Any], out: Path) -> int:
    """Serve ``origin``, capture ``plan`` from it into ``out``; the command's exit status."""
    async with origin:
        with tempfile.TemporaryDirectory() as tmp:
            plan_file = Path(tmp, "plan.json")
            plan_file.write_text(json.dumps(plan, indent=2))
            cmd = [sys.executable, "-m", "capreplay", "capture", "--plan", str(plan_file), "-o", str(out)]
            cmd.append("--no-progress")
            for mapping in origin.map_args():
                cmd += ["--map", mapping]
            proc = await asyncio.create_subprocess_exec(*cmd)
            return await proc.wait()


def replace_snapshot(origin: Origin, plan: dict[str, Any], out: Path) -> int:
    """Capture into ``out.new``, verify it offline, and only then put it in place of ``out``."""
    staging = out.with_name(out.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    code = asyncio.run(capture(origin, plan, staging))
    if code != 0:
        print(f"capture failed with exit status {code}; {out} left unchanged", file=sys.stderr)
        return code
    verify = subprocess.run([sys.executable, "-m", "capreplay", "verify", str(staging)], check=False)
    if verify.returncode != 0:
        print(f"verify failed; the new snapshot is left in {staging} for inspection", file=sys.stderr)
        return verify.returncode
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    print(f"wrote {out}")
    return 0
