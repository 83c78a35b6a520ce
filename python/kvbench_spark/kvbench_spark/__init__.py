"""kvbench_spark: the Spark side of kvbench's PageRank analytics workload (paper D).

Commands (``python -m kvbench_spark COMMAND --help``):

- ``pagerank``: PageRank on Spark RDDs, map and reduce timed apart per
  iteration; the definition is in :mod:`kvbench_spark.pagerank`, a
  plain-Python reference in :mod:`kvbench_spark.reference`.
- ``lookup``: timed single-key ``rdd.lookup`` calls on a cached pair RDD.
- ``generate``: a seeded random edge list.

docs/analytics-spark.md describes the JSON channel and the measurements.
"""

__version__ = "0.1.0"
