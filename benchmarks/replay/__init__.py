"""Replay: sessions replayed request by request, priced, with their retention.

The shared real transcripts (`real_transcripts`), a real agent loop (`real_loop`), every
importer (`transcript_imports`), the summary calls' cache and price, and the cache model
checked against real usage (`usage_check`).
"""
