"""The app's shape (STYLE.md sections 1 and 5): pages and ``webapp`` reach ``sac`` only through its use cases, its
presentation and its ground floor, never a stage; every file stays small; Streamlit's caches live in ``webapp`` and
never on ``sac``; ``pages/`` holds pages only, and nothing calls ``st.navigation``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the app may import of sac: the use cases, what renders their results, and the ground floor.
ALLOWED = ("sac.usecases", "sac.render", "sac.types", "sac.errors", "sac.config", "sac.methods", "sac.wording",
           "sac.progress", "sac.workspace", "sac.audit")
MAX_LINES = 300


def app_files(root: Path = ROOT) -> list[Path]:
    """app.py, every page and every module of the app's own package."""
    return [root / "app.py", *sorted((root / "pages").glob("*.py")), *sorted((root / "webapp").rglob("*.py"))]


def sac_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Every sac module an import names, with its line: ``from sac import audit`` names ``sac.audit``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "sac":
                found += [(node.lineno, f"sac.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name == "sac" or name.startswith("sac.")]


def allowed(module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in ALLOWED)


def layer_violations(paths: list[Path], root: Path = ROOT) -> list[str]:
    """``path:line module`` for each import of a sac module outside ``ALLOWED``."""
    return [f"{path.relative_to(root)}:{line} {module}"
            for path in paths for line, module in sac_imports(ast.parse(path.read_text("utf-8")))
            if not allowed(module)]


def oversized(paths: list[Path], root: Path = ROOT) -> dict[str, int]:
    sizes = {str(p.relative_to(root)): len(p.read_text("utf-8").splitlines()) for p in paths}
    return {name: n for name, n in sizes.items() if n > MAX_LINES}


def streamlit_calls(tree: ast.AST) -> set[str]:
    """Attributes of ``st`` a file uses: ``st.cache_data`` -> "cache_data"."""
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "st"}


def test_the_app_imports_sac_only_through_use_cases_render_and_the_ground_floor():
    assert layer_violations(app_files()) == []


def test_every_app_file_is_at_most_300_lines():
    assert oversized(app_files()) == {}


def test_a_stage_import_or_an_oversized_file_is_caught(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "webapp" / "inner").mkdir(parents=True)
    (tmp_path / "app.py").write_text("import sac.usecases.corpus\nfrom sac import audit, ingest\n")
    (tmp_path / "pages" / "1_Page.py").write_text("from sac.retrieval.trace import SearchResult\n"
                                                  "from sac.render.trace import trace_notes\n")
    (tmp_path / "webapp" / "inner" / "deep.py").write_text("def f():\n    import sac.index.store\n" + "\n" * 300)
    assert layer_violations(app_files(tmp_path), tmp_path) == [
        "app.py:2 sac.ingest", "pages/1_Page.py:1 sac.retrieval.trace", "webapp/inner/deep.py:2 sac.index.store"]
    assert oversized(app_files(tmp_path), tmp_path) == {"webapp/inner/deep.py": 302}
    assert not allowed("sac") and not allowed("sac.usecasesx") and allowed("sac.usecases.review")


def test_app_cache_is_gone_and_caches_live_in_webapp():
    assert not (ROOT / "app_cache.py").exists()
    for path in app_files():
        calls = streamlit_calls(ast.parse(path.read_text("utf-8")))
        assert "navigation" not in calls, path  # pages/ is the navigation (PagesManager warns otherwise)
        if path.parent.name == "pages" or path.name == "app.py":
            assert not calls & {"cache_data", "cache_resource"}, f"{path}: caching lives in webapp"
    for path in (ROOT / "sac").rglob("*.py"):
        assert "st.cache_" not in path.read_text("utf-8"), path


def test_every_file_in_pages_is_a_page():
    """Streamlit lists every pages/*.py as a page: each starts with ``page_setup``, so no helper module hides there."""
    for path in sorted((ROOT / "pages").glob("*.py")):
        body = ast.parse(path.read_text("utf-8")).body
        calls = [node.value.func for node in body if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
        assert calls and isinstance(calls[0], ast.Name) and calls[0].id == "page_setup", path


def test_webapp_modules_import_only_those_before_them():
    """webapp/__init__.py's order: no circle between the app's own modules."""
    order = ["signin", "settings", "data", "matters", "jobs", "widgets", "glossary"]
    assert sorted(p.stem for p in (ROOT / "webapp").glob("*.py") if p.stem != "__init__") == sorted(order)
    for i, name in enumerate(order):
        tree = ast.parse((ROOT / "webapp" / f"{name}.py").read_text("utf-8"))
        used = {node.module.split(".")[1] for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("webapp.")}
        used |= {alias.name for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module == "webapp" for alias in node.names}
        assert used <= set(order[:i]), f"webapp/{name}.py imports {sorted(used - set(order[:i]))}"
