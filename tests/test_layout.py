"""The library's shape: no UI in ``sac``, stage packages that name their API, modules a reader can hold."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sac

SAC = Path(sac.__file__).parent
PACKAGES = sorted(p.parent.name for p in SAC.glob("*/__init__.py"))


def test_importing_the_whole_library_never_loads_streamlit():
    code = (
        "import importlib, pkgutil, sys, sac\n"
        "for m in pkgutil.walk_packages(sac.__path__, 'sac.'):\n"
        "    if m.name != 'sac.__main__':\n"
        "        importlib.import_module(m.name)\n"
        "assert 'streamlit' not in sys.modules, 'sac imported streamlit'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=SAC.parent)


@pytest.mark.parametrize("package", PACKAGES)
def test_each_stage_package_exports_what_it_names(package):
    module = importlib.import_module(f"sac.{package}")
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"sac.{package}.{name}"
    with pytest.raises(AttributeError, match="no attribute"):
        module.no_such_name  # noqa: B018


def test_no_library_module_exceeds_600_lines():
    sizes = {str(p.relative_to(SAC)): len(p.read_text().splitlines()) for p in SAC.rglob("*.py")}
    assert {k: v for k, v in sizes.items() if v > 600} == {}


def test_no_long_function_without_a_reason():
    """A function over 60 lines says why in its docstring ("Long because ...")."""
    import ast

    long = []
    for path in SAC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 60:
                if "Long because" not in (ast.get_docstring(node) or ""):
                    long.append(f"{path.relative_to(SAC)}:{node.lineno} {node.name}")
    assert long == []


def test_every_library_module_imports_on_its_own():
    # Each in a fresh interpreter would be slow; walking them in one catches missing names and cycles
    # only in import order, so import the deepest first.
    names = sorted((m.name for m in pkgutil.walk_packages(sac.__path__, "sac.") if m.name != "sac.__main__"),
                   key=lambda n: -n.count("."))
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=SAC.parent)


def test_readme_documents_every_setting():
    import dataclasses

    from sac.config import SacConfig

    readme = (SAC.parent / "README.md").read_text(encoding="utf-8")
    names = [f"SAC_{f.name.upper()}" for f in dataclasses.fields(SacConfig) if f.name != "openai_api_key"]
    assert [n for n in names if f"`{n}`" not in readme] == []
    assert "`OPENAI_API_KEY`" in readme
