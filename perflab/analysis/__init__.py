"""What the notebooks call, inside their kernel: the public namespace of the lab's analysis.

* :mod:`.plots`       the figures (percentile spectra, timelines, breakpoint curves, category bars)
* :mod:`.timeline`    one run's latency per interval with the server's events
* :mod:`.commentary`  sentences generated from measured facts, claiming a difference only with a test
* :mod:`.findings`    a notebook's answer in one sentence, for the report's index page
* :mod:`.notebook`    setup, parameter checks, console outputs and flame graphs folded and linked
* :mod:`.flamepreview` the static preview of a linked flame graph

A notebook imports ``perflab`` and these modules, nothing else of the package.
"""
