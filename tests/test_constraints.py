"""constraints.txt, with which the GitHub Action installs clinaudit: a pin for every distribution `pip install .` pulls.

Each pin lies inside pyproject.toml's range, and the pins are exactly the distributions
clinaudit's requirements reach on any runner (Linux, macOS, Windows; Python 3.11 to 3.14),
walked through the installed distributions' metadata: none missing, none left over. The slow
set installs the Action with it into a fresh virtualenv and compares `pip freeze` with the pins
(tests/test_action.py).
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from helpers import ROOT

RUNNERS = [
    {"sys_platform": platform, "platform_system": system, "os_name": os_name, "platform_machine": machine,
     "python_version": python, "python_full_version": f"{python}.0", "implementation_name": "cpython",
     "platform_python_implementation": "CPython", "extra": ""}
    for platform, system, os_name, machine in (("linux", "Linux", "posix", "x86_64"), ("darwin", "Darwin", "posix",
                                               "arm64"), ("win32", "Windows", "nt", "AMD64"))
    for python in ("3.11", "3.12", "3.13", "3.14")
]  # fmt: skip


def pins() -> dict[str, str]:
    """Each pinned distribution's canonical name and version."""
    found = {}
    for line in (ROOT / "constraints.txt").read_text("utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line)
        assert match, f"constraints.txt: {line!r} is not NAME==VERSION"
        found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def _needed(requirement: Requirement) -> bool:
    """Whether a requirement (not an extra's) applies on some runner."""
    if requirement.marker is None:
        return True
    marker: Marker = requirement.marker
    return any(marker.evaluate(env) for env in RUNNERS)


def _requires(name: str) -> list[Requirement]:
    try:
        listed = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:  # another platform's only (colorama): it pulls nothing more
        return []
    return [r for r in map(Requirement, listed) if _needed(r)]


def _runtime() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return [Requirement(line) for line in project["dependencies"]]


def test_every_pin_is_exact_and_inside_pyprojects_range():
    pinned = pins()
    for requirement in _runtime():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement.name} is not pinned"
        assert requirement.specifier.contains(Version(pinned[name]), prereleases=True), (requirement, pinned[name])


def test_the_pins_are_every_distribution_clinaudit_pulls_and_no_more():
    reached: set[str] = set()
    todo = [r for r in _runtime() if _needed(r)]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in reached:
            continue
        reached.add(name)
        todo += _requires(name)
    pinned = pins()
    assert sorted(reached - set(pinned)) == [], "pulled but not pinned"
    assert sorted(set(pinned) - reached) == [], "pinned but pulled by nothing"
