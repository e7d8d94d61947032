"""Grading rules: (grader@version, case, call record[, judge record]) → grade; code grades in a sandbox."""
