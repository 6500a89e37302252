-- Revert cyclone:grants
-- Takes back what deploy gave; the objects themselves keep their PUBLIC revokes
-- until the changes that created them are reverted.
BEGIN;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cyclone FROM cyclone_worker, cyclone_client, cyclone_admin;
REVOKE ALL ON ALL TABLES IN SCHEMA cyclone FROM cyclone_worker, cyclone_client, cyclone_admin;
COMMIT;
