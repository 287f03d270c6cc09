"""perflab's version: recorded with every run and compared between the hosts of one session."""

__version__ = "0.3.0"
