"""Golden corpora for the multiple-choice graders: every verdict below was written by reading the rules
(graders.py docstring for sr-bench; the upstream scripts quoted in published.py for the published
rule), not by running sr-bench. Random-fallback guesses are Python's own ``random.seed(12345);
random.randint(0, n - 1)`` (what the MMLU-Pro script runs): n=4 → index 3 (D), n=5 → 3 (D),
n=8 → 6 (G), n=10 → 6 (G).

MMLU rows: (text, answer, options, sr-bench status, sr-bench letter, published letter, published
step, published score). GPQA rows (four options): (text, answer, sr-bench status, sr-bench letter,
published captured letter, published score).
"""

MMLU = [
    ("The answer is (C)", "C", 10, "correct", "C", "C", "answer_is", 1),
    ("Let's think step by step. It follows. The answer is (B).", "C", 10, "incorrect", "B", "B", "answer_is", 0),
    ("Answer: D", "D", 10, "correct", "D", "D", "answer_colon", 1),
    ("**The answer is (E)**", "E", 10, "correct", "E", "E", "answer_is", 1),
    ("I first thought the answer is A, but the answer is (B).", "B", 10, "ambiguous", None, "A", "answer_is", 0),
    ("The correct option is B.", "B", 10, "unparsed", None, "B", "last_letter", 1),
    ("B", "B", 10, "correct", "B", "B", "last_letter", 1),
    ("(C)", "B", 10, "incorrect", "C", "C", "last_letter", 0),
    ("I do not know.", "A", 10, "unparsed", None, "I", "last_letter", 0),
    ("", "G", 10, "unparsed", None, None, None, 1),                       # fallback guess G hits
    ("No idea.", "A", 4, "unparsed", None, None, None, 0),                # fallback D misses
    ("No idea.", "D", 4, "unparsed", None, None, None, 1),                # fallback D hits
    ("The answer is (H)", "B", 4, "unparsed", None, "H", "answer_is", 0),  # H is beyond four options
    ("Answer: I think it is B", "B", 10, "unparsed", None, "I", "answer_colon", 0),
    ("answer is b", "B", 10, "unparsed", None, None, None, 0),            # fallback G misses
    ("The answer is B. C is wrong because of x.", "B", 10, "correct", "B", "B", "answer_is", 1),
    ("Answer: A\nAnswer: C", "C", 10, "ambiguous", None, "A", "answer_colon", 0),
    ("Option A is tempting. Answer: C. Also answer: D", "D", 10, "ambiguous", None, "D", "answer_colon", 1),
    ("\\boxed{F}", "F", 10, "correct", "F", "F", "last_letter", 1),
    ("The final answer is \\boxed{C}.", "C", 10, "correct", "C", "C", "last_letter", 1),
    ("A: Let's think step by step. The capital is Paris. The answer is (D)", "D", 10, "correct", "D", "D",
     "answer_is", 1),
    ("<think>The answer is A</think>\nThe answer is (B)", "B", 10, "correct", "B", "B", "answer_is", 1),
    ("<think>The answer is A", "A", 10, "unparsed", None, None, None, 0),  # no final text: fallback G misses
    ("Reasoning...</think>Answer: E", "E", 10, "correct", "E", "E", "answer_colon", 1),
    ("The answer is (A) or (B)", "A", 10, "ambiguous", None, "A", "answer_is", 1),
    ("Answer: C\n\nExplanation: options A and B are wrong.", "C", 10, "correct", "C", "C", "answer_colon", 1),
    ("The answer is not A. Answer: B", "B", 10, "correct", "B", "B", "answer_colon", 1),
    ("So the answer is J.", "J", 10, "correct", "J", "J", "answer_is", 1),
    ("The answer is (J)", "D", 4, "unparsed", None, "J", "answer_is", 0),
    ("Final Answer: (G)", "G", 10, "correct", "G", "G", "last_letter", 1),
    ("Answer:\nB", "B", 10, "correct", "B", "B", "answer_colon", 1),
    ("ANSWER IS C", "C", 10, "correct", "C", "C", "last_letter", 1),
    ("The answer is E, since D fails.", "E", 10, "correct", "E", "E", "answer_is", 1),
    ("Between A and B, I'd pick B.", "B", 10, "unparsed", None, "B", "last_letter", 1),
    ("Between A and B, I'd pick A. Not sure though.", "B", 10, "unparsed", None, "A", "last_letter", 0),
    ("answer: $C$", "C", 10, "correct", "C", "C", "last_letter", 1),
    ("The answer is option D", "D", 10, "correct", "D", "D", "last_letter", 1),
    ("Answer: the second one", "B", 4, "unparsed", None, None, None, 0),   # fallback D misses
    ("Answer: the second one", "D", 4, "unparsed", None, None, None, 1),   # fallback D hits
    ("The answer is (C)\nThe answer is (C)", "C", 10, "correct", "C", "C", "answer_is", 1),
    ("B\n\nThe answer is (C)", "C", 4, "ambiguous", None, "C", "answer_is", 1),
    ("I'm confident: the answer is A", "A", 10, "correct", "A", "A", "answer_is", 1),
    ("Answer: **A**", "A", 10, "correct", "A", "A", "answer_colon", 1),
    ("Therefore, the answer is: B", "B", 10, "correct", "B", "B", "last_letter", 1),
    ("Choice (H) matches; the answer is H.", "H", 8, "correct", "H", "H", "answer_is", 1),
    ("?", "D", 5, "unparsed", None, None, None, 1),                       # fallback D hits
]

GPQA = [
    ("Answer: C", "C", "correct", "C", "C", 1),
    ("answer: $B$", "B", "correct", "B", "B", 1),
    ("Work.\nAnswer:**D**", "D", "correct", "D", None, 0),
    ("Answer: A\nAnswer: C", "C", "ambiguous", None, "A", 0),
    ("The answer is (B)", "B", "correct", "B", None, 0),
    ("answer: b", "B", "unparsed", None, "b", 0),                         # (?i) captures b, never B
    ("ANSWER: D", "D", "correct", "D", "D", 1),
    ("Answer : C", "C", "correct", "C", "C", 1),
    ("Answer:\nC", "C", "correct", "C", None, 0),                         # [ \t]* stops at the newline
    ("Final answer: (C)", "C", "correct", "C", None, 0),
    ("Answer: E", "A", "unparsed", None, None, 0),
    ("I think the answer is C.\nAnswer: C", "C", "correct", "C", "C", 1),
    ("Answer: C or D", "C", "ambiguous", None, "C", 1),
    ("Answer: Definitely B", "B", "unparsed", None, "D", 0),              # the D of "Definitely"
    ("Answer: Definitely B", "D", "unparsed", None, "D", 1),
    ("The correct option is B.", "B", "unparsed", None, None, 0),
    ("B", "B", "correct", "B", None, 0),
    ("Reasoning. Answer: A. Wait, no. Answer: B", "B", "ambiguous", None, "A", 0),
    ("<think>Answer: A</think>Answer: B", "B", "correct", "B", "B", 1),
    ("<think>Answer: A", "A", "unparsed", None, None, 0),
    ("", "A", "unparsed", None, None, 0),
    ("Answer: $\\boxed{C}$", "C", "correct", "C", None, 0),
    ("\\boxed{D}", "D", "correct", "D", None, 0),
    ("answer:d", "D", "unparsed", None, "d", 0),
    ("Answer:\tB", "B", "correct", "B", "B", 1),
    ("My Answer: A.", "A", "correct", "A", "A", 1),
    ("Answer: A", "B", "incorrect", "A", "A", 0),
    ("The answer is A. Answer: B", "B", "ambiguous", None, "B", 1),
    ("Answer: I believe C", "C", "unparsed", None, None, 0),
    ("Answer: (A)", "A", "correct", "A", None, 0),
    ("answer: $A$ and answer: $B$", "A", "ambiguous", None, "A", 1),
    ("ANSWER:C", "C", "correct", "C", "C", 1),
    ("The answer: B\n", "B", "correct", "B", "B", 1),
    ("Unanswerable? No. Answer: C", "C", "correct", "C", "C", 1),
    ("Answer: C$", "C", "correct", "C", "C", 1),
    ("Answer: \\text{B}", "B", "correct", "B", None, 0),
    ("Answer - C", "C", "unparsed", None, None, 0),
    ("Answer= B", "B", "correct", "B", None, 0),
    ("Answer: C\nAnswer: C", "C", "correct", "C", "C", 1),
    ("The answer is D.\n\nAnswer: D", "D", "correct", "D", "D", 1),
    ("Answer: A/B", "A", "ambiguous", None, "A", 1),
    ("answer : d", "D", "unparsed", None, "d", 0),
]
