#!/usr/bin/python3
"""Exports one small model per output kind that chipfit's accuracy verdicts tell apart.

Usage: /usr/bin/python3 tests/tools/export_task_models.py OUT_DIR [--only NAME ...]

Writes, with torch.onnx.export at opset 17 (Debian's python3-torch 1.13 and python3-torchvision 0.14;
nothing is downloaded, every weight is random and seeded):

  detector.onnx   torchvision SSDlite320 MobileNetV3 (boxes [N,4], scores [N], labels [N] after NMS),
                  input image [3, 320, 320]
  segmenter.onnx  torchvision LR-ASPP MobileNetV3 (class scores [1, 21, H, W]), input [1, 3, 160, 160]
  decoder_lm.onnx a GPT-like causal decoder (token embedding, 2 masked self-attention blocks, LM head
                  over 1024 tokens): logits [1, 32, 1024] from token ids [1, 32]
  encoder.onnx    a BERT-like text encoder (2 bidirectional self-attention blocks): hidden states
                  [1, 32, 64] from token ids [1, 32]

Weights are deterministic and not degenerate: a seeded init, and every BatchNorm's statistics
re-estimated on seeded batches so activations keep their scale through the network. The .onnx files
are test data made at run time; they are never committed.
"""

import argparse
import math
import os
import sys

import torch
from torch import nn

OPSET = 17


def seeded_init(model, seed):
    torch.manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5))
            if m.bias is not None:
                nn.init.uniform_(m.bias, -0.05, 0.05)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.5)
        elif isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
            if m.weight is not None:
                nn.init.uniform_(m.weight, 0.8, 1.2)
                nn.init.uniform_(m.bias, -0.1, 0.1)


def reestimate_batchnorm(model, run, batches, seed):
    """Running statistics of every BatchNorm from `batches` seeded calls of run(generator)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average over the batches
    model.eval()
    for bn in bns:
        bn.train()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(batches):
            run(g)
    model.eval()


def export(model, args, path, input_names, output_names):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=OPSET, input_names=input_names,
                          output_names=output_names, do_constant_folding=True)
    print(f"wrote {path}")


def detector(out_dir):
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    model = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=21)
    seeded_init(model, 1)
    # The backbone's BatchNorms see normalised images as the detector's transform makes them.
    reestimate_batchnorm(model, lambda g: model.backbone(torch.rand(4, 3, 320, 320, generator=g) * 2 - 1), 4, 11)
    image = torch.rand(3, 320, 320, generator=torch.Generator().manual_seed(5))

    class Wrapper(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            d = self.inner([x])[0]
            return d["boxes"], d["scores"], d["labels"]

    export(Wrapper(model), (image,), os.path.join(out_dir, "detector.onnx"), ["image"],
           ["boxes", "scores", "labels"])


def segmenter(out_dir):
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large

    model = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=21)
    seeded_init(model, 2)
    reestimate_batchnorm(model, lambda g: model(torch.randn(4, 3, 160, 160, generator=g)), 4, 12)

    class Wrapper(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    x = torch.randn(1, 3, 160, 160, generator=torch.Generator().manual_seed(6))
    export(Wrapper(model), (x,), os.path.join(out_dir, "segmenter.onnx"), ["input"], ["out"])


class Block(nn.Module):
    """Pre-norm transformer block: self-attention (causal or not) and an MLP, both residual."""

    def __init__(self, width, heads, causal, steps):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.register_buffer("mask", torch.triu(torch.ones(steps, steps, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=2)
        q = q.reshape(b, t, self.heads, d).transpose(1, 2)
        k = k.reshape(b, t, self.heads, d).transpose(1, 2)
        v = v.reshape(b, t, self.heads, d).transpose(1, 2)
        scores = q @ k.transpose(2, 3) / math.sqrt(d)
        if self.causal:
            scores = scores.masked_fill(self.mask[:t, :t], -1e4)
        y = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab, width, heads, layers, steps, causal, lm_head):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(steps, width)
        self.blocks = nn.ModuleList([Block(width, heads, causal, steps) for _ in range(layers)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False) if lm_head else None

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(t).unsqueeze(0))
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        return self.head(x) if self.head is not None else x


def decoder_lm(out_dir):
    model = TinyTransformer(vocab=1024, width=64, heads=4, layers=2, steps=32, causal=True, lm_head=True)
    seeded_init(model, 3)
    ids = torch.randint(0, 1024, (1, 32), generator=torch.Generator().manual_seed(7))
    export(model, (ids,), os.path.join(out_dir, "decoder_lm.onnx"), ["input_ids"], ["logits"])


def encoder(out_dir):
    model = TinyTransformer(vocab=1024, width=64, heads=4, layers=2, steps=32, causal=False, lm_head=False)
    seeded_init(model, 4)
    ids = torch.randint(0, 1024, (1, 32), generator=torch.Generator().manual_seed(8))
    export(model, (ids,), os.path.join(out_dir, "encoder.onnx"), ["input_ids"], ["last_hidden_state"])


MODELS = {"detector": detector, "segmenter": segmenter, "decoder_lm": decoder_lm, "encoder": encoder}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS), help="export only these models")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    failed = []
    for name in args.only or MODELS:
        try:
            MODELS[name](args.out_dir)
        except Exception as e:  # report every model, then fail
            print(f"{name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
