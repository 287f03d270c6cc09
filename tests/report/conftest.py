import shutil

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "browser" in item.keywords and not shutil.which("chromium"):
            item.add_marker(pytest.mark.skip(reason="chromium is not installed (scripts/apt-ensure chromium)"))


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: needs Debian's chromium (headless)")
