-- Deploy cyclone:audit
-- requires: audit@v0.22.0 tables
-- A complete copy of sql/engine/04_audit.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/04_audit.sql: change `audit` — who acted, for the operator audit trail (SPEC 9).
-- Owns: _actor(), the default of cyclone_audit.actor. (The change's view, cyclone_v_audit, is in
-- 15_views.sql with the other views.)
-- Requires: 00_schema.sql. It loads before the tables because cyclone_audit.actor's default calls it
-- (10_runs_tables.sql).
-- Called by: nobody directly: the operator actions (retry, retry_all, cancel, pause, resume; 29_operator.sql)
-- insert into cyclone_audit without an actor, and the default names who acted. A face (the web console, the
-- CLI) names the person for one transaction with set_config('cyclone.actor', 'alice', true) before the action;
-- the row then says 'alice via console_role'. Without the setting it is the session's role alone. Either is
-- followed by where the action came from, the session's application_name, which each face sets
-- ('cyclone-ui', 'cyclone-cli', 'cyclone' for the Python client, 'psql'...): 'alice via console_role from
-- cyclone-ui', 'admin_role from psql'; nothing when the session names none.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=audit NOTE="..."` (docs/architecture.md, Changing the engine).

-- The actor of an audit row: the transaction's cyclone.actor (trimmed, control characters dropped, at most 200
-- characters) 'via' session_user, or session_user alone when the setting is missing or empty; then 'from' the
-- session's application_name, cleaned the same way (at most 64 characters; PostgreSQL keeps 63 bytes of it),
-- when it is not empty: who acted, and from where (the console, the CLI, a SQL client; issue 36). session_user,
-- not current_user: inside the SECURITY DEFINER operator functions current_user is the owner, while
-- session_user is the role that logged in. Any role may set cyclone.actor, and any client its
-- application_name: both are what the session claims, so the role is always recorded beside them. Internal:
-- granted to no role; STABLE, as it reads settings.
CREATE OR REPLACE FUNCTION cyclone._actor()
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT CASE WHEN n.name IS NULL THEN session_user::text ELSE format('%s via %s', n.name, session_user) END
           || coalesce(' from ' || n.app, '')
      FROM (SELECT nullif(left(btrim(regexp_replace(coalesce(current_setting('cyclone.actor', true), ''),
                                                    '[\x01-\x1f\x7f-\x9f]', '', 'g')), 200), '') AS name,
                   nullif(left(btrim(regexp_replace(coalesce(current_setting('application_name', true), ''),
                                                    '[\x01-\x1f\x7f-\x9f]', '', 'g')), 64), '') AS app) n
$$;
COMMENT ON FUNCTION cyclone._actor() IS
    'cyclone_audit.actor''s default: the cyclone.actor setting of the transaction via session_user, or session_user; then from application_name (where the action came from), when set.';
REVOKE ALL ON FUNCTION cyclone._actor() FROM PUBLIC;

COMMIT;
