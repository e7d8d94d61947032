"""The verifier's reward, read as Harbor reads it.

After the agent phase ``tests/`` is copied to ``/tests`` and ``bash /tests/test.sh`` runs in the task
container under the verifier timeout. The script must write ``/logs/verifier/reward.txt`` (one
number) or ``/logs/verifier/reward.json`` (an object of named numbers; the ``reward`` entry, or
its only entry); ``reward.txt`` wins when both exist. No file, an empty file, or content that is no
number is a **trial error** (Harbor's RewardFileNotFoundError / RewardFileEmptyError /
VerifierOutputParseError), never a zero. The cell is correct iff the reward is exactly 1.
"""

from __future__ import annotations

import json
import math

VERIFIER_DIR = "/logs/verifier"
REWARD_TXT = f"{VERIFIER_DIR}/reward.txt"
REWARD_JSON = f"{VERIFIER_DIR}/reward.json"
MAX_REWARD_BYTES = 65536


class RewardError(Exception):
    """No usable reward: `kind` is Harbor's exception name, the message one line."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RewardError("VerifierOutputParseError", f"{where} holds {value!r}, not a finite number")
    return float(value)


def parse_reward(txt: bytes | None, js: bytes | None) -> tuple[float, str, dict[str, float]]:
    """(reward, the file it came from, every named reward) from the two files' bytes (None: absent)."""
    if txt is not None:
        text = txt.decode("utf-8", "replace").strip()
        if not text:
            raise RewardError("RewardFileEmptyError", f"{REWARD_TXT} is empty")
        try:
            value = float(text)
        except ValueError:
            raise RewardError("VerifierOutputParseError", f"{REWARD_TXT} holds {text[:60]!r}, not a number") from None
        return _number(value, REWARD_TXT), "reward.txt", {"reward": value}
    if js is not None:
        if not js.strip():
            raise RewardError("RewardFileEmptyError", f"{REWARD_JSON} is empty")
        try:
            doc = json.loads(js.decode("utf-8", "replace"))
        except ValueError:
            raise RewardError("VerifierOutputParseError", f"{REWARD_JSON} is not JSON") from None
        if isinstance(doc, int | float) and not isinstance(doc, bool):
            return _number(doc, REWARD_JSON), "reward.json", {"reward": float(doc)}
        if not isinstance(doc, dict) or not doc:
            raise RewardError("VerifierOutputParseError", f"{REWARD_JSON} is not an object of named rewards")
        rewards = {str(k): _number(v, f"{REWARD_JSON} entry {k!r}") for k, v in doc.items()}
        if "reward" in rewards:
            return rewards["reward"], "reward.json", rewards
        if len(rewards) == 1:
            return next(iter(rewards.values())), "reward.json", rewards
        raise RewardError("VerifierOutputParseError", f"{REWARD_JSON} has several rewards and none named 'reward'")
    raise RewardError("RewardFileNotFoundError", f"the verifier wrote neither {REWARD_TXT} nor {REWARD_JSON}")
