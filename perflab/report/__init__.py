"""The lab report: papermill batch, offline HTML export, index page, browser check, commentary.

* :mod:`perflab.report.cli` -- ``python -m perflab report --plan quick|full`` (``make report``).
* :mod:`perflab.report.plans` -- the built-in plans.
* :mod:`perflab.report.runner` -- run a plan, export, index, ``report/latest``.
* :mod:`perflab.report.export` -- offline pages: code folded, one shared plotly.js, flame graphs linked.
* :mod:`perflab.report.index` -- the index page: findings first, then the record.
* :mod:`perflab.report.findings` -- ``show_finding``: a notebook's answer, for the index page.
* :mod:`perflab.report.compare` / :mod:`perflab.report.compare_page` -- ``perflab compare A B``.
* :mod:`perflab.report.browser` / :mod:`perflab.report.cdp` -- headless chromium over the DevTools pipe:
  plots drawn, toggles clicked, no network, screenshots.
* :mod:`perflab.report.notebook` -- what the notebooks call: setup, parameter checks, display helpers.
* :mod:`perflab.report.flamepreview` -- the static preview of a linked flame graph.
* :mod:`perflab.report.commentary` -- sentences generated from measured facts.
* :mod:`perflab.report.plots` -- the figures.
"""
