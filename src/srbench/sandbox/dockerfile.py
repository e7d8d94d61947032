"""The external images a Dockerfile names: its ``FROM`` bases and ``COPY --from`` sources.

sr-bench builds task images with local base images only, so every image a build could pull must be
known before the build starts (the engine pulls a missing base by itself, whatever ``pull=False``
says). Read here: line continuations, comments, global ``ARG NAME=default`` before the first
``FROM`` (``$NAME`` / ``${NAME}`` / ``${NAME:-x}`` in ``FROM``), ``--platform=…`` flags, ``AS`` stage
names (a later ``FROM stage`` or ``COPY --from=stage|index`` is not an image), ``scratch``.
A base that depends on a variable with no default is refused: it cannot be checked.
"""

from __future__ import annotations

import re

from srbench.errors import InvalidInput

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per logical line, continuations joined, comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if buf and line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        parts = buf.strip().split(None, 1)
        if parts:
            out.append((parts[0].upper(), parts[1] if len(parts) > 1 else ""))
        buf = ""
    if buf.strip():
        parts = buf.strip().split(None, 1)
        out.append((parts[0].upper(), parts[1] if len(parts) > 1 else ""))
    return out


def _substitute(value: str, args: dict[str, str | None], where: str) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        default = m.group(2)
        got = args.get(name)
        if got is None and default is not None:
            return default
        if got is None:
            raise InvalidInput(f"{where}: FROM uses ${name}, which has no default value; sr-bench must know "
                               "every base image before building")
        return got
    return _VAR.sub(repl, value)


def external_images(text: str, where: str = "Dockerfile") -> list[str]:
    """The images the build needs from the engine, in order of first use (``scratch`` excluded)."""
    args: dict[str, str | None] = {}
    stages: list[str] = []
    images: list[str] = []
    seen_from = False

    def need(image: str) -> None:
        if image.lower() != "scratch" and image not in images:
            images.append(image)

    for instr, rest in instructions(text):
        if instr == "ARG" and not seen_from:
            for item in rest.split():
                name, eq, default = item.partition("=")
                args[name] = default.strip("\"'") if eq else None
        elif instr == "FROM":
            seen_from = True
            words = [w for w in rest.split() if not w.startswith("--")]
            if not words:
                raise InvalidInput(f"{where}: a FROM line names no image")
            image = _substitute(words[0], args, where)
            if len(words) >= 3 and words[1].lower() == "as":
                stage = words[2].lower()
            else:
                stage = ""
            if image.lower() not in stages:
                need(image)
            stages.append(stage)
        elif instr in ("COPY", "ADD", "RUN"):
            for m in re.finditer(r"--(?:from=|mount=\S*?\bfrom=)([^\s,]+)", rest):
                src = m.group(1)
                if src.isdigit() or src.lower() in stages:
                    continue
                need(src)
    if not seen_from:
        raise InvalidInput(f"{where} has no FROM line")
    return images
