"""``python -m agentfuzz.cli``: the same command line, and exit codes, as ``agentfuzz``."""

from agentfuzz.cli import main

raise SystemExit(main())
