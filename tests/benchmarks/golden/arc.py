"""Golden corpus for the ARC-AGI-2 graders, verdicts written by reading the rules: sr-bench's
``sr-bench-arc-exact-v1`` (graders.py docstring: one score per puzzle, every test input right) and the
published per-test-input rule (published.py docstring: grid i of the answer against output i, a bare
grid answers a one-input puzzle, invalid grids never count).

Rows: (reply text, expected outputs, sr-bench status, published solved flags per test input).
"""

E1 = [[[1, 2], [3, 4]]]                 # one test input
E2 = [[[1]], [[2, 2]]]                  # two test inputs
E3 = [[[0]], [[1]], [[2]]]              # three test inputs
E4 = [[[1]]]                            # one 1×1 output
E5 = [[[1], [2]]]                       # one 2×1 output

ARC = [
    ("[[[1,2],[3,4]]]", E1, "correct", [True]),
    ("[[1,2],[3,4]]", E1, "invalid", [True]),                  # a bare grid: fine for the published rule
    ("[[[1,2],[3,5]]]", E1, "incorrect", [False]),
    ("The output is:\n```json\n[[[1,2],[3,4]]]\n```", E1, "correct", [True]),
    ("no idea", E1, "unparsed", [False]),
    ("", E1, "unparsed", [False]),
    ("[[[1]], [[2,2]]]", E2, "correct", [True, True]),
    ("[[[1]], [[2,3]]]", E2, "incorrect", [True, False]),
    ("[[[9]], [[2,2]]]", E2, "incorrect", [False, True]),
    ("[[[1]]]", E2, "incorrect", [True, False]),               # one grid for two inputs
    ("[[[1]], [[2,2]], [[3]]]", E2, "incorrect", [True, True]),  # an extra grid is ignored by position
    ("[[[1]], [[2,2,]]]", E2, "unparsed", [False, False]),     # not JSON anywhere
    ("[[[1]], [[2,10]]]", E2, "invalid", [True, False]),       # 10 is no colour: only grid 1 fails
    ("[[[true]]]", E4, "invalid", [False]),
    ("[[[1.0]]]", E4, "invalid", [False]),
    ("Answer: [[[1]]] and also [[[2]]]", E4, "incorrect", [False]),   # the last span in prose
    ("First guess [[[2]]], final [[[1]]]", E4, "correct", [True]),
    ("```\n[[[1]]]\n```\nor maybe\n```\n[[[3]]]\n```", E4, "incorrect", [False]),  # the last fence
    ("```json\nnot json\n```\n[[[1]]]", E4, "correct", [True]),
    ("[]", E4, "invalid", [False]),
    ("[[]]", E4, "invalid", [False]),
    ('{"output": [[[1]]]}', E4, "invalid", [False]),
    ("[[1]]", E4, "invalid", [True]),                          # bare 1×1 grid
    ("[[1]]", E2, "invalid", [False, False]),                  # no bare-grid reading for two inputs
    ("[[[0]], [[1]], [[2]]]", E3, "correct", [True, True, True]),
    ("[[[0]], [[9]], [[2]]]", E3, "incorrect", [True, False, True]),
    ("[[[0]], [[1]]]", E3, "incorrect", [True, True, False]),
    ("[[[5]], [[5]], [[5]]]", E3, "incorrect", [False, False, False]),
    ("<think>[[[9]],[[9]],[[9]]]</think>[[[0]],[[1]],[[2]]]", E3, "correct", [True, True, True]),
    ("<think>[[[1,2],[3,4]]]", E1, "unparsed", [False]),      # unclosed think: no final text
    ("[[[1,2],[3,4]]] is my answer", E1, "correct", [True]),
    ("[[[1,2],[3]]]", E1, "invalid", [False]),
    ("[[[1,2],[3,4]]]\n\n[[[1,2],[3,4]]]", E1, "correct", [True]),
    ("[[[1,2]]]", E5, "incorrect", [False]),
    ("[[[1], [2]]]", E5, "correct", [True]),
    ("Here: [[[1]], [[2, 2]]]", E2, "correct", [True, True]),
    ('[[[1]], "x"]', E2, "invalid", [True, False]),
    ("[[[1]], [[2,2]]", E2, "unparsed", [False, False]),       # never closed
    ("[[[1]]]", E1, "incorrect", [False]),
    ("[[[1, 2], [3, 4]]]", E1, "correct", [True]),
    ("```JSON\n[[[0]], [[1]], [[9]]]\n```", E3, "incorrect", [True, True, False]),
    ("[[[2,2]], [[1]]]", E2, "incorrect", [False, False]),     # swapped order
]
