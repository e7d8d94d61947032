"""Golden corpora for the code benchmarks' pure verdict logic (outside the sandbox's execution), verdicts
written by reading the upstream rules, not by running sr-bench.

``LCB_OUTPUT`` — LiveCodeBench's stdin comparison (``lcb_runner/evaluation/testing_util.py``, research
notes §4): both outputs are stripped and split into lines, each line stripped; a different number of
lines is a wrong answer; lines match when equal as strings, or when both are whitespace-separated
tokens that all parse as ``Decimal`` and the token lists are equal (so ``1.50`` = ``1.5``, ``-0`` = ``0``,
``1e3`` = ``1000``; ``NaN`` never equals anything). Rows: (program stdout, expected output, match).

``LCB_EXTRACT`` — LiveCodeBench's extraction: the lines strictly between the first two lines that
contain a triple backtick (a language tag on the fence line is on that line, so it is dropped); fewer
than two such lines: no program. Rows: (reply, extracted program).

``SCICODE_EXTRACT`` — SciCode's ``extract_python_script``: the text after the first ```` ```python ````
up to the next ```` ``` ````, else the second piece of the reply split at ```` ``` ```` (the first
fenced block, its language tag included), else the whole reply; then every match of
``^\\s*(import .*|from .*\\s+import\\s+.*)`` (multiline) is deleted — the match may start on an earlier
blank line, since ``\\s*`` also consumes newlines, but never eats the import line's own newline.
Rows: (reply, extracted code).
"""

from __future__ import annotations

LCB_OUTPUT = [
    ("6\n", "6\n", True),
    ("6", "6\n", True),                          # the trailing newline is stripped
    ("  6  \n\n", "6\n", True),                  # surrounding whitespace and blank tail lines too
    ("6\n7\n", "6\n", False),                    # one line more
    ("", "6\n", False),
    ("", "", True),
    ("", "0", False),                            # no tokens vs one token
    ("1.5\n", "1.50\n", True),                   # equal as Decimal
    ("1.5\n", "1.5000001\n", False),             # no tolerance
    ("1.25\n", "1.2\n", False),
    ("0.1\n", ".1\n", True),
    ("1.\n", "1\n", True),
    ("1e3\n", "1000\n", True),
    ("-0\n", "0\n", True),
    ("+5\n", "5\n", True),
    ("1 2 3\n", "1 2 3\n", True),
    ("1  2   3\n", "1 2 3\n", True),              # other spacing: every token is a Decimal
    ("1\t2\n", "1 2\n", True),
    ("a  b\n", "a b\n", False),                  # other spacing, words: no Decimal reading
    ("Yes\n", "yes\n", False),                   # case matters
    ("YES\n", "YES\n", True),
    ("1 2\n", "1 2 3\n", False),
    ("1 2 3\n", "1 2\n", False),
    ("3 2 1\n", "1 2 3\n", False),
    ("1,2\n", "1 2\n", False),
    ("1\r\n2\r\n", "1\n2\n", True),              # each line is stripped: \r goes
    ("1\n\n2\n", "1\n2\n", False),               # an inner blank line is a line
    ("1\n2", "1\n2\n", True),
    ("NaN\n", "NaN\n", True),                    # equal strings
    ("NaN\n", "nan\n", False),                   # Decimal NaN never equals
    ("inf\n", "Infinity\n", True),               # Decimal infinities are equal
    ("0x10\n", "16\n", False),
    ("1/2\n", "0.5\n", False),
    ("abc 1.0\n", "abc 1\n", False),             # one token is no number: the whole line compares as text
    ("3.0 4.00\n", "3 4\n", True),
    ("12345678901234567890\n", "12345678901234567890.0\n", True),
    ("1e-3\n", "0.001\n", True),
    ("  hello world  \n", "hello world\n", True),
    ("hello  world\n", "hello world\n", False),
    ("7\n8\n9\n", "7\n8\n9\n", True),
    ("7\n8\n9\n", "7\n9\n8\n", False),
    ("True\n", "1\n", False),
]

LCB_EXTRACT = [
    ("```python\nprint(1)\n```", "print(1)"),
    ("Here:\n```python\nx = 1\nprint(x)\n```\nDone.", "x = 1\nprint(x)"),
    ("```\nprint(2)\n```", "print(2)"),
    ("no code at all", ""),
    ("```python\nprint(1)", ""),                                     # one fence line only
    ("```python\nprint(1)\n```\n```python\nprint(2)\n```", "print(1)"),   # the first block
    ("text ```inline``` text\nprint(3)\n```", "print(3)"),          # a line holding ``` counts as a fence
    ("```python\n```", ""),                                          # an empty block
    ("```py\na = 1\n\nb = 2\n```", "a = 1\n\nb = 2"),
    ("", ""),
    ("```python\n  indented()\n```", "  indented()"),
    ("Answer:\n\n```python\n# comment\nprint(4)\n```", "# comment\nprint(4)"),
]

SCICODE_EXTRACT = [
    ("```python\ndef f():\n    return 1\n```", "\ndef f():\n    return 1\n"),
    ("Text\n```python\nx = 1\n```\nmore", "\nx = 1\n"),
    ("```\ny = 2\n```", "\ny = 2\n"),
    ("```py\ny = 2\n```", "py\ny = 2\n"),                             # the first block, tag included
    ("z = 3", "z = 3"),                                               # no fence: the whole reply
    ("", ""),
    ("```python\nimport numpy as np\nx = np.zeros(3)\n```", "\nx = np.zeros(3)\n"),   # the leading \n goes too
    ("```python\nfrom scipy import linalg\nx = 1\n```", "\nx = 1\n"),
    ("```python\nx = 1\n\nimport os\ny = 2\n```", "\nx = 1\n\ny = 2\n"),  # the blank line goes with the import
    ("```python\n    import math\nx = 1\n```", "\nx = 1\n"),               # indented imports too
    ("```python\nimportant = 1\n```", "\nimportant = 1\n"),                   # not 'import ' + something
    ("```python\nx = 1  # import this\n```", "\nx = 1  # import this\n"),     # not at a line start
    ("```\nfirst\n```\n```python\nsecond\n```", "\nsecond\n"),                # ```python wins over an earlier ```
    ("```python\na\n```\n```python\nb\n```", "\na\n"),
    ("```python3\nc = 1\n```", "3\nc = 1\n"),                          # '```python' matches inside '```python3'
    ("```python\nunclosed = 1", "\nunclosed = 1"),
    ("```\nunclosed = 2", "\nunclosed = 2"),
    ("import numpy as np\nx = 1", "\nx = 1"),                          # no fence: imports still removed
    ("from a import b\nfrom c import d\ne = 1", "\n\ne = 1"),
    ("```python\nfrom . import helper\nh = 1\n```", "\nh = 1\n"),
    ("```python\nfrom x import (a,\n    b)\nk = 1\n```", "\n    b)\nk = 1\n"),   # only the first line of a multi-line import
    ("```python\nimport a, b\nm = 1\n```", "\nm = 1\n"),
    ("```python\nfromage = 1\n```", "\nfromage = 1\n"),
    ("```python\nfrom_x = 1 import y\n```", "\nfrom_x = 1 import y\n"),   # 'from_x' is not 'from '
    ("```python\n\n\nimport os\n```", "\n"),                          # leading blank lines go with it
    ("Explanation only, no code.", "Explanation only, no code."),
    ("```python\ndef g(x):\n    import math\n    return math.sqrt(x)\n```",
     "\ndef g(x):\n\n    return math.sqrt(x)\n"),
    ("```python\ns = 'import x'\n```", "\ns = 'import x'\n"),
    ("``` python\nq = 1\n```", " python\nq = 1\n"),                   # '``` python' is not '```python'
    ("```Python\nr = 1\n```", "Python\nr = 1\n"),                     # case matters
    ("Use ```python``` style.\n```python\nt = 1\n```", ""),   # the first '```python' is inline: nothing before the next ```
    ("```python\nimport numpy as np\n```", "\n"),
    ("```python\nx = 1\n```trailing", "\nx = 1\n"),
    ("prefix ```code``` suffix", "code"),
    ("```python\n\tfrom m import n\nv = 1\n```", "\nv = 1\n"),
    ("```python\nimport\nw = 1\n```", "\nimport\nw = 1\n"),            # 'import' alone: no match
    ("```python\nu = 1\nimport sys\n```", "\nu = 1\n\n"),
    ("```python\nclass A:\n    pass\n```", "\nclass A:\n    pass\n"),
    ("a\n```python\nb\n```\nc", "\nb\n"),
    ("```python\n# from here import nothing\nx = 0\n```", "\n# from here import nothing\nx = 0\n"),
]
