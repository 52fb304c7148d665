"""The house is layered and its imports go one way: every import in clinaudit/, read with `ast`.

Function-local imports and `if TYPE_CHECKING:` imports count as much as top-level ones:
a lazy import that climbs a floor is still a dependency on that floor. Each module
belongs to one floor (its package's, else its own name's); it may import its own package
and any floor below its own, never a floor above and never another package on its own
floor. On top of that the whole graph must have no cycle, inside a package included.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "clinaudit"

# Floors, lowest first; each is a set of packages or modules that may not import one another.
FLOORS: list[tuple[str, ...]] = [
    # the ground floor: records, ids, text helpers and the catalogue (core), what is written and read back (store),
    # every option's declaration (options); the three may import one another, never a floor above
    ("clinaudit.core", "clinaudit.store", "clinaudit.options"),
    ("clinaudit.read",),
    ("clinaudit.lookup", "clinaudit.check"),
    ("clinaudit.judge", "clinaudit.report"),
    ("clinaudit.run",),  # the order of the stages, settings read once, --jobs, the Dask API
    ("clinaudit.guard",),
    ("clinaudit.cli",),
    ("clinaudit", "clinaudit.__main__"),  # the library API on top: `import clinaudit` names audit_text
]
GROUND = set(FLOORS[0])


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = modules()


def imports(name: str, path: Path) -> set[str]:
    """The clinaudit modules `name` imports anywhere in its body, as module names."""
    package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
        for target in targets:
            if target.split(".")[0] != "clinaudit":
                continue
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                out.add(target)
    return out


GRAPH = {name: imports(name, path) for name, path in MODULES.items()}


def room(module: str) -> tuple[int, str]:
    """(floor, the package or module that is its room)."""
    best: tuple[int, str] | None = None
    for level, rooms in enumerate(FLOORS):
        for r in rooms:
            if (module == r or module.startswith(r + ".")) and (best is None or len(r) > len(best[1])):
                best = (level, r)
    assert best is not None, f"{module} is on no floor: add it to FLOORS"
    return best


def test_every_module_has_a_floor():
    for module in MODULES:
        room(module)


def test_imports_go_down_and_never_across_a_floor():
    upward = []
    for module, targets in GRAPH.items():
        level, own = room(module)
        for target in targets:
            t_level, t_room = room(target)
            if t_room == own:
                continue
            if t_level > level or (t_level == level and level != 0):
                upward.append(f"{module} → {target}")
    assert upward == [], "\n".join(sorted(upward))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_there_is_no_import_cycle_anywhere():
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_one():
    """The checks above could pass by finding nothing: a made-up graph shows they see what they should."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert room("clinaudit.lookup.services.pubmed") == (2, "clinaudit.lookup")
    assert room("clinaudit.check.topic")[0] == room("clinaudit.lookup.resolve")[0]


def test_function_local_and_type_checking_imports_are_read(tmp_path, monkeypatch):
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from clinaudit.report import verdict\n"
        "def f():\n    from clinaudit.check import topic\n    from ..lookup import resolve\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source)
    found = imports("clinaudit.read.probe", path)
    assert {"clinaudit.report.verdict", "clinaudit.check.topic", "clinaudit.lookup.resolve"} <= found


@pytest.mark.parametrize("module", ["clinaudit.run.pipeline"])
def test_the_pipeline_only_orchestrates(module):
    """The read stage lives in read/; what is left is the order of the stages, in a few hundred lines."""
    path = MODULES[module]
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"{module} has {lines} lines"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert classes == [], f"the pipeline defines {classes}: a stage's own types belong in its stage"


def test_ground_floor_modules_import_only_the_ground_floor():
    bad = defaultdict(list)
    for module, targets in GRAPH.items():
        if room(module)[0] != 0:
            continue
        for target in targets:
            if room(target)[0] != 0:
                bad[module].append(target)
    assert dict(bad) == {}


def test_the_package_top_holds_only_the_library_api():
    """Every module lives in the package of its floor: at the top, only `__init__` and `__main__`."""
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert top == ["__init__.py", "__main__.py"]


def test_no_two_modules_outside_the_cli_share_a_name():
    """A module's name says which it is: no `as guard_sentences` to tell two `sentences` apart."""
    names = defaultdict(list)
    for module in MODULES:
        if module.startswith("clinaudit.cli") or "." not in module:
            continue
        leaf = module.rsplit(".", 1)[1]
        if MODULES[module].name != "__init__.py":
            names[leaf].append(module)
    assert {leaf: found for leaf, found in names.items() if len(found) > 1} == {}


def test_only_the_entry_points_import_the_cli():
    importers = sorted(m for m, targets in GRAPH.items() if any(t.startswith("clinaudit.cli") for t in targets))
    assert [m for m in importers if not m.startswith("clinaudit.cli")] == ["clinaudit.__main__"]
