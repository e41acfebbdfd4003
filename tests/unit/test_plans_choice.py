"""Session turns carry a tool_choice only where the profile names some (``session_choices``)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from agentfuzz.model.plan import Plan
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies import plans

QUICK = settings(max_examples=60, suppress_health_check=list(HealthCheck), deadline=None)


def test_sessions_leave_tool_choice_out_unless_the_profile_names_some() -> None:
    @QUICK
    @given(plans(Profile(), "chat", False))
    def plain(plan: Plan) -> None:
        assert all(step.choice is None for step in plan.steps)

    plain()
    seen: set[str | None] = set()

    @QUICK
    @given(plans(Profile(session_choices=("required", "named")), "responses", False))
    def forced(plan: Plan) -> None:
        seen.update(step.choice for step in plan.steps)

    forced()
    assert seen <= {None, "required", "named"} and {"required", "named"} <= seen
