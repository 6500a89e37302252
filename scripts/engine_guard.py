"""The engine guard: what sqitch deploys is what sql/engine/ says (SPEC 1).

A schema is read from the catalogs into a flat map, object name -> definition: functions (signature, body,
language, volatility, strictness, SECURITY DEFINER, SET options, cost, rows, privileges, comment), tables
(columns with types, defaults, identity and NOT NULL; constraints; indexes; triggers; storage options;
persistence; inheritance; privileges; comments; the rows a fresh database starts with), views, sequences,
types, and the schema itself. Two maps are compared key by key, and every difference is reported with the
object's name and both versions.

Used by scripts/engine-guard.sh (in `make test`) and by tests/test_engine_guard.py, which plants each kind of
drift and sees the guard fail.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rework  # noqa: E402  (scripts/rework.py: how a deploy script wraps its engine file)

Snapshot = dict[str, str]

# Each query returns (object name, aspect, definition) rows for the schemas in %(schemas)s.
_QUERIES: tuple[str, ...] = (
    # The schemas themselves.
    """
    SELECT 'schema ' || n.nspname, 'comment', coalesce(obj_description(n.oid, 'pg_namespace'), '<none>')
      FROM pg_namespace n WHERE n.nspname = ANY (%(schemas)s)
    UNION ALL
    SELECT 'schema ' || n.nspname, 'privileges', coalesce(array_to_string(ARRAY(
               SELECT a::text FROM unnest(n.nspacl) a ORDER BY 1), ' '), '<default>')
      FROM pg_namespace n WHERE n.nspname = ANY (%(schemas)s)
    """,
    # Functions and procedures: everything CREATE FUNCTION can say, and what is said of them afterwards.
    """
    SELECT 'function ' || p.oid::regprocedure::text, a.aspect, a.value
      FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      JOIN pg_language l ON l.oid = p.prolang
     CROSS JOIN LATERAL (VALUES
         ('arguments', pg_get_function_arguments(p.oid)),
         ('returns', coalesce(pg_get_function_result(p.oid), '<procedure>')),
         ('language', l.lanname),
         ('attributes', concat_ws(' ', 'volatility=' || p.provolatile::text, 'strict=' || p.proisstrict,
                                  'security_definer=' || p.prosecdef, 'leakproof=' || p.proleakproof,
                                  'parallel=' || p.proparallel::text, 'cost=' || p.procost, 'rows=' || p.prorows,
                                  'kind=' || p.prokind::text)),
         ('settings', coalesce(array_to_string(ARRAY(SELECT c FROM unnest(p.proconfig) c ORDER BY 1), ' '),
                               '<none>')),
         ('body', p.prosrc),
         ('privileges', coalesce(array_to_string(ARRAY(SELECT a::text FROM unnest(p.proacl) a ORDER BY 1), ' '),
                                 '<default>')),
         ('comment', coalesce(obj_description(p.oid, 'pg_proc'), '<none>'))
     ) AS a(aspect, value)
     WHERE n.nspname = ANY (%(schemas)s)
    """,
    # Relations: tables, views, sequences, composite types.
    """
    SELECT format('%%s %%s', CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view'
                                            WHEN 'm' THEN 'materialized view' WHEN 'S' THEN 'sequence'
                                            WHEN 'c' THEN 'type' WHEN 'f' THEN 'foreign table' END,
                  c.oid::regclass::text),
           a.aspect, a.value
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     CROSS JOIN LATERAL (VALUES
         ('kind', c.relkind::text || ' persistence=' || c.relpersistence::text || ' rowsecurity=' || c.relrowsecurity
                  || ' replica_identity=' || c.relreplident::text),
         ('storage options', coalesce(array_to_string(ARRAY(SELECT o FROM unnest(c.reloptions) o ORDER BY 1), ' '),
                                      '<none>')),
         ('privileges', coalesce(array_to_string(ARRAY(SELECT a::text FROM unnest(c.relacl) a ORDER BY 1), ' '),
                                 '<default>')),
         ('comment', coalesce(obj_description(c.oid, 'pg_class'), '<none>')),
         ('inherits', coalesce((SELECT string_agg(i.inhparent::regclass::text, ', ' ORDER BY i.inhseqno)
                                  FROM pg_inherits i WHERE i.inhrelid = c.oid), '<none>')),
         ('definition', CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END),
         ('sequence', (SELECT format('%%s start %%s increment %%s min %%s max %%s cache %%s cycle %%s',
                                     s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmin, s.seqmax,
                                     s.seqcache, s.seqcycle)
                         FROM pg_sequence s WHERE s.seqrelid = c.oid)),
         ('owned by', (SELECT format('%%s.%%s', d.refobjid::regclass, att.attname)
                         FROM pg_depend d
                         JOIN pg_attribute att ON att.attrelid = d.refobjid AND att.attnum = d.refobjsubid
                        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')
                          AND c.relkind = 'S'))
     ) AS a(aspect, value)
     WHERE n.nspname = ANY (%(schemas)s) AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'c', 'f')
       AND a.value IS NOT NULL
    """,
    # Columns, in order (a column's position is part of the table: SELECT * and row types see it).
    """
    SELECT format('%%s %%s', CASE c.relkind WHEN 'c' THEN 'type' WHEN 'v' THEN 'view' ELSE 'table' END,
                  c.oid::regclass::text),
           'columns',
           string_agg(format('%%s %%s%%s%%s%%s%%s%%s%%s', att.attname, format_type(att.atttypid, att.atttypmod),
                             CASE WHEN att.attnotnull THEN ' not null' ELSE '' END,
                             CASE WHEN att.attidentity <> '' THEN ' identity ' || att.attidentity::text ELSE '' END,
                             CASE WHEN att.attgenerated <> '' THEN ' generated' ELSE '' END,
                             CASE WHEN ad.adbin IS NOT NULL THEN ' default ' || pg_get_expr(ad.adbin, ad.adrelid)
                                  ELSE '' END,
                             CASE WHEN att.attcollation <> 0 AND att.attcollation <> ty.typcollation
                                  THEN ' collate ' || att.attcollation::regcollation::text ELSE '' END,
                             CASE WHEN att.attstorage <> ty.typstorage THEN ' storage ' || att.attstorage::text
                                  ELSE '' END),
                      E'\n' ORDER BY att.attnum)
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute att ON att.attrelid = c.oid AND att.attnum > 0 AND NOT att.attisdropped
      JOIN pg_type ty ON ty.oid = att.atttypid
      LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = att.attnum
     WHERE n.nspname = ANY (%(schemas)s) AND c.relkind IN ('r', 'p', 'v', 'm', 'c', 'f')
     GROUP BY c.oid, c.relkind
    UNION ALL
    SELECT 'column ' || c.oid::regclass::text || '.' || att.attname, 'comment', d.description
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute att ON att.attrelid = c.oid AND att.attnum > 0 AND NOT att.attisdropped
      JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = att.attnum
     WHERE n.nspname = ANY (%(schemas)s)
    UNION ALL
    SELECT 'column ' || c.oid::regclass::text || '.' || att.attname, 'privileges',
           array_to_string(ARRAY(SELECT a::text FROM unnest(att.attacl) a ORDER BY 1), ' ')
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute att ON att.attrelid = c.oid AND att.attnum > 0 AND NOT att.attisdropped
     WHERE n.nspname = ANY (%(schemas)s) AND att.attacl IS NOT NULL
    """,
    # Constraints (of tables and of domains), by name.
    """
    SELECT 'constraint ' || coalesce(con.conrelid::regclass::text, con.contypid::regtype::text) || '.' || con.conname,
           'definition', con.contype::text || ' ' || pg_get_constraintdef(con.oid)
                         || CASE WHEN con.condeferrable THEN ' deferrable' ELSE '' END
                         || CASE WHEN con.condeferred THEN ' deferred' ELSE '' END
      FROM pg_constraint con
      JOIN pg_namespace n ON n.oid = con.connamespace
     WHERE n.nspname = ANY (%(schemas)s)
    UNION ALL
    SELECT 'constraint ' || coalesce(con.conrelid::regclass::text, con.contypid::regtype::text) || '.' || con.conname,
           'comment', d.description
      FROM pg_constraint con
      JOIN pg_namespace n ON n.oid = con.connamespace
      JOIN pg_description d ON d.objoid = con.oid AND d.classoid = 'pg_constraint'::regclass
     WHERE n.nspname = ANY (%(schemas)s)
    """,
    # Indexes, with their options (pg_get_indexdef says USING, columns, INCLUDE, WHERE; reloptions the rest).
    """
    SELECT 'index ' || i.indexrelid::regclass::text, a.aspect, a.value
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     CROSS JOIN LATERAL (VALUES
         ('definition', pg_get_indexdef(i.indexrelid)),
         ('storage options', coalesce(array_to_string(ARRAY(SELECT o FROM unnest(c.reloptions) o ORDER BY 1), ' '),
                                      '<none>')),
         ('comment', coalesce(obj_description(c.oid, 'pg_class'), '<none>'))
     ) AS a(aspect, value)
     WHERE n.nspname = ANY (%(schemas)s)
    """,
    # Triggers (not the internal ones of constraints).
    """
    SELECT 'trigger ' || t.tgrelid::regclass::text || '.' || t.tgname, 'definition',
           pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
      FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ANY (%(schemas)s) AND NOT t.tgisinternal
    """,
    # Types other than a table's row type: composites (their columns are above), domains, enums, ranges.
    """
    SELECT 'type ' || t.oid::regtype::text, 'definition',
           concat_ws(' ', 'kind=' || t.typtype::text,
                     CASE WHEN t.typtype = 'd' THEN 'base=' || format_type(t.typbasetype, t.typtypmod)
                                                     || ' not_null=' || t.typnotnull
                                                     || ' default=' || coalesce(t.typdefault, '<none>') END,
                     CASE WHEN t.typtype = 'e'
                          THEN 'labels=' || (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
                                               FROM pg_enum e WHERE e.enumtypid = t.oid) END,
                     'comment=' || coalesce(obj_description(t.oid, 'pg_type'), '<none>'),
                     'privileges=' || coalesce(array_to_string(ARRAY(SELECT a::text FROM unnest(t.typacl) a ORDER BY 1),
                                                               ' '), '<default>'))
      FROM pg_type t
      JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = ANY (%(schemas)s) AND t.typtype IN ('c', 'd', 'e', 'r')
       AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')
    """,
    # Rules and row-level security policies, should any appear.
    """
    SELECT 'rule ' || r.ev_class::regclass::text || '.' || r.rulename, 'definition', pg_get_ruledef(r.oid)
      FROM pg_rewrite r
      JOIN pg_class c ON c.oid = r.ev_class
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ANY (%(schemas)s) AND r.rulename <> '_RETURN'
    UNION ALL
    SELECT 'policy ' || p.polrelid::regclass::text || '.' || p.polname, 'definition',
           concat_ws(' ', p.polcmd::text, p.polpermissive, p.polroles::text, pg_get_expr(p.polqual, p.polrelid),
                     pg_get_expr(p.polwithcheck, p.polrelid))
      FROM pg_policy p
      JOIN pg_class c ON c.oid = p.polrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ANY (%(schemas)s)
    """,
)


def snapshot(dsn: str, schemas: Iterable[str] = ("cyclone",)) -> Snapshot:
    """Every object of the schemas, as `"<kind> <name> · <aspect>" -> definition`."""
    names = list(schemas)
    out: Snapshot = {}
    with psycopg.connect(dsn) as conn:
        # Names print unqualified only where the search path reaches them: keep it empty so both sides agree.
        conn.execute("SET search_path = ''")
        for query in _QUERIES:
            for name, aspect, value in conn.execute(query, {"schemas": names}):
                out[f"{name} · {aspect}"] = value
        # The rows a fresh database starts with (the clock's row, bucket 0): seed data is part of the schema.
        tables = conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = ANY (%(schemas)s) AND c.relkind IN ('r', 'p') ORDER BY 1",
            {"schemas": names}).fetchall()
        for (table,) in tables:
            row = conn.execute(
                sql.SQL("SELECT string_agg(t::text, E'\\n' ORDER BY t::text) FROM ONLY {} t").format(
                    sql.SQL(table))).fetchone()
            if row is not None and row[0] is not None:
                out[f"table {table} · rows"] = row[0]
    return out


def compare(deployed: Snapshot, engine: Snapshot, *, left: str = "sqitch", right: str = "engine") -> list[str]:
    """The differences, one report each: the object and aspect, then both versions (a diff when long)."""
    reports = []
    for key in sorted(deployed.keys() | engine.keys()):
        a, b = deployed.get(key), engine.get(key)
        if a == b:
            continue
        if a is None or b is None:
            where = right if a is None else left
            reports.append(f"{key}: only in {where}:\n    {(a if b is None else b)!s:.2000}")
        elif "\n" in a or "\n" in b or len(a) + len(b) > 200:
            diff = difflib.unified_diff(a.splitlines(), b.splitlines(), left, right, lineterm="", n=2)
            reports.append(f"{key}: differs:\n" + "\n".join("    " + line for line in diff))
        else:
            reports.append(f"{key}: differs:\n    {left}: {a}\n    {right}: {b}")
    return reports


def copies(project: Path) -> list[str]:
    """Each engine file named after a change is that change's newest deploy script, wrapped (scripts/rework.py).

    sql/engine/NN_<name>.sql is the engine file of change <name>; files whose name ends in _tables hold tables,
    which sqitch reaches by ALTERs, and are compared through the catalogs only.
    """
    changes = {line.split()[0] for line in (project / "sqitch.plan").read_text().splitlines()
               if line.strip() and not line.startswith(("%", "#", "@"))}
    reports = []
    for engine in sorted((project / "sql" / "engine").glob("*.sql")):
        name = engine.stem.split("_", 1)[1] if "_" in engine.stem else engine.stem
        relative = engine.relative_to(project).as_posix()
        if name.endswith("_tables"):
            continue
        if name not in changes:
            reports.append(f"{relative}: no change {name!r} in sqitch.plan (a table file's name ends in _tables)")
            continue
        deploy = project / "sql" / "deploy" / f"{name}.sql"
        if rework.copied_body(deploy.read_text()) != engine.read_text().strip("\n"):
            reports.append(f"{relative}: sql/deploy/{name}.sql is not a copy of it; "
                           f"ship the engine file with `make rework CHANGE={name} NOTE=\"...\"`")
    return reports


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    compare_args = commands.add_parser("compare", help="compare the schemas of two databases")
    compare_args.add_argument("left_dsn")
    compare_args.add_argument("right_dsn")
    compare_args.add_argument("schemas", nargs="*", default=["cyclone"])
    compare_args.add_argument("--left", default="sqitch")
    compare_args.add_argument("--right", default="engine")
    copies_args = commands.add_parser("copies", help="check that each change's deploy script copies its engine file")
    copies_args.add_argument("project", nargs="?", default=".")
    args = parser.parse_args(argv)
    if args.command == "copies":
        reports = copies(Path(args.project))
        what = "deploy scripts that are not copies of their engine files"
    else:
        reports = compare(snapshot(args.left_dsn, args.schemas), snapshot(args.right_dsn, args.schemas),
                          left=args.left, right=args.right)
        what = f"difference(s) between {args.left} and {args.right}"
    for report in reports:
        print(report)
    if reports:
        print(f"engine guard: {len(reports)} {what}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
