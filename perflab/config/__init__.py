"""Typed, validated parameters for everything perflab runs.

Every class is a frozen dataclass whose fields carry a spec (:mod:`.fields`): values are converted on
construction (``"4m"`` -> bytes, ``"500ms"`` -> seconds, ``"10k"`` -> requests/s) and checked, and the
error names the field, so a notebook fails in its first cell, not minutes later in a subprocess.
Derive variants with ``cfg.replace(...)`` (validated again). The command line is built from the same
fields.

* :mod:`.server`   ``ServerConfig`` -- one field per server flag, from the server's ``--options-json``
* :mod:`.load`     ``LoadParams``
* :mod:`.profile`  ``ProfileParams``, ``PrefillParams``, ``FillParams``
* :mod:`.search`   ``BreakpointCriteria``, ``BreakpointParams``
* :mod:`.validity` ``ValidityThresholds``
* :mod:`.target`   ``ForeignServer`` -- a server perflab did not build (bring your own)
* :mod:`.course`   ``CourseServer`` -- a highload-dht course server from the student's build output
* :mod:`.cluster`  ``ClusterConfig`` -- N nodes, ack/from, entry nodes; ``ClusterRunParams`` -- a cluster run's
  faults, fill, profiled nodes; ``ConsistencyParams`` -- the checker
* :mod:`.hosts`    ``HostOptions`` -- the Dask scheduler, generator hosts and server host a run measures on
* :mod:`.ab`       ``ABParams`` -- an interleaved A/B comparison
* :mod:`.scan`     ``ScanParams`` -- a range scan: the fill beyond the heap, the one read of the whole range
"""

from .ab import ABParams  # noqa: F401
from .cluster import ClusterConfig, ClusterRunParams, ConsistencyParams  # noqa: F401,E402
from .course import CourseServer  # noqa: F401,E402
from .hosts import HostOptions  # noqa: F401,E402
from .load import LOAD_TOOLS, LoadParams  # noqa: F401
from .profile import PROFILE_EVENTS, FillParams, PrefillParams, ProfileParams  # noqa: F401
from .scan import ScanParams  # noqa: F401
from .search import BreakpointCriteria, BreakpointParams  # noqa: F401
from .server import BACKENDS, DEFAULT_HEAP, GC_FLAGS, MODES, ServerConfig, server_options  # noqa: F401
from .target import ForeignServer  # noqa: F401
from .validity import ValidityThresholds  # noqa: F401
