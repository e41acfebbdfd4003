"""The puppet processor: a vLLM logits processor that makes the model write a script.

Loaded by the server, not by agentfuzz::

    vllm serve MODEL --logits-processors agentfuzz.puppet.vllm_processor:PuppetProcessor

(``agentfuzz puppet vllm-args`` prints the whole line.) A request that carries a script in its
``vllm_xargs`` (``channel.KEY``) gets that script, token by token: the served tokenizer encodes
it (no BOS; a special token's spelling becomes that one token, as the tokenizer splits by
default), each step forces the next token (every other logit -inf), and after the script the
request's end-of-sequence token is forced, so the answer ends with finish reason ``stop`` as a
model's would. A request with ``ignore_eos`` gets no end token: after the script the model is
free. A request without a script is untouched.

Where the row already forbids the token to force (a structured-output grammar under a forced
``tool_choice``, ``allowed_token_ids``, ``bad_words``, ``min_tokens`` holding the end back, a
token beyond the model's vocabulary), the processor forces nothing impossible: it stops forcing
that request, leaves the row as it is, and logs one warning naming the request (its tag, its
row, its prompt length). The answer does not say so; the log does.

It imports vLLM, torch, the stdlib and the two stdlib-only modules beside it, nothing else of
agentfuzz, so the server needs only this folder's parent on its ``PYTHONPATH``. It runs on
vLLM's V1 interface (0.32), which the CPU runner uses too.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import torch
from vllm.tokenizers import cached_tokenizer_from_config
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from agentfuzz.puppet.channel import decode
from agentfuzz.puppet.forcing import Forcer, Slots, text_to_write

__all__ = ["PuppetProcessor"]

# A child of vLLM's own logger, so its lines come out as vLLM's do.
log = logging.getLogger("vllm.agentfuzz.puppet")


class PuppetProcessor(LogitsProcessor):  # type: ignore[misc]  # vLLM's class: Any to mypy
    """Forces each scripted request's tokens; see the module's docstring."""

    @classmethod
    def validate_params(cls, sampling_params: Any) -> None:
        """An unreadable script is the client's error: vLLM answers the ``ValueError`` (a
        ``ChannelError``) with HTTP 400 before the request reaches the batch."""
        decode(sampling_params.extra_args)

    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        self._slots: Slots[Forcer] = Slots()
        self._tokenizer = cached_tokenizer_from_config(vllm_config.model_config)
        if self._tokenizer is None:
            log.warning("agentfuzz puppet: the server has no tokenizer; scripts are ignored")

    def is_argmax_invariant(self) -> bool:
        """Forcing a token changes what even greedy sampling picks."""
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is None:
            return
        added = [
            (index, self._joining(params, prompt, output))
            for index, params, prompt, output in batch_update.added
        ]
        moved = [(a, b, how == MoveDirectionality.SWAP) for a, b, how in batch_update.moved]
        self._slots.update(batch_update.removed, added, moved)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self._slots:
            return logits
        rows, tokens = self._wanted(logits)
        if not rows:
            return logits
        row_ids = torch.tensor(rows, dtype=torch.long, device=logits.device)
        token_ids = torch.tensor(tokens, dtype=torch.long, device=logits.device)
        possible = logits[row_ids, token_ids] > float("-inf")
        if not bool(possible.all()):
            for row, token, ok in zip(rows, tokens, possible.tolist(), strict=True):
                if not ok:
                    self._refuse(row, token, "the row forbids it")
            row_ids, token_ids = row_ids[possible], token_ids[possible]
        logits[row_ids] = float("-inf")
        logits[row_ids, token_ids] = 0.0
        return logits

    def _wanted(self, logits: torch.Tensor) -> tuple[list[int], list[int]]:
        """The rows to force this step and the token for each."""
        batch, vocabulary = logits.shape
        rows: list[int] = []
        tokens: list[int] = []
        for row, forcer in self._slots.items():
            token = forcer.next_token() if row < batch else None
            if token is None:
                continue
            if not 0 <= token < vocabulary:
                self._refuse(row, token, f"it is beyond the model's {vocabulary} logits")
                continue
            rows.append(row)
            tokens.append(token)
        return rows, tokens

    def _refuse(self, row: int, token: int, reason: str) -> None:
        forcer = self._slots.get(row)
        if forcer is None:
            return
        forcer.refused(token)
        log.warning(
            "agentfuzz puppet: request %r (row %d, %d prompt tokens) stops being forced, %s: "
            "%s (%s)",
            forcer.tag,
            row,
            forcer.prompt_length,
            forcer.phase.value,
            forcer.why,
            reason,
        )

    def _joining(
        self, params: Any, prompt: Sequence[int] | None, output: list[int]
    ) -> Forcer | None:
        """The forcer for a request joining the batch, or None for one left untouched. A
        failure here leaves the request to the model rather than take the engine down."""
        try:
            return self._forcer(params, prompt, output)
        except Exception as exc:  # a bug here must not stop the server
            log.warning("agentfuzz puppet: a request's script is ignored: %r", exc)
            return None

    def _forcer(
        self, params: Any, prompt: Sequence[int] | None, output: list[int]
    ) -> Forcer | None:
        script = decode(params.extra_args)
        if script is None or self._tokenizer is None:
            return None
        tokenizer = self._tokenizer

        def prompt_text() -> str:
            return str(tokenizer.decode(list(prompt or ()), skip_special_tokens=False))

        text = text_to_write(script, prompt_text)
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        end = None if params.ignore_eos else _end_token(params, tokenizer)
        return Forcer(ids, end, output, tag=script.tag, prompt_length=len(prompt or ()))


def _end_token(params: Any, tokenizer: Any) -> int | None:
    """The token the engine stops on: the request's eos, else the tokenizer's."""
    if params.eos_token_id is not None:
        return int(params.eos_token_id)
    eos = getattr(tokenizer, "eos_token_id", None)
    return None if eos is None else int(eos)
