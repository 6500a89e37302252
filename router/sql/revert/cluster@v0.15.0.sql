-- Revert cyclone_router:cluster
BEGIN;

DROP SCHEMA cyclone CASCADE;
DROP FUNCTION plproxy.get_cluster_config(text), plproxy.get_cluster_partitions(text),
              plproxy.get_cluster_version(text);

COMMIT;
