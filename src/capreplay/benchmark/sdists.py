"""The source releases of the Pallets projects that the software half of the benchmark is filled with.

Flask, Click, Jinja, Werkzeug, MarkupSafe and ItsDangerous (BSD-3-Clause) each ship their whole history in the
source distribution on PyPI: ``CHANGES.rst`` lists every release with its date and changes, ``docs/`` the
manual, ``src/`` the code. The code browser makes one git commit per release listed here, the tracker one
ticket per change, the dashboard its figures. Each file is pinned by its sha256 (as PyPI lists it) and
downloaded once into the cache from files.pythonhosted.org, a package registry.
"""

from __future__ import annotations

import hashlib
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from capreplay.errors import CapreplayError
from capreplay.util.files import locked

PROJECTS = ("flask", "click", "jinja2", "werkzeug", "markupsafe", "itsdangerous")
"""The projects, by their lower-case PyPI names."""


@dataclass(frozen=True)
class Sdist:
    """One source release on PyPI."""

    project: str
    version: str
    filename: str
    sha256: str
    url: str

    @property
    def folder_name(self) -> str:
        """The top folder inside the tarball (the file name without ``.tar.gz``)."""
        return self.filename.removesuffix(".tar.gz")


SDISTS: tuple[Sdist, ...] = (
    Sdist("flask", "1.1.4", "Flask-1.1.4.tar.gz",
          "0fbeb6180d383a9186d0d6ed954e0042ad9f18e0e8de088b2b419d526927d196",
          "https://files.pythonhosted.org/packages/4d/5b/2d145f5fe718b2f15ebe69240538f06faa8bbb76488bf962091db1f7a26d/Flask-1.1.4.tar.gz"),
    Sdist("flask", "2.0.3", "Flask-2.0.3.tar.gz",
          "e1120c228ca2f553b470df4a5fa927ab66258467526069981b3eb0a91902687d",
          "https://files.pythonhosted.org/packages/84/9d/66347e6b3e2eb78647392d3969c23bdc2d8b2fdc32bd078c817c15cb81ad/Flask-2.0.3.tar.gz"),
    Sdist("flask", "2.1.3", "Flask-2.1.3.tar.gz",
          "15972e5017df0575c3d6c090ba168b6db90259e620ac8d7ea813a396bad5b6cb",
          "https://files.pythonhosted.org/packages/5b/77/3accd62b8771954e9584beb03f080385b32ddcad30009d2a4fe4068a05d9/Flask-2.1.3.tar.gz"),
    Sdist("flask", "2.2.2", "Flask-2.2.2.tar.gz",
          "642c450d19c4ad482f96729bd2a8f6d32554aa1e231f4f6b4e7e5264b16cca2b",
          "https://files.pythonhosted.org/packages/69/b6/53cfa30eed5aa7343daff36622843688ba8c6fe9829bb2b92e193ab1163f/Flask-2.2.2.tar.gz"),
    Sdist("flask", "2.3.3", "flask-2.3.3.tar.gz",
          "09c347a92aa7ff4a8e7f3206795f30d826654baf38b873d0744cd571ca609efc",
          "https://files.pythonhosted.org/packages/46/b7/4ace17e37abd9c21715dea5ee11774a25e404c486a7893fa18e764326ead/flask-2.3.3.tar.gz"),
    Sdist("flask", "3.0.0", "flask-3.0.0.tar.gz",
          "cfadcdb638b609361d29ec22360d6070a77d7463dcb3ab08d2c2f2f168845f58",
          "https://files.pythonhosted.org/packages/d8/09/c1a7354d3925a3c6c8cfdebf4245bae67d633ffda1ba415add06ffc839c5/flask-3.0.0.tar.gz"),
    Sdist("click", "7.1.2", "click-7.1.2.tar.gz",
          "d2b5255c7c6349bc1bd1e59e08cd12acbbd63ce649f2588755783aa94dfb6b1a",
          "https://files.pythonhosted.org/packages/27/6f/be940c8b1f1d69daceeb0032fee6c34d7bd70e3e649ccac0951500b4720e/click-7.1.2.tar.gz"),
    Sdist("click", "8.0.4", "click-8.0.4.tar.gz",
          "8458d7b1287c5fb128c90e23381cf99dcde74beaf6c7ff6384ce84d6fe090adb",
          "https://files.pythonhosted.org/packages/dd/cf/706c1ad49ab26abed0b77a2f867984c1341ed7387b8030a6aa914e2942a0/click-8.0.4.tar.gz"),
    Sdist("click", "8.1.3", "click-8.1.3.tar.gz",
          "7682dc8afb30297001674575ea00d1814d808d6a36af415a82bd481d37ba7b8e",
          "https://files.pythonhosted.org/packages/59/87/84326af34517fca8c58418d148f2403df25303e02736832403587318e9e8/click-8.1.3.tar.gz"),
    Sdist("click", "8.1.7", "click-8.1.7.tar.gz",
          "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de",
          "https://files.pythonhosted.org/packages/96/d3/f04c7bfcf5c1862a2a5b845c6b2b360488cf47af55dfa79c98f6a6bf98b5/click-8.1.7.tar.gz"),
    Sdist("jinja2", "2.11.3", "Jinja2-2.11.3.tar.gz",
          "a6d58433de0ae800347cab1fa3043cebbabe8baa9d29e668f1c768cb87a333c6",
          "https://files.pythonhosted.org/packages/4f/e7/65300e6b32e69768ded990494809106f87da1d436418d5f1367ed3966fd7/Jinja2-2.11.3.tar.gz"),
    Sdist("jinja2", "3.0.3", "Jinja2-3.0.3.tar.gz",
          "611bb273cd68f3b993fabdc4064fc858c5b47a973cb5aa7999ec1ba405c87cd7",
          "https://files.pythonhosted.org/packages/91/a5/429efc6246119e1e3fbf562c00187d04e83e54619249eb732bb423efa6c6/Jinja2-3.0.3.tar.gz"),
    Sdist("jinja2", "3.1.2", "Jinja2-3.1.2.tar.gz",
          "31351a702a408a9e7595a8fc6150fc3f43bb6bf7e319770cbc0db9df9437e852",
          "https://files.pythonhosted.org/packages/7a/ff/75c28576a1d900e87eb6335b063fab47a8ef3c8b4d88524c4bf78f670cce/Jinja2-3.1.2.tar.gz"),
    Sdist("jinja2", "3.1.4", "jinja2-3.1.4.tar.gz",
          "4a3aee7acbbe7303aede8e9648d13b8bf88a429282aa6122a993f0ac800cb369",
          "https://files.pythonhosted.org/packages/ed/55/39036716d19cab0747a5020fc7e907f362fbf48c984b14e62127f7e68e5d/jinja2-3.1.4.tar.gz"),
    Sdist("werkzeug", "1.0.1", "Werkzeug-1.0.1.tar.gz",
          "6c80b1e5ad3665290ea39320b91e1be1e0d5f60652b964a3070216de83d2e47c",
          "https://files.pythonhosted.org/packages/10/27/a33329150147594eff0ea4c33c2036c0eadd933141055be0ff911f7f8d04/Werkzeug-1.0.1.tar.gz"),
    Sdist("werkzeug", "2.0.3", "Werkzeug-2.0.3.tar.gz",
          "b863f8ff057c522164b6067c9e28b041161b4be5ba4d0daceeaa50a163822d3c",
          "https://files.pythonhosted.org/packages/6c/a8/60514fade2318e277453c9588545d0c335ea3ea6440ce5cdabfca7f73117/Werkzeug-2.0.3.tar.gz"),
    Sdist("werkzeug", "2.1.2", "Werkzeug-2.1.2.tar.gz",
          "1ce08e8093ed67d638d63879fd1ba3735817f7a80de3674d293f5984f25fb6e6",
          "https://files.pythonhosted.org/packages/10/cf/97eb1a3847c01ae53e8376bc21145555ac95279523a935963dc8ff96c50b/Werkzeug-2.1.2.tar.gz"),
    Sdist("werkzeug", "2.2.2", "Werkzeug-2.2.2.tar.gz",
          "7ea2d48322cc7c0f8b3a215ed73eabd7b5d75d0b50e31ab006286ccff9e00b8f",
          "https://files.pythonhosted.org/packages/f8/c1/1c8e539f040acd80f844c69a5ef8e2fccdf8b442dabb969e497b55d544e1/Werkzeug-2.2.2.tar.gz"),
    Sdist("werkzeug", "2.3.7", "werkzeug-2.3.7.tar.gz",
          "2b8c0e447b4b9dbcc85dd97b6eeb4dcbaf6c8b6c3be0bd654e25553e0a2157d8",
          "https://files.pythonhosted.org/packages/ef/56/0acc9f560053478a4987fa35c95d904f04b6915f6b5c4d1c14dc8862ba0a/werkzeug-2.3.7.tar.gz"),
    Sdist("werkzeug", "3.0.1", "werkzeug-3.0.1.tar.gz",
          "507e811ecea72b18a404947aded4b3390e1db8f826b494d76550ef45bb3b1dcc",
          "https://files.pythonhosted.org/packages/0d/cc/ff1904eb5eb4b455e442834dabf9427331ac0fa02853bf83db817a7dd53d/werkzeug-3.0.1.tar.gz"),
    Sdist("markupsafe", "1.1.1", "MarkupSafe-1.1.1.tar.gz",
          "29872e92839765e546828bb7754a68c418d927cd064fd4708fab9fe9c8bb116b",
          "https://files.pythonhosted.org/packages/b9/2e/64db92e53b86efccfaea71321f597fa2e1b2bd3853d8ce658568f7a13094/MarkupSafe-1.1.1.tar.gz"),
    Sdist("markupsafe", "2.0.1", "MarkupSafe-2.0.1.tar.gz",
          "594c67807fb16238b30c44bdf74f36c02cdf22d1c8cda91ef8a0ed8dabf5620a",
          "https://files.pythonhosted.org/packages/bf/10/ff66fea6d1788c458663a84d88787bae15d45daa16f6b3ef33322a51fc7e/MarkupSafe-2.0.1.tar.gz"),
    Sdist("markupsafe", "2.1.1", "MarkupSafe-2.1.1.tar.gz",
          "7f91197cc9e48f989d12e4e6fbc46495c446636dfc81b9ccf50bb0ec74b91d4b",
          "https://files.pythonhosted.org/packages/1d/97/2288fe498044284f39ab8950703e88abbac2abbdf65524d576157af70556/MarkupSafe-2.1.1.tar.gz"),
    Sdist("markupsafe", "2.1.3", "MarkupSafe-2.1.3.tar.gz",
          "af598ed32d6ae86f1b747b82783958b1a4ab8f617b06fe68795c7f026abbdcad",
          "https://files.pythonhosted.org/packages/6d/7c/59a3248f411813f8ccba92a55feaac4bf360d29e2ff05ee7d8e1ef2d7dbf/MarkupSafe-2.1.3.tar.gz"),
    Sdist("itsdangerous", "1.1.0", "itsdangerous-1.1.0.tar.gz",
          "321b033d07f2a4136d3ec762eac9f16a10ccd60f53c0c91af90217ace7ba1f19",
          "https://files.pythonhosted.org/packages/68/1a/f27de07a8a304ad5fa817bbe383d1238ac4396da447fa11ed937039fa04b/itsdangerous-1.1.0.tar.gz"),
    Sdist("itsdangerous", "2.0.1", "itsdangerous-2.0.1.tar.gz",
          "9e724d68fc22902a1435351f84c3fb8623f303fffcc566a4cb952df8c572cff0",
          "https://files.pythonhosted.org/packages/58/66/d6c5859dcac92b442626427a8c7a42322068c5cd5d4a463ce78b93f730b7/itsdangerous-2.0.1.tar.gz"),
    Sdist("itsdangerous", "2.1.2", "itsdangerous-2.1.2.tar.gz",
          "5dbbc68b317e5e42f327f9021763545dc3fc3bfe22e6deb96aaf1fc38874156a",
          "https://files.pythonhosted.org/packages/7f/a1/d3fb83e7a61fa0c0d3d08ad0a94ddbeff3731c05212617dff3a94e097f08/itsdangerous-2.1.2.tar.gz"),
)
"""Every release the benchmark uses, oldest first within each project."""


def changes_file(project: str, unpacked: dict[Sdist, Path]) -> Path:
    """The ``CHANGES.rst`` of the newest unpacked release of ``project`` that ships one (it holds the whole
    history; Jinja 3.1.4's source release left it out, so Jinja's comes from 3.1.2)."""
    for sdist in reversed([s for s in SDISTS if s.project == project and s in unpacked]):
        path = unpacked[sdist] / "CHANGES.rst"
        if path.is_file():
            return path
    raise CapreplayError(f"no release of {project} here ships a CHANGES.rst")


def ensure_sdists(cache: Path, wanted: tuple[Sdist, ...] = SDISTS) -> dict[Sdist, Path]:
    """Each release in ``wanted`` unpacked under ``cache/sdists``: release -> its top folder (fetched once)."""
    store = cache / "sdists"
    store.mkdir(parents=True, exist_ok=True)
    unpacked: dict[Sdist, Path] = {}
    with locked(store / ".lock"):
        for sdist in wanted:
            folder = store / sdist.folder_name
            if not (folder / "PKG-INFO").is_file():
                _fetch(sdist, store)
            unpacked[sdist] = folder
    return unpacked


def _fetch(sdist: Sdist, store: Path) -> None:
    try:
        with urllib.request.urlopen(sdist.url, timeout=120) as response:
            data = response.read()
    except OSError as e:
        raise CapreplayError(f"could not download {sdist.url}: {e}") from e
    if hashlib.sha256(data).hexdigest() != sdist.sha256:
        raise CapreplayError(f"{sdist.filename} does not have the pinned sha256 {sdist.sha256}")
    tarball = store / sdist.filename
    tarball.write_bytes(data)
    with tarfile.open(tarball) as tar:
        tar.extractall(store, filter="data")
    tarball.unlink()
