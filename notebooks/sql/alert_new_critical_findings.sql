-- SQL alert "new critical finding": open critical findings first seen in their cluster's newest capture.
-- The alert fires when new_critical > 0.
SELECT COUNT(*) AS new_critical
FROM gold_findings f
JOIN (SELECT cluster_id, MAX_BY(capture_id, capture_time) AS capture_id
      FROM gold_run_summary GROUP BY cluster_id) latest
  ON f.cluster_id <=> latest.cluster_id AND f.first_seen_capture = latest.capture_id
WHERE f.status = 'open' AND f.severity = 'critical'
