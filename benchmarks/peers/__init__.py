"""Peers side by side: other agent frameworks' context management, driven by scripted fake models.

Each peer runs in its own virtual environment (created on demand by `benchmarks.peers.venvs`), never
as a dependency of this package. The drivers in `benchmarks.peers.drivers` are run by the peer
venv's interpreter with this repository on `PYTHONPATH`, so this package (and `benchmarks`
itself) must stay importable without any third-party package: no imports here.
"""
