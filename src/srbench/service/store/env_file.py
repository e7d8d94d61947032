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
CREDENTIAL_ERRORS = {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
                     "NoAuthTokenError", "DefaultCredentialsError", "ClientAuthenticationError",
                     "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidClientTokenId"}
CREDENTIAL_WORDS = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "Unable to locate credentials",
                    "AccessDenied", "InvalidClientTokenId")
FIX = "then `sr-bench stop` and rerun (the next command starts the service with it)"


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
    """Put the env file's variables into this process's environment (those not set already); returns
    their names (never the values). No file: nothing to do."""
    path = env_file_path(store_dir)
    try:
        text = read_private_file(path, "env file")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text: write it as KEY=value lines (dotenv syntax) in UTF-8") from None
    if text is None:
        return []
    names = []
    for name, value in parse(text, path).items():
        if name not in os.environ:
            os.environ[name] = value
            names.append(name)
    return names


def missing_key(target_id: str, env: str, store_dir: Path | None = None) -> str:
    return (f"target {target_id}: environment variable {env} is not set in the service's environment (the "
            f"service keeps the environment it started with): put {env}=… in {where_hint(store_dir)} or export it, {FIX}")


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
