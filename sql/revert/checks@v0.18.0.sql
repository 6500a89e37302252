-- Revert cyclone:checks to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._bad_definition(p_workflow text, p_problem text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    RAISE EXCEPTION 'workflow "%": %', p_workflow, p_problem USING ERRCODE = '22023';
END
$$;
COMMENT ON FUNCTION cyclone._bad_definition(text,text) IS NULL;

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
COMMENT ON FUNCTION cyclone._check_payload(text,jsonb) IS NULL;

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
COMMENT ON FUNCTION cyclone._name_problem(text) IS NULL;

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
COMMENT ON FUNCTION cyclone._require(text,boolean,text) IS NULL;

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
COMMENT ON FUNCTION cyclone._require_given(text,boolean,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._shown(p_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT to_json(CASE WHEN char_length(p_name) > 40 THEN left(p_name, 40) || '...' ELSE p_name END)::text
$$;
COMMENT ON FUNCTION cyclone._shown(text) IS NULL;

COMMIT;
