"""Golden corpora for the judged benchmarks, verdicts written by reading the rules: sr-bench's reference
judge parse (judge.py docstring: one JSON object, bare or as the only content of one ```json fence,
verdict correct | incorrect | not_attempted, else judge_error) and the official templates' parse
(official_judges.py docstring: SimpleQA's first A/B/C anywhere, none → C; HLE's ``"yes" in correct``).
A candidate with no visible final text is not judged at all: not_attempted under both.

SIMPLEQA rows: (candidate, reference-judge reply, sr-bench verdict, autorater reply, official verdict).
HLE rows: (candidate, reference-judge reply, sr-bench verdict, official-judge reply, official verdict,
stated confidence recorded with the official judge (0..1)).
"""

C, W, N, E = "correct", "incorrect", "not_attempted", "judge_error"     # W: wrong (incorrect)
OK = '{"verdict": "correct", "explanation": "x"}'
NO = '{"verdict": "incorrect", "explanation": "x"}'

SIMPLEQA = [
    ("Paris", '{"verdict": "correct", "explanation": "same"}', C, "A", C),
    ("Lyon", '{"verdict": "incorrect", "explanation": "differs"}', W, "B", W),
    ("I don't know", '{"verdict": "not_attempted", "explanation": "no answer"}', N, "C", N),
    ("Paris", '```json\n{"verdict": "correct", "explanation": "ok"}\n```', C, "A.", C),
    ("Paris", 'The verdict: {"verdict": "correct"}', E, "The answer is A", C),
    ("Paris", '{"verdict": "CORRECT", "explanation": "x"}', C, "CORRECT", N),        # C of CORRECT
    ("Lyon", '{"verdict": "wrong"}', E, "INCORRECT", N),                             # C of INCORRECT
    ("Paris", '{"verdict": "correct", "explanation": 5}', E, "NOT_ATTEMPTED", C),     # A of ATTEMPTED
    ("Paris", '["correct"]', E, "", N),
    ("Paris", '<think>hmm</think>{"verdict": "correct", "explanation": "x"}', C, "<think>B?</think>A", C),
    ("Paris", '<think>{"verdict": "correct"}', E, "<think>A", N),
    ("Lyon", '{"verdict": " incorrect ", "explanation": ""}', W, "B", W),
    ("Paris", '{"verdict": "correct"}', C, "Grade: A", C),
    ("Lyon", "not json", E, "B (incorrect)", W),
    ("maybe Paris or Lyon", '{"verdict": "incorrect", "explanation": "two answers"}', W, "C", N),
    ("", '{"verdict": "correct"}', N, "A", N),
    ("<think>Paris", '{"verdict": "correct"}', N, "A", N),
    ("Paris", '{"verdict": "not_attempted"}', N, "a", N),
    ("Paris", '{"verdict": "correct", "explanation": "ok"} extra', E, "A B", C),
    ("Paris", '```\n{"verdict": "incorrect", "explanation": "x"}\n```', W, "BA", W),
    ("Paris", "Verdict: correct", E, "ABC", C),
    ("Paris", OK, C, "correct", N),
    ("Lyon", NO, W, "Incorrect.", N),
    ("Paris", '{"explanation": "no verdict"}', E, " A ", C),
    ("Paris", '{"verdict": null}', E, "\nB\n", W),
    ("33.77", '{"verdict": "correct", "explanation": "in range"}', C, "A", C),
    ("34", '{"verdict": "incorrect", "explanation": "out of range"}', W, "B", W),
    ("around 30", '{"verdict": "not_attempted", "explanation": "vague"}', N, "C", N),
    ("Paris", '```json\n{"verdict": "correct"}\n``` trailing', E, "Answer: C", C),   # A of Answer
    ("Paris", OK, C, "Based on the gold target, B", W),                             # B of Based
    ("Lyon", NO, W, "This is C", N),
    ("Paris", '{"Verdict": "correct"}', E, "A", C),
    ("Paris", '{"verdict": "Correct", "explanation": "x"}', C, "A", C),
    ("Paris", '  {"verdict": "correct"}  ', C, "A", C),
    ("Paris", '{"verdict": "correct", "explanation": "a"}{"verdict": "incorrect"}', E, "B", W),
    ("I am not sure", '{"verdict": "not_attempted", "explanation": "x"}', N, "NOT ATTEMPTED", C),
    ("Paris", OK, C, "1", N),
    ("Lyon", NO, W, "**B**", W),
    ("Paris", OK, C, "A\nB", C),
    ("Lyon", '{"verdict": "incorrect"}', W, "<think>A</think>B", W),
    ("Paris", OK, C, "Grade the predicted answer: A", C),
]

C1 = "Explanation: it follows.\nAnswer: 42\nConfidence: 80%"
HLE = [
    (C1, OK, C, '{"extracted_final_answer": "42", "reasoning": "match", "correct": "yes", "confidence": 80}', C, 0.8),
    (C1, NO, W, '{"extracted_final_answer": "41", "reasoning": "differs", "correct": "no", "confidence": 80}', W, 0.8),
    (C1, OK, C, "extracted_final_answer: 42\nreasoning: same\ncorrect: yes\nconfidence: 80", C, 0.8),
    (C1, '{"verdict": "not_attempted"}', N, "extracted_final_answer: None\nreasoning: none\ncorrect: no\n"
     "confidence: 100", W, 1.0),
    (C1, "yes", E, "correct: Yes", C, 0.8),                  # no confidence field: the stated 80 %
    (C1, OK, C, '```json\n{"correct": "yes", "confidence": "85%"}\n```', C, 0.85),
    (C1, OK, C, "", E, None),
    (C1, OK, C, "The answer matches.", E, None),
    (C1, OK, C, '{"correct": true}', E, None),
    (C1, OK, C, '{"correct": ""}', E, None),
    (C1, OK, C, "**correct**: yes\n**confidence**: 90", C, 0.9),
    (C1, NO, W, "correct: no, although close", W, 0.8),
    (C1, OK, C, "correct: not yes", C, 0.8),                 # upstream's `"yes" in correct`
    (C1, NO, W, '{"correct": "no", "confidence": 150}', W, 0.8),
    (C1, OK, C, '{"correct": "yes", "confidence": 0}', C, 0.0),
    (C1, OK, C, "<think>correct: no</think>correct: yes\nconfidence: 70", C, 0.7),
    (C1, OK, C, "<think>correct: yes", E, None),
    (C1, NO, W, "reasoning: the correct: answer differs\ncorrect: no", W, 0.8),
    (C1, OK, C, "correct: yes\ncorrect: no", C, 0.8),        # the first label counts
    (C1, OK, C, '{"correct": "yes", "confidence": "high"}', C, 0.8),
    ("", OK, N, '{"correct": "yes"}', N, 1.0),               # nothing to judge; no stated confidence
    ("Answer: 7", OK, C, "correct: yes", C, 1.0),
    ("Answer: 7\nConfidence: 0.3", NO, W, '{"correct": "no"}', W, 0.3),
    (C1, OK, C, '{"extracted_final_answer": "42", "correct": "YES"}', C, 0.8),
    (C1, OK, C, "Correct: yes\nConfidence: 55%", C, 0.55),
    (C1, OK, C, "# correct: yes", C, 0.8),
    (C1, OK, C, "correct - yes", E, None),
    (C1, OK, C, '{"correct": "yes"} trailing', E, None),
    (C1, OK, C, '[{"correct": "yes"}]', E, None),
    (C1, NO, W, "confidence: 40\ncorrect: no", W, 0.4),
    (C1, OK, C, "correct: yes\nconfidence: 12.5%", C, 0.125),
    (C1, OK, C, "correct:yes", C, 0.8),
    (C1, NO, W, "  correct :  no", W, 0.8),
    (C1, NO, W, '{"correct": "no", "confidence": 100}', W, 1.0),
    (C1, OK, C, '{"correct": "yes", "confidence": 99}', C, 0.99),
    (C1, NO, W, "correct: ja", W, 0.8),
    (C1, OK, C, "correct: eyes", C, 0.8),                    # "yes" in "eyes"
    (C1, NO, W, "CORRECT: no", W, 0.8),
    (C1, OK, C, '```\n{"correct": "yes"}\n```', C, 0.8),
    (C1, OK, C, '{"correct": "yes", "confidence": true}', C, 0.8),
]
