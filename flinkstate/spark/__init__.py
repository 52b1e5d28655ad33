"""Spark over checkpoint datasets: what rescaling does to in-flight data, at any size.

Spark runs embedded (``local[*]``), or on the local Spark Connect server when one runs
(``flinkstate spark-server``), unless ``FLINKSTATE_SPARK_MASTER`` or an explicit master names
a cluster. Results are aggregates computed by Spark; nothing is collected row by row.
"""
