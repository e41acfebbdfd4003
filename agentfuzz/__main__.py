"""``python -m agentfuzz``: the same command line, and the same exit codes, as ``agentfuzz``."""

from agentfuzz.cli import main

raise SystemExit(main())
