-- Version 3: a probe of a multi-node target (a cluster) keeps each node's
-- own figures beside their sums: a JSON array of NodeProbe, NULL for a
-- single server.
ALTER TABLE probes ADD COLUMN nodes_json TEXT;
