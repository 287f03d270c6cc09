"""The lab report, made on the host: the batch that runs the notebooks, the pages it writes, comparisons.

* ``python -m perflab report --plan quick|full`` (``make report``) is declared with the other commands, in :mod:`perflab.cli`
* :mod:`.plans`      the built-in plans and plan files
* :mod:`.batch`      run a plan's notebooks with papermill, export them, write the index, ``report/latest``
* :mod:`.export`     offline pages: code folded, one shared plotly.js, flame graphs linked
* :mod:`.index_page` the index page: findings first, then the record
* :mod:`.compare` / :mod:`.compare_page`  ``perflab compare A B``: two runs or two reports side by side
* :mod:`.regress`    ``perflab gate``'s files (Markdown, JUnit XML, JSON) and ``perflab bisect``'s page
* :mod:`.browser`    headless chromium checks the pages (plots drawn, toggles, no network, screenshots)

What the notebooks themselves call (each subject's figures, tables, sentences and findings) is :mod:`perflab.analysis`.
"""
