"""JupyterLab with an IPython kernel, serving one notebook, with every call to the internet switched off.

Opening the notebook makes JupyterLab POST a session (JSON) that starts a kernel, then talk to the kernel over
the WebSocket ``/api/kernels/<id>/channels``; running the cell sends an ``execute_request`` there and the
kernel's status, input, stream and result messages come back on it. That WebSocket is what a replay has to
keep.

Switched off: the announcements feed and the update check (``news_url``, ``check_for_updates_class``, and the
notification settings that would ask whether to fetch news), the extension manager's PyPI search
(``readonly``), opening a browser, and the token (a capture must open the page without one). The server
accepts a made-up host name in ``Host`` (``allow_remote_access``): the capture reaches it under one.
Configuration, data, runtime files, settings and workspaces all live in the work folder, so nothing from
``~/.jupyter`` or an earlier run changes what the page shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.process import Server, running_server

REQUIREMENTS = ["jupyterlab==4.6.6", "jupyter-server==2.21.1", "ipykernel==7.4.0"]
NOTEBOOK = "squares.ipynb"
CELL_SOURCE = 'squares = [n * n for n in range(10)]\nprint("sum of squares:", sum(squares))\nsquares'
"""The one code cell: a stream message (the print) and an execute_result (the list) come back over the WebSocket."""
CELL_OUTPUT = "sum of squares: 285"
RUN_BUTTON = '[data-command="notebook:run-cell-and-select-next"]'
"""JupyterLab's toolbar button that runs the selected cell."""
_SETTINGS = {
    # asked on first start otherwise, in a notification that is a fetch of the news feed once answered
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    # The file browser's "Modified" column says how long ago the notebook was saved ("3s ago"), by the page's clock.
    # That clock advances with every timer round, and the rounds follow real time, so a replay on a busy machine
    # said "4s ago" where another said "3s ago" (capreplay's clock cannot slow a page's timers down).
    "@jupyterlab/filebrowser-extension/browser.jupyterlab-settings": {"showLastModifiedColumn": False},
}


def ensure_jupyterlab(cache: Path) -> Path:
    """The environment folder of JupyterLab and its kernel, installed under ``cache`` if needed."""
    installed = ensure_env(cache / "apps" / "jupyterlab-4.6", REQUIREMENTS, check="import jupyterlab, ipykernel")
    return installed.bin_dir.parent


def write_notebook(folder: Path) -> Path:
    """The notebook the server opens: one markdown cell, one code cell never run (no saved outputs)."""
    notebook = {
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# Squares\nRun the cell below."},
            {
                "cell_type": "code",
                "id": "squares",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": CELL_SOURCE,
            },
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / NOTEBOOK
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    return path


@contextmanager
def running_jupyterlab(cache: Path, work: Path) -> Iterator[Server]:
    """JupyterLab serving ``work/notebooks/squares.ipynb`` on 127.0.0.1 until the block ends."""
    venv = ensure_jupyterlab(cache)
    notebooks = work / "notebooks"
    write_notebook(notebooks)
    settings = work / "settings"
    for name, values in _SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    env = {
        "JUPYTER_CONFIG_DIR": str(work / "config"),
        "JUPYTER_DATA_DIR": str(work / "data"),
        "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
        "IPYTHONDIR": str(work / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "JUPYTER_PATH": str(venv / "share" / "jupyter"),  # the environment's kernel spec, found wherever HOME is
    }

    def command(port: int) -> list[str]:
        return [
            str(venv / "bin" / "jupyter-lab"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", "--allow-root", "--IdentityProvider.token=", "--ServerApp.password=",
            "--ServerApp.allow_remote_access=True", f"--ServerApp.root_dir={notebooks}",
            "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly", f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={work / 'workspaces'}",
        ]  # fmt: skip

    with running_server(command, ready_path="/api/status", log=work / "jupyterlab.log", cwd=notebooks, env=env) as s:
        yield s
