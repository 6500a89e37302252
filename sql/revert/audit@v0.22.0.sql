-- Revert cyclone:audit to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

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

COMMIT;
