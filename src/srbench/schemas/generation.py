"""Generation parameters as a plan freezes them (RUN-6, TG-4): a manifest's `sampling` and each planned
target's `effective_params` — greedy and the output cap, then the plan's sampling, then the target's
pinned `request_params` (stages/plan/roles.py `effective_params`).

Only the fields given are serialised (and so hashed): a plan's bytes are those of the keys it was made
with, in any order (canonical JSON sorts them), exactly as when these blocks were dicts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""How hard a reasoning model thinks (the values of schemas/target.py REASONING_EFFORTS)."""


class GenerationParams(BaseModel):
    """The request fields a run sets on every model call (the OpenAI chat body's generation fields,
    and vLLM's extensions). `check_generation_params` (schemas/target.py) checks ranges and the set of
    fields before this model types them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    n: int | None = Field(default=None, description="choices per request (only 1)")
    temperature: int | float | None = Field(default=None, description="sampling temperature, in [0, 2]")
    top_p: int | float | None = Field(default=None, description="nucleus sampling mass, in [0, 1]")
    top_k: int | None = Field(default=None, description="sample among the k likeliest tokens (-1: all)")
    min_p: int | float | None = Field(default=None, description="minimum token probability, in [0, 1]")
    presence_penalty: int | float | None = Field(default=None, description="in [-2, 2]")
    frequency_penalty: int | float | None = Field(default=None, description="in [-2, 2]")
    repetition_penalty: int | float | None = Field(default=None, description="vLLM's repetition penalty")
    length_penalty: int | float | None = Field(default=None, description="vLLM's length penalty")
    stop: str | list[str] | None = Field(default=None, description="stop sequence(s)")
    seed: int | None = Field(default=None, description="the endpoint's sampling seed")
    max_tokens: int | None = Field(default=None, description="most output tokens of one response")
    min_tokens: int | None = Field(default=None, description="fewest output tokens (≤ max_tokens)")
    reasoning_effort: ReasoningEffort | None = Field(default=None, description="a reasoning model's effort")
    chat_template_kwargs: dict[str, JsonValue] | None = Field(
        default=None, description="vLLM: arguments of the model's chat template (the model's own keys)")
    ignore_eos: bool | None = Field(default=None, description="vLLM: keep generating past end-of-sequence")
    skip_special_tokens: bool | None = Field(default=None, description="vLLM: drop special tokens from the text")
    spaces_between_special_tokens: bool | None = Field(default=None, description="vLLM: detokenizer spacing")

    def body(self) -> dict[str, JsonValue]:
        """The fields given, as request-body JSON (what the plan stores and the endpoint is sent)."""
        out: dict[str, JsonValue] = self.model_dump(mode="json")
        return out

    def same(self, other: GenerationParams) -> bool:
        """The same fields given with equal values (an explicit null differs from an absent field)."""
        return self.body() == other.body()

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        """Only the fields the block was made with: the same bytes as the dict it was."""
        data: dict[str, JsonValue] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}

