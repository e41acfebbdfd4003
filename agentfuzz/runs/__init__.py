"""Runs: the campaign entry every face calls, the fuzz engine and its passes, the meter,
``--workers`` shards, the knee, the run's config, ``agentfuzz reduce``, the proxy's watcher."""
