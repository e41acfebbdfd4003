"""Whether the target answers like an OpenAI API at all, and what a run does until it has.

Pointed at the wrong server (``python -m http.server``, a web app, a path with no API behind
it), every request is answered with an HTML page, a 501 or a 404: the run tested nothing, and
a finding made of such an answer (``error: 501``) would only be noise. So a finding whose
answer is not an API's is held back until the target has answered like an OpenAI server once
(a JSON answer, a JSON refusal, a stream of JSON events); if it never does, the finding is
dropped and the run says so in one line. A part of the run (one mode and kind) whose first
``NOT_API_LIMIT`` answers were all no API's ends there: a server without ``/v1/responses`` is
not asked again, and a server that is no API at all is told apart in a few requests.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agentfuzz.model.observation import Observation
from agentfuzz.runs.passes import Halt

__all__ = ["NOT_API_LIMIT", "NotAnApi", "Witness", "answer_kind"]

# Answers in a row, none like an API's, after which a part of the run ends.
NOT_API_LIMIT = 6

# Statuses a server that has no such endpoint answers with, whatever its body.
_NO_ENDPOINT = {404: "404", 405: "405", 501: "501"}


class NotAnApi(Halt):
    """The part under way has had only answers no OpenAI API gives: it ends here."""


def answer_kind(obs: Observation) -> str | None:
    """``"api"`` for an answer shaped like an OpenAI API's (a JSON body or JSON events, the
    request served); a short name of an answer no API gives (``"501"``, ``"an HTML page"``);
    None for one that says neither (a slow answer, a dropped connection, a bare 500, a 401)."""
    ex = obs.exchange
    status = ex.status
    if status is None or ex.failure:
        return None
    html = "html" in ex.content_type.lower() or ex.body.lstrip()[:1] == "<"
    if status in _NO_ENDPOINT:
        return _NO_ENDPOINT[status] + (" and an HTML page" if html else "")
    if html:
        return f"an HTML page ({status})"
    if any(isinstance(p, dict) for p in obs.payloads):
        return "api"
    if 200 <= status < 300 and any(kind == "non_json" for kind, _ in obs.errors):
        return f"a body that is not JSON ({status})"
    return None


@dataclass
class Witness:
    """What the run has heard of the target's answers: whether one was an API's, those no API
    gives, by kind, the findings held back until then (each an offer to make), and the current
    part's answers (``part``): how many, and whether any was an API's."""

    seen: bool = False
    not_api: Counter[str] = field(default_factory=Counter)
    held: list[Callable[[], None]] = field(default_factory=list)
    in_part: bool = False
    part_not_api: int = 0
    part_seen: bool = False

    @contextlib.contextmanager
    def part(self) -> Iterator[None]:
        """A part of the run (a mode and kind being fuzzed), ended early by ``NotAnApi``."""
        self.in_part, self.part_not_api, self.part_seen = True, 0, False
        try:
            yield
        except NotAnApi:
            pass
        finally:
            self.in_part = False

    def hear(self, obs: Observation) -> None:
        """Take one answer: an API's makes the held findings; in a part whose first
        ``NOT_API_LIMIT`` answers were all no API's, raise ``NotAnApi``."""
        kind = answer_kind(obs)
        if kind == "api":
            self.part_seen = True
            if not self.seen:
                self.seen = True
                held, self.held = self.held, []
                for offer in held:
                    offer()
        elif kind is not None:
            self.not_api[kind] += 1
            self.part_not_api += 1
            if self.in_part and not self.part_seen and self.part_not_api >= NOT_API_LIMIT:
                raise NotAnApi

    def offer(self, obs: Observation, offer: Callable[[], None]) -> None:
        """Make ``offer`` (a finding made of ``obs``) now, or hold it while no answer has been
        an API's and ``obs`` is no API's either."""
        kind = answer_kind(obs)
        if self.seen or kind is None or kind == "api":
            offer()
        else:
            self.held.append(offer)

    def line(self, url: str) -> str | None:
        """What the run says when no answer was an API's but some were no API's: the answers
        by kind, most common first (the CLI prints it after "every request was answered")."""
        if self.seen or not self.not_api:
            return None
        kinds = " or ".join(kind for kind, _ in self.not_api.most_common(3))
        return f"with {kinds} ({url} is not an OpenAI-compatible API)"
