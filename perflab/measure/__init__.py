"""Measuring a load: run the generator (:mod:`.generator`), read what it wrote (:mod:`.result`: its summary and
interval log, :mod:`.hdrlog`; a real wrk2's console, :mod:`.wrk_output`), merge a load's parts exactly
(:mod:`.merge`), and judge the numbers: is the run a valid measure of the server (:mod:`.validity`), did a probe
pass (:mod:`.judgement`)."""
