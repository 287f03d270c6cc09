"""The server's side of a measured window's timeline: its timed events on the generator's clock
(:mod:`.events`) and which of them explain the latency spikes (:mod:`.attribution`)."""
