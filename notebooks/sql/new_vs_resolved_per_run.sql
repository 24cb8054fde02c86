-- New and resolved findings per capture, per cluster (gold_run_summary: one row per capture, whatever order
-- the captures were run in): new = first seen in that capture, resolved = resolved at it.
SELECT cluster_id, capture_time, capture_id, new_findings, resolved_findings, open_findings, bytes_reclaimable
FROM gold_run_summary
WHERE status <> 'error'
ORDER BY cluster_id, capture_time
