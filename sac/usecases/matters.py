"""Matters: a firm's workspaces kept apart, and who may open which.

Without an access file (``SAC_ACCESS_FILE`` unset) there are no matters: one workspace, today's single-user
app. With one, the workspace root holds one whole workspace per matter, and the access file says which
signed-in identities may open which matters::

    <root>/
      audit.jsonl            the deployment's own log (matters removed, access refused)
      matters/<matter>/      a workspace: corpora, chroma/, summaries, runs, reviews, audit.jsonl

    # access.toml: identity (the signed-in e-mail, any case) -> the matters it may open
    [users]
    "alice@example.org" = ["acme-v-beta", "globex-licensing"]
    "bob@example.org" = ["acme-v-beta"]

``open_matter`` is the one way to a matter's configuration: it checks the access file every time it is
called (an edit takes effect at the next page load, no restart), records a refusal in the audit trail and
raises ``AccessDenied``. Corpora, runs, reviews and indexes are then only ever looked up inside that
matter's workspace (every name passes ``safe_name``), so a crafted URL or query parameter naming another
matter, corpus or run cannot reach outside it. With a Chroma server, each matter has its own database on
the server (``sac-<matter>``), so indexes of equally named corpora never meet.
"""

from __future__ import annotations

import dataclasses
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sac.audit import AuditLog
from sac.config import SacConfig
from sac.errors import AccessDenied, ConfigError
from sac.files import safe_name
from sac.index.client import drop_database, release_store
from sac.usecases.job_board import board

MATTERS_DIR = "matters"


def normalize_identity(identity: str) -> str:
    return identity.strip().lower()


@dataclass(frozen=True, slots=True)
class Access:
    """Who may open which matters, as the access file says (identities lower-cased)."""

    users: Mapping[str, tuple[str, ...]]
    path: Path | None = None

    @classmethod
    def load(cls, path: Path) -> Access:
        """Read an access file; a clear ConfigError for a missing file, bad TOML or a bad matter name."""
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"The access file {path} (SAC_ACCESS_FILE) does not exist") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(f"The access file {path} is not valid TOML: {err}") from None
        users = data.get("users")
        if not isinstance(users, dict):
            raise ConfigError(f'The access file {path} needs a [users] table: "alice@example.org" = ["matter-a"]')
        parsed: dict[str, tuple[str, ...]] = {}
        for identity, matters in users.items():
            if not isinstance(matters, list) or not all(isinstance(m, str) for m in matters):
                raise ConfigError(f"In {path}, {identity!r} must map to a list of matter names, got {matters!r}")
            key = normalize_identity(identity)
            parsed[key] = tuple(dict.fromkeys([*parsed.get(key, ()), *(safe_name(m, "matter name") for m in matters)]))
        return cls(parsed, Path(path))

    def matters_of(self, identity: str | None) -> list[str]:
        """The matters ``identity`` may open, sorted (none for no identity)."""
        if not identity:
            return []
        return sorted(self.users.get(normalize_identity(identity), ()))

    def all_matters(self) -> list[str]:
        return sorted({m for matters in self.users.values() for m in matters})


def access(config: SacConfig) -> Access | None:
    """The access file of this deployment, read now; None when matters are off."""
    return Access.load(config.access_file) if config.access_file else None


def matter_config(root: SacConfig, matter: str) -> SacConfig:
    """The configuration of ``matter``'s workspace under the root configuration (no access check: see open_matter)."""
    name = safe_name(matter, "matter name")
    database = f"sac-{name}" if root.chroma_url else None
    return dataclasses.replace(root, workspace=Path(root.workspace) / MATTERS_DIR / name, chroma_database=database)


def open_matter(root: SacConfig, identity: str | None, matter: str) -> SacConfig:
    """The configuration of ``matter`` for ``identity``: AccessDenied unless the access file lets it in.

    A refusal is recorded in the deployment's audit log (the root's), never in the matter's.
    """
    rules = access(root)
    if rules is None:
        raise ConfigError("Matters are off: set SAC_ACCESS_FILE to an access file to use them")
    safe_name(matter, "matter name")
    if not identity:
        raise AccessDenied("Sign in to open a matter: matters are only opened for a signed-in identity")
    if matter not in rules.matters_of(identity):
        AuditLog(Path(root.workspace)).record("access-denied", f"matter {matter!r}", identity=identity)
        raise AccessDenied(f"{identity} may not open the matter {matter!r}. Ask whoever keeps the access file to "
                           "add it.")
    return matter_config(root, matter)


def remove_matter(root: SacConfig, identity: str | None, matter: str) -> dict[str, Any]:
    """Delete a matter whole (``erase_matter``); only a user of the matter may."""
    open_matter(root, identity, matter)
    return erase_matter(root, matter)


def erase_matter(root: SacConfig, matter: str) -> dict[str, Any]:
    """Delete a matter whole, without an access check (the command line: whoever runs it holds the files anyway):
    its workspace folder (corpora, store, summaries, runs, reviews, its audit log) and, with a Chroma server, its
    database there. The removal is recorded in the deployment's audit log. The access file is not edited: the
    matter's name stays listed and opens empty."""
    config = matter_config(root, matter)
    folder = Path(config.workspace)
    running = board(folder).running()
    if running is not None:
        raise ConfigError(f"A build is running in the matter {matter!r} ({running.label}); remove it when the build "
                          "has finished. Nothing was removed.")
    files = sum(1 for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0
    dropped = drop_database(config)
    release_store(config)
    if folder.is_dir():
        shutil.rmtree(folder)
    detail = {"files": files, "server_database_dropped": dropped}
    AuditLog(Path(root.workspace)).record("delete", f"matter {matter!r}", **detail)
    return detail
