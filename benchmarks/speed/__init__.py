"""Speed: the toolkit's CPU cost per event, from 10^3 to 10^6 events, and the CLI's start-up.

`throughput` (and its corpus, phases and report), the session core, compaction speed, the stores
side by side, concurrent task writers, a store's own costs, and `startup`.
"""
