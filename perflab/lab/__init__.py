"""What the notebooks call to make their measurements, one layer above what tells them (:mod:`perflab.analysis`,
which measures nothing: the import-linter contract ``analysis only tells`` holds it to that).

* :mod:`.notebook` -- a notebook's plumbing: setup, parameters checked, its servers, sides and data built, and
  measuring with one printed line each (a fixed-rate run, a breakpoint search, configurations against one
  baseline, a metric across commits)
* :mod:`.cluster`  -- what notebook 07 builds and measures on the cluster: its cluster, workload, fault, the
  nodes every run measures, one node against the cluster's capacity (told by :mod:`perflab.analysis.cluster`)
"""
