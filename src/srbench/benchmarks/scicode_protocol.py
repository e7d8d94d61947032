"""SciCode's conversation and its step scripts: the prompts, the code extraction and the composition
of the file that grades one step.

Conversation (``sr-bench-scicode-multiturn-v1``, the protocol of upstream sr-bench 1.0, whose prompt
texts are inspect_evals' SciCode templates): one system message, `INITIAL_PROMPT` with the problem's
``required_dependencies``; then for every sub-step in order one user turn, `SUBPROBLEM_PROMPT` with
the step's description, function header and return line, answered by one model call. Each reply is
kept in the conversation as the assistant's turn, so every later prompt carries the earlier steps and
the model's own earlier functions. The three steps whose solutions SciCode provides (13.6, 62.1, 76.3,
no test cases) are asked like the others and are not scored.

Extraction (SciCode's ``extract_python_script``): the first block fenced ```` ```python ````, else the
first ```` ``` ```` block, else the whole reply; then every import line is deleted
(``^\\s*(import .*|from .*\\s+import\\s+.*)``, multiline), because the dependencies are prepended once.

Step script (SciCode's ``Gencode`` + ``test_code``, as a fresh run writes it): the dependencies, the
extracted code of every earlier step (a fresh run keeps each step's whole extracted code; SciCode reads
back only the function named in the header when it resumes from files), this step's code, then
``from scicode.parse.parse import process_hdf5_to_tuple``, ``targets = process_hdf5_to_tuple('<step>',
<n>)`` and for each test ``target = targets[i]`` followed by the test's lines. It passes iff it exits 0.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from srbench.schemas.wire import WireJSON

PROTOCOL = "sr-bench-scicode-multiturn-v1"
EXTRACTION = "scicode-extract-python-script"
PROVIDED_STEPS = ("13.6", "62.1", "76.3")     # solutions shipped by SciCode; no test cases, never scored

INITIAL_PROMPT = """
PROBLEM DESCRIPTION:
You will be provided with a description of a scientific problem. You will solve these problems by solving a sequence of *subproblems*. The solution to each subproblem may be implemented using your solutions to earlier subproblems. Each subproblem should be solved by providing a Python function that meets the specifications provided.

For each subproblem, you will be provided with the following
 1. a description of the subproblem
 2. a function header, which you must use in your solution implementation
 3. a return line, which you must use in your solution implementation

You must only use the following dependencies to implement your solution:
{required_dependencies}

You MUST NOT import these dependencies anywhere in the code you generate.

For each subproblem provided you must solve it as follows:
 1. Generate scientific background required for the next step, in a comment
 2. Implement a function to solve the problem provided, using the provided header and return line

The response must be formatted as ```python```
"""  # noqa: E501 - the upstream text, verbatim

SUBPROBLEM_PROMPT = """
Implement code to solve the following subproblem, using the description, function header, and return line provided.

Remember that you may use functions that you generated previously as solutions to previous subproblems to implement your answer.

Remember that you MUST NOT include code to import dependencies.

Remember to ensure your response is in the format of ```python``` and includes necessary background as a comment at the top.

SUBPROBLEM DESCRIPTION:
{step_description_prompt}

FUNCTION HEADER:
{function_header}

RETURN LINE:
{return_line}

Example:
```python
# Background: [Here, insert the necessary scientific knowledge required for the next step.]

[Insert the Python code here based on the provided function header and dependencies.]
```
"""  # noqa: E501 - the upstream text, verbatim



class SciCodeStep(BaseModel):
    """One sub-step of a main problem as the case keeps it (its prompt is read from the native row)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    step_number: str
    """``<problem id>.<k>``, SciCode's own numbering."""
    test_cases: list[str]
    """The step's test snippets (each reads ``target``); none: a provided step, never scored."""


class SciCodeAnswer(BaseModel):
    """A SciCode case's reference (``Case.answer``): what composes and grades each step's script."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    problem_id: str
    """SciCode's main problem id."""
    required_dependencies: str
    """The import lines every step script starts with."""
    steps: list[SciCodeStep]
    """The sub-steps in order."""


_IMPORT = re.compile(r"^\s*(import .*|from .*\s+import\s+.*)", re.MULTILINE)


def system_prompt(required_dependencies: str) -> str:
    return INITIAL_PROMPT.format(required_dependencies=required_dependencies)


def step_prompt(step: WireJSON) -> str:
    """The user turn of one sub-step (only the three fields the template names are read)."""
    return SUBPROBLEM_PROMPT.format(step_description_prompt=step["step_description_prompt"],
                                    function_header=step["function_header"], return_line=step["return_line"])


def extract_code(reply: str | None) -> str:
    """SciCode's extraction of one reply (see the module docstring); '' for no reply."""
    if not reply:
        return ""
    if "```" in reply:
        if "```python" in reply:
            code = reply.split("```python", 1)[1].split("```", 1)[0]
        else:
            code = reply.split("```")[1]
    else:
        code = reply
    return _IMPORT.sub("", code)


def step_script(dependencies: str, earlier: list[str], code: str, step_number: str, tests: list[str]) -> str:
    """The file that grades one step, byte for byte as SciCode writes it: `earlier` = the code of the
    steps before it."""
    text = f"{dependencies}\n" + "\n".join(earlier) + "\n" + "\n" + code
    text += "\n\nfrom scicode.parse.parse import process_hdf5_to_tuple\n\n"
    text += f"targets = process_hdf5_to_tuple('{step_number}', {len(tests)})" + "\n"
    for i, test in enumerate(tests):
        text += f"target = targets[{i}]\n\n"
        text += "".join(line + "\n" for line in test.split("\n"))
    return text


def step_scripts(answer: SciCodeAnswer, replies: list[str | None]) -> list[tuple[str, str] | None]:
    """For every step, (step number, script) when it is scored (it has tests), else None. `replies` are
    the model's texts in step order (fewer than the steps: the missing ones have no code)."""
    codes = [extract_code(replies[i] if i < len(replies) else None) for i in range(len(answer.steps))]
    out: list[tuple[str, str] | None] = []
    for i, step in enumerate(answer.steps):
        if not step.test_cases:
            out.append(None)
            continue
        out.append((step.step_number, step_script(answer.required_dependencies, codes[:i], codes[i],
                                                  step.step_number, step.test_cases)))
    return out
