"""Profiling the server JVM: the in-process JVM bridge (:mod:`.bridge`), async-profiler sessions
(:mod:`.profiler`) and the analysis of collapsed stacks (:mod:`.flame`)."""
