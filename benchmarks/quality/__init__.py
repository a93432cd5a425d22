"""Quality: what the request after a compaction still tells the model.

Checkpoint probes written apart from the code they check (`checkpoint_quality`,
`checkpoint_probes`, `probe_reading`), and continuity beside cost (`continuity`).
"""
