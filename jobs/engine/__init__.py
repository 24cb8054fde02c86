"""How the job drives Spark, apart from what it computes: the classic session's JVM-side tuning (class archive,
py4j gateway calls, job labels, the preloading worker daemon, local relations) and, in :mod:`jobs.engine.jvm`,
every JVM-private call with the fallback a Spark Connect session takes. Nothing here changes a result."""
