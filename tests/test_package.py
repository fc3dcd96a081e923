"""Packaging, the import floors of docs/architecture.md, and the command line's behaviour on bad input."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ROOTS = {"expbank": "expbank", "envs": "expbank.envs", "training": "expbank.training"}

# Lowest first. A module may import modules of its own floor and of floors below it, never above; the most
# specific prefix decides a module's floor. `expbank.envs` is apart: it imports nothing else of ours.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("expbank", "expbank.errors", "expbank.paths", "expbank.chat", "expbank.trajectory",
              "expbank.config")),
    ("envs", ("expbank.envs",)),
    ("bank", ("expbank.bank",)),
    ("training", ("expbank.training", "expbank.training.runs")),
    ("agent", ("expbank.training.agent",)),
    ("actors", ("expbank.training.actors",)),
    ("evaluation", ("expbank.training.evaluation",)),
    ("rl", ("expbank.training.rl",)),
    ("commands", ("expbank.commands", "expbank.cli")),
]
# Libraries slow enough to import that a module importing one at its top may be imported inside a function.
HEAVY = {"torch", "transformers", "faiss", "alfworld", "textworld", "peft", "trl", "datasets", "accelerate",
         "sentence_transformers", "vllm", "matplotlib", "scipy", "statsmodels", "spacy", "fastapi", "uvicorn",
         "mcp", "openai", "httpx"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    name = [ROOTS[parts[0]], *parts[1:]]
    return ".".join(name[:-1] if name[-1] == "__init__" else name)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for root in ROOTS for p in (REPO / root).rglob("*.py")}


def _resolve(module: str, names: list[str]) -> set[str]:
    """``from module import names``: the modules of ours this names (a submodule, else the module itself)."""
    found = {f"{module}.{n}" for n in names if f"{module}.{n}" in _modules()}
    return found or ({module} if module in _modules() else set())


def _absolute(name: str, module: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in module ``name``."""
    if not level:
        return module or ""
    package = name if _modules()[name].name == "__init__.py" else name.rpartition(".")[0]
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return f"{base}.{module}" if module else base


@cache
def _imports(name: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(our modules imported at module level, ours imported inside functions, third-party top-level names
    imported at module level) of module ``name``."""
    top, inner, third = set(), set(), set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets: set[str] = set()
            if isinstance(child, ast.Import):
                for alias in child.names:
                    (targets.add(alias.name) if alias.name.startswith("expbank") else
                     third.add(alias.name.split(".")[0]) if not in_function else None)
            elif isinstance(child, ast.ImportFrom):
                module = _absolute(name, child.module, child.level)
                if module.startswith("expbank"):
                    targets |= _resolve(module, [a.name for a in child.names])
                elif not in_function:
                    third.add(module.split(".")[0])
            (inner if in_function else top).update(t for t in targets if t != name)
            visit(child, nested)

    visit(ast.parse(_modules()[name].read_text()), False)
    return frozenset(top), frozenset(inner - top), frozenset(third)


def _floor(name: str) -> int:
    best = max(((len(prefix), index) for index, (_, prefixes) in enumerate(FLOORS) for prefix in prefixes
                if name == prefix or name.startswith(prefix + ".")), default=None)
    assert best is not None, f"{name} is on no floor: add it to FLOORS"
    return best[1]


@cache
def _heavy(name: str) -> bool:
    """Whether importing ``name`` imports a heavy library (directly or through our modules, at module level)."""
    top, _, third = _imports(name)
    return bool(third & HEAVY) or any(_heavy(m) for m in top)


def test_import_names_map_to_the_top_level_folders():
    import expbank.envs
    import expbank.training

    assert Path(expbank.envs.__file__).parent.name == "envs"
    assert Path(expbank.training.__file__).parent.name == "training"


def test_envs_import_nothing_else_of_ours():
    for name in _modules():
        if name.startswith("expbank.envs"):
            top, inner, _ = _imports(name)
            assert all(m.startswith("expbank.envs") for m in top | inner), f"{name}: {top | inner}"


def test_imports_never_go_up_a_floor():
    for name in _modules():
        top, inner, _ = _imports(name)
        up = sorted(m for m in top | inner if _floor(m) > _floor(name))
        assert not up, f"{name} (floor {FLOORS[_floor(name)][0]}) imports from a higher floor: {up}"


def test_no_import_cycles():
    """Over every import, function-level ones included: a cycle hidden inside a function is still a cycle."""
    graph = {name: set(_imports(name)[0] | _imports(name)[1]) for name in _modules()}
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target] if target in path else [name, target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_function_level_imports_of_ours_only_keep_heavy_libraries_lazy():
    light = sorted(f"{name} -> {m}" for name in _modules() for m in _imports(name)[1] if not _heavy(m))
    assert not light, "import these at module level (they load no heavy library):\n" + "\n".join(light)


def test_training_keeps_its_roles_in_subpackages():
    top_level = sorted(p.name for p in (REPO / "training").glob("*.py"))
    assert len(top_level) <= 8, top_level
    assert {p.name for p in (REPO / "training").iterdir() if p.is_dir() and (p / "__init__.py").exists()} == \
        {"agent", "actors", "evaluation", "rl"}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["expbank", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_the_subcommands_quickly_without_heavy_imports():
    start = time.perf_counter()
    result = _run("--help")
    elapsed = time.perf_counter() - start
    assert result.returncode == 0
    for command in ("collect", "quickstart"):
        assert command in result.stdout
    probe = subprocess.run([sys.executable, "-c", "import sys; from expbank.cli import build_parser; "
                            "build_parser(); print(sorted(m for m in ('torch', 'faiss', 'alfworld', 'transformers')"
                            " if m in sys.modules))"], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "[]"
    assert elapsed < 5  # generous for a loaded CI machine; typically ~0.1 s


@pytest.mark.parametrize("args", [("nonsense",), ("collect", "--bogus"), ("collect", "--env", "alfworld")])
def test_bad_subcommand_or_flag_exits_2_with_one_line(args):
    result = _run(*args)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "error" in result.stderr


def test_bad_data_is_one_line_exit_1(tmp_path):
    result = _run("collect", "--env", "alfworld", "--split", "train", "--data", str(tmp_path / "none"),
                  "--policy", "expert", "--out", str(tmp_path / "x.jsonl"))
    assert result.returncode == 1
    assert "alfworld-download" in result.stderr and len(result.stderr.strip().splitlines()) == 1
