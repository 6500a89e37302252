-- Revert cyclone:checks to its previous version: the deploy script it had before
-- (sql/deploy/checks@v0.18.0.sql), and a drop of each function the new version added.
BEGIN;

DROP FUNCTION IF EXISTS cyclone._check_input(text, jsonb);
DROP FUNCTION IF EXISTS cyclone._clipped(text);
DROP FUNCTION IF EXISTS cyclone._deadline_problem(interval);
DROP FUNCTION IF EXISTS cyclone._input_problem(jsonb);
DROP FUNCTION IF EXISTS cyclone._payload_problem(jsonb);

-- sql/engine/03_checks.sql: change `checks` — the argument checks every public function shares.
-- Owns: _require and _require_given (22023 / 22004 naming the function), _check_payload (the 1 MiB cap on
-- inputs and payloads), _bad_definition (the one way a workflow definition problem is reported),
-- _name_problem (what is wrong with a name a user gives) and _shown (a user's value as a message shows it).
-- Requires: 00_schema.sql only; it reads no table.
-- Called by: the public functions of the other files (define_workflow, submit, claim, complete, fail, signal,
-- the operator actions, schedules, limits, ...), inside their SECURITY DEFINER bodies. Internal: granted to no
-- role, and not SECURITY DEFINER (they run as their caller, who already is the owner). IMMUTABLE: each depends
-- on its arguments alone (raising an error is allowed). They take no locks.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=checks NOTE="..."` (docs/architecture.md, Changing the engine).

-- One check of a public function's arguments: p_ok is the test (e.g. p_limit > 0), p_message says what was
-- wanted, both prefixed by p_function in the error. 22004 when p_ok is NULL (an argument it tests was NULL),
-- 22023 when it is false.
CREATE OR REPLACE FUNCTION cyclone._require(p_function text, p_ok boolean, p_message text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF p_ok IS NULL THEN
        RAISE EXCEPTION '%: % (got NULL)', p_function, p_message USING ERRCODE = '22004';
    ELSIF NOT p_ok THEN
        RAISE EXCEPTION '%: %', p_function, p_message USING ERRCODE = '22023';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._require(text,boolean,text) FROM PUBLIC;

-- Raises 22004 unless every required argument was given (p_given is the AND of
-- their IS NOT NULL tests), with p_message naming them.
CREATE OR REPLACE FUNCTION cyclone._require_given(p_function text, p_given boolean, p_message text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF NOT p_given THEN
        RAISE EXCEPTION '%: %', p_function, p_message USING ERRCODE = '22004';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._require_given(text,boolean,text) FROM PUBLIC;

-- 22023 when p_value (a run input, a signal payload, a schedule's input; p_what names it in the message) is
-- over 1 MiB. Inputs and payloads are capped so one bad caller cannot bloat the steps table: every step of a
-- run carries a copy of the run input.
CREATE OR REPLACE FUNCTION cyclone._check_payload(p_what text, p_value jsonb)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF pg_column_size(p_value) > 1048576 THEN
        RAISE EXCEPTION '% is % bytes; the limit is 1 MiB', p_what, pg_column_size(p_value)
            USING ERRCODE = '22023';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._check_payload(text,jsonb) FROM PUBLIC;

-- A workflow definition problem (SPEC section 4): 22023 naming the workflow. define_workflow's checks
-- (20_workflows.sql) report every problem through it, so they all read alike.
CREATE OR REPLACE FUNCTION cyclone._bad_definition(p_workflow text, p_problem text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    RAISE EXCEPTION 'workflow "%": %', p_workflow, p_problem USING ERRCODE = '22023';
END
$$;
REVOKE ALL ON FUNCTION cyclone._bad_definition(text,text) FROM PUBLIC;

-- What is wrong with a name a user gives (a workflow, node, handler or signal:
-- 1 to 200 characters, no control characters), or NULL when nothing is.
CREATE OR REPLACE FUNCTION cyclone._name_problem(p_name text)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE
        WHEN p_name = '' THEN 'is empty'
        WHEN char_length(p_name) > 200 THEN format('is %s characters long (at most 200)', char_length(p_name))
        -- Unicode category Cc, spelled out: [[:cntrl:]] would follow the locale.
        WHEN p_name ~ '[\x01-\x1f\x7f-\x9f]' THEN 'contains a control character'
    END
$$;
REVOKE ALL ON FUNCTION cyclone._name_problem(text) FROM PUBLIC;

-- A name (or any value a user gave) as an error message shows it: quoted, control characters escaped (as a
-- JSON string), cut after 40 characters, so a long or odd value cannot flood or garble a message.
CREATE OR REPLACE FUNCTION cyclone._shown(p_name text)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT to_json(CASE WHEN char_length(p_name) > 40 THEN left(p_name, 40) || '...' ELSE p_name END)::text
$$;
REVOKE ALL ON FUNCTION cyclone._shown(text) FROM PUBLIC;

COMMIT;
