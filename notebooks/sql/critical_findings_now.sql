-- Critical findings open right now, newest first: what to act on today.
SELECT cluster_id, check_id, broker_id, log_dir, dir_name, topic_name, topic_id, `partition`, bytes, since, first_seen, message,
       remediation
FROM gold_findings
WHERE status = 'open' AND severity = 'critical'
ORDER BY first_seen DESC, check_id, broker_id
