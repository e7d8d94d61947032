"""Which failed HTTP answers are systematic: every later call to the same target would fail the same way.

A systematic failure stops that target's dispatch (or the run's, when the plan says
``stop_on_systematic: run``); any other failure fails one cell and the run goes on. Recognised forms,
each returned with its kind:

- ``auth``: HTTP 401 or 403; HTTP 402 (no credit left); an HTTP 4xx whose error body is a known
  credential error of a common proxy or provider: LiteLLM's ``No connected db.`` (a key that is not
  the master key, on a proxy without a key database) and ``Invalid proxy server token``, OpenAI's
  ``Incorrect API key`` / ``invalid_api_key``, Google's ``API key not valid``, and the generic
  ``authentication error`` / ``unauthorized`` / ``missing API key``.
- ``quota``: HTTP 429 whose body says the quota is exhausted (``insufficient_quota``, ``exceeded your
  current quota``); a plain 429 is a rate limit and passes.
- ``unknown_model``: an HTTP 4xx naming a model that does not exist (``model_not_found``,
  ``Invalid model name`` — LiteLLM —, ``The model X does not exist``).
- ``not_found``: any other HTTP 404 — the path is wrong (a base_url without ``/v1``, or ``/v2``).
- ``no_deployment``: an HTTP 4xx saying the deployment does not exist (Azure's ``DeploymentNotFound``,
  ``no such deployment``).
- ``redirect``: HTTP 3xx (the base URL is wrong; redirects are never followed).
Server errors (5xx) and timeouts are never systematic: they may pass.
"""

from __future__ import annotations

import re

__all__ = ["failure_hint", "systematic_kind"]

_FLAGS = re.IGNORECASE | re.DOTALL
_MODEL_MISSING = re.compile(
    r"model\b.{0,120}?\b(does not exist|not exist|not found|unknown|is not (available|supported|served))"
    r"|\b(unknown|invalid|no such|nonexistent) model\b|model_not_found", _FLAGS)
_AUTH = re.compile(
    r"no connected db|invalid proxy server token|incorrect api key|invalid[ _]api[ _]key|api key not valid"
    r"|authentication ?error|\bunauthori[sz]ed\b|missing (an )?api key|no api key|api key (is )?required", _FLAGS)
_DEPLOYMENT = re.compile(r"deploymentnotfound|no such deployment|deployment\b.{0,80}?\b(does not exist|not found)",
                         _FLAGS)
_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota", _FLAGS)


def systematic_kind(status: int, text: str) -> str | None:
    """The kind of systematic failure an HTTP error answer is (module docstring), or None."""
    if 300 <= status < 400:
        return "redirect"
    if status in (401, 403, 402):
        return "auth"
    if status == 404:
        return "unknown_model" if _MODEL_MISSING.search(text) else "not_found"
    if status == 429:
        return "quota" if _QUOTA.search(text) else None
    if not 400 <= status < 500 or status == 408:
        return None
    if _AUTH.search(text):
        return "auth"
    if _DEPLOYMENT.search(text):
        return "no_deployment"
    if _MODEL_MISSING.search(text):
        return "unknown_model"
    return None


def _http_status(error_class: str) -> int | None:
    tail = error_class.removeprefix("http_")
    return int(tail) if tail != error_class and tail.isdigit() else None


def failure_hint(error_class: str, error: str | None, base_url: str, model: str,
                 api_key_env: str | None) -> str | None:
    """What a failure class of one target likely means and what to check, one line (None: its message
    says it all)."""
    url, text = base_url.rstrip("/"), error or ""
    status = _http_status(error_class)
    if error_class == "connect_error":
        how = "connection refused" if "refused" in text or "Connect call failed" in text else "cannot connect"
        return f"{how} at {url} — is the endpoint running there? (check the target's base_url)"
    if status == 404:
        if _MODEL_MISSING.search(text):
            return (f"{url} does not serve the model {model!r} — check the target's model (GET {url}/models lists "
                    "the ones it serves)")
        return (f"HTTP 404 at {url}/chat/completions — wrong path? (an OpenAI-compatible base_url usually ends "
                "in /v1)")
    if status in (401, 403) or (status is not None and 400 <= status < 500 and _AUTH.search(text)):
        key = (f"the key in {api_key_env} was refused" if api_key_env
               else "the target names no api_key_env, so no key was sent")
        return f"HTTP {status} at {url} — key? {key}"
    if status == 402 or (status == 429 and _QUOTA.search(text)):
        return f"HTTP {status} at {url} — the account behind the key has no credit or quota left"
    if status is not None and 300 <= status < 400:
        return f"HTTP {status} at {url} — it redirects (never followed): give the final URL as the base_url"
    if error_class in ("timeout_total", "timeout_idle"):
        return f"no answer in time from {url} — a slow or overloaded endpoint: raise the manifest's limits"
    return None
