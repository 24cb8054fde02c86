-- Time to resolve, per cluster and check: resolved findings, hours from the first capture showing a finding to
-- the first capture no longer showing it (median, 90th percentile, longest), and how long open ones have been open.
SELECT cluster_id,
       check_id,
       COUNT_IF(status = 'resolved')                                                              AS resolved,
       PERCENTILE_APPROX(CASE WHEN status = 'resolved'
                              THEN (unix_seconds(resolved_at) - unix_seconds(first_seen)) / 3600.0 END, 0.5) AS median_hours_to_resolve,
       PERCENTILE_APPROX(CASE WHEN status = 'resolved'
                              THEN (unix_seconds(resolved_at) - unix_seconds(first_seen)) / 3600.0 END, 0.9) AS p90_hours_to_resolve,
       MAX(CASE WHEN status = 'resolved'
                THEN (unix_seconds(resolved_at) - unix_seconds(first_seen)) / 3600.0 END)               AS max_hours_to_resolve,
       COUNT_IF(status = 'open')                                                                  AS still_open,
       MAX(CASE WHEN status = 'open'
                THEN (unix_seconds(last_seen) - unix_seconds(first_seen)) / 3600.0 END)                 AS oldest_open_hours
FROM gold_findings
GROUP BY cluster_id, check_id
ORDER BY cluster_id, check_id
