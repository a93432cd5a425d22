"""Context Harness benchmarks: token savings, prefix-cache stability, throughput."""
