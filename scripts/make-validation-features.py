#!/usr/bin/python3
"""Writes the layer features of every architecture the published validation set names.

Usage: /usr/bin/python3 scripts/make-validation-features.py [--chipfit BUILD/app/chipfit] [--cache DIR] [--only MODEL]

`chipfit project --validate-published` projects each row of resources/hardware/validation/*.csv (a latency
or throughput that a vendor or benchmark programme published for an architecture on a catalog device) from
that architecture's layers. This script makes those layers: it exports each (model, input) pair the rows
name with torch.onnx.export at batch 1 and batch 2 (opset 17, every shape fixed, seeded weights: weights do
not change latency), asks `chipfit inspect --target cpu:fp32 --json` for the compiled kernels and their
op-formula cost (FLOPs, bytes read and written, output shape), and writes
resources/hardware/validation/features/<model>-<input>.json. Two batches because every layer's FLOPs, bytes
and rows are affine in the batch: chipfit extrapolates any other batch from them exactly.

Needs Debian's python3-torch (1.13) and python3-torchvision (0.14). The exported models go to
.cache/validation-models (ignored by git); only the features are committed.
"""

import argparse
import csv
import glob
import importlib.util
import json
import os
import subprocess
import sys

import torch
import torchvision
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALIDATION = os.path.join(REPO, "resources", "hardware", "validation")
OPSET = 17


def bench_module():
    """bench/make-model-set.py: its BERT graph is Hugging Face's (separate Q/K/V, erf GELU, post-norm)."""
    spec = importlib.util.spec_from_file_location("make_model_set", os.path.join(REPO, "bench", "make-model-set.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The transformer encoders by name: (hidden, heads, layers, token types and pooler as BertModel has them).
ENCODERS = {
    "bert_base": (768, 12, 12),
    "bert_large": (1024, 16, 24),
    "distilbert_base": (768, 12, 6),
}


def build(model_name, input_text, batch, path):
    """Exports one architecture at [batch, …] to `path`."""
    torch.manual_seed(0)
    if model_name in ENCODERS:
        hidden, heads, layers = ENCODERS[model_name]
        if not input_text.startswith("seq"):
            sys.exit(f"{model_name}: input must be seqN, not '{input_text}'")
        seq = int(input_text[3:])
        model = bench_module().BertLike(hidden=hidden, heads=heads, layers=layers)
        ids = torch.randint(1000, 30522, (batch, seq), dtype=torch.int64)
        mask = torch.ones(batch, seq, dtype=torch.int64)
        args, names, outputs = (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"]
    else:
        builder = getattr(torchvision.models, model_name, None)
        if builder is None or not callable(builder):
            sys.exit(f"unknown architecture '{model_name}': not a torchvision.models builder nor {sorted(ENCODERS)}")
        h, w = (int(d) for d in input_text.split("x"))
        kwargs = {"aux_logits": False, "init_weights": True} if model_name in ("inception_v3", "googlenet") else {}
        model = builder(weights=None, **kwargs)
        args, names, outputs = (torch.rand(batch, 3, h, w),), ["input"], ["logits"]
    model.eval()
    torch.onnx.export(model, args, path, opset_version=OPSET, input_names=names, output_names=outputs,
                      do_constant_folding=True)


def kernels_of(chipfit, path):
    """The compiled cpu:fp32 kernels with their cost, from `chipfit inspect --json`."""
    out = subprocess.run([chipfit, "inspect", path, "--target", "cpu:fp32", "--json"], check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for k in json.loads(out)["placement"]["kernels"]:
        if k.get("parent") or "flops" not in k:
            continue  # a control-flow body's kernels are inside their parent's time
        rows.append([k["name"], k["op"], k["flops"], k["bytes_read"], k["bytes_written"], k["output_shape"]])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chipfit", default=os.path.join(REPO, "build", "dev", "app", "chipfit"))
    ap.add_argument("--cache", default=os.path.join(REPO, ".cache", "validation-models"))
    ap.add_argument("--only", default="", help="comma-separated model names")
    a = ap.parse_args()
    pairs = set()
    for file in sorted(glob.glob(os.path.join(VALIDATION, "*.csv"))):
        with open(file, newline="") as f:
            for row in csv.DictReader(f):
                pairs.add((row["model"].strip(), row["input"].strip()))
    only = {m for m in a.only.split(",") if m}
    os.makedirs(a.cache, exist_ok=True)
    os.makedirs(os.path.join(VALIDATION, "features"), exist_ok=True)
    for model_name, input_text in sorted(pairs):
        if only and model_name not in only:
            continue
        layers = {}
        for batch in (1, 2):
            path = os.path.join(a.cache, f"{model_name}-{input_text}-b{batch}.onnx")
            if not os.path.exists(path):
                build(model_name, input_text, batch, path)
            layers[f"b{batch}"] = kernels_of(a.chipfit, path)
        if [l[0] for l in layers["b1"]] != [l[0] for l in layers["b2"]]:
            sys.exit(f"{model_name} {input_text}: batch 1 and 2 compile to different kernels; cannot extrapolate")
        document = {
            "schema": "chipfit.features/1",
            "model": model_name,
            "input": input_text,
            "made_by": f"scripts/make-validation-features.py: torch {torch.__version__}, torchvision "
                       f"{torchvision.__version__}, opset {OPSET}, chipfit inspect --target cpu:fp32",
            "columns": ["name", "op", "flops", "bytes_read", "bytes_written", "output_shape"],
            "layers": layers,
        }
        out = os.path.join(VALIDATION, "features", f"{model_name}-{input_text}.json")
        with open(out, "w") as f:
            # One layer per line: small diffs when chipfit's fusion changes.
            f.write("{\n")
            for key in ("schema", "model", "input", "made_by", "columns"):
                f.write(f"  {json.dumps(key)}: {json.dumps(document[key])},\n")
            f.write('  "layers": {\n')
            for i, batch in enumerate(("b1", "b2")):
                f.write(f'    "{batch}": [\n')
                f.write(",\n".join("      " + json.dumps(l) for l in layers[batch]))
                f.write("\n    ]" + ("," if i == 0 else "") + "\n")
            f.write("  }\n}\n")
        print(f"{out}: {len(layers['b1'])} kernels", flush=True)


if __name__ == "__main__":
    main()
