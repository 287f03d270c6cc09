"""The lab report: papermill batch, offline HTML export, index page, browser check, commentary.

* :mod:`perflab.report.cli` -- ``python -m perflab report --plan quick|full`` (``make report``).
* :mod:`perflab.report.plans` -- the built-in plans.
* :mod:`perflab.report.runner` -- run a plan, export, index, ``report/latest``.
* :mod:`perflab.report.export` -- offline HTML (no CDN), checked for external loads.
* :mod:`perflab.report.browser` -- headless chromium: plots drawn, no script errors, screenshots.
* :mod:`perflab.report.notebook` -- what the notebooks call: setup, parameter checks, display helpers.
* :mod:`perflab.report.commentary` -- sentences generated from measured facts.
"""
