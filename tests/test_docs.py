"""The documentation says what the code and the stored results say: the generated pages are what their scripts make,
every setting of ``SacConfig`` is documented, every relative link leads somewhere, every ``sac`` command shown
exists with the flags shown, and the README stays a short user's page."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))
import headline  # noqa: E402
import results_doc  # noqa: E402

sys.path.remove(str(BENCH))

from sac.config import SacConfig  # noqa: E402

_spec = importlib.util.spec_from_file_location("make_configuration", ROOT / "docs" / "make_configuration.py")
assert _spec and _spec.loader
make_configuration = importlib.util.module_from_spec(_spec)
sys.modules["make_configuration"] = make_configuration  # its dataclass looks its module up there
_spec.loader.exec_module(make_configuration)

README = ROOT / "README.md"
# The pages written for readers; bench/notes/ are checked for their links only (their text is the record as it was).
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")), BENCH / "README.md",
         BENCH / "RESULTS.md"]
NOTES = sorted((BENCH / "notes").glob("*.md"))
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


# -- generated pages ----------------------------------------------------------------------------------------------

def test_the_configuration_page_is_what_its_script_makes():
    page = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    assert page == make_configuration.make(), "docs/configuration.md: run python docs/make_configuration.py --write"


def test_every_setting_of_sac_config_is_on_the_configuration_page():
    page = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    names = [f"SAC_{f.name.upper()}" for f in dataclasses.fields(SacConfig)]
    assert [n for n in names if f"| `{n}` |" not in page] == []
    assert "| `OPENAI_API_KEY` |" in page and "| `OPENAI_BASE_URL` |" in page  # from_env reads them too


SOURCE = '''
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SacConfig:
    workspace: Path = Path("workspace")  # where things live
    # how many widgets,
    # counted twice
    widgets: int = 3
    secret: str | None = field(
        default=None, repr=False)  # never printed
    bare: float = 1.5

    @classmethod
    def from_env(cls, environ):
        values = {}
        if environ.get("OTHER_KEY") and "secret" not in values:
            values["secret"] = environ["OTHER_KEY"]
        return cls(**values)
'''


def _config(source: str) -> type:
    namespace: dict[str, object] = {}
    exec(compile(source, "config_example.py", "exec"), namespace)
    return namespace["SacConfig"]  # type: ignore[return-value]


def test_a_fields_meaning_is_the_comment_beside_it_or_right_above_it():
    assert make_configuration.field_comments(SOURCE) == {
        "workspace": ("Path", "where things live"), "widgets": ("int", "how many widgets, counted twice"),
        "secret": ("str | None", "never printed"), "bare": ("float", "")}
    assert make_configuration.other_variables(SOURCE) == {"OTHER_KEY": "secret"}


def test_a_new_field_is_a_new_row_with_its_comment():
    page = make_configuration.make(SOURCE, _config(SOURCE))
    assert "| `SAC_WORKSPACE` | `workspace` | `Path` | where things live |" in page
    assert "| `SAC_WIDGETS` | `3` | `int` | how many widgets, counted twice |" in page
    assert "| `SAC_SECRET` | unset | `str \\| None` | never printed |" in page
    assert "| `SAC_BARE` | `1.5` | `float` | — |" in page
    assert "| `OTHER_KEY` | unset | `str \\| None` | read into `secret` when `SAC_SECRET` is unset |" in page
    added = SOURCE.replace("    bare: float = 1.5\n", "    bare: float = 1.5\n    shiny: bool = True  # new\n")
    assert "| `SAC_SHINY` | `True` | `bool` | new |" in make_configuration.make(added, _config(added))


def test_the_results_page_is_what_its_script_makes():
    page = (BENCH / "RESULTS.md").read_text("utf-8")
    assert page == results_doc.make(), "bench/RESULTS.md: run python bench/results_doc.py --write"
    assert results_doc.make() == page  # the same bytes again: nothing in it depends on the time or the machine


def test_the_results_page_holds_every_headline_row_and_names_its_runs():
    page = (BENCH / "RESULTS.md").read_text("utf-8")
    rows = [row for split in headline.SPLITS for row in headline.rows(split)]
    assert [row for row in rows if row not in page] == []
    assert [name for name in headline.run_names() if f"[`{name}`](results/{name}.md)" not in page] == []


def test_the_survey_figures_in_the_app_guide_are_the_stored_runs():
    """docs/app.md's survey timings and governing-law counts are bench/survey.py's stored figures
    (bench/results/survey.json): a rerun that moves them fails here until the guide says what it measured."""
    import json

    stored = json.loads((BENCH / "results" / "survey.json").read_text("utf-8"))
    guide = " ".join((ROOT / "docs" / "app.md").read_text("utf-8").split())
    demo, pool = stored["demo"], stored["pool"]
    law = stored["governing_law"]
    [question] = [q for q in law["questions"] if q.startswith("What is the governing law")]
    best = law["questions"][question]
    expected = [
        f"the first survey of the demo's {demo['contracts']} contracts took {demo['first_s']:.2f} s, later ones "
        f"{demo['again_median_s']:.2f} s (load {demo['machine_before']['loadavg'][0]:.1f} on 2 cores)",
        f"of {pool['contracts']} CUAD contracts ({pool['chunks']:,} chunks, the packaged model's vectors), "
        f"{pool['first_s']:.1f} s, then {pool['again_median_s']:.2f} s (load {pool['machine_before']['loadavg'][0]:.1f};",
        f"{best['baseline+hybrid0.5'][0]} of {law['contracts_annotated']} contracts with it, "
        f"{best['sac-generic'][0]} of {law['contracts_annotated']} with `sac-generic`",
    ]
    assert [sentence for sentence in expected if sentence not in guide] == []


# -- the README ---------------------------------------------------------------------------------------------------

QUICKSTART = ("python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt && streamlit run app.py\n"
              ". .venv/bin/activate && pip install -r requirements-dev.txt && pytest\n")


def test_the_readme_is_a_short_users_page():
    text = README.read_text("utf-8")
    assert len(text.splitlines()) <= 200
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:5] == ["Quickstart", "A tour of the app", "Methods", "Metrics", "Results"]
    assert "Data and attribution" in headings
    assert f"```bash\n{QUICKSTART}```" in text
    assert "`SAC_WORKSPACE`" in text and "`./workspace`" in text
    assert '`pytest -m "not slow"`' in text
    assert "python -m sac" not in text  # the command line is `sac`
    flowing = " ".join(text.split())
    for licence in ("CUAD v1 by The Atticus Project (CC BY 4.0)", "ContractNLI by Koreeda and Manning, 2021 (CC BY 4.0)",
                    "LegalBench-RAG by Pipitone and Alami, 2024 (code MIT)"):
        assert licence in flowing


def test_the_tour_shows_every_screenshot_and_each_is_small():
    text = README.read_text("utf-8")
    shown = re.findall(r"!\[[^\]]*\]\((docs/images/[^)]+)\)", text)
    pages = ["home", "corpus", "summaries", "compare", "evaluate", "review"]
    assert shown == [f"docs/images/{page}.png" for page in pages]
    for path in shown:
        data = (ROOT / path).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 250_000, path


# -- links and commands -------------------------------------------------------------------------------------------

def _prose(text: str) -> str:
    """``text`` without fenced code blocks."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _prose(path.read_text("utf-8")), re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


@pytest.mark.parametrize("page", PAGES + NOTES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page):
    broken = []
    for target in LINK.findall(CODE_SPAN.sub("", _prose(page.read_text("utf-8")))):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(target)
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(target)
    assert broken == []


def test_no_markup_a_browser_would_hide():
    """``<title>`` outside a code span renders as nothing on GitHub: write it in backticks."""
    hidden = {}
    for page in PAGES:
        text = re.sub(r"<!--.*?-->", "", CODE_SPAN.sub("", _prose(page.read_text("utf-8"))), flags=re.S)
        found = re.findall(r"<[A-Za-z/][^>\n]*>", text)
        if found:
            hidden[page.name] = found
    assert hidden == {}


def _sac_commands() -> list[tuple[str, str]]:
    """Every ``sac ...`` command line the pages show, in a code block or a code span, with the page it is on."""
    found = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text("utf-8")
        blocks = "\n".join(FENCE.findall(text))
        lines = [line.strip() for line in blocks.splitlines()]
        spans = [span.strip("`") for span in CODE_SPAN.findall(_prose(text))]
        found += [(page.name, line) for line in lines + spans if re.match(r"^sac( |$)", line)]
    return found


@cache
def _help(*command: str) -> str:
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "sac", *command, "--help"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, f"sac {' '.join(command)} --help: {done.stderr[-500:]}"
    return done.stdout


@pytest.mark.slow
def test_every_sac_command_shown_exists_with_the_flags_shown():
    commands = _sac_commands()
    assert len(commands) >= 20
    top = _help()
    wrong = []
    for page, line in commands:
        words = shlex.split(line, comments=True)
        if len(words) < 2 or words[1].startswith(("-", "<")):  # `sac --help`, `sac <command> --help`
            continue
        command = tuple(words[1:3]) if words[1] == "benchmark" else (words[1],)
        if not re.search(rf"\b{re.escape(command[0])}\b", top):
            wrong.append(f"{page}: {line}")
            continue
        text = _help(*command)
        flags = [w.split("=", 1)[0] for w in words[len(command) + 1:] if w.startswith("--")]
        wrong += [f"{page}: {line} ({flag})" for flag in flags if not re.search(rf"{re.escape(flag)}\b", text)]
    assert wrong == []


# -- the notes ----------------------------------------------------------------------------------------------------

def test_each_note_is_a_dated_file_listed_in_the_index():
    index = (BENCH / "notes" / "README.md").read_text("utf-8")
    notes = [p for p in NOTES if p.name != "README.md"]
    assert len(notes) >= 40
    for note in notes:
        assert re.fullmatch(r"20\d\d-\d\d-\d\d-[a-z0-9-]+\.md", note.name), note.name
        assert note.read_text("utf-8").startswith("# "), note.name
        assert f"]({note.name})" in index, note.name
    assert len((BENCH / "README.md").read_text("utf-8").splitlines()) <= 120
