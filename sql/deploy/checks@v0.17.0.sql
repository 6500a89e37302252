-- Deploy cyclone:checks
-- requires: checks@v0.2.0 schema
-- The argument checks every public function shares: _require and _require_given
-- raise 22023 / 22004 naming the function, _check_payload caps inputs and
-- payloads, _bad_definition is the one way a definition problem is reported,
-- _name_problem says what is wrong with a name a user gives.
-- Internal: granted to no role.
BEGIN;

-- 22004 when p_ok is NULL (an argument was NULL), 22023 when it is false.
CREATE OR REPLACE FUNCTION cyclone._require(p_function text, p_ok boolean, p_message text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_ok IS NULL THEN
        RAISE EXCEPTION '%: % (got NULL)', p_function, p_message USING ERRCODE = '22004';
    ELSIF NOT p_ok THEN
        RAISE EXCEPTION '%: %', p_function, p_message USING ERRCODE = '22023';
    END IF;
END
$$;

-- Raises 22004 unless every required argument was given (p_given is the AND of
-- their IS NOT NULL tests).
CREATE OR REPLACE FUNCTION cyclone._require_given(p_function text, p_given boolean, p_message text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF NOT p_given THEN
        RAISE EXCEPTION '%: %', p_function, p_message USING ERRCODE = '22004';
    END IF;
END
$$;

-- Inputs (and signal payloads) are capped so one bad caller cannot bloat the
-- steps table: every step of a run carries a copy of the run input.
CREATE OR REPLACE FUNCTION cyclone._check_payload(p_what text, p_value jsonb)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF pg_column_size(p_value) > 1048576 THEN
        RAISE EXCEPTION '% is % bytes; the limit is 1 MiB', p_what, pg_column_size(p_value)
            USING ERRCODE = '22023';
    END IF;
END
$$;

-- A workflow definition problem (SPEC section 4): 22023 naming the workflow.
CREATE OR REPLACE FUNCTION cyclone._bad_definition(p_workflow text, p_problem text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    RAISE EXCEPTION 'workflow "%": %', p_workflow, p_problem USING ERRCODE = '22023';
END
$$;

-- What is wrong with a name a user gives (a workflow, node, handler or signal:
-- 1 to 200 characters, no control characters), or NULL when nothing is.
CREATE OR REPLACE FUNCTION cyclone._name_problem(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE
        WHEN p_name = '' THEN 'is empty'
        WHEN char_length(p_name) > 200 THEN format('is %s characters long (at most 200)', char_length(p_name))
        -- Unicode category Cc, spelled out: [[:cntrl:]] would follow the locale.
        WHEN p_name ~ '[\x01-\x1f\x7f-\x9f]' THEN 'contains a control character'
    END
$$;

-- A name as an error message shows it: quoted, control characters escaped,
-- cut after 40 characters.
CREATE OR REPLACE FUNCTION cyclone._shown(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT to_json(CASE WHEN char_length(p_name) > 40 THEN left(p_name, 40) || '...' ELSE p_name END)::text
$$;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;

COMMIT;
