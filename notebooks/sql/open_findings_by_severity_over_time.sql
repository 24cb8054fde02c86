-- Open findings by severity over time, one row per cluster, run and severity (from gold_run_summary).
-- Filter on cluster_id when several clusters share the tables.
SELECT cluster_id, capture_time, run_id, severity, open_findings
FROM (
  SELECT cluster_id, capture_time, run_id, 'critical' AS severity, critical AS open_findings FROM gold_run_summary
  UNION ALL
  SELECT cluster_id, capture_time, run_id, 'warning', warning FROM gold_run_summary
  UNION ALL
  SELECT cluster_id, capture_time, run_id, 'info', info FROM gold_run_summary
)
ORDER BY cluster_id, capture_time, severity
