-- Revert cyclone:workflows to its previous version: the deploy script it had before
-- (sql/deploy/workflows@v0.18.0.sql), and a drop of each function the new version added.
BEGIN;

DROP FUNCTION IF EXISTS cyclone._child_cycle(text, jsonb);
DROP FUNCTION IF EXISTS cyclone._unordered_nodes(integer, integer[], integer[]);

-- sql/engine/20_workflows.sql: change `workflows` — workflow definitions (SPEC 4).
-- define_workflow() validates a DAG definition, fills in every default and stores the
-- normalised form in cyclone_workflows, which submit (_start_runs) turns into steps as it
-- is. Any problem raises 22023 naming the workflow and the problem, before anything is
-- written. Owns define_workflow and the validation: _normalize_definition,
-- _check_definition_name, _definition_interval, _positive_int, and the SPEC 12 "limits"
-- (_definition_limits, _merge_limits).
-- Requires: 10_runs_tables.sql (cyclone_workflows), 11_limits_tables.sql (cyclone_limits),
-- 03_checks.sql (_bad_definition, _name_problem, _shown), 02_clock.sql (now).
-- Called by workers at start-up (cyclone_worker) and by operators (cyclone_admin).
-- Locks: no run or step. define_workflow takes the rows of the limits the definition
-- names (FOR KEY SHARE), then its own cyclone_workflows row (the upsert).
-- Helpers come first, define_workflow last.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=workflows NOTE="..."` (docs/architecture.md, Changing the engine).

-- 22023 (naming the workflow and p_what) unless p_value is a good name: 1 to 200
-- characters with no control characters (_name_problem). Every name a definition
-- gives goes through it: node names, and a node's handler, signal and child workflow.
CREATE OR REPLACE FUNCTION cyclone._check_definition_name(p_workflow text, p_what text, p_value text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_problem text := cyclone._name_problem(p_value);
BEGIN
    IF v_problem IS NOT NULL THEN
        PERFORM cyclone._bad_definition(p_workflow, format('%s %s %s', p_what, cyclone._shown(p_value), v_problem));
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._check_definition_name(text,text,text) FROM PUBLIC;

-- A positive interval from a definition field (a node's timeout or max_wait), or NULL
-- when the field is absent or JSON null. 22023 for a value that is not a string, does
-- not parse as an interval, or is not positive.
CREATE OR REPLACE FUNCTION cyclone._definition_interval(p_workflow text, p_node text, p_field text, p_value jsonb)
RETURNS interval
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_interval interval;
BEGIN
    IF p_value IS NULL OR p_value = 'null'::jsonb THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_value) <> 'string' THEN
        PERFORM cyclone._bad_definition(p_workflow,
            format('node "%s": %s must be an interval string such as "30 seconds"', p_node, p_field));
    END IF;
    BEGIN
        v_interval := (p_value #>> '{}')::interval;
    EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR interval_field_overflow THEN
        PERFORM cyclone._bad_definition(p_workflow,
            format('node "%s": %s %s is not an interval', p_node, p_field, p_value));
    END;
    IF v_interval <= interval '0' THEN
        PERFORM cyclone._bad_definition(p_workflow,
            format('node "%s": %s must be positive, got %s', p_node, p_field, p_value #>> '{}'));
    END IF;
    RETURN v_interval;
END
$$;
REVOKE ALL ON FUNCTION cyclone._definition_interval(text,text,text,jsonb) FROM PUBLIC;

-- A positive integer (1 to 2^31-1) from a definition field (the workflow's or a node's
-- max_attempts, p_where naming it), else 22023. A JSON number with no fraction, such as
-- 2.0, is the integer 2.
CREATE OR REPLACE FUNCTION cyclone._positive_int(p_workflow text, p_where text, p_value jsonb)
RETURNS integer
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF jsonb_typeof(p_value) <> 'number' OR (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric)
       OR (p_value #>> '{}')::numeric NOT BETWEEN 1 AND 2147483647 THEN
        PERFORM cyclone._bad_definition(p_workflow,
            format('%s must be a positive integer, got %s', p_where, p_value));
    END IF;
    RETURN (p_value #>> '{}')::numeric::int;  -- via numeric: JSON 2.0 is the integer 2
END
$$;
REVOKE ALL ON FUNCTION cyclone._positive_int(text,text,jsonb) FROM PUBLIC;

-- A "limits" list of a definition (p_where: 'limits' or 'node "x": limits'),
-- checked and normalised: [{"name": n}, {"name": n, "key": "a.b"}, ...]. An
-- unknown limit, a bad key or a name listed twice is 22023. Each limit's row is
-- taken FOR KEY SHARE, which drop_limit's FOR UPDATE conflicts with: a definition
-- never names a limit dropped under it. Volatile: it reads and locks cyclone_limits.
CREATE OR REPLACE FUNCTION cyclone._definition_limits(p_workflow text, p_where text, p_value jsonb)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_entry jsonb;
    v_name text;
    v_key text;
    v_names text[] := '{}'::text[];
    v_out jsonb := '[]'::jsonb;
BEGIN
    IF jsonb_typeof(p_value) IS DISTINCT FROM 'array' THEN
        PERFORM cyclone._bad_definition(p_workflow,
            format('%s must be an array of {"name": limit, "key": "dot.path"} objects', p_where));
    END IF;
    FOR v_entry IN SELECT e FROM jsonb_array_elements(p_value) e LOOP
        IF jsonb_typeof(v_entry) <> 'object' OR jsonb_typeof(v_entry -> 'name') IS DISTINCT FROM 'string'
           OR EXISTS (SELECT 1 FROM jsonb_object_keys(v_entry) k WHERE k NOT IN ('name', 'key')) THEN
            PERFORM cyclone._bad_definition(p_workflow,
                format('%s: each entry is {"name": limit} or {"name": limit, "key": "dot.path"}, got %s', p_where, v_entry));
        END IF;
        v_name := v_entry ->> 'name';
        -- FOR KEY SHARE: a concurrent drop_limit waits for this definition, or this for it.
        PERFORM 1 FROM cyclone_limits l WHERE l.name = v_name FOR KEY SHARE;
        IF NOT FOUND THEN
            PERFORM cyclone._bad_definition(p_workflow, format('%s: unknown limit %s', p_where, cyclone._shown(v_name)));
        END IF;
        IF v_name = ANY (v_names) THEN
            PERFORM cyclone._bad_definition(p_workflow, format('%s: limit %s is listed twice', p_where, cyclone._shown(v_name)));
        END IF;
        v_names := v_names || v_name;
        IF v_entry ? 'key' THEN
            v_key := v_entry ->> 'key';
            IF jsonb_typeof(v_entry -> 'key') <> 'string' OR v_key = '' OR '' = ANY (string_to_array(v_key, '.')) THEN
                PERFORM cyclone._bad_definition(p_workflow,
                    format('%s: the key of limit %s must be a dot path into the input such as "tenant.id", got %s',
                           p_where, cyclone._shown(v_name), v_entry -> 'key'));
            END IF;
            v_out := v_out || jsonb_build_array(jsonb_build_object('name', v_name, 'key', v_key));
        ELSE
            v_out := v_out || jsonb_build_array(jsonb_build_object('name', v_name));
        END IF;
    END LOOP;
    RETURN v_out;
END
$$;
REVOKE ALL ON FUNCTION cyclone._definition_limits(text,text,jsonb) FROM PUBLIC;

-- The limits a task node takes: the workflow's, then its own; a name at both
-- levels is taken once, in the workflow's position, with the node's key.
CREATE OR REPLACE FUNCTION cyclone._merge_limits(p_workflow_limits jsonb, p_node_limits jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT coalesce(jsonb_agg(m.entry ORDER BY m.ord), '[]'::jsonb)
      FROM (SELECT coalesce((SELECT n FROM jsonb_array_elements(p_node_limits) n WHERE n ->> 'name' = w ->> 'name'), w)
                       AS entry, o AS ord
              FROM jsonb_array_elements(p_workflow_limits) WITH ORDINALITY AS x(w, o)
            UNION ALL
            SELECT n, 1000000 + o
              FROM jsonb_array_elements(p_node_limits) WITH ORDINALITY AS y(n, o)
             WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_workflow_limits) w WHERE w ->> 'name' = n ->> 'name')) m
$$;
REVOKE ALL ON FUNCTION cyclone._merge_limits(jsonb,jsonb) FROM PUBLIC;

-- Checks a definition and returns it with every default filled in:
-- {"max_attempts": n, "nodes": [{name, kind, handler, deps, on_dep_failure,
--   max_attempts, priority, timeout, signal, workflow, max_wait[, limits]}, ...]
--  [, "description": d][, "limits": [...]]}; a task node lists "limits" only when it
-- takes one. Defaults (SPEC 4): kind task, handler the node name (always, for a wait
-- or child node), deps [], on_dep_failure fail_run, max_attempts the workflow's (25),
-- priority 0, a wait node's signal its name. 22023 for what the helpers above refuse,
-- and for an unknown key, an empty or missing node list, a node without a name or with
-- a duplicate one, an unknown kind, policy or dep, a dep listed twice, a field on a
-- kind it does not apply to, a child node without "workflow", a priority that is not
-- an integer within +-1,000,000, and a cycle (found last, by peeling the nodes layer by
-- layer). A child node's workflow need not exist yet: it is looked up when the node is
-- reached (_advance, 22_advance.sql).
CREATE OR REPLACE FUNCTION cyclone._normalize_definition(p_name text, p_definition jsonb)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_max_attempts int := 25;
    v_node jsonb;
    v_name text;
    v_kind text;
    v_policy text;
    v_deps jsonb;
    v_priority int;
    v_names text[] := '{}'::text[];
    v_nodes jsonb := '[]'::jsonb;
    v_key text;
    v_done text[] := '{}'::text[];
    v_next text[];
    v_limits jsonb := '[]'::jsonb;
    v_node_limits jsonb;
BEGIN
    IF jsonb_typeof(p_definition) IS DISTINCT FROM 'object' THEN
        PERFORM cyclone._bad_definition(p_name, 'the definition must be a JSON object');
    END IF;
    SELECT min(k) INTO v_key FROM jsonb_object_keys(p_definition) k
     WHERE k NOT IN ('nodes', 'max_attempts', 'description', 'limits');
    IF v_key IS NOT NULL THEN
        PERFORM cyclone._bad_definition(p_name, format('unknown key "%s"', v_key));
    END IF;
    IF p_definition ? 'max_attempts' THEN
        v_max_attempts := cyclone._positive_int(p_name, 'max_attempts', p_definition -> 'max_attempts');
    END IF;
    IF p_definition ? 'limits' THEN
        v_limits := cyclone._definition_limits(p_name, 'limits', p_definition -> 'limits');
    END IF;
    IF jsonb_typeof(p_definition -> 'nodes') IS DISTINCT FROM 'array'
       OR jsonb_array_length(p_definition -> 'nodes') = 0 THEN
        PERFORM cyclone._bad_definition(p_name, 'nodes must be a non-empty array');
    END IF;

    -- Names first, so that deps can be checked against all of them.
    FOR v_node IN SELECT value FROM jsonb_array_elements(p_definition -> 'nodes') LOOP
        IF jsonb_typeof(v_node) <> 'object' OR jsonb_typeof(v_node -> 'name') IS DISTINCT FROM 'string'
           OR v_node ->> 'name' = '' THEN
            PERFORM cyclone._bad_definition(p_name, format('every node needs a non-empty "name": %s', v_node));
        END IF;
        v_name := v_node ->> 'name';
        PERFORM cyclone._check_definition_name(p_name, 'node name', v_name);
        IF v_name = ANY (v_names) THEN
            PERFORM cyclone._bad_definition(p_name, format('duplicate node name "%s"', v_name));
        END IF;
        v_names := v_names || v_name;
    END LOOP;

    FOR v_node IN SELECT value FROM jsonb_array_elements(p_definition -> 'nodes') LOOP
        v_name := v_node ->> 'name';
        SELECT min(k) INTO v_key FROM jsonb_object_keys(v_node) k
         WHERE k NOT IN ('name', 'kind', 'handler', 'deps', 'on_dep_failure', 'max_attempts',
                         'priority', 'timeout', 'signal', 'workflow', 'max_wait', 'limits');
        IF v_key IS NOT NULL THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": unknown key "%s"', v_name, v_key));
        END IF;
        v_kind := coalesce(v_node ->> 'kind', 'task');
        IF v_kind NOT IN ('task', 'wait', 'child') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": unknown kind "%s" (task, wait or child)', v_name, v_kind));
        END IF;
        v_policy := coalesce(v_node ->> 'on_dep_failure', 'fail_run');
        IF v_policy NOT IN ('fail_run', 'cancel_branch') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": unknown on_dep_failure "%s" (fail_run or cancel_branch)', v_name, v_policy));
        END IF;
        v_deps := coalesce(v_node -> 'deps', '[]');
        IF jsonb_typeof(v_deps) <> 'array'
           OR EXISTS (SELECT 1 FROM jsonb_array_elements(v_deps) d WHERE jsonb_typeof(d) <> 'string') THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": deps must be an array of node names', v_name));
        END IF;
        SELECT min(d) INTO v_key FROM jsonb_array_elements_text(v_deps) d WHERE d <> ALL (v_names);
        IF v_key IS NOT NULL THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": unknown dep "%s"', v_name, v_key));
        END IF;
        IF (SELECT count(*) <> count(DISTINCT d) FROM jsonb_array_elements_text(v_deps) d) THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": a dep is listed twice', v_name));
        END IF;
        IF v_kind <> 'task' AND (v_node ? 'timeout' OR v_node ? 'handler' OR v_node ? 'max_attempts') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": handler, timeout and max_attempts apply to task nodes only', v_name));
        END IF;
        IF v_kind <> 'task' AND v_node ? 'limits' THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": limits apply to task nodes only', v_name));
        END IF;
        v_node_limits := '[]'::jsonb;
        IF v_kind = 'task' THEN
            v_node_limits := cyclone._merge_limits(v_limits, CASE WHEN v_node ? 'limits' THEN
                cyclone._definition_limits(p_name, format('node "%s": limits', v_name), v_node -> 'limits')
                ELSE '[]'::jsonb END);
        END IF;
        IF v_kind = 'task' AND v_node ? 'max_wait' THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": max_wait applies to wait and child nodes only', v_name));
        END IF;
        IF v_kind <> 'wait' AND v_node ? 'signal' THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": signal applies to wait nodes only', v_name));
        END IF;
        IF v_kind <> 'child' AND v_node ? 'workflow' THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": workflow applies to child nodes only', v_name));
        END IF;
        IF v_kind = 'child' AND (jsonb_typeof(v_node -> 'workflow') IS DISTINCT FROM 'string' OR v_node ->> 'workflow' = '') THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": a child node needs "workflow"', v_name));
        END IF;
        IF (v_node ? 'handler' AND (jsonb_typeof(v_node -> 'handler') <> 'string' OR v_node ->> 'handler' = ''))
           OR (v_node ? 'signal' AND (jsonb_typeof(v_node -> 'signal') <> 'string' OR v_node ->> 'signal' = '')) THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": handler and signal must be non-empty strings', v_name));
        END IF;
        PERFORM cyclone._check_definition_name(p_name, format('node "%s": %s', v_name, f.key), v_node ->> f.key)
           FROM unnest(ARRAY['handler', 'signal', 'workflow']) AS f(key)
          WHERE v_node ? f.key;
        v_priority := 0;
        IF v_node ? 'priority' THEN
            IF jsonb_typeof(v_node -> 'priority') <> 'number'
               OR (v_node ->> 'priority')::numeric <> trunc((v_node ->> 'priority')::numeric)
               OR abs((v_node ->> 'priority')::numeric) > 1000000 THEN
                PERFORM cyclone._bad_definition(p_name,
                    format('node "%s": priority must be an integer, got %s', v_name, v_node -> 'priority'));
            END IF;
            v_priority := (v_node ->> 'priority')::numeric::int;
        END IF;

        v_nodes := v_nodes || jsonb_build_array(jsonb_build_object(
            'name', v_name,
            'kind', v_kind,
            'handler', CASE WHEN v_kind = 'task' THEN coalesce(v_node ->> 'handler', v_name) ELSE v_name END,
            'deps', v_deps,
            'on_dep_failure', v_policy,
            'max_attempts', CASE WHEN v_node ? 'max_attempts'
                THEN cyclone._positive_int(p_name, format('node "%s": max_attempts', v_name), v_node -> 'max_attempts')
                ELSE v_max_attempts END,
            'priority', v_priority,
            'timeout', cyclone._definition_interval(p_name, v_name, 'timeout', v_node -> 'timeout'),
            'signal', CASE WHEN v_kind = 'wait' THEN coalesce(v_node ->> 'signal', v_name) END,
            'workflow', v_node ->> 'workflow',
            'max_wait', cyclone._definition_interval(p_name, v_name, 'max_wait', v_node -> 'max_wait'))
            || CASE WHEN jsonb_array_length(v_node_limits) > 0 THEN jsonb_build_object('limits', v_node_limits)
                    ELSE '{}'::jsonb END);
    END LOOP;

    -- Cycles: peel off, layer by layer, the nodes whose deps are all peeled
    -- (Kahn's algorithm). Whatever cannot be peeled is on or behind a cycle.
    LOOP
        v_next := ARRAY(
            SELECT n ->> 'name' FROM jsonb_array_elements(v_nodes) n
             WHERE NOT (n ->> 'name' = ANY (v_done))
               AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(n -> 'deps') d WHERE d <> ALL (v_done)));
        EXIT WHEN cardinality(v_next) = 0;
        v_done := v_done || v_next;
    END LOOP;
    IF cardinality(v_done) < cardinality(v_names) THEN
        SELECT string_agg(n, ', ' ORDER BY n) INTO v_key FROM unnest(v_names) n WHERE n <> ALL (v_done);
        PERFORM cyclone._bad_definition(p_name, format('the dependencies form a cycle through %s', v_key));
    END IF;

    RETURN jsonb_build_object('max_attempts', v_max_attempts, 'nodes', v_nodes)
        || CASE WHEN p_definition ? 'description' THEN jsonb_build_object('description', p_definition -> 'description') ELSE '{}' END
        || CASE WHEN jsonb_array_length(v_limits) > 0 THEN jsonb_build_object('limits', v_limits) ELSE '{}' END;
END
$$;
REVOKE ALL ON FUNCTION cyclone._normalize_definition(text,jsonb) FROM PUBLIC;

-- Inserts or replaces the workflow p_name (SPEC 4): 22004 for a NULL argument, 22023
-- for a bad workflow name (empty, over 200 characters, a control character) or a bad
-- definition, before anything is written. The upsert writes only when the normalised
-- definition differs from the stored one, so workers that define their workflows at
-- every start write nothing while they are unchanged, and updated_at is the time the
-- definition last changed. Runs already submitted keep the steps they were made with.
CREATE OR REPLACE FUNCTION cyclone.define_workflow(p_name text, p_definition jsonb)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_definition jsonb;
BEGIN
    IF p_name IS NULL OR p_definition IS NULL THEN
        RAISE EXCEPTION 'define_workflow: p_name and p_definition must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF p_name = '' THEN
        RAISE EXCEPTION 'define_workflow: the workflow name must not be empty' USING ERRCODE = '22023';
    END IF;
    IF cyclone._name_problem(p_name) IS NOT NULL THEN
        RAISE EXCEPTION 'define_workflow: the workflow name % %', cyclone._shown(p_name), cyclone._name_problem(p_name)
            USING ERRCODE = '22023';
    END IF;
    v_definition := cyclone._normalize_definition(p_name, p_definition);
    INSERT INTO cyclone_workflows AS w (name, definition, updated_at)
    VALUES (p_name, v_definition, cyclone.now())
    ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
    WHERE w.definition IS DISTINCT FROM excluded.definition;
END
$$;
COMMENT ON FUNCTION cyclone.define_workflow(text,jsonb) IS 'Insert or replace a workflow definition (SPEC section 4). A bad definition raises 22023 and writes nothing.';
REVOKE ALL ON FUNCTION cyclone.define_workflow(text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.define_workflow(text,jsonb) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.define_workflow(text,jsonb) TO cyclone_admin;

COMMIT;
