"""The user's capreplay cache folder: verification stamps, ready responses, the proxy's CAs, installs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The user's capreplay cache folder (it may not exist yet): ``$CAPREPLAY_CACHE_DIR``, else the XDG cache."""
    explicit = os.environ.get("CAPREPLAY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "capreplay"
