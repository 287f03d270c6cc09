"""What the notebooks call, inside their kernel: the lab's results told by subject.

Each subject owns its tables, figures and sentences and names a short public list (``__all__``): a few
*story* functions a notebook calls, each returning a :class:`~.section.Section` (figures, tables and
Markdown in the order it shows them: ``.show()``), the lines of its Findings list (``findings(...)``) or its
answer for the report's index page (``answer(...)``, a :class:`~.findings.Finding`), and the pieces the
other subjects, the report and the command line build on.

* :mod:`.latency`      fixed-rate runs: percentile spectra, runs compared, the timeline with the server's events
* :mod:`.breakpoints`  breakpoint searches: each with its interval, curves, breakpoints compared
* :mod:`.profiles`     where CPU time, allocations and lock waits go; flame graphs linked with a preview
* :mod:`.storage`      the storage engine's cost: backends, flushes, compaction (notebook 05)
* :mod:`.executor`     worker threads × queue capacity: the grid's breakpoints and overload (notebook 04)
* :mod:`.ab`           two configurations measured interleaved, or several against one baseline
* :mod:`.regress`      regression checks across commits: the CI gate's verdict, a bisection's chain of verdicts
* :mod:`.cluster`      N nodes: cost, capacity, ack/from, a node killed and restarted, consistency (notebook 07)
* :mod:`.scan`         the whole range read once from a database beyond the heap: fill, read, chunk check, heap
                       (notebook 10)
* :mod:`.recorded`     everything recorded so far, from the runs index (notebook 06)
* :mod:`.findings`     the Findings list and a notebook's answer, read back by the report
* :mod:`.labels`       what runs and configurations are called everywhere in a notebook

Only this package writes sentences; the lab's other modules return numbers and structured results. A
sentence claims a difference only with a test behind it, gives n, and names its method
(:class:`perflab.stats.methods.Method`: *interleaved pairs*, *interleaved searches*, *sequential runs*,
*sequential intervals*).

Units. Inputs (parameter fields, command-line flags, notebook parameters, plan keys) are named for the
quantity, with no unit suffix, and take a value with its unit as text (``'500ms'``, ``'4m'``) or a bare
number in seconds or bytes; a notebook parameter has exactly the name of the field it feeds
(``probe_duration``, ``warmup``, ``duration``, ``ramp_duration``, ``budget``, ``sla_p99``). Outputs (record
fields, index columns, result attributes, table columns) are bare numbers and carry their unit as a suffix
(``_s``, ``_ms``, ``_us``, ``_bytes``).

This package measures nothing (the import-linter contract ``analysis only tells``): a notebook makes its runs
with :mod:`perflab.lab` (its plumbing, ``nb``, and notebook 07's cluster) and the strategies, and tells them
here. A notebook imports ``perflab``, these modules and :mod:`perflab.lab`'s, nothing else of the package.
"""
