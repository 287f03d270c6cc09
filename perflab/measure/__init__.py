"""Measuring a load: run the generator (:mod:`.load`), read its interval log (:mod:`.hdrlog`), and parse
a real wrk2's console output (:mod:`.wrk_output`)."""
