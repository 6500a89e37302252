-- Deploy creates the three roles of SPEC section 10; none is a superuser or can log in
-- (applications grant them to their own login roles).
BEGIN;
SELECT plan(10);

SELECT has_role(r, format('role %s exists', r)) FROM unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r;
SELECT isnt_superuser(r, format('%s is not a superuser', r)) FROM unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r;
SELECT is((SELECT array_agg(rolname::text ORDER BY rolname) FROM pg_roles
            WHERE rolname IN ('cyclone_worker', 'cyclone_client', 'cyclone_admin') AND rolcanlogin), NULL,
          'none of the three can log in directly');
SELECT ok(has_schema_privilege(r, 'cyclone', 'USAGE'), format('%s has USAGE on schema cyclone', r))
  FROM unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r;

SELECT * FROM finish();
ROLLBACK;
