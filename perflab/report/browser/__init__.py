"""A real headless chromium looks at the report's pages: :mod:`.cdp` speaks the DevTools protocol over a
pipe, :mod:`.check` loads a page and records what a reader would see (figures drawn, code toggles,
folded consoles, errors, requests that would leave ``file://``, screenshots)."""
