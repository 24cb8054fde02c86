-- New and resolved findings per capture, per cluster: one point per capture of gold_run_summary (whatever order the
-- captures were run in), new = findings first seen in it, resolved = findings resolved at it, both read from
-- gold_findings' first_seen / resolved_at, so a backfill of an older capture moves them to where they belong.
WITH new_at AS (
  SELECT cluster_id, first_seen AS t, COUNT(*) AS n FROM gold_findings GROUP BY cluster_id, first_seen
), resolved_at AS (
  SELECT cluster_id, resolved_at AS t, COUNT(*) AS n FROM gold_findings WHERE resolved_at IS NOT NULL
  GROUP BY cluster_id, resolved_at
)
SELECT s.cluster_id,
       s.capture_time,
       s.capture_id,
       COALESCE(n.n, 0)   AS new_findings,
       COALESCE(r.n, 0)   AS resolved_findings,
       s.open_findings,
       s.bytes_reclaimable
FROM gold_run_summary s
LEFT JOIN new_at n ON n.cluster_id <=> s.cluster_id AND n.t = s.capture_time
LEFT JOIN resolved_at r ON r.cluster_id <=> s.cluster_id AND r.t = s.capture_time
WHERE s.status <> 'error'
ORDER BY s.cluster_id, s.capture_time
