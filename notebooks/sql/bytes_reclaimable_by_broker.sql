-- Bytes held by open findings, per broker (leftover data that can be reclaimed once verified).
SELECT broker_id,
       COUNT(*)                 AS open_findings,
       COALESCE(SUM(bytes), 0)  AS bytes_reclaimable
FROM gold_findings
WHERE status = 'open' AND broker_id IS NOT NULL
GROUP BY broker_id
ORDER BY bytes_reclaimable DESC, broker_id
