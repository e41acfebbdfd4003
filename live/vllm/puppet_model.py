"""Build the puppet's models into build.py's cache: SmolLM2 with every catalog marker as one token,
and a tiny model of the same tokenizer built for speed.

SmolLM2's tokenizer fills its 49,152-entry vocabulary and knows none of the tool-call formats'
markers, so vLLM's parsers that look their marker up as a token (Mistral's `[TOOL_CALLS]`,
Llama 3's `<|python_tag|>`, Jamba's `<tool_calls>`, DeepSeek V3's call markers) refuse to
start, and the others meet their markers spelled in several tokens. Both models here add each
marker the catalog lists as a single token of its family (`Format.special_tokens`) as an added,
non-special token: one token id, never dropped when decoding (as a marker spelled in text is
not), so a parser that reads text and one that reads token ids both meet it.

- `puppet-smollm2/`: SmolLM2's weights with the embedding grown by one row per added token (each
  new row the mean of the old ones), so the model can also sample them.
- `puppet-tiny/`: a two-layer Llama of the same tokenizer with random weights (seeded), for
  campaigns where the processor scripts every answer: what it would sample is never used, and a
  CPU server answers in a fraction of SmolLM2's time (bench/puppet_rate.py measures it).

Runs in the cache's venv (transformers, torch) through build.py; stdlib here at the top.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))

from _kit import is_done, mark_done, run

from agentfuzz.puppet.formats import FORMATS

# The tiny model's shape: head_dim 64, as vLLM's CPU attention wants; two layers, two heads.
TINY = {
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "seed": 0,
}
KINDS = ("puppet-smollm2", "puppet-tiny")


def marker_tokens() -> list[str]:
    """Every marker the catalog says is one token in its family's tokenizer, sorted."""
    return sorted({token for fmt in FORMATS.values() for token in fmt.special_tokens})


def build_puppet_models(cache: Path, log: Path) -> None:
    """Make CACHE/puppet-smollm2 and CACHE/puppet-tiny from CACHE/model (build.py's step)."""
    spec = {"tokens": marker_tokens(), "tiny": TINY, "source": "model"}
    python = str(cache / "venv" / "bin" / "python")
    for kind in KINDS:
        out, marker = cache / kind, cache / f"{kind}.done"
        if is_done(marker, spec) and (out / "config.json").exists():
            print(f"{kind}: up to date")
            continue
        marker.unlink(missing_ok=True)
        started = time.monotonic()
        partial = cache / f"{kind}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        make = [python, str(Path(__file__).resolve()), kind, str(cache / "model"), str(partial)]
        said = run(make, log, f"making {kind}", env={**os.environ, "HF_HUB_OFFLINE": "1"})
        shutil.rmtree(out, ignore_errors=True)
        partial.rename(out)
        mark_done(marker, spec)
        last = said.strip().splitlines()[-1] if said.strip() else ""
        print(f"{kind}: done in {time.monotonic() - started:.0f} s; {last}")


def make(kind: str, source: Path, out: Path) -> None:
    """Write the ``kind`` model into ``out``; runs in the cache's venv."""
    import torch
    from transformers import AddedToken, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(source)
    before = len(tokenizer)
    added = [AddedToken(t, special=False, normalized=False) for t in marker_tokens()]
    tokenizer.add_tokens(added)
    size = len(tokenizer)
    if kind == "puppet-smollm2":
        model = LlamaForCausalLM.from_pretrained(source, dtype=torch.float32)
        model.resize_token_embeddings(size, mean_resizing=True)
    else:
        torch.manual_seed(TINY["seed"])
        base = LlamaConfig.from_pretrained(source)
        shape = {k: v for k, v in TINY.items() if k != "seed"}
        config = LlamaConfig(**{**base.to_dict(), **shape, "vocab_size": size})
        model = LlamaForCausalLM(config)
    model = model.to(torch.bfloat16).eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    one = [t for t in marker_tokens() if len(tokenizer.encode(t, add_special_tokens=False)) == 1]
    print(f"{size - before} tokens added ({len(one)} encode as one), vocabulary {size}")


if __name__ == "__main__":
    make(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
