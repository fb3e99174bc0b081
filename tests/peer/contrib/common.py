"""Shared by the contrib-op case generators: one folder per case with model.onnx, its inputs as .npy
and case.json (what the peer test compares and how closely).

Usage of every generator: python3 <family>_cases.py OUT_DIR [SUBSTRING]  (only cases whose name has it)
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper

MS = 'com.microsoft'


def rng(seed):
    return np.random.RandomState(seed)


def model(nodes, inputs, outputs, initializers=(), opset=17, ms_opset=1):
    """A model importing the ONNX domain at `opset` and com.microsoft at `ms_opset`."""
    graph = helper.make_graph(nodes, 'case', inputs, outputs, list(initializers))
    imports = [helper.make_opsetid('', opset), helper.make_opsetid(MS, ms_opset)]
    m = helper.make_model(graph, opset_imports=imports, producer_name='chipfit-contrib-cases')
    m.ir_version = 8
    return m


def save_case(out_dir, name, m, feeds, tolerance=1e-4, targets=('ref:fp32', 'cpu:fp32'), note=''):
    """Writes one case. tolerance: max |chipfit - ORT| allowed, relative to max |ORT| of that output."""
    if len(sys.argv) > 2 and sys.argv[2] not in name:
        return
    case = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case, 'inputs'), exist_ok=True)
    onnx.save(m, os.path.join(case, 'model.onnx'))
    names = {}
    for key, value in feeds.items():
        file = os.path.join('inputs', key.replace('/', '_').replace(':', '_') + '.npy')
        np.save(os.path.join(case, file), value)
        names[key] = file
    ops = sorted({(n.domain or 'ai.onnx') + '::' + n.op_type for n in m.graph.node})
    with open(os.path.join(case, 'case.json'), 'w') as f:
        json.dump({'name': name, 'ops': ops, 'inputs': names, 'tolerance': tolerance, 'targets': list(targets),
                   'note': note}, f, indent=1)


def out_dir():
    if len(sys.argv) < 2:
        sys.exit('usage: %s OUT_DIR [SUBSTRING]' % sys.argv[0])
    os.makedirs(sys.argv[1], exist_ok=True)
    return sys.argv[1]
