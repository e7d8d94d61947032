"""`python toy_serve.py serve ...`: the sr-bench CLI with the toy multi-call benchmark registered
(for tests that run the real service in a subprocess, e.g. to SIGKILL it mid-conversation)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toy import register  # noqa: E402

from srbench.cli.main import main  # noqa: E402

register()
main()
