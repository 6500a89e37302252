-- Deploy cyclone:audit
-- requires: tables
-- Who acted (SPEC 9's audit trail): cyclone_audit.actor defaults to
-- _actor(), the person a face names for one transaction (the setting
-- cyclone.actor, set with set_config(..., true) before the action) and the
-- role the session logged in as: 'alice via console_role'. Without the
-- setting it is the role alone, as before. The operator functions need no
-- change: their INSERTs take the column default. cyclone_v_audit lets clients
-- read the trail (the web console's run page).
BEGIN;

-- The actor of an audit row: the transaction's cyclone.actor (trimmed, control
-- characters dropped, at most 200 characters) 'via' the session's role, or the
-- role alone. Internal: the default of cyclone_audit.actor.
CREATE OR REPLACE FUNCTION cyclone._actor()
RETURNS text
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN n.name IS NULL THEN session_user::text ELSE format('%s via %s', n.name, session_user) END
      FROM (SELECT nullif(left(btrim(regexp_replace(coalesce(current_setting('cyclone.actor', true), ''),
                                                    '[\x01-\x1f\x7f-\x9f]', '', 'g')), 200), '') AS name) n
$$;
COMMENT ON FUNCTION cyclone._actor() IS
    'cyclone_audit.actor''s default: the cyclone.actor setting of the transaction via session_user, or session_user.';

ALTER TABLE cyclone.cyclone_audit ALTER COLUMN actor SET DEFAULT cyclone._actor();

CREATE OR REPLACE VIEW cyclone.cyclone_v_audit AS
SELECT a.id, a.at, a.run_id, a.node, a.action, a.reason, a.actor FROM cyclone.cyclone_audit a;
COMMENT ON VIEW cyclone.cyclone_v_audit IS 'Operator actions on runs: what, when, why and who (actor).';

GRANT SELECT ON cyclone.cyclone_v_audit TO cyclone_client, cyclone_admin;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;

COMMIT;
