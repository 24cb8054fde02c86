-- SQL alert "no successful run in 26 h": the largest time since a cluster's last successful run (status ok or
-- findings). The alert fires when hours_since_success > 26, and when no run succeeded at all (empty result).
SELECT cluster_id,
       ROUND((unix_seconds(current_timestamp()) - unix_seconds(MAX(finished_at))) / 3600.0, 2) AS hours_since_success
FROM gold_run_summary
WHERE status IN ('ok', 'findings')
GROUP BY cluster_id
ORDER BY hours_since_success DESC
LIMIT 1
