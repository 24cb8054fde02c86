-- Freshness per cluster: the last successful run (status ok or findings; incomplete and error runs do not
-- count) and the hours since it finished. The alert alert_no_successful_run.sql fires on the same numbers.
SELECT cluster_id,
       MAX(finished_at)                                                          AS last_success_at,
       MAX_BY(capture_time, finished_at)                                         AS last_capture_time,
       ROUND((unix_seconds(current_timestamp()) - unix_seconds(MAX(finished_at))) / 3600.0, 2) AS hours_since_success
FROM gold_run_summary
WHERE status IN ('ok', 'findings')
GROUP BY cluster_id
ORDER BY cluster_id
