"""The layers in ARCHITECTURE.md run one way, and every "never" it says holds.

The package is laid out by role: each part (a package, or one of the few modules at the top) has
a layer, and no module imports a part whose layer is above its own. Two top-level packages group
parts that work together: ``wire/`` (dialects, transport, target: a case out, an observation
back) and ``output/`` (findings, reports: what a run leaves for people); their parts keep their
own layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentfuzz

PACKAGE = Path(agentfuzz.__file__).parent

# Top-level part -> layer, as ARCHITECTURE.md draws it.
LAYERS = {
    "errors": 0,
    "model": 1,
    "request": 2,
    "puppet": 2,
    "strategies": 3,
    "dialects": 4,
    "transport": 5,
    "oracles": 6,
    "target": 7,
    "judge": 8,
    "reduce": 8,
    "tape": 9,
    "reports": 9,
    "findings": 10,
    "runs": 11,
    "cli": 12,
    "pytest": 12,
    "__init__": 12,
    "__main__": 13,
}
# Packages, by role; the rest of LAYERS are modules at the top of the package or of a group.
_PACKAGES = {
    "model",
    "request",
    "puppet",
    "strategies",
    "dialects",
    "transport",
    "oracles",
    "judge",
    "reduce",
    "tape",
    "reports",
    "findings",
    "runs",
    "cli",
    "pytest",
    "reference",
}
# Top-level groups -> the parts inside them.
_GROUPS = {"wire": {"dialects", "transport", "target"}, "output": {"findings", "reports"}}
_FACES = ("cli", "pytest")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _part_of(names: tuple[str, ...]) -> str:
    """The part a module path (``("wire", "dialects", "chat.py")``) or a dotted name's tail
    (``("wire", "target")``) belongs to: a group's part, or the top-level part."""
    first = names[0].removesuffix(".py")
    if first in _GROUPS and len(names) > 1:
        return names[1].removesuffix(".py")
    return first


def _part(path: Path) -> str:
    return _part_of(path.relative_to(PACKAGE).parts)


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _dotted(path: Path) -> set[str]:
    """Every agentfuzz name a module imports, dotted in full (``agentfuzz.errors.InputError``,
    ``agentfuzz.oracles`` for ``from agentfuzz import oracles``, ``agentfuzz.model.history``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _parts(path: Path) -> set[str]:
    """The agentfuzz top-level parts a module imports (a public name of ``agentfuzz`` itself,
    ``from agentfuzz import run``, is the public face's)."""
    parts = {_part_of(tuple(n.split(".")[1:])) for n in _dotted(path) if n.startswith("agentfuzz.")}
    return {p if p in LAYERS or p in _PACKAGES else "__init__" for p in parts}


def _third_party(path: Path) -> set[str]:
    return {n.split(".")[0] for n in _dotted(path) if not n.startswith("agentfuzz")}


def test_at_most_eight_modules_at_the_top_and_every_part_has_a_layer() -> None:
    top = [p.name for p in PACKAGE.glob("*.py")]
    assert len(top) <= 8, top
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    grouped = set().union(*_GROUPS.values())
    assert folders == (_PACKAGES - grouped) | set(_GROUPS)
    for group, parts in _GROUPS.items():
        inside = {p.name.removesuffix(".py") for p in (PACKAGE / group).iterdir()}
        assert parts <= inside, group
        # A group's face only names its parts: it defines and re-exports nothing.
        face = ast.parse((PACKAGE / group / "__init__.py").read_text())
        assert all(isinstance(n, ast.Expr) for n in face.body), group
    assert {_part(p) for p in _sources()} - {"reference"} <= set(LAYERS)


def test_no_module_imports_a_layer_above_its_own() -> None:
    wrong = []
    for path in _sources():
        own = _part(path)
        if own == "reference":
            continue
        for used in _parts(path) - {own, "reference"}:
            if LAYERS.get(used, 99) > LAYERS[own]:
                wrong.append(f"{_rel(path)} imports agentfuzz.{used}")
    assert wrong == []


def test_the_data_model_and_the_errors_import_nothing_above_them() -> None:
    for path in (PACKAGE / "model").rglob("*.py"):
        assert _parts(path) <= {"model"}, path
    assert _parts(PACKAGE / "errors.py") == set()
    assert _agentfuzz_modules(PACKAGE / "model" / "history.py") == set()
    # An observation carries middleman mode's bodies read back as cases: history is all it needs.
    assert _agentfuzz_modules(PACKAGE / "model" / "observation.py") == {"agentfuzz.model.history"}


def _agentfuzz_modules(path: Path) -> set[str]:
    """The agentfuzz modules a module imports from (``from agentfuzz.x import y`` names x)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {name for name in found if name.split(".")[0] == "agentfuzz"}


def test_the_oracles_judge_what_they_are_given_and_read_no_wire_body() -> None:
    """Reading a body into a case is the dialects' work, done by the pipeline (the target, the
    replay) before any oracle runs: no oracle imports a dialect."""
    wrong = [
        _rel(path) for path in (PACKAGE / "oracles").rglob("*.py") if "dialects" in _parts(path)
    ]
    assert wrong == []


def test_reference_server_shares_no_code_with_the_client_side() -> None:
    for path in (PACKAGE / "reference").rglob("*.py"):
        assert _parts(path) <= {"reference"}, path
    # Only the CLI reaches into the reference server.
    users = {_part(p) for p in _sources() if "reference" in _parts(p)}
    assert users <= {"reference", "cli"}


def test_vcrpy_and_sockets_live_in_the_transport_alone() -> None:
    wrong = []
    for path in _sources():
        if _part(path) in ("transport", "reference"):
            continue
        # The target names httpx's transport type (what answers in a server's place); the
        # plugin's offline items block sockets, and JUnit names the host: no I/O of theirs.
        allowed = {"target": {"httpx"}, "pytest": {"socket"}, "reports": {"socket"}}
        used = _third_party(path) & {"vcr", "httpx", "httpx_sse", "socket", "uvicorn", "starlette"}
        used -= allowed.get(_part(path), set())
        wrong += [f"{_rel(path)} imports {name}" for name in sorted(used)]
    assert wrong == []


def _uses_transport_beyond_errors(path: Path) -> list[str]:
    return sorted(n for n in _dotted(path) if n.startswith("agentfuzz.wire.transport"))


def test_faces_findings_and_bundles_use_no_transport() -> None:
    wrong = []
    for path in _sources():
        if _part(path) in (*_FACES, "findings", "reports", "judge", "reduce"):
            wrong += [f"{_rel(path)} imports {n}" for n in _uses_transport_beyond_errors(path)]
    assert wrong == []


def test_faces_use_neither_the_dialects_nor_the_oracles() -> None:
    """Oracle names and checks come to the faces through ``judge``, captured input through
    ``runs.reduce``, the proxy's wire through ``runs.watch``."""
    wrong = []
    for path in _sources():
        if _part(path) not in _FACES:
            continue
        for used in _parts(path) & {"dialects", "oracles", "transport"}:
            wrong.append(f"{_rel(path)} imports agentfuzz.{used}")
    assert wrong == []


def test_runs_read_oracle_knowledge_through_the_registry_alone() -> None:
    """Runs ask the registry (``oracles._registry``) what an oracle means; they never reach into
    an oracle family's module."""
    wrong = []
    for path in _sources():
        if _part(path) not in ("runs", "findings", "reports", *_FACES):
            continue
        for name in _dotted(path):
            if name.startswith("agentfuzz.oracles._") and not name.startswith(
                "agentfuzz.oracles._registry"
            ):
                wrong.append(f"{_rel(path)} imports {name}")
    assert wrong == []


def test_the_target_never_imports_the_tape() -> None:
    assert not _parts(PACKAGE / "wire" / "target.py") & {"tape", "findings", "runs", "judge"}


def test_outside_the_dialects_only_the_target_assembles_answers() -> None:
    users = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            from_dialects = (node.module or "").startswith("agentfuzz.wire.dialects")
            if from_dialects and any(a.name == "assemble" for a in node.names):
                users.add(_part(path))
    assert users <= {"dialects", "target"}


# The pure loops: everything they send or write goes through a callable they are given.
_IO = {"httpx", "vcr", "socket", "subprocess", "pathlib", "urllib", "shutil", "tempfile"}
_STATEFUL = {"transport", "target", "tape", "findings", "runs"}


def test_the_pure_loops_do_no_io() -> None:
    wrong = []
    for package in ("judge", "reduce"):
        for path in (PACKAGE / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open":
                    wrong.append(f"{_rel(path)} calls open()")
            wrong += [f"{_rel(path)} imports {m}" for m in sorted(_third_party(path) & _IO)]
            wrong += [f"{_rel(path)} imports {m}" for m in sorted(_parts(path) & _STATEFUL)]
            if "agentfuzz.model.files" in _dotted(path):
                wrong.append(f"{_rel(path)} writes files")
    assert wrong == []


def test_only_the_judge_sends_a_relations_partner() -> None:
    """A relation is defined next to the oracles, pure (``request.relations``,
    ``oracles/_relation``); its partner is derived and sent by the judge alone, and only
    prepared elsewhere."""
    users: dict[str, set[str]] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "agentfuzz.request.relations":
                users.setdefault(_rel(path), set()).update(a.name for a in node.names)
    senders = {part for part, names in users.items() if "partner" in names}
    assert senders == {"judge/judge.py"}
    assert set(users) <= {
        "judge/judge.py",
        "judge/session.py",
        "request/profiles.py",
        "strategies/_relations.py",
        "oracles/_relation.py",
    }
    # relations.py is the face over private modules, which only it imports.
    private = {
        f"agentfuzz.request.{name}"
        for name in ("_pairing", "_prompt_relations", "_greedy_relations", "_special_tokens")
    }
    parts = ("relations", *(m.rsplit(".", 1)[1] for m in private))
    modules = {
        node.module
        for part in parts
        for node in ast.walk(ast.parse((PACKAGE / "request" / f"{part}.py").read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentfuzz")
    }
    assert modules <= {"agentfuzz.model.history", "agentfuzz.request.surface", *private}
    outside = {
        _rel(path)
        for path in _sources()
        if path.parent.name != "request"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module in private
    }
    assert not outside
