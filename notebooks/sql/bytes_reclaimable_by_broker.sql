-- Bytes reclaimable per cluster and broker: open findings of the checks the catalogue marks reclaimable
-- (conf/checks.yaml `reclaimable: true`: leftover data a move-aside frees). The same figure as summary.json
-- bytes_reclaimable.by_broker and the report; tests/unit/test_dashboard_sql.py keeps this list equal to the catalogue.
SELECT cluster_id,
       broker_id,
       COUNT(*)                 AS open_findings,
       COALESCE(SUM(bytes), 0)  AS bytes_reclaimable
FROM gold_findings
WHERE status = 'open' AND broker_id IS NOT NULL
  AND check_id IN ('STALE_TOPIC_ID', 'ORPHAN_REPLICA', 'STRAY_NOT_ASSIGNED', 'LINGERING_DELETE_DIR', 'STRAY_DIR',
                   'DELETE_INCOMPLETE')
GROUP BY cluster_id, broker_id
ORDER BY bytes_reclaimable DESC, cluster_id, broker_id
