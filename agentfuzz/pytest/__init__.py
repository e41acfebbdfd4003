"""The agentfuzz pytest plugin: its hooks, test items, fixtures and seeded campaigns."""
