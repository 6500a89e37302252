"""Ship an edited engine file as its sqitch change (docs/architecture.md, "Changing the engine").

    scripts/rework.py CHANGE "NOTE" [--project DIR]        (make rework CHANGE=claim NOTE="...")

sql/engine/NN_<CHANGE>.sql is the change's complete current source. This writes the change's newest deploy
script as a complete copy of it, wrapped in one transaction:

- If the change is released (a tag follows its newest line in the plan), `sqitch rework CHANGE -n NOTE` first:
  sqitch keeps the released scripts as <CHANGE>@<tag>.sql and adds the plan line; the new revert is the
  previous deploy script (re-running it restores the previous version of every function, view and trigger it
  created), plus a DROP of each function the new version adds; the verify stays as it was, to extend by hand.
- If the change is not released yet (its newest line comes after the last tag), its deploy script is simply
  written again: an unreleased script is still the author's.

Tables are not reworked: a table change is a hand-written ALTER in a new change, and the engine guard
(scripts/engine-guard.sh) proves it ends where the engine's CREATE TABLE says.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

DEPLOY_NOTICE = ("-- A complete copy of {engine}, written by scripts/rework.py: read and edit that file, "
                 "not this one.")


def engine_file(project: Path, change: str) -> Path:
    """The engine file of a change: sql/engine/NN_<change>.sql, exactly one."""
    found = sorted((project / "sql" / "engine").glob(f"[0-9][0-9]_{change}.sql"))
    if len(found) != 1:
        raise SystemExit(f"rework: no single engine file sql/engine/NN_{change}.sql ({len(found)} found)")
    return found[0]


def deploy_copy(project: Path, change: str, engine: Path) -> str:
    """The deploy script that is a complete copy of the engine file, under a header that names it and the
    changes the plan says it requires."""
    relative = engine.relative_to(project).as_posix()
    body = engine.read_text().strip("\n")
    requires = " ".join(newest_requires(project, change)) or "(none)"
    return (f"-- Deploy {plan_project(project)}:{change}\n-- requires: {requires}\n"
            f"{DEPLOY_NOTICE.format(engine=relative)}\nBEGIN;\n\n{body}\n\nCOMMIT;\n")


def copied_body(deploy_text: str) -> str | None:
    """What a deploy script wraps between its BEGIN; and COMMIT; lines (None if it is not such a copy)."""
    match = re.search(r"^BEGIN;\n\n(.*)\n\nCOMMIT;\n\Z", deploy_text, re.S | re.M)
    return match.group(1) if match else None


def plan_project(project: Path) -> str:
    for line in (project / "sqitch.plan").read_text().splitlines():
        if line.startswith("%project="):
            return line.split("=", 1)[1].strip()
    raise SystemExit("rework: sqitch.plan names no %project")


def plan_lines(project: Path) -> list[str]:
    return [line for line in (project / "sqitch.plan").read_text().splitlines()
            if line.strip() and not line.startswith(("%", "#"))]


def newest_requires(project: Path, change: str) -> list[str]:
    """What the change's newest plan line requires, as written (`claim@v0.17.0 tables ...`)."""
    lines = [line for line in plan_lines(project) if line.split()[0] == change]
    if not lines:
        raise SystemExit(f"rework: the plan has no change {change!r}")
    match = re.match(r"^\S+\s+\[([^\]]*)\]", lines[-1])
    return match.group(1).split() if match else []


def is_released(project: Path, change: str) -> bool:
    """A tag follows the change's newest line in the plan."""
    lines = plan_lines(project)
    newest = max((i for i, line in enumerate(lines) if line.split()[0] == change), default=None)
    if newest is None:
        raise SystemExit(f"rework: the plan has no change {change!r}")
    return any(line.startswith("@") for line in lines[newest + 1:])


_CREATE_FUNCTION = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([\w.]+)\s*\((.*?)\)\s*RETURNS", re.I | re.S)


def _argument_types(arguments: str) -> str:
    """`p_a int DEFAULT 1, OUT p_b text` -> `int` (input types only, as DROP FUNCTION wants them)."""
    parts, depth, current = [], 0, ""
    for char in arguments:
        depth += char in "(["
        depth -= char in ")]"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    types = []
    for part in (p.strip() for p in parts if p.strip()):
        words = re.split(r"\s+DEFAULT\s+|\s*=\s*", part, maxsplit=1, flags=re.I)[0].split()
        mode = words.pop(0).upper() if words[0].upper() in ("IN", "OUT", "INOUT", "VARIADIC") else "IN"
        if mode == "OUT":
            continue
        named = len(words) > 1 and words[0].lower().startswith("p_")  # the house names every parameter p_...
        types.append(" ".join(words[1:] if named else words))
    return ", ".join(types)


def functions(text: str) -> dict[str, str]:
    """Functions a script creates: `schema.name(types)` -> name, by a light parse of its CREATE statements."""
    return {f"{name}({_argument_types(args)})": name for name, args in _CREATE_FUNCTION.findall(text)}


def _arity(signature: str) -> int:
    """`cyclone.f(int, text[])` -> 2."""
    arguments = signature[signature.index("(") + 1:-1].strip()
    return arguments.count(",") + 1 if arguments else 0


def revert_script(project: Path, change: str, previous: Path, new_deploy: str) -> str:
    previous_text = previous.read_text()
    # By name and number of arguments: the two scripts may spell a type differently (int, integer); the
    # guard's revert check catches the rest.
    def shapes(text: str) -> set[tuple[str, int]]:
        return {(name, _arity(signature)) for signature, name in functions(text).items()}
    before = shapes(previous_text)
    added = sorted(signature for signature, name in functions(new_deploy).items()
                   if (name, _arity(signature)) not in before)
    body = copied_body(previous_text)
    if body is None:  # an older script with its own wrapping: take what lies between BEGIN and COMMIT
        match = re.search(r"^BEGIN;\s*\n(.*)^COMMIT;", previous_text, re.S | re.M)
        if not match:
            raise SystemExit(f"rework: {previous} has no BEGIN; ... COMMIT; to take the previous version from")
        body = match.group(1).strip("\n")
    drops = "".join(f"DROP FUNCTION IF EXISTS {signature};\n" for signature in added)
    return (f"-- Revert {plan_project(project)}:{change} to its previous version: the deploy script it had before\n"
            f"-- ({previous.relative_to(project).as_posix()}), and a drop of each function the new version added.\n"
            f"BEGIN;\n\n{drops}{chr(10) if drops else ''}{body}\n\nCOMMIT;\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("change")
    parser.add_argument("note")
    parser.add_argument("--project", default=".", help="the sqitch project's folder (router for the router)")
    parser.add_argument("--requires", action="append", default=[], metavar="CHANGE",
                        help="a change the new version requires beyond the previous version's (repeatable)")
    args = parser.parse_args(argv)
    project = Path(args.project).resolve()
    if not args.note.strip():
        raise SystemExit("rework: NOTE must say why the change changes")
    engine = engine_file(project, args.change)
    deploy = project / "sql" / "deploy" / f"{args.change}.sql"
    new_deploy = deploy_copy(project, args.change, engine)
    if not is_released(project, args.change):
        deploy.write_text(new_deploy)
        print(f"rework: {args.change} is not released yet; {deploy.relative_to(project)} is a copy of "
              f"{engine.relative_to(project)} again")
        return 0
    # The rework requires what the previous version required (sqitch adds the previous version itself), and
    # whatever --requires names: a change whose functions the new version calls (the SQL guards check it).
    requires = [d for d in newest_requires(project, args.change) if not d.startswith(args.change + "@")]
    requires += [d for d in args.requires if d not in requires]
    subprocess.run(["sqitch", "rework", args.change, "-n", args.note,
                    *(arg for d in requires for arg in ("-r", d))],
                   cwd=project, check=True, stdout=subprocess.DEVNULL)
    # sqitch names the kept copy after a tag that follows the previous version: the new line requires it.
    kept = next(d for d in newest_requires(project, args.change) if d.startswith(args.change + "@"))
    previous = project / "sql" / "deploy" / f"{kept}.sql"
    new_deploy = deploy_copy(project, args.change, engine)
    deploy.write_text(new_deploy)
    (project / "sql" / "revert" / f"{args.change}.sql").write_text(
        revert_script(project, args.change, previous, new_deploy))
    print(f"rework: {args.change} reworked after {kept.split('@', 1)[1]}: sql/deploy/{args.change}.sql is a copy of "
          f"{engine.relative_to(project)}; its revert is the previous deploy script.\n"
          f"Next: extend sql/verify/{args.change}.sql to check the new behaviour, then scripts/engine-guard.sh.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
