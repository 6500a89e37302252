-- sql/engine/03_checks.sql: change `checks` — the argument checks every public function shares.
-- Owns: _require and _require_given (22023 / 22004 naming the function); the limits on what the engine
-- stores from a caller: _payload_problem and _check_payload (any JSON a caller gives: at most 1 MiB, nested
-- at most 100 levels), _input_problem and _check_input (a run input: a JSON object within those limits),
-- _deadline_problem (a deadline or a retry delay: at most 1,000,000 days), _clipped (a long error text
-- cut with a marker); _bad_definition (the one way a workflow definition problem is reported), _name_problem (what is
-- wrong with a name a user gives) and _shown (a user's value as a message shows it).
-- Requires: 00_schema.sql only; it reads no table.
-- Called by: the public functions of the other files (define_workflow, submit, claim, complete, fail, signal,
-- the operator actions, schedules, limits, ...), inside their SECURITY DEFINER bodies. Internal: granted to no
-- role, and not SECURITY DEFINER (they run as their caller, who already is the owner). Each depends on its
-- arguments alone (raising an error is allowed) and takes no lock. IMMUTABLE, but for those that call
-- pg_column_size, format or an interval's text (STABLE in the catalog): a SQL function is inlined into its
-- caller's expression only when it is declared no less volatile than its body, and inlined is what makes
-- _payload_problem cost a fraction of a microsecond on the hot path (submit, complete).
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

-- What is wrong with a JSON value a caller gives the engine to store (a run input, a step output, a signal
-- payload, a schedule's input), or NULL when nothing is:
-- - over 1 MiB (pg_column_size: the value as PostgreSQL holds it, uncompressed for an argument a client
--   sent). Every step of a run carries a copy of the run input, and a step's output is copied into the run's
--   output and into each dependent's claim, so one bad caller could otherwise bloat the steps table.
-- - nested deeper than 100 levels: some value lies more than 100 levels below the top (the value itself is
--   level 0, what it holds level 1: in {"a": [1]} the 1 is at level 2). Whatever stores such a value hands
--   it to every reader, and readers decode JSON recursively: Python's json module fails with RecursionError
--   near 1,000 levels, and a 5,000-level input killed every worker that claimed it. 100 leaves room for
--   what the engine wraps around a value (a claim's deps, a run's output, 32 levels of child runs each
--   adding one level) and is more than any document a workflow needs.
-- The depth test is jsonb_path_exists(p_value, 'strict $.**{101}'): true when some item sits at level 101
-- (`.**{n}` yields the items at level n exactly, the value itself being level 0; strict, so arrays are
-- items, not unwrapped). It walks the value in C, down to level 101 at most, and stops at the first item it
-- finds there: about 0.5 microseconds for a small document, one pass over a 1 MiB one (measured 0.6 to 3 ms,
-- docs/sql-reference.md, Limits), 9 microseconds for the 5,000-level attack. A SQL function, so that a
-- caller's `IF cyclone._payload_problem(x) IS NOT NULL` is inlined into one expression; STABLE because
-- pg_column_size and format are. NULL for a NULL value.
CREATE OR REPLACE FUNCTION cyclone._payload_problem(p_value jsonb)
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT CASE
        WHEN pg_column_size(p_value) > 1048576
            THEN format('is %s bytes; the limit is 1 MiB', pg_column_size(p_value))
        WHEN jsonb_path_exists(p_value, 'strict $.**{101}')
            THEN 'is nested deeper than 100 levels; the limit is 100 levels'
    END
$$;
REVOKE ALL ON FUNCTION cyclone._payload_problem(jsonb) FROM PUBLIC;

-- 22023 when p_value breaks a limit of _payload_problem, with p_what (which argument, e.g. 'submit: p_input',
-- or which element of an array) in the message. The hot path tests _payload_problem inline and calls this
-- only to raise; the other callers (signal, schedule) call it directly. STABLE: _payload_problem is.
CREATE OR REPLACE FUNCTION cyclone._check_payload(p_what text, p_value jsonb)
RETURNS void
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_problem text := cyclone._payload_problem(p_value);
BEGIN
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION '% %', p_what, v_problem USING ERRCODE = '22023';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._check_payload(text,jsonb) FROM PUBLIC;

-- What is wrong with a run input (submit, submit_many), or NULL when nothing is: a run input is a JSON
-- object (a handler reads its fields, a limit's key is a path into it, a schedule adds scheduled_for to it;
-- schedule() already refused any other input), within the limits of _payload_problem. NULL for a NULL value
-- (the callers refuse a NULL input with 22004 first). SQL and STABLE, to be inlined (see _payload_problem).
CREATE OR REPLACE FUNCTION cyclone._input_problem(p_value jsonb)
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(p_value) <> 'object' THEN format('must be a JSON object (got %s)', jsonb_typeof(p_value))
        ELSE cyclone._payload_problem(p_value)
    END
$$;
REVOKE ALL ON FUNCTION cyclone._input_problem(jsonb) FROM PUBLIC;

-- 22023 when p_value is not a valid run input (_input_problem), with p_what in the message.
CREATE OR REPLACE FUNCTION cyclone._check_input(p_what text, p_value jsonb)
RETURNS void
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_problem text := cyclone._input_problem(p_value);
BEGIN
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION '% %', p_what, v_problem USING ERRCODE = '22023';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._check_input(text,jsonb) FROM PUBLIC;

-- What is wrong with a length of time the engine adds to cyclone.now() and stores (a run deadline:
-- submit's and submit_many's p_deadline, a schedule's runs'; a retry delay: fail's p_retry_in), or NULL when
-- nothing is: at most 1,000,000 days (about 2,700 years; an interval compares months as 30 days). The sum
-- (deadline_at, scheduled_at) must stay a timestamp every reader holds: past about 290,000 years
-- PostgreSQL raises 22008 on the addition (a 1,000,000-year deadline was that raw error, naming nothing),
-- and past the year 9999 Python's datetime cannot load the row at all. 1,000,000 days is the bound the
-- property tests of deadlines and retry delays already drew the line at (tests/test_bad_input.py).
-- NULL, zero and negative are no problem here: each caller says what they mean (no deadline, SPEC 5; the
-- default backoff, or 22023 for a negative delay). STABLE: an interval's text follows IntervalStyle.
CREATE OR REPLACE FUNCTION cyclone._deadline_problem(p_deadline interval)
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT CASE WHEN p_deadline > interval '1000000 days'
                THEN 'must be at most 1000000 days (got ' || p_deadline::text || ')' END
$$;
REVOKE ALL ON FUNCTION cyclone._deadline_problem(interval) FROM PUBLIC;

-- A text a caller has the engine store for others to read (fail's error, which the step, its error history
-- and the run's error show), cut when longer than 65,536 characters: its first and its last 32,000
-- characters are kept (a message starts with what failed; a traceback ends with where), with a marker line
-- between them that says how many characters were cut. Cut, not refused: a failure must be recorded even
-- when its text is huge (a refused fail would leave the step running until its lease expires). 65,536
-- characters is twice what the Python runtime keeps of an error (MAX_ERROR_CHARS, execution.py), so an
-- error from it is never cut here. NULL for NULL.
CREATE OR REPLACE FUNCTION cyclone._clipped(p_text text)
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT CASE
        WHEN char_length(p_text) <= 65536 THEN p_text
        ELSE left(p_text, 32000)
             || format(E'\n[... %s characters cut: the engine keeps the first and the last 32000 characters of a text over 65536 ...]\n',
                       char_length(p_text) - 64000)
             || right(p_text, 32000)
    END
$$;
REVOKE ALL ON FUNCTION cyclone._clipped(text) FROM PUBLIC;

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
