"""Debian packages at pinned versions, installed with apt the first time and recognised after.

An application from Debian (MediaWiki, gitweb) or data that ships in a Debian package (``iso-codes``, man
pages) is installed here as ``name=version``; a package already installed at that version costs one
``dpkg-query``. apt waits for another install to finish (its lock) rather than failing, so two builders may
ask at once.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from capreplay.errors import CapreplayError

INSTALL_TIMEOUT = 900.0
"""Seconds for one apt install (MediaWiki brings PHP and its extensions: about a minute here)."""


def installed_version(package: str) -> str | None:
    """The version of ``package`` dpkg has installed, or None."""
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Status}\t${Version}", package],
                          capture_output=True, text=True, check=False)  # fmt: skip
    status, _, version = done.stdout.partition("\t")
    return version if done.returncode == 0 and status.endswith(" installed") else None


def ensure_debian(packages: dict[str, str]) -> None:
    """Install each ``{name: version}`` not installed at that version; CapreplayError if apt cannot."""
    missing = {name: version for name, version in packages.items() if installed_version(name) != version}
    if not missing:
        return
    apt = shutil.which("apt-get")
    if apt is None:
        raise CapreplayError(f"apt-get is needed to install {', '.join(missing)} and was not found")
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    for args in ([*sudo, apt, *lock, "update", "-q"],
                 [*sudo, apt, *lock, "install", "-y", "-q", "--no-install-recommends",
                  *(f"{name}={version}" for name, version in sorted(missing.items()))]):  # fmt: skip
        try:
            done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as e:
            raise CapreplayError(f"{' '.join(args)} did not finish within {INSTALL_TIMEOUT:.0f} s") from e
        if done.returncode != 0:
            raise CapreplayError(f"{' '.join(args)} failed: {(done.stderr or done.stdout).strip()[-1500:]}")
    wrong = {name: installed_version(name) for name, version in missing.items() if installed_version(name) != version}
    if wrong:
        raise CapreplayError(f"apt installed other versions than pinned: {wrong} (wanted {missing})")
