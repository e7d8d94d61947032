"""SciCode's comparison helpers, shipped into the sandbox as ``scicode.compare.cmp`` (test cases import
``cmp_tuple_or_list`` and ``are_dicts_close`` from there). Needs numpy, scipy and sympy.

Rules (``eval/scripts``' cmp, re-expressed):
- ``are_dicts_close(a, b, atol=1e-8, rtol=1e-5)``: sympy Symbol keys and values become strings; the
  key sets must be equal; per key a str/Symbol compares with ==, a sparse matrix densely with
  ``np.allclose``, anything else with ``np.allclose`` (== when that raises ValueError).
- ``cmp_tuple_or_list(a, b)``: equal lengths; per item a dict by ``are_dicts_close``, a csr/csc matrix
  densely by ``np.allclose``, a bool with ==, anything else with ``np.allclose`` (== on ValueError).
"""

import numpy as np
import scipy.sparse
import sympy

_SPARSE = (scipy.sparse.csr_matrix, scipy.sparse.csc_matrix, scipy.sparse.bsr_matrix, scipy.sparse.coo_matrix)


def process_symbol_in_dict(d):
    out = {}
    for key, value in d.items():
        out[key] = str(value) if isinstance(value, sympy.Symbol) else value
        if isinstance(key, sympy.Symbol):
            out[str(key)] = d[key]
            out.pop(key)
    return out


def are_dicts_close(dict1, dict2, atol=1e-8, rtol=1e-5):
    dict1, dict2 = process_symbol_in_dict(dict1), process_symbol_in_dict(dict2)
    if dict1.keys() != dict2.keys():
        return False
    for key in dict1:
        a, b = dict1[key], dict2[key]
        if isinstance(a, sympy.Symbol | str):
            if not a == b:
                return False
        elif isinstance(a, _SPARSE):
            if not np.allclose(a.toarray(), b.toarray(), atol=atol, rtol=rtol):
                return False
        else:
            try:
                if not np.allclose(a, b, atol=atol, rtol=rtol):
                    return False
            except ValueError:
                if not a == b:
                    return False
    return True


def are_csc_matrix_close(matrix1, matrix2):
    return np.allclose(matrix1.toarray(), matrix2.toarray())


def cmp_tuple_or_list(var1, var2):
    if len(var1) != len(var2):
        return False
    for a, b in zip(var1, var2, strict=False):
        if isinstance(a, dict):
            if not are_dicts_close(a, b):
                return False
        elif isinstance(a, scipy.sparse.csr_matrix | scipy.sparse.csc_matrix):
            if not are_csc_matrix_close(a, b):
                return False
        elif isinstance(a, bool):
            if not a == b:
                return False
        else:
            try:
                if not np.allclose(a, b):
                    return False
            except ValueError:
                if not a == b:
                    return False
    return True
