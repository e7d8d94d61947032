"""What is wrong with a target, said before and after a run (issue 40): a probe of each target before any
paid call (`targets/probe.py`), the service's view of each key it needs, and a run's failures grouped by
class per target with the first message and a hint (`targets/failures.py` `failure_hint`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ProbeOutcome = Literal["ok", "unlisted", "no_key", "unreachable", "refused_key", "not_found", "model_not_listed",
                       "error"]


class KeyState(BaseModel):
    """Whether the service holds a key a target names (never the value)."""

    model_config = ConfigDict(frozen=True)
    env: str = Field(description="the variable the target's api_key_env names")
    set: bool = Field(description="whether the service's environment holds it (its own, or its env file's)")
    env_file: str | None = Field(default=None, description="the env file the service reads when it starts "
                                                           "(<store>.env), where `sr-bench env set` writes")


class Probe(BaseModel):
    """One GET <base_url>/models to a target, before any paid call."""

    model_config = ConfigDict(frozen=True)
    outcome: ProbeOutcome = Field(description="ok; unlisted (answers, but lists no models: nothing to check); "
                                              "no_key (not sent: the key is missing); unreachable; refused_key "
                                              "(HTTP 401/403); not_found (HTTP 404: wrong path?); model_not_listed; "
                                              "error (another answer)")
    url: str = Field(description="the URL probed")
    http_status: int | None = Field(default=None, description="its HTTP status, when it answered")
    problem: str | None = Field(default=None, description="what is wrong, one line naming the fix; None when nothing")


class TargetCheck(BaseModel):
    """One target as the service sees it: its key, and (when asked) the probe's answer."""

    model_config = ConfigDict(frozen=True)
    target_id: str = Field(description="the target's id")
    key: KeyState | None = Field(default=None, description="the key it names (None: it names none)")
    probe: Probe | None = Field(default=None, description="the probe, when one was asked for and could be sent")


class FailureClass(BaseModel):
    """A run's failed cells of one target and one error class."""

    model_config = ConfigDict(frozen=True)
    error_class: str = Field(description="the cells' error class (e.g. connect_error, http_404), else their state")
    cells: int = Field(description="how many cells")
    first_error: str | None = Field(description="the first of their messages, in dispatch order")
    hint: str | None = Field(default=None, description="what it likely means and what to check, one line")


class TargetFailures(BaseModel):
    """One target's failed cells by class, the largest first."""

    model_config = ConfigDict(frozen=True)
    target_id: str = Field(description="the target's id")
    base_url: str | None = Field(default=None, description="its base URL as the run's plan froze it")
    classes: list[FailureClass] = Field(description="its failure classes, the largest first")
