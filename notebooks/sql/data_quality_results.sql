-- Data-quality results of the latest run: expectations evaluated, failed and skipped (a rule whose columns
-- are missing: success is null), per suite and table.
SELECT suite,
       table_name,
       COUNT(*)                                               AS expectations,
       SUM(CASE WHEN success = false THEN 1 ELSE 0 END)       AS failed,
       SUM(CASE WHEN success IS NULL THEN 1 ELSE 0 END)       AS skipped,
       SUM(COALESCE(unexpected_count, 0))                     AS unexpected_rows
FROM gold_dq_results
WHERE run_id = (SELECT MAX_BY(run_id, evaluated_at) FROM gold_dq_results)
GROUP BY suite, table_name
ORDER BY suite
