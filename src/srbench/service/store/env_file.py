"""The service's environment, made explicit: an env file beside the store, and errors that name it.

Keys (a target's ``api_key_env``) and object-store credentials (``FSSPEC_S3_KEY`` …) are read by the
service, not by the command that asked: a service started by an earlier command keeps the environment
it started with. So the service also reads ``<store>.env`` beside the store directory when it starts
(``KEY=value`` lines in dotenv syntax: ``export`` allowed, ``#`` comments, single or double quotes; no
interpolation) — keys then survive restarts. The file must be the user's own, a regular file, and
private (chmod 600): a group/world-readable one is refused with one line. Values are never echoed,
logged or put in argv; a variable already in the service's environment wins over the file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from srbench.discovery import read_private_file
from srbench.errors import InvalidInput, SrBenchError

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NAME = 128
# variables that change how the service and the programs it starts run (`env set` refuses them: the env file holds
# keys and credentials; sr-bench's own settings are the command line's and the starting shell's)
RUNTIME_NAMES = frozenset({"PATH", "HOME", "SHELL", "TMPDIR", "IFS", "ENV", "BASH_ENV", "DOCKER_HOST"})
RUNTIME_PREFIXES = ("LD_", "PYTHON", "SR_BENCH_", "DYLD_", "MALLOC_")
CREDENTIAL_ERRORS = {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
                     "NoAuthTokenError", "DefaultCredentialsError", "ClientAuthenticationError",
                     "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidClientTokenId"}
CREDENTIAL_WORDS = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "Unable to locate credentials",
                    "AccessDenied", "InvalidClientTokenId")
FIX = "then `sr-bench stop` and rerun (the next command starts the service with it)"
_FROM_FILE: dict[str, str] = {}      # the variables an env file set in this process, and their values


def env_file_path(store_dir: Path) -> Path:
    return store_dir.parent / f"{store_dir.name}.env"


def where_hint(store_dir: Path | None = None) -> str:
    """Where the service reads its env file: the store's own path when known."""
    where = env_file_path(store_dir) if store_dir is not None else "<store>.env"
    return f"the env file beside the store ({where}, chmod 600)"


def parse(text: str, path: Path) -> dict[str, str]:
    """dotenv lines → {name: value}; a bad line is one error naming its number, never its value."""
    out: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not NAME.fullmatch(name):
            raise InvalidInput(f"{path} line {n}: expected NAME=value (dotenv syntax)")
        quote = value[:1]
        if quote in ("'", '"'):
            end = _closing(value, quote)
            rest = value[end + 1:].strip() if end > 0 else ""
            if end < 0 or (rest and not rest.startswith("#")):      # `A="x" # note` is dotenv; `A="x"y` is not
                raise InvalidInput(f"{path} line {n}: unterminated quote" if end < 0 else
                                   f"{path} line {n}: text after the closing quote (only a # comment may follow)")
            value = value[1:end]
            if quote == '"':
                value = value.replace('\\"', '"').replace("\\n", "\n")
        else:
            value = value.split(" #", 1)[0].rstrip()
        if "\x00" in value:
            raise InvalidInput(f"{path} line {n}: a NUL byte in the value (an environment value cannot hold one)")
        out[name] = value
    return out


def _closing(value: str, quote: str) -> int:
    """The index of the quote closing `value[0]` (a double-quoted value escapes it as \\"), or -1."""
    i = 1
    while i < len(value):
        if quote == '"' and value[i] == "\\":
            i += 2
            continue
        if value[i] == quote:
            return i
        i += 1
    return -1


def load_env_file(store_dir: Path) -> list[str]:
    """Put the env file's variables into this process's environment; returns their names (never the
    values). A variable the process had before wins; one an earlier read of the file set follows the file,
    so the service reads it again before each plan check and run (`sr-bench env set` needs no restart).
    No file: nothing to do."""
    path = env_file_path(store_dir)
    try:
        text = read_private_file(path, "env file")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text: write it as KEY=value lines (dotenv syntax) in UTF-8") from None
    if text is None:
        return []
    names = []
    for name, value in parse(text, path).items():
        if name not in os.environ or _FROM_FILE.get(name) == os.environ[name]:
            if os.environ.get(name) != value:
                names.append(name)
            os.environ[name] = _FROM_FILE[name] = value
    return names


def check_name(name: str) -> None:
    """A name `env set` may write: a variable name of at most MAX_NAME characters, not one of RUNTIME_NAMES/_PREFIXES."""
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise InvalidInput(f"{name[:40]!r}{'…' if len(name) > 40 else ''} is not a variable name (letters, digits "
                           f"and _, not starting with a digit, at most {MAX_NAME} characters)")
    if name in RUNTIME_NAMES or name.startswith(RUNTIME_PREFIXES):
        raise InvalidInput(f"{name} changes how the service and its programs run, not a key or credential: the env "
                           "file holds keys and credentials only; set it in the shell that starts the service")


def set_variable(store_dir: Path, name: str, value: str) -> Path:
    """Write NAME=value into the env file (its other lines kept; created private, replaced whole, mode 600)."""
    check_name(name)
    if "\n" in value or "\x00" in value or ("'" in value and ('"' in value or "\\" in value)):
        raise InvalidInput(f"the value of {name} holds a newline, a NUL or both quote kinds: write the env file by hand")
    path = env_file_path(store_dir)
    old = read_private_file(path, "env file") or ""
    kept = [line for line in old.splitlines() if _line_name(line) != name]
    quoted = f"'{value}'" if "'" not in value else '"' + value.replace('"', '\\"') + '"'
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join([*kept, f"{name}={quoted}"]) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def _line_name(line: str) -> str | None:
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    return text.removeprefix("export ").lstrip().partition("=")[0].strip()


def missing_key(target_ids: list[str], env: str, store_dir: Path | None = None) -> str:
    """One line for a key the service lacks, whatever number of targets name it."""
    which = f"target{'s' if len(target_ids) > 1 else ''} {', '.join(target_ids)}"
    return (f"environment variable {env} ({which}) is not set in the service's environment (it keeps the "
            f"environment it started with): `sr-bench env set {env}` puts it in {where_hint(store_dir)}, read before "
            f"the next plan or run; or export it, {FIX}")


def credential_fault(exc: BaseException, store_dir: Path | None = None) -> SrBenchError | None:
    """An object-store credential failure (botocore's NoCredentialsError and kin, an access-denied
    answer) as one line naming where the service looks, else None."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        names = {c.__name__ for c in type(e).__mro__}
        if names & CREDENTIAL_ERRORS or any(w in str(e) for w in CREDENTIAL_WORDS):
            kind = (names & CREDENTIAL_ERRORS or {type(e).__name__}).pop()
            return InvalidInput(
                f"the object store refused the service's credentials ({kind}): the service reads them from its "
                "environment — FSSPEC_S3_KEY/FSSPEC_S3_SECRET (and FSSPEC_S3_ENDPOINT_URL), or AWS_ACCESS_KEY_ID/"
                f"AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/credentials; put them in {where_hint(store_dir)} or export "
                f"them, {FIX}", code="service_environment")
        e = e.__cause__ or e.__context__
    return None
