-- Data-quality pass rate per cluster and capture: the share of evaluated expectations that passed (skipped
-- rules, success null, are not evaluated), from gold_dq_results joined to the run's capture in gold_run_summary.
SELECT s.cluster_id,
       s.capture_time,
       s.capture_id,
       COUNT(d.success)                                                  AS evaluated,
       COUNT_IF(d.success = false)                                       AS failed,
       ROUND(COUNT_IF(d.success) / NULLIF(COUNT(d.success), 0), 4)       AS pass_rate
FROM gold_dq_results d
JOIN gold_run_summary s ON d.run_id = s.run_id
GROUP BY s.cluster_id, s.capture_time, s.capture_id
ORDER BY s.cluster_id, s.capture_time
