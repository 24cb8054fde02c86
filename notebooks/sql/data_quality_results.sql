-- Data-quality results of the latest run: expectations evaluated and failed, per suite.
SELECT suite,
       COUNT(*)                                    AS expectations,
       SUM(CASE WHEN success THEN 0 ELSE 1 END)    AS failed,
       SUM(COALESCE(unexpected_count, 0))          AS unexpected_rows
FROM gold_dq_results
WHERE run_id = (SELECT MAX_BY(run_id, evaluated_at) FROM gold_dq_results)
GROUP BY suite
ORDER BY suite
