"""Reads the sqitch project as text (no database): the plan's changes with
their dependencies, each change's deploy scripts (reworked versions included),
and the engine functions each script defines and calls.

Used by the guards in test_sql_guards.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHANGE = re.compile(r"^(?P<name>[A-Za-z_][\w-]*)(?:\s+\[(?P<deps>[^\]]*)\])?\s+\d{4}-")
_TAG = re.compile(r"^@(?P<tag>[\w.-]+)\s")
_DEFINES = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+cyclone\.(\w+)\s*\(", re.IGNORECASE)
_CALLS = re.compile(r"(?<![\w.])(?:cyclone\.)?(\w+)\s*\(")


@dataclass
class Entry:
    """One line of the plan that deploys a change (a reworked change has several)."""

    name: str
    deps: list[str]
    #: tags between this entry and the rework of the same change (empty for the newest entry)
    rework_tags: list[str] = field(default_factory=list)
    reworked: bool = False

    @property
    def dep_names(self) -> set[str]:
        """The required changes' names, without an ``@tag`` (``claim@v0.2.0`` is ``claim``)."""
        return {d.split("@", 1)[0] for d in self.deps if not d.startswith("!")}

    def script(self, top: Path, kind: str = "deploy") -> Path:
        """The script sqitch runs for this entry: ``name@TAG.sql`` for a reworked
        entry (the first tag between it and its rework that has a file), else ``name.sql``."""
        if not self.reworked:
            return top / kind / f"{self.name}.sql"
        candidates = [top / kind / f"{self.name}@{tag}.sql" for tag in self.rework_tags]
        return next((p for p in candidates if p.exists()), candidates[0])


def read_plan(plan: Path) -> list[Entry]:
    entries: list[Entry] = []
    latest: dict[str, Entry] = {}
    for raw in plan.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("%", "#")):
            continue
        if m := _TAG.match(line):
            for entry in latest.values():
                entry.rework_tags.append(m["tag"])
            continue
        m = _CHANGE.match(line)
        if not m:
            raise ValueError(f"{plan}: cannot read plan line {raw!r}")
        entry = Entry(m["name"], (m["deps"] or "").split())
        if previous := latest.get(entry.name):
            previous.reworked = True
            # An entry only looks for tags up to its rework.
            del latest[entry.name]
        entries.append(entry)
        latest[entry.name] = entry
    return entries


def strip_comments(sql: str) -> str:
    """The SQL with ``--`` and ``/* */`` comments removed (string literals kept)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif sql[i] == "'":
            j = i + 1
            while j < n:
                if sql[j] == "'" and sql.startswith("''", j):
                    j += 2
                elif sql[j] == "'":
                    break
                else:
                    j += 1
            out.append(sql[i : j + 1])
            i = j + 1
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


def strip_strings(sql: str) -> str:
    """The SQL with single-quoted literals emptied (comments must be gone already)."""
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def code(path: Path) -> str:
    """A script's code: no comments, no string literals."""
    return strip_strings(strip_comments(path.read_text()))


def defined_functions(path: Path) -> set[str]:
    return set(_DEFINES.findall(code(path)))


def called_functions(path: Path, engine: set[str]) -> set[str]:
    """Engine functions the script calls (``cyclone.f(`` or a bare ``f(``, where
    f is a name in ``engine``); a function's own CREATE line,
    COMMENT ON, GRANT, REVOKE and DROP lines are not calls."""
    text = code(path)
    text = _DEFINES.sub(" ", text)
    text = re.sub(r"\b(?:COMMENT\s+ON|GRANT|REVOKE|DROP)\b[^;]*;", " ", text, flags=re.IGNORECASE)
    # Only engine functions: "INSERT INTO cyclone.t (" is no call.
    return {name for name in _CALLS.findall(text) if name in engine}


def requires_header(path: Path) -> list[str] | None:
    """The names on a deploy script's ``-- requires:`` line (None without one)."""
    for line in path.read_text().splitlines()[:5]:
        if m := re.match(r"^--\s*requires:\s*(.*)$", line):
            value = m[1].strip()
            return [] if value in ("", "(none)") else value.split()
    return None


def deploy_scripts(top: Path, entries: list[Entry]) -> Iterator[tuple[Entry, Path]]:
    for entry in entries:
        yield entry, entry.script(top)
