-- sql/engine/20_workflows.sql: change `workflows` — workflow definitions (SPEC 4).
-- define_workflow() validates a DAG definition, fills in every default and stores the
-- normalised form in cyclone_workflows, which submit (_start_runs) turns into steps as it
-- is. Any problem raises 22023 naming the workflow and the problem, before anything is
-- written. Owns define_workflow and the validation: _normalize_definition,
-- _check_definition_name, _definition_interval, _positive_int, the SPEC 12 "limits"
-- (_definition_limits, _merge_limits), the graph checks (_unordered_nodes: Kahn's
-- algorithm; _child_cycle: child workflows that would start themselves, which the DAG
-- advance asks too before it starts a child run).
-- The bounds, each a rule users see (docs/concepts.md, "Limits"): at most 1,000 nodes and
-- 10,000 dependencies a definition, a definition of at most 1 MiB, a timeout or max_wait
-- of at most 366 days. Validation is linear in the nodes and dependencies (a name index
-- in a jsonb object, Kahn's algorithm over integer arrays), so the largest definition
-- takes milliseconds, not minutes.
-- Requires: 10_runs_tables.sql (cyclone_workflows), 11_limits_tables.sql (cyclone_limits),
-- 03_checks.sql (_bad_definition, _name_problem, _shown, _check_payload), 02_clock.sql (now).
-- Called by workers at start-up (cyclone_worker) and by operators (cyclone_admin);
-- 22_advance.sql calls _child_cycle.
-- Locks: no run or step. define_workflow takes the rows of the limits the definition
-- names (FOR KEY SHARE), then its own cyclone_workflows row (the upsert). The child-cycle
-- check reads the other definitions without a lock: two definitions committed at once
-- can close a cycle neither saw, which the advance refuses when it would start the child.
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
-- not parse as an interval, is not positive, or is longer than 366 days (a year however
-- it is spelled: '1 year' and '12 months' count as 360 days). The bound keeps the times
-- the engine computes from it (started_at + timeout in renew and sweep, now + max_wait
-- in the advance) far inside PostgreSQL's range: '300000 years' once made every sweep,
-- and so every tick, fail with a raw "timestamp out of range". A step that needs longer
-- has no timeout; a wait that may last longer has no max_wait.
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
    IF v_interval > interval '366 days' THEN
        PERFORM cyclone._bad_definition(p_workflow,
            format('node "%s": %s must be at most 366 days, got %s', p_node, p_field, v_interval));
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

-- _unordered_nodes: Kahn's algorithm over the graph of nodes 1 .. p_count with the edges
-- p_from[i] -> p_to[i] (p_to[i] comes after p_from[i]). Returns the nodes it cannot put in
-- order, ascending: those on a cycle or behind one; empty when the graph is acyclic. Time
-- linear in nodes and edges: the successors of each node are laid out once (p_first[n]
-- .. p_first[n + 1] - 1 in p_next), then each node is taken from the queue once and each
-- edge followed once. PL/pgSQL arrays assigned by subscript are changed in place, so no
-- step copies an array. (It once peeled the nodes layer by layer with = ANY over the
-- names peeled so far: cubic in a chain, 8.9 s for 1,000 nodes, 62 s for 2,000.)
CREATE OR REPLACE FUNCTION cyclone._unordered_nodes(p_count integer, p_from integer[], p_to integer[])
RETURNS integer[]
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_edges int := coalesce(cardinality(p_from), 0);
    v_waiting int[] := array_fill(0, ARRAY[p_count]);    -- each node's predecessors not yet in order
    v_first int[] := array_fill(0, ARRAY[p_count + 1]);  -- where each node's successors start in v_next
    v_next int[] := array_fill(0, ARRAY[greatest(v_edges, 1)]);
    v_fill int[];
    v_queue int[] := array_fill(0, ARRAY[p_count]);
    v_head int := 1;
    v_tail int := 0;
    v_node int;
    v_succ int;
BEGIN
    IF p_count = 0 THEN
        RETURN '{}'::integer[];
    END IF;
    FOR i IN 1 .. v_edges LOOP
        v_first[p_from[i] + 1] := v_first[p_from[i] + 1] + 1;
        v_waiting[p_to[i]] := v_waiting[p_to[i]] + 1;
    END LOOP;
    v_first[1] := 1;
    FOR n IN 2 .. p_count + 1 LOOP
        v_first[n] := v_first[n] + v_first[n - 1];
    END LOOP;
    v_fill := v_first;
    FOR i IN 1 .. v_edges LOOP
        v_next[v_fill[p_from[i]]] := p_to[i];
        v_fill[p_from[i]] := v_fill[p_from[i]] + 1;
    END LOOP;
    FOR n IN 1 .. p_count LOOP
        IF v_waiting[n] = 0 THEN
            v_tail := v_tail + 1;
            v_queue[v_tail] := n;
        END IF;
    END LOOP;
    WHILE v_head <= v_tail LOOP
        v_node := v_queue[v_head];
        v_head := v_head + 1;
        FOR k IN v_first[v_node] .. v_first[v_node + 1] - 1 LOOP
            v_succ := v_next[k];
            v_waiting[v_succ] := v_waiting[v_succ] - 1;
            IF v_waiting[v_succ] = 0 THEN
                v_tail := v_tail + 1;
                v_queue[v_tail] := v_succ;
            END IF;
        END LOOP;
    END LOOP;
    IF v_tail = p_count THEN
        RETURN '{}'::integer[];
    END IF;
    RETURN ARRAY(SELECT n FROM generate_series(1, p_count) n WHERE v_waiting[n] > 0 ORDER BY n);
END
$$;
REVOKE ALL ON FUNCTION cyclone._unordered_nodes(integer,integer[],integer[]) FROM PUBLIC;

-- _child_cycle: the child workflows that would start themselves without end, seen from
-- workflow p_workflow: NULL when none, else one cycle as text, 'a -> b -> a'. The graph
-- is every stored definition's child nodes (node -> its workflow), with p_workflow's
-- own taken from p_definition when given (define_workflow asks before it stores it);
-- only the workflows p_workflow reaches count (a recursive UNION: each once). A workflow
-- no definition stores is a leaf (the advance discards its child node as undefined).
-- Runs keep the steps they were made with, and a workflow has no conditional node: every
-- child node of a run is reached unless a failure stops the run, so a cycle here is a
-- recursion that only the 32-level bound would stop, after 32 failed runs (issue 30,
-- finding 12). Linear in the workflows reached and their nodes; a cycle is named by
-- walking back from the first unordered workflow by name to a workflow seen twice. A
-- workflow with no child node answers at once (one jsonpath test): the advance asks
-- before every child run, and most child workflows have none.
-- Called by define_workflow (22023 for a cycle through the new definition) and by the
-- DAG advance before it starts a child run (_advance, 22_advance.sql: child_failed).
CREATE OR REPLACE FUNCTION cyclone._child_cycle(p_workflow text, p_definition jsonb)
RETURNS text
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_names text[];
    v_index jsonb;
    v_from int[];
    v_to int[];
    v_left int[];
    v_path int[];
    v_at int;
BEGIN
    -- Most child workflows have no child node of their own: no cycle can start there.
    IF NOT coalesce(coalesce(p_definition, (SELECT w.definition FROM cyclone.cyclone_workflows w WHERE w.name = p_workflow))
                    @? '$.nodes[*] ? (@.kind == "child")', false) THEN
        RETURN NULL;
    END IF;
    WITH RECURSIVE reach(name) AS (
        SELECT p_workflow
        UNION
        SELECT n.node ->> 'workflow'
          FROM reach r
          LEFT JOIN cyclone.cyclone_workflows w ON w.name = r.name
         CROSS JOIN LATERAL jsonb_array_elements(
               CASE WHEN r.name = p_workflow AND p_definition IS NOT NULL THEN p_definition
                    ELSE w.definition END -> 'nodes') AS n(node)
         WHERE n.node ->> 'kind' = 'child'
    )
    SELECT array_agg(r.name ORDER BY r.name), jsonb_object_agg(r.name, r.pos)
      INTO v_names, v_index
      FROM (SELECT x.name, row_number() OVER (ORDER BY x.name) AS pos FROM reach x) r;
    -- Edges between the workflows reached, by their position in v_names.
    SELECT coalesce(array_agg(e.src), '{}'), coalesce(array_agg(e.dst), '{}') INTO v_from, v_to
      FROM (SELECT DISTINCT (v_index ->> w.name)::int AS src, (v_index ->> (n.node ->> 'workflow'))::int AS dst
              FROM unnest(v_names) AS w(name)
              LEFT JOIN cyclone.cyclone_workflows s ON s.name = w.name
             CROSS JOIN LATERAL jsonb_array_elements(
                   CASE WHEN w.name = p_workflow AND p_definition IS NOT NULL THEN p_definition
                        ELSE s.definition END -> 'nodes') AS n(node)
             WHERE n.node ->> 'kind' = 'child') e;
    v_left := cyclone._unordered_nodes(cardinality(v_names), v_from, v_to);
    IF cardinality(v_left) = 0 THEN
        RETURN NULL;
    END IF;
    -- Every unordered workflow has an unordered predecessor: walk back from the
    -- first until one comes again; the walk from there is the cycle, reversed.
    v_at := v_left[1];
    v_path := ARRAY[v_at];
    LOOP
        SELECT min(v_from[i]) INTO v_at FROM generate_subscripts(v_to, 1) i
         WHERE v_to[i] = v_at AND v_from[i] = ANY (v_left);
        EXIT WHEN v_at = ANY (v_path);
        v_path := v_path || v_at;
    END LOOP;
    v_path := v_path[array_position(v_path, v_at):] || v_at;
    RETURN (SELECT string_agg(cyclone._shown(v_names[p.n]), ' -> ' ORDER BY p.i DESC)
              FROM unnest(v_path) WITH ORDINALITY AS p(n, i));
END
$$;
REVOKE ALL ON FUNCTION cyclone._child_cycle(text,jsonb) FROM PUBLIC;

-- What is wrong with a path a node names (SPEC 16: a sleep's "until", a map's "over"), or NULL when nothing is:
-- dot-separated segments, none empty, the first "input" (the run input) or "deps" followed by one of the
-- node's own dependencies (p_deps, a JSON array of names; that dependency's output). A root node (no deps)
-- can only name its input: it is reached at submit, before any step ran.
CREATE OR REPLACE FUNCTION cyclone._path_problem(p_path text, p_deps jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE
        WHEN p_path IS NULL OR p_path = '' OR '' = ANY (string_to_array(p_path, '.'))
            THEN 'must be a dot path such as "input.items" or "deps.list.images"'
        WHEN split_part(p_path, '.', 1) = 'input' THEN NULL
        WHEN split_part(p_path, '.', 1) <> 'deps'
            THEN format('must start with "input" or "deps", got %s', cyclone._shown(p_path))
        WHEN jsonb_array_length(p_deps) = 0
            THEN format('%s names a dependency, but a root node can only read its input', cyclone._shown(p_path))
        WHEN NOT p_deps ? split_part(p_path, '.', 2)
            THEN format('%s names %s, which is not one of the node''s deps', cyclone._shown(p_path),
                        cyclone._shown(split_part(p_path, '.', 2)))
    END
$$;
REVOKE ALL ON FUNCTION cyclone._path_problem(text,jsonb) FROM PUBLIC;

-- Checks a definition and returns it with every default filled in:
-- {"max_attempts": n, "nodes": [{name, kind, handler, deps, on_dep_failure,
--   max_attempts, priority, timeout, signal, workflow, max_wait[, limits]}, ...]
--  [, "description": d][, "limits": [...]]}; a task node lists "limits" only when it
-- takes one. Defaults (SPEC 4): kind task, handler the node name (always, for a wait
-- or child node), deps [], on_dep_failure fail_run, max_attempts the workflow's (25),
-- priority 0, a wait node's signal its name. 22023 for what the helpers above refuse,
-- and for an unknown key, an empty or missing node list, more than 1,000 nodes or
-- 10,000 dependencies in all, a node without a name or with a duplicate one, an unknown
-- kind, policy or dep, a dep listed twice, a field on a kind it does not apply to, a
-- child node without "workflow", a priority that is not an integer within +-1,000,000,
-- a condition (when, unless) that is not a JSON object, an on_dep_skipped other than
-- "skip" or "run", a sleep without exactly one of duration and until, an until that is
-- not a path _path_problem accepts, duration or until on another kind, a map node
-- without "over" (a path) or with max_items outside 1..100,000 or on_item_failure
-- other than "fail" or "collect", those on another kind, an event node without a
-- "key" template (text with {path} parts, braces paired and not nested, each path one
-- _path_problem accepts, at most 1,000 bytes), an await node without a "run" path (SPEC
-- 17), either key on another kind, and a cycle (found last, by _unordered_nodes; the message names its nodes, the first
-- 20 by name). A child node's workflow need not exist yet: it is looked up when the node
-- is reached (_advance, 22_advance.sql).
-- Linear in nodes and dependencies: the node count is checked before any node is read;
-- the first problem of the names pass (shape, name, duplicate, in node order) is found by
-- one query; deps are looked up in an index of the names (a jsonb object: name ->
-- position); the normalised nodes go into an array by position. 1,000 nodes is more
-- than any workflow needs and keeps what grows with them bounded: the steps a submit
-- writes, the advance's work per completion, the console's picture of the DAG.
CREATE OR REPLACE FUNCTION cyclone._normalize_definition(p_name text, p_definition jsonb)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_max_attempts int := 25;
    v_node jsonb;
    v_ord int;
    v_name text;
    v_kind text;
    v_policy text;
    v_deps jsonb;
    v_priority int;
    v_index jsonb;
    v_count int;
    v_nodes jsonb[];
    v_key text;
    v_problem text;
    v_from int[];
    v_to int[];
    v_left int[];
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
    v_count := jsonb_array_length(p_definition -> 'nodes');
    IF v_count > 1000 THEN
        PERFORM cyclone._bad_definition(p_name, format('a workflow has at most 1000 nodes, got %s', v_count));
    END IF;

    -- Names first, so that deps can be checked against all of them: the first
    -- node, in order, without a good name or with one an earlier node has.
    SELECT CASE WHEN x.shape THEN format('every node needs a non-empty "name": %s', x.node)
                WHEN x.problem IS NOT NULL
                    THEN format('node name %s %s', cyclone._shown(x.node ->> 'name'), x.problem)
                ELSE format('duplicate node name "%s"', x.node ->> 'name') END
      INTO v_problem
      FROM (SELECT e.node, e.ord, e.shape,
                   CASE WHEN NOT e.shape THEN cyclone._name_problem(e.node ->> 'name') END AS problem,
                   row_number() OVER (PARTITION BY CASE WHEN NOT e.shape THEN e.node ->> 'name' END
                                      ORDER BY e.ord) AS nth
              FROM (SELECT n.node, n.ord,
                           jsonb_typeof(n.node) <> 'object' OR jsonb_typeof(n.node -> 'name') IS DISTINCT FROM 'string'
                           OR n.node ->> 'name' = '' AS shape
                      FROM jsonb_array_elements(p_definition -> 'nodes') WITH ORDINALITY AS n(node, ord)) e) x
     WHERE x.shape OR x.problem IS NOT NULL OR x.nth > 1
     ORDER BY x.ord
     LIMIT 1;
    IF v_problem IS NOT NULL THEN
        PERFORM cyclone._bad_definition(p_name, v_problem);
    END IF;
    SELECT jsonb_object_agg(n.node ->> 'name', n.ord), sum(jsonb_array_length(
               CASE WHEN jsonb_typeof(n.node -> 'deps') = 'array' THEN n.node -> 'deps' ELSE '[]' END))
      INTO v_index, v_count
      FROM jsonb_array_elements(p_definition -> 'nodes') WITH ORDINALITY AS n(node, ord);
    IF v_count > 10000 THEN
        PERFORM cyclone._bad_definition(p_name,
            format('a workflow has at most 10000 dependencies in all, got %s', v_count));
    END IF;

    FOR v_node, v_ord IN SELECT n.node, n.ord FROM jsonb_array_elements(p_definition -> 'nodes') WITH ORDINALITY AS n(node, ord) LOOP
        v_name := v_node ->> 'name';
        SELECT min(k) INTO v_key FROM jsonb_object_keys(v_node) k
         WHERE k NOT IN ('name', 'kind', 'handler', 'deps', 'on_dep_failure', 'max_attempts',
                         'priority', 'timeout', 'signal', 'workflow', 'max_wait', 'limits',
                         'when', 'unless', 'on_dep_skipped', 'duration', 'until', 'over', 'max_items',
                         'on_item_failure', 'key', 'run');
        IF v_key IS NOT NULL THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": unknown key "%s"', v_name, v_key));
        END IF;
        v_kind := coalesce(v_node ->> 'kind', 'task');
        IF v_kind NOT IN ('task', 'wait', 'child', 'sleep', 'map', 'event', 'await') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": unknown kind "%s" (task, wait, child, sleep, map, event or await)', v_name, v_kind));
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
        SELECT min(d) INTO v_key FROM jsonb_array_elements_text(v_deps) d WHERE NOT v_index ? d;
        IF v_key IS NOT NULL THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": unknown dep "%s"', v_name, v_key));
        END IF;
        IF (SELECT count(*) <> count(DISTINCT d) FROM jsonb_array_elements_text(v_deps) d) THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": a dep is listed twice', v_name));
        END IF;
        -- A map node's items run like task steps, with the map's handler, timeout, max_attempts and limits.
        IF v_kind NOT IN ('task', 'map') AND (v_node ? 'timeout' OR v_node ? 'handler' OR v_node ? 'max_attempts') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": handler, timeout and max_attempts apply to task and map nodes only', v_name));
        END IF;
        IF v_kind NOT IN ('task', 'map') AND v_node ? 'limits' THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": limits apply to task and map nodes only', v_name));
        END IF;
        v_node_limits := '[]'::jsonb;
        IF v_kind IN ('task', 'map') THEN
            v_node_limits := cyclone._merge_limits(v_limits, CASE WHEN v_node ? 'limits' THEN
                cyclone._definition_limits(p_name, format('node "%s": limits', v_name), v_node -> 'limits')
                ELSE '[]'::jsonb END);
        END IF;
        IF v_kind IN ('task', 'sleep', 'map') AND v_node ? 'max_wait' THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": max_wait applies to wait, child, event and await nodes only', v_name));
        END IF;
        -- An event node (SPEC 17) waits on the key its template makes: text with {path} parts, each a path
        -- _path_problem accepts, braces in pairs and not nested; an await node on the run its "run" path names.
        IF (v_kind = 'event') <> (v_node ? 'key') THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": "key" applies to event nodes, which need it', v_name));
        END IF;
        IF v_node ? 'key' THEN
            IF jsonb_typeof(v_node -> 'key') <> 'string' OR v_node ->> 'key' = ''
               OR octet_length(v_node ->> 'key') > 1000 OR v_node ->> 'key' !~ '^([^{}]|\{[^{}]*\})*$' THEN
                PERFORM cyclone._bad_definition(p_name,
                    format('node "%s": key must be a template of 1 to 1000 bytes such as "payment:{input.order_id}" (braces in pairs, not nested), got %s',
                           v_name, left((v_node -> 'key')::text, 200)));
            END IF;
            SELECT min(m.path || ' ' || cyclone._path_problem(m.path, v_deps)) INTO v_problem
              FROM (SELECT (regexp_matches(v_node ->> 'key', '\{([^{}]*)\}', 'g'))[1] AS path) m
             WHERE cyclone._path_problem(m.path, v_deps) IS NOT NULL;
            IF v_problem IS NOT NULL THEN
                PERFORM cyclone._bad_definition(p_name, format('node "%s": key path %s', v_name, v_problem));
            END IF;
        END IF;
        IF (v_kind = 'await') <> (v_node ? 'run') THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": "run" applies to await nodes, which need it', v_name));
        END IF;
        IF v_node ? 'run' THEN
            v_problem := cyclone._path_problem(CASE WHEN jsonb_typeof(v_node -> 'run') = 'string'
                                                    THEN v_node ->> 'run' END, v_deps);
            IF v_problem IS NOT NULL THEN
                PERFORM cyclone._bad_definition(p_name, format('node "%s": run %s', v_name, v_problem));
            END IF;
        END IF;
        IF v_kind <> 'wait' AND v_node ? 'signal' THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": signal applies to wait nodes only', v_name));
        END IF;
        -- Conditions (SPEC 16), on any kind: JSON objects the document {"input", "deps"} must contain (when)
        -- or must not (unless) for the node to run; on_dep_skipped "run" runs it after a skipped dependency.
        SELECT min(f.key) INTO v_key FROM unnest(ARRAY['when', 'unless']) AS f(key)
         WHERE v_node ? f.key AND jsonb_typeof(v_node -> f.key) <> 'object';
        IF v_key IS NOT NULL THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": %s must be a JSON object', v_name, v_key));
        END IF;
        IF v_node ? 'on_dep_skipped' AND (v_node -> 'on_dep_skipped') NOT IN ('"skip"', '"run"') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": on_dep_skipped must be "skip" or "run", got %s', v_name, v_node -> 'on_dep_skipped'));
        END IF;
        -- A sleep (SPEC 16) waits for exactly one of duration (an interval) or until (a path to a timestamp).
        IF v_kind <> 'sleep' AND (v_node ? 'duration' OR v_node ? 'until') THEN
            PERFORM cyclone._bad_definition(p_name, format('node "%s": duration and until apply to sleep nodes only', v_name));
        END IF;
        IF v_kind = 'sleep' AND (v_node ? 'duration') = (v_node ? 'until') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": a sleep node needs exactly one of "duration" and "until"', v_name));
        END IF;
        IF v_node ? 'until' THEN
            v_problem := cyclone._path_problem(CASE WHEN jsonb_typeof(v_node -> 'until') = 'string'
                                                    THEN v_node ->> 'until' END, v_deps);
            IF v_problem IS NOT NULL THEN
                PERFORM cyclone._bad_definition(p_name, format('node "%s": until %s', v_name, v_problem));
            END IF;
        END IF;
        -- A map (SPEC 16) fans out over the list at its "over" path: at most max_items elements (1 to 100,000;
        -- 10,000 by default); on_item_failure "fail" (the first discarded item discards the map) or "collect".
        IF v_kind <> 'map' AND (v_node ? 'over' OR v_node ? 'max_items' OR v_node ? 'on_item_failure') THEN
            PERFORM cyclone._bad_definition(p_name,
                format('node "%s": over, max_items and on_item_failure apply to map nodes only', v_name));
        END IF;
        IF v_kind = 'map' THEN
            IF NOT v_node ? 'over' THEN
                PERFORM cyclone._bad_definition(p_name, format('node "%s": a map node needs "over"', v_name));
            END IF;
            v_problem := cyclone._path_problem(CASE WHEN jsonb_typeof(v_node -> 'over') = 'string'
                                                    THEN v_node ->> 'over' END, v_deps);
            IF v_problem IS NOT NULL THEN
                PERFORM cyclone._bad_definition(p_name, format('node "%s": over %s', v_name, v_problem));
            END IF;
            IF v_node ? 'max_items' AND (jsonb_typeof(v_node -> 'max_items') <> 'number'
               OR (v_node ->> 'max_items')::numeric <> trunc((v_node ->> 'max_items')::numeric)
               OR (v_node ->> 'max_items')::numeric NOT BETWEEN 1 AND 100000) THEN
                PERFORM cyclone._bad_definition(p_name,
                    format('node "%s": max_items must be an integer from 1 to 100000, got %s', v_name,
                           v_node -> 'max_items'));
            END IF;
            IF v_node ? 'on_item_failure' AND (v_node -> 'on_item_failure') NOT IN ('"fail"', '"collect"') THEN
                PERFORM cyclone._bad_definition(p_name,
                    format('node "%s": on_item_failure must be "fail" or "collect", got %s', v_name,
                           v_node -> 'on_item_failure'));
            END IF;
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

        -- By position, into an array: appending to a jsonb value would copy it
        -- whole at every node.
        v_nodes[v_ord] := jsonb_build_object(
            'name', v_name,
            'kind', v_kind,
            'handler', CASE WHEN v_kind IN ('task', 'map') THEN coalesce(v_node ->> 'handler', v_name) ELSE v_name END,
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
                    ELSE '{}'::jsonb END
            -- SPEC 16's keys, only on the nodes that have them (a definition without them is normalised as
            -- before): the conditions as given, on_dep_skipped only when it is "run", a sleep's duration as
            -- PostgreSQL writes the interval, its until as given.
            || jsonb_strip_nulls(jsonb_build_object(
                   'when', v_node -> 'when',
                   'unless', v_node -> 'unless',
                   'on_dep_skipped', CASE WHEN v_node ->> 'on_dep_skipped' = 'run' THEN 'run' END,
                   'duration', cyclone._definition_interval(p_name, v_name, 'duration', v_node -> 'duration')::text,
                   'until', v_node -> 'until',
                   'over', v_node -> 'over',
                   'max_items', CASE WHEN v_kind = 'map' THEN coalesce((v_node ->> 'max_items')::int, 10000) END,
                   'on_item_failure', CASE WHEN v_kind = 'map' THEN coalesce(v_node ->> 'on_item_failure', 'fail') END,
                   'key', v_node -> 'key',
                   'run', v_node -> 'run'));
    END LOOP;

    -- Cycles: the nodes Kahn's algorithm cannot order (dep -> node, by
    -- position) are on or behind a cycle.
    SELECT coalesce(array_agg((v_index ->> d.name)::int), '{}'), coalesce(array_agg(n.ord), '{}')
      INTO v_from, v_to
      FROM jsonb_array_elements(p_definition -> 'nodes') WITH ORDINALITY AS n(node, ord)
     CROSS JOIN LATERAL jsonb_array_elements_text(coalesce(n.node -> 'deps', '[]')) AS d(name);
    v_left := cyclone._unordered_nodes(cardinality(v_nodes), v_from, v_to);
    IF cardinality(v_left) > 0 THEN
        SELECT string_agg(x.name, ', ' ORDER BY x.name) INTO v_key
          FROM (SELECT v_nodes[i] ->> 'name' AS name FROM unnest(v_left) i ORDER BY 1 LIMIT 20) x;
        PERFORM cyclone._bad_definition(p_name, format('the dependencies form a cycle through %s%s', v_key,
            CASE WHEN cardinality(v_left) > 20 THEN format(' and %s more', cardinality(v_left) - 20) ELSE '' END));
    END IF;

    RETURN jsonb_build_object('max_attempts', v_max_attempts, 'nodes', to_jsonb(v_nodes))
        || CASE WHEN p_definition ? 'description' THEN jsonb_build_object('description', p_definition -> 'description') ELSE '{}' END
        || CASE WHEN jsonb_array_length(v_limits) > 0 THEN jsonb_build_object('limits', v_limits) ELSE '{}' END;
END
$$;
REVOKE ALL ON FUNCTION cyclone._normalize_definition(text,jsonb) FROM PUBLIC;

-- Inserts or replaces the workflow p_name (SPEC 4): 22004 for a NULL argument, 22023
-- for a bad workflow name (empty, over 200 characters, a control character), a
-- definition over 1 MiB (_check_payload, as run inputs), a bad definition, or child
-- nodes that lead, through the stored definitions, to a workflow that starts itself (p_name
-- its own child, two workflows each the other's child: _child_cycle), before anything is
-- written. A cycle closed by two definitions committed at once, or stored by a release
-- before this check, is refused when a run would start the child (_advance). The upsert writes only when the normalised
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
    v_cycle text;
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
    PERFORM cyclone._check_payload(format('define_workflow: the definition of workflow %s', cyclone._shown(p_name)),
                                   p_definition);
    v_definition := cyclone._normalize_definition(p_name, p_definition);
    -- Child nodes that lead to a workflow that starts itself, seen among the
    -- stored definitions: every run would recurse until the 32-level bound.
    IF v_definition @? '$.nodes[*] ? (@.kind == "child")' THEN
        v_cycle := cyclone._child_cycle(p_name, v_definition);
        IF v_cycle IS NOT NULL THEN
            PERFORM cyclone._bad_definition(p_name,
                format('child workflows would start themselves without end: %s', v_cycle));
        END IF;
    END IF;
    INSERT INTO cyclone_workflows AS w (name, definition, updated_at)
    VALUES (p_name, v_definition, cyclone.now())
    ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
    WHERE w.definition IS DISTINCT FROM excluded.definition;
END
$$;
COMMENT ON FUNCTION cyclone.define_workflow(text,jsonb) IS 'Insert or replace a workflow definition (SPEC section 4): at most 1000 nodes and 10000 dependencies, 1 MiB, timeouts and max_waits of at most 366 days, no child workflow that starts itself. A bad definition raises 22023 and writes nothing.';
REVOKE ALL ON FUNCTION cyclone.define_workflow(text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.define_workflow(text,jsonb) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.define_workflow(text,jsonb) TO cyclone_admin;
