"""The lab's statistics: when two measurements may be said to differ (:mod:`.significance`), the paired A/B
statistics and their stop rule (:mod:`.paired`), the comparison methods every verdict names (:mod:`.methods`),
and change points of a metric across commits (:mod:`.changepoints`)."""
