"""The sandbox interface: limits, one execution, its outcome, and the receipt of the environment.

A backend runs ``python3 -I -c BOOT`` in a fresh isolated environment (no network, read-only root,
a writable tmpfs scratch only, a non-root uid, memory / pids / CPU / wall limits) and feeds it one
payload on stdin: the in-sandbox supervisor (``harness/supervisor.py``), the child modules and the
jobs. The supervisor runs each job in its own child process and prints one marked JSON line. A
backend returns an `Execution`; `outcome()` turns it into the supervisor's job reports, or raises
`SandboxFault` when the sandbox itself failed (never the model's failure).
"""

from __future__ import annotations

import json
import secrets
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from srbench.cas.digest import digest_json
from srbench.errors import SrBenchError
from srbench.schemas.wire import JSONObject, WireJSON

BOOT = ("import sys,json;p=json.loads(sys.stdin.buffer.read());"
        "exec(compile(p['supervisor'],'supervisor.py','exec'),{'__name__':'__srbench__','PAYLOAD':p})")
SANDBOX_UID = 10001
HARNESS_FILES = ("supervisor.py", "lcb_child.py", "script_child.py", "scicode_h5.py", "scicode_cmp.py")


class SandboxFault(SrBenchError):
    """The sandbox could not run or report the job (no daemon, missing image, harness crash)."""

    code = "sandbox_error"
    http_status = 503


class SandboxUnavailable(SandboxFault):
    """No usable backend on this host, or the one asked for is not set up."""

    code = "sandbox_unavailable"


class Limits(BaseModel):
    """Limits of one sandbox execution. The outer wall limit covers every job; each child also has
    `job_wall_s` (from the job or the default here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(default=1024, ge=16)        # cgroup / container memory (swap included)
    pids: int = Field(default=64, ge=8)
    cpus: float = Field(default=1.0, gt=0)
    cpu_s: int = Field(default=30, ge=1)               # RLIMIT_CPU of each child
    wall_s: float = Field(default=60.0, gt=0)          # the whole execution
    job_wall_s: float = Field(default=20.0, gt=0)      # one child
    address_space_mb: int | None = Field(default=None, ge=64)   # RLIMIT_AS of each child (None: cgroup only)
    file_size_mb: int = Field(default=16, ge=1)
    open_files: int = Field(default=256, ge=16)
    output_bytes: int = Field(default=65536, ge=1024)  # per child stream kept by the supervisor
    scratch_mb: int = Field(default=64, ge=1)

    def child(self, wall_s: float | None = None) -> WireJSON:
        return {"cpu_s": self.cpu_s, "address_space_mb": self.address_space_mb, "file_size_mb": self.file_size_mb,
                "open_files": self.open_files, "output_bytes": self.output_bytes,
                "wall_s": wall_s if wall_s is not None else self.job_wall_s}


@dataclass
class Execution:
    """What a backend saw: the supervisor's exit, its capped output, and the backend's own findings."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    wall_s: float
    timed_out: bool = False            # the outer wall limit fired
    oom_killed: bool = False
    fault: str | None = None           # the backend failed before or around the run
    facts: WireJSON = field(default_factory=dict)


class Receipt(BaseModel):
    """DEP-6: what graded — recorded with every grade and shown in the report's provenance."""

    model_config = ConfigDict(extra="forbid")

    kind: str = "sandbox-receipt"
    schema_: int = Field(default=1, alias="schema")
    backend: str                       # docker | bwrap
    rootfs_digest: str                 # sha256 of the grading rootfs manifest
    base_digest: str | None = None     # sha256 of the base (debootstrap) rootfs manifest
    image: str | None = None           # docker tag
    image_id: str | None = None        # docker image id (content digest)
    base_image_id: str | None = None
    debian: dict[str, str] = Field(default_factory=dict)     # suite, variant, mirror
    packages: dict[str, str] = Field(default_factory=dict)   # Debian package → version
    python_packages: dict[str, str] = Field(default_factory=dict)   # PyPI wheels → version
    harness_digest: str = ""
    limits: JSONObject = Field(default_factory=dict)    # the sandbox `Limits` graded under, as JSON
    scicode_test_data_sha256: str | None = None

    def digest(self) -> str:
        return digest_json(self.model_dump(mode="json", by_alias=True))


class BuildImages(BaseModel):
    """The grading rootfs and its base as imported into a Docker engine (`docker import`, never pulled)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    image: str
    """The grading image's tag (``sr-bench-grader:<rootfs digest prefix>``)."""
    image_id: str
    """Its image id (a content digest): what the Docker backend checks before grading."""
    base_image: str | None = None
    """The base (debootstrap) image's tag."""
    base_image_id: str | None = None
    """Its image id."""


class BuildReceipt(BaseModel):
    """What `sr-bench setup --build-sandbox` built: ``<sandbox dir>/receipt.json`` (kind ``sandbox-build``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, populate_by_name=True)
    kind: Literal["sandbox-build"] = "sandbox-build"
    """The file's kind."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The file's layout version."""
    rootfs_digest: str
    """The SHA-256 of the grading rootfs's manifest (every path, mode, link target and content)."""
    base_digest: str | None = None
    """The same of the base (debootstrap) rootfs."""
    debian: dict[str, str] = Field(default_factory=dict)
    """The debootstrap suite, variant, mirror and included packages."""
    packages: dict[str, str] = Field(default_factory=dict)
    """Debian package → version, as installed in the rootfs."""
    python_packages: dict[str, str] = Field(default_factory=dict)
    """The grading wheels installed (PyPI name → version); empty without `--install`."""
    docker: BuildImages | None = None
    """The Docker images, when an engine was reachable at build time."""
    harness_digest: str | None = None
    """The in-sandbox harness's digest when it was built."""
    scicode_test_data_sha256: str | None = None
    """SciCode's test data copied into the rootfs, if any."""

    def as_json(self) -> WireJSON:
        """The receipt as written to receipt.json."""
        return self.model_dump(mode="json", by_alias=True)


def read_build_receipt(sandbox_dir: Path) -> BuildReceipt:
    """The sandbox directory's build receipt; SandboxUnavailable (naming the fix) when it is missing or unreadable."""
    path = Path(sandbox_dir) / "receipt.json"
    if not path.is_file():
        raise SandboxUnavailable(f"{path} is missing: run `sr-bench setup --build-sandbox`")
    try:
        return BuildReceipt.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise SandboxUnavailable(f"{path} is not a sandbox build receipt ({exc.error_count()} problem(s)): "
                                 "rebuild with `sr-bench setup --build-sandbox`") from None


def harness_sources() -> dict[str, str]:
    base = resources.files("srbench.sandbox").joinpath("harness")
    return {name: base.joinpath(name).read_text("utf-8") for name in HARNESS_FILES}


def harness_digest() -> str:
    return digest_json(harness_sources())


def make_payload(jobs: list[WireJSON], limits: Limits, *, stop_on_failure: bool = False) -> tuple[bytes, str]:
    """(stdin bytes, marker) for one execution. Each job = {module, input, limits?}."""
    src = harness_sources()
    marker = "SRBENCH-" + secrets.token_hex(12)
    payload = {"supervisor": src["supervisor.py"], "modules": {k: v for k, v in src.items() if k != "supervisor.py"},
               "jobs": jobs, "limits": limits.child(), "marker": marker, "scratch": "/tmp/srbench",
               "stop_on_failure": stop_on_failure}
    return json.dumps(payload).encode("utf-8"), marker


def outcome(execution: Execution, marker: str) -> list[WireJSON]:
    """The supervisor's job reports, or SandboxFault when there are none to trust.

    A missing report after the outer wall limit or an OOM kill is the program's doing (the
    supervisor was starved or killed with it): those return one synthetic job report saying so."""
    if execution.fault:
        raise SandboxFault(execution.fault)
    text = execution.stdout.decode("utf-8", "replace")
    for line in reversed(text.splitlines()):
        if line.startswith(marker + " "):
            try:
                return list(json.loads(line[len(marker) + 1:])["jobs"])
            except (ValueError, KeyError, TypeError) as exc:
                raise SandboxFault(f"the sandbox supervisor's report is unreadable: {exc}") from exc
    if execution.timed_out:
        return [{"timed_out": True, "outer": True, "results": []}]
    if execution.oom_killed:
        return [{"signal": 9, "oom_killed": True, "outer": True, "results": []}]
    tail = execution.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    raise SandboxFault(f"the sandbox ended (exit {execution.exit_code}) without a report"
                       + (f": {' | '.join(tail)}" if tail else ""))


class Sandbox(ABC):
    """One backend. `execute` never raises for what the program does; only setup problems raise."""

    name: str
    slots: int | None = None        # a remote backend's jobs at once (Ray: its CPUs); None: this host's cores

    @abstractmethod
    def execute(self, stdin: bytes, limits: Limits, *, mounts: dict[str, str] | None = None) -> Execution:
        """Run the bootstrap with `stdin` in a fresh sandbox. `mounts` = {sandbox path: host file},
        read-only (a backend that cannot mount host files, e.g. a remote Docker engine, ignores it and
        relies on the image)."""

    @abstractmethod
    def receipt(self, limits: Limits | None = None) -> Receipt:
        """The receipt of the environment this backend runs, with the `limits` its jobs run under
        (None: the defaults)."""

    def run_jobs(self, jobs: list[WireJSON], limits: Limits, *, stop_on_failure: bool = False,
                 mounts: dict[str, str] | None = None) -> list[WireJSON]:
        payload, marker = make_payload(jobs, limits, stop_on_failure=stop_on_failure)
        return outcome(self.execute(payload, limits, mounts=mounts), marker)
