"""SciCode's numeric targets: read ``test_data.h5`` into the values a step's tests compare against.

Shipped into the sandbox as ``scicode.parse.parse`` (so generated test files import it exactly as
upstream's do); also imported on the host by the fidelity test. Needs h5py, numpy and scipy.

Layout (``eval/scripts``' reader, re-expressed): group ``"{step_id}/test{k}"`` for k = 1..n.
- One child: a dataset gives its value (bytes decoded as UTF-8); a group is read as below.
- Several children (``var1``, ``var2``, …, in the file's key order): a tuple of those values.
- A group whose first key is ``list`` → the list of that group's dataset values; ``sparse_matrix``
  → a scipy sparse matrix: coo when it has ``row`` and ``col``, bsr when it has ``blocksize``, else
  csr (``data``, ``shape``, ``indices``, ``indptr``); anything else → a dict whose dataset keys that
  parse as numbers become floats, byte values are decoded and sub-groups are sparse matrices.
"""

import os

import h5py
import scipy.sparse

DEFAULT_H5 = os.environ.get("SRBENCH_SCICODE_H5", "/opt/sr-bench/scicode/test_data.h5")


def _value(dataset):
    value = dataset[()]
    return value.decode("utf-8", errors="strict") if isinstance(value, bytes) else value


def read_list(group):
    return [group[key][()] for key in group.keys()]


def read_sparse(group):
    data = group["data"][()]
    shape = tuple(group["shape"][()])
    if "row" in group and "col" in group:
        return scipy.sparse.coo_matrix((data, (group["row"][()], group["col"][()])), shape=shape)
    if "blocksize" in group:
        return scipy.sparse.bsr_matrix((data, group["indices"][()], group["indptr"][()]), shape=shape,
                                       blocksize=tuple(group["blocksize"][()]))
    return scipy.sparse.csr_matrix((data, group["indices"][()], group["indptr"][()]), shape=shape)


def read_dict(group):
    out = {}
    for key, item in group.items():
        if isinstance(item, h5py.Group):
            out[key] = read_sparse(item["sparse_matrix"])
            continue
        value = item[()]
        if isinstance(value, bytes):
            out[key] = value.decode("utf-8", errors="strict")
            continue
        try:
            out[float(key)] = value
        except ValueError:
            out[key] = value
    return out


def read_group(group):
    for key in group.keys():              # the first key decides, as upstream
        if key == "list":
            return read_list(group[key])
        if key == "sparse_matrix":
            return read_sparse(group[key])
        return read_dict(group)
    return None


def _items(nodes):
    """The values of the datasets and groups among `nodes` (anything else is skipped, as upstream)."""
    out = []
    for node in nodes:
        if isinstance(node, h5py.Dataset):
            out.append(_value(node))
        elif isinstance(node, h5py.Group):
            out.append(read_group(node))
    return out


def process_hdf5_to_tuple(step_id, test_num, h5py_file=DEFAULT_H5):
    """The targets of tests 1..test_num of step `step_id`."""
    values = []
    with h5py.File(h5py_file, "r") as f:
        for k in range(1, test_num + 1):
            path = f"{step_id}/test{k}"
            if not isinstance(f[path], h5py.Group):
                raise FileNotFoundError(f"Path {path} not found in the file.")
            group = f[path]
            keys = list(group.keys())
            if len(keys) == 1:
                values.extend(_items([group[keys[0]]]))
            else:
                values.append(tuple(_items([group[key] for key in keys])))
    return values
