-- @@ engine file of change audit; header of audit.sql:
-- Deploy cyclone:audit
-- requires: tables
-- Who acted (SPEC 9's audit trail): cyclone_audit.actor defaults to
-- _actor(), the person a face names for one transaction (the setting
-- cyclone.actor, set with set_config(..., true) before the action) and the
-- role the session logged in as: 'alice via console_role'. Without the
-- setting it is the role alone, as before. The operator functions need no
-- change: their INSERTs take the column default. cyclone_v_audit lets clients
-- read the trail (the web console's run page).
-- @@ plan notes of every version of this change:
-- @@ [audit.sql] cyclone_audit.actor names who acted: the transaction's cyclone.actor via the session role (_actor(), the column default); cyclone_v_audit for clients.

-- @@ last defined in audit.sql
-- The actor of an audit row: the transaction's cyclone.actor (trimmed, control
-- characters dropped, at most 200 characters) 'via' the session's role, or the
-- role alone. Internal: the default of cyclone_audit.actor.
CREATE OR REPLACE FUNCTION cyclone._actor()
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT CASE WHEN n.name IS NULL THEN session_user::text ELSE format('%s via %s', n.name, session_user) END
      FROM (SELECT nullif(left(btrim(regexp_replace(coalesce(current_setting('cyclone.actor', true), ''),
                                                    '[\x01-\x1f\x7f-\x9f]', '', 'g')), 200), '') AS name) n
$$;
COMMENT ON FUNCTION cyclone._actor() IS 'cyclone_audit.actor''s default: the cyclone.actor setting of the transaction via session_user, or session_user.';
REVOKE ALL ON FUNCTION cyclone._actor() FROM PUBLIC;
