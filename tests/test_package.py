"""Packaging, the import rule of DESIGN.md §1, and the command line's behaviour on bad input."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_import_names_map_to_the_top_level_folders():
    import expbank.envs
    import expbank.training

    assert Path(expbank.envs.__file__).parent.name == "envs"
    assert Path(expbank.training.__file__).parent.name == "training"


def test_envs_import_nothing_else_of_ours():
    for path in (REPO / "envs").rglob("*.py"):
        ours = {m for m in _imports(path) if m.split(".")[0] == "expbank"}
        assert all(m.startswith("expbank.envs") for m in ours), f"{path}: {ours}"


def test_bank_modules_import_neither_envs_nor_training():
    for path in (REPO / "expbank").glob("*.py"):
        if path.name == "cli.py":
            continue
        bad = {m for m in _imports(path) if m.startswith(("expbank.envs", "expbank.training"))}
        assert not bad, f"{path} imports {bad}"


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

