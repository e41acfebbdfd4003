"""``python -m agentfuzz``: the same command line as ``agentfuzz``."""

from agentfuzz.cli import main

main()
