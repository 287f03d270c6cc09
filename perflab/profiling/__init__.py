"""Profiling the server JVM: the in-process JVM bridge (:mod:`.bridge`), async-profiler sessions
(:mod:`.profiler`), what one leaves (:mod:`.profile`), the analysis of collapsed stacks (:mod:`.flame`) and what
is known of the profiled server's code, its categories' other half (:mod:`.codemap`)."""
