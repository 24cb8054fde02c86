-- Open findings by severity over time (one row per run and severity), from gold_run_summary.
SELECT capture_time, run_id, severity, open_findings
FROM (
  SELECT capture_time, run_id, 'critical' AS severity, critical AS open_findings FROM gold_run_summary
  UNION ALL
  SELECT capture_time, run_id, 'warning', warning FROM gold_run_summary
  UNION ALL
  SELECT capture_time, run_id, 'info', info FROM gold_run_summary
)
ORDER BY capture_time, severity
