"""Call records: everything one model call left behind (journaled before `completed`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    SkipValidation,
    ValidationInfo,
    field_validator,
    model_serializer,
)

CallStatus = Literal["completed", "failed", "cancelled"]
# subject/judge/user_simulator/scaffolding: benchmarks/conversation.py ROLES ("simulator": older records)
CallRole = Literal["subject", "judge", "user_simulator", "scaffolding", "simulator", "preview"]


class Usage(BaseModel):
    """Four mutually exclusive token buckets. The whole object is None when metering is unknown."""

    model_config = ConfigDict(extra="forbid")
    input: int = Field(ge=0)
    cached_input: int = Field(ge=0)
    cache_write: int = Field(ge=0)
    output: int = Field(ge=0)

    def total_input(self) -> int:
        return self.input + self.cached_input + self.cache_write

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            cached_input=self.cached_input + other.cached_input,
            cache_write=self.cache_write + other.cache_write,
            output=self.output + other.output,
        )


class Timings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    started_at: float = Field(description="unix time the request was sent")
    ttft_s: float | None = None
    latency_s: float | None = Field(default=None, description="request start to end of stream")


class CallRecord(BaseModel):
    """Stored in the CAS (kind 'call') before the journal marks the cell completed or failed."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["call"] = "call"
    schema_: int = Field(default=1, alias="schema")
    role: CallRole = "subject"
    request: str = Field(description="digest of the request object")
    status: CallStatus
    error_class: str | None = None
    error: str | None = None
    http_status: int | None = None
    headers: dict[str, str] = Field(default_factory=dict, description="every response header, credentials masked")
    sse: str | None = Field(default=None, description="digest of the raw SSE transcript blob")
    text: str | None = Field(default=None, description="visible final text, <think> stripped")
    tool_calls: list[dict[str, JsonValue]] | None = Field(
        default=None, exclude_if=lambda v: not v,
        description="tool calls of the reply, OpenAI shape [{id, type: function, function: {name, arguments}}]; "
                    "absent when there are none (a record without them hashes as before they existed)")
    reasoning_chars: int = 0
    finish_reason: str | None = None
    response_model: str | None = None
    usage_raw: dict[str, JsonValue] | None = None
    usage: Usage | None = None
    timings: Timings
    bytes_received: int = 0
    sent: bool = Field(default=True, description="False only when no request byte can have left this host")
    routing: dict[str, JsonValue] | None = Field(default=None, description="preview: decision, model, selection")
    replayed_from: str | None = Field(default=None, description="replay: the baseline call record reused")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class MeteredCall(Protocol):
    """What pricing and router attribution read of a call (targets/accounting.py, targets/routers): a
    `CallRecord` has it; a stored record's JSON is read through `MeteredView`."""

    @property
    def usage(self) -> Usage | None: ...
    @property
    def response_model(self) -> str | None: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def usage_raw(self) -> dict[str, JsonValue] | None: ...


class MeteredView(BaseModel):
    """A stored call record's JSON as pricing reads it (a view: the record's other fields are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    usage: Usage | None = None
    """The call's four token buckets (None, or an empty object: not metered)."""
    response_model: str | None = None
    """The model the response named."""
    headers: dict[str, str] = Field(default_factory=dict)
    """The response headers (None: none)."""
    usage_raw: dict[str, JsonValue] | None = None
    """The provider's usage object as received."""

    @classmethod
    def of(cls, call: MeteredCall | Mapping[str, JsonValue]) -> MeteredCall:
        """`call` itself when it is a call record (or another view), else its stored JSON read as this view."""
        return cls.model_validate(call) if isinstance(call, Mapping) else call

    @field_validator("usage", "headers", mode="before")
    @classmethod
    def _empty(cls, v: object, info: ValidationInfo) -> object:
        """An empty usage reads as unmetered, a null headers as none (as the record's readers always did)."""
        if info.field_name == "usage":
            return v or None
        return {} if v is None else v


class RequestObject(BaseModel):
    """The stored request of one model call (kind ``request``), committed before any byte is sent: where it
    goes and the body sent, and the *names* of its headers, never their values (stages/dispatch/common.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["request"] = "request"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    url: str
    """The endpoint it is sent to."""
    body: SkipValidation[dict[str, JsonValue]]
    """The JSON body sent (the OpenAI chat wire format; built by targets/outcome.py build_body, so not
    validated again: this is on every call's path)."""
    header_names: list[str]
    """The names of the headers sent beside it (their values are never stored)."""
    target_id: str
    """The target called."""
    case_id: str
    """The case."""
    cell_id: str
    """The cell."""
    role: CallRole
    """Why the call is made (subject, judge, user_simulator, scaffolding, preview)."""
    api_key_env: str | None = None
    """The variable naming the target's key (absent from a preview's request)."""
    call_index: int | None = None
    """Its position in a multi-call cell's conversation (absent: a single call)."""

    @model_serializer(mode="wrap")
    def _absent_unless_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        for name in ("api_key_env", "call_index"):
            if name not in self.model_fields_set:
                data.pop(name, None)
        return data

    def stored(self) -> dict[str, JsonValue]:
        """The JSON object as stored: what `model_dump(mode="json", by_alias=True)` gives, built directly
        (this is on every call's path: ~10x cheaper than the dump through the wrap serializer). The body
        is the object's own, not a copy: read it, never change it."""
        data: dict[str, JsonValue] = {
            "kind": self.kind, "schema": self.schema_, "url": self.url, "body": self.body,
            "header_names": list(self.header_names), "target_id": self.target_id, "case_id": self.case_id,
            "cell_id": self.cell_id, "role": self.role}
        for name in ("api_key_env", "call_index"):
            if name in self.model_fields_set:
                data[name] = getattr(self, name)
        return data
