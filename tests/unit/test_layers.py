"""The layers in ARCHITECTURE.md run one way: no module imports a layer above its own."""

from __future__ import annotations

import ast
from pathlib import Path

import agentfuzz

PACKAGE = Path(agentfuzz.__file__).parent

# Top-level module or subpackage -> layer, as ARCHITECTURE.md draws it.
LAYERS = {
    "_files": 1,
    "history": 1,
    "observation": 1,
    "plan": 1,
    "ids": 2,
    "surface": 2,
    "relations": 2,
    "profiles": 2,
    "policies": 2,
    "strategies": 3,
    "dialects": 4,
    "transport": 5,
    "oracles": 6,
    "reduction": 7,
    "repro": 7,
    "bundle_report": 7,
    "explain": 7,
    "validity": 7,
    "reports": 7,
    "engine": 7,
    "findings": 7,
    "session": 7,
    "target": 7,
    "campaigns": 7,
    "trials": 7,
    "judge": 7,
    "replay": 7,
    "cassette_codec": 7,
    "reduce_captured": 7,
    "watch": 7,
    "knee": 7,
    "options": 1,
    "config": 2,
    "summary": 1,
    "passes": 7,
    "meter": 7,
    "workers": 8,
    "_shard": 8,
    "_progress": 8,
    "cli": 8,
    "pytest_plugin": 8,
    "pytest_campaign": 8,
    "pytest_items": 8,
    "pytest_fixtures": 8,
    "__init__": 8,
    "__main__": 8,
}


def _imports(path: Path) -> set[str]:
    """The agentfuzz top-level parts a module imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "agentfuzz" and len(parts) > 1:
                found.add(parts[1])
    return found


def _part(path: Path) -> str:
    rel = path.relative_to(PACKAGE).parts
    return rel[0].removesuffix(".py")


def test_every_module_has_a_layer() -> None:
    parts = {_part(p) for p in PACKAGE.rglob("*.py")}
    assert parts - {"reference"} <= set(LAYERS)


def test_no_module_imports_a_layer_above_its_own() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        own = _part(path)
        for used in _imports(path) - {own}:
            if own == "reference" or used == "reference":
                continue
            if LAYERS.get(used, 0) > LAYERS[own]:
                wrong.append(f"{path.relative_to(PACKAGE)} imports agentfuzz.{used}")
    assert wrong == []


def test_reference_server_shares_no_code_with_the_client_side() -> None:
    for path in (PACKAGE / "reference").rglob("*.py"):
        assert _imports(path) <= {"reference"}, path
    # Only the CLI reaches into the reference server.
    users = {_part(p) for p in PACKAGE.rglob("*.py") if "reference" in _imports(p)}
    assert users <= {"reference", "cli"}


def _modules(path: Path) -> set[str]:
    """The agentfuzz modules a module imports, dotted in full (``agentfuzz.transport.errors``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {name for name in found if name.startswith("agentfuzz.")}


# The faces and what findings and bundles are made of: the transport's errors at most.
_PYTEST = ("pytest_plugin", "pytest_campaign", "pytest_items", "pytest_fixtures")
_ERRORS_ONLY = ("cli", *_PYTEST, "reduce_captured", "findings", "repro")


def test_faces_findings_and_bundles_use_no_transport_but_its_errors() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        if _part(path) not in _ERRORS_ONLY:
            continue
        for name in _modules(path):
            if name.startswith("agentfuzz.transport") and name != "agentfuzz.transport.errors":
                wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert wrong == []


def test_the_target_never_imports_replay_nor_findings_and_bundles_the_transport() -> None:
    assert "replay" not in _imports(PACKAGE / "target.py")
    for part in ("findings", "repro"):
        assert not {
            n for n in _modules(PACKAGE / f"{part}.py") if n.startswith("agentfuzz.transport")
        }


def _dotted(path: Path) -> set[str]:
    """Every name a module imports, dotted in full (``agentfuzz.transport.errors.CassetteError``,
    ``agentfuzz.oracles`` for ``from agentfuzz import oracles``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


_FACES = ("cli", *_PYTEST)


def test_faces_use_neither_the_dialects_nor_the_oracles_nor_the_transport() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        if _part(path) not in _FACES:
            continue
        for name in _dotted(path):
            parts = [*name.split("."), ""]
            if parts[0] != "agentfuzz":
                continue
            if parts[1] in ("dialects", "oracles") or (
                parts[1] == "transport" and not name.startswith("agentfuzz.transport.errors")
            ):
                wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert wrong == []


def test_outside_the_dialects_only_the_target_assembles_answers() -> None:
    users = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            from_dialects = (node.module or "").startswith("agentfuzz.dialects")
            if from_dialects and any(a.name == "assemble" for a in node.names):
                users.add(_part(path))
    assert users <= {"dialects", "target"}


# The pure loops: everything they send or write goes through a callable they are given.
_PURE = ("session", "reduction", "trials", "judge", "explain", "validity")
_IO = {"httpx", "vcr", "socket", "subprocess", "pathlib", "urllib", "shutil", "tempfile"}


def test_the_pure_loops_do_no_io() -> None:
    wrong = []
    for part in _PURE:
        path = PACKAGE / f"{part}.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open":
                wrong.append(f"{part}.py calls open()")
        for name in _dotted(path):
            parts = [*name.split("."), ""]
            if parts[0] in _IO or (parts[0] == "agentfuzz" and parts[1] in _STATEFUL):
                wrong.append(f"{part}.py imports {name}")
    assert wrong == []


_STATEFUL = {"transport", "target", "replay", "repro", "findings", "_files", "engine"}


def test_only_the_judge_sends_a_relations_partner() -> None:
    """A relation is defined next to the oracles, pure (``relations``, ``oracles/_relation``);
    its partner is derived and sent by the judge alone, and only prepared elsewhere."""
    users: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "agentfuzz.relations":
                part = str(path.relative_to(PACKAGE))
                users.setdefault(part, set()).update(a.name for a in node.names)
    senders = {part for part, names in users.items() if "partner" in names}
    assert senders == {"judge.py"}
    assert set(users) <= {
        "judge.py",
        "profiles.py",
        "session.py",
        "strategies/_relations.py",
        "oracles/_relation.py",
    }
    assert _imports(PACKAGE / "relations.py") <= {"history", "surface"}
