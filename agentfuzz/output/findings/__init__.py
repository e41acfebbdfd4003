"""What a run found: the finding store, folding, and repro bundles on disk."""
