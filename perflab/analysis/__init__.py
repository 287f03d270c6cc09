"""What the notebooks call, inside their kernel: the public namespace of the lab's analysis.

* :mod:`.notebook`    setup, parameter checks, measuring with one printed line, console outputs and flame graphs
* :mod:`.tables`      the summary tables: fixed-rate runs, storage events, overload, breakpoint searches
* :mod:`.plots`       the figures (percentile spectra, timelines, breakpoint curves, heatmaps, category bars)
* :mod:`.timeline`    one run's latency per interval with the server's events
* :mod:`.commentary`  sentences generated from measured facts, claiming a difference only with a test
* :mod:`.profiles`    the profile sections: categories, flame graphs, the difference between two runs
* :mod:`.history`     everything recorded so far, from the runs index (the summary notebook)
* :mod:`.findings`    a notebook's answer in one sentence, for the report's index page
* :mod:`.flamepreview` the static preview of a linked flame graph

A notebook imports ``perflab`` and these modules, nothing else of the package.
"""
