#!/usr/bin/python3
"""Builds chipfit-bench-ort's model set: models of the families people bring, at fixed shapes, with inputs.

Usage: /usr/bin/python3 bench/make-model-set.py [OUTDIR] [--only NAME,NAME] [--samples N] [--list]

OUTDIR defaults to .cache/bench-models (ignored by git: the models are generated, never committed).
Needs only Debian's python3-torch (1.13) and python3-torchvision (0.14); nothing is downloaded.
Each model is exported with torch.onnx.export (opset 17, batch 1, every shape fixed) as OUTDIR/NAME.onnx,
and OUTDIR/NAME.data/ gets N seeded input samples (sub-folders 00, 01, ...), each one .npy per ONNX input,
named after the input as chipfit's --data folders want it (LoadCalibrationData). chipfit-bench-ort
--set OUTDIR runs them all: the first sample is the timing input of both runtimes, all of them calibrate
int8.

Weights are random but deterministic and not degenerate: torch.manual_seed per model before it is built
(torchvision's own initialisers then draw the same numbers every time), the parts torchvision starts at
zero or near zero re-initialised (ViT's head, ConvNeXt's layer scales), and every BatchNorm's running
statistics re-estimated by forward passes in train mode on seeded images, then eval.
"""

import argparse
import math
import os
import shutil
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

OPSET = 17
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------------
# Shared helpers: seeded inputs, BatchNorm statistics, export.


def synthetic_images(g, n, size, normalize=True):
    """n seeded RGB images [n, 3, H, W]: smooth colour fields with a few flat rectangles (edges and
    regions as photos have, rather than white noise), in [0, 1] or ImageNet-normalised."""
    h, w = size
    low = torch.rand(n, 3, max(2, h // 32), max(2, w // 32), generator=g)
    img = F.interpolate(low, size=(h, w), mode="bicubic", align_corners=False)
    for i in range(n):
        for _ in range(int(torch.randint(3, 7, (1,), generator=g))):
            y0, x0 = int(torch.randint(0, h - 8, (1,), generator=g)), int(torch.randint(0, w - 8, (1,), generator=g))
            y1 = y0 + int(torch.randint(8, max(9, h // 2), (1,), generator=g))
            x1 = x0 + int(torch.randint(8, max(9, w // 2), (1,), generator=g))
            img[i, :, y0:y1, x0:x1] = torch.rand(3, 1, 1, generator=g)
    img = (img + 0.03 * torch.randn(img.shape, generator=g)).clamp(0, 1)
    if normalize:
        img = (img - torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)) / torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return img


def reestimate_batchnorm(model, run, batches, seed):
    """Running statistics of every BatchNorm from `batches` calls of run(generator), the BatchNorms in
    train mode (a cumulative average) and everything else (dropout, stochastic depth) in eval."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.eval()
    for bn in bns:
        bn.train()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(batches):
            run(g)
    model.eval()


def describe(t):
    return f"{str(t.dtype).replace('torch.', '')}[{','.join(str(d) for d in t.shape)}]"


def export(name, model, samples, input_names, output_names, out_dir):
    """Exports `model` on samples[0] and writes every sample under NAME.data/NN/<input>.npy."""
    path = os.path.join(out_dir, name + ".onnx")
    model.eval()
    start = time.monotonic()
    with torch.no_grad():
        outputs = model(*samples[0])
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    # Not under no_grad: there nn.MultiheadAttention (ViT) takes its fused fast path, which cannot be exported.
    torch.onnx.export(model, tuple(samples[0]), path, opset_version=OPSET, input_names=input_names,
                      output_names=output_names, do_constant_folding=True)
    data_dir = os.path.join(out_dir, name + ".data")
    shutil.rmtree(data_dir, ignore_errors=True)  # no stale samples from an earlier --samples
    for k, sample in enumerate(samples):
        folder = os.path.join(data_dir, f"{k:02d}")
        os.makedirs(folder, exist_ok=True)
        for input_name, tensor in zip(input_names, sample):
            # chipfit's CalibrationFileName: '/' and ':' become '_'.
            file = input_name.replace("/", "_").replace(":", "_") + ".npy"
            np.save(os.path.join(folder, file), np.ascontiguousarray(tensor.numpy()))
    inputs = ", ".join(f"{n} {describe(t)}" for n, t in zip(input_names, samples[0]))
    outs = ", ".join(f"{n} {describe(t)} std {t.float().std().item() if t.numel() > 1 else 0:.3g}"
                     for n, t in zip(output_names, outputs))
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB, {time.monotonic() - start:.0f} s\n"
          f"  inputs: {inputs}\n  outputs on sample 00: {outs}\n  data: {data_dir}/ ({len(samples)} samples)",
          flush=True)


def image_samples(count, seed, size, normalize=True):
    g = torch.Generator().manual_seed(seed)
    return [(synthetic_images(g, 1, size, normalize),) for _ in range(count)]


class DetectorOutputs(nn.Module):
    """A torchvision detector on a [1, 3, H, W] batch (pixels in [0, 1]): boxes, scores and labels."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        d = self.inner([x[0]])[0]
        return d["boxes"], d["scores"], d["labels"]


class SegmentationOut(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)["out"]


# ---------------------------------------------------------------------------------------------
# Transformers written as Hugging Face's modelling code is, so the graphs are the ones users export.


class BertLayer(nn.Module):
    """HF BertLayer: separate Q/K/V Linears, heads by view + permute, MatMul / Div / Add(mask) / Softmax /
    MatMul, post-norm residuals, erf GELU."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out, self.attn_norm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate, self.output = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def split_heads(self, x):
        x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, h, mask_bias):
        q, k, v = self.split_heads(self.query(h)), self.split_heads(self.key(h)), self.split_heads(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,))
        h = self.attn_norm(self.attn_out(ctx) + h)
        return self.out_norm(self.output(F.gelu(self.intermediate(h))) + h)


class BertLike(nn.Module):
    """BERT-base (HF BertModel): word + position + token-type embeddings, 12 post-norm layers, a tanh pooler
    on [CLS]. The padding mask becomes HF's additive bias (1 - mask) * finfo(float32).min."""

    def __init__(self, vocab=30522, hidden=768, heads=12, layers=12, positions=512):
        super().__init__()
        self.words, self.positions = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        self.token_types, self.norm = nn.Embedding(2, hidden), nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads) for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)
        self.register_buffer("position_ids", torch.arange(positions).unsqueeze(0))

    def forward(self, input_ids, attention_mask):
        t = input_ids.size(1)
        token_type_ids = torch.zeros_like(input_ids)
        h = self.words(input_ids) + self.token_types(token_type_ids) + self.positions(self.position_ids[:, :t])
        h = self.norm(h)
        bias = attention_mask[:, None, None, :].to(h.dtype)
        bias = (1.0 - bias) * torch.finfo(h.dtype).min
        for layer in self.layers:
            h = layer(h, bias)
        return h, torch.tanh(self.pooler(h[:, 0]))


class Conv1D(nn.Module):
    """HF GPT-2's Conv1D: a Linear with the weight stored [in, out], applied as addmm on the 2-D view."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)


def gelu_new(x):
    """GPT-2's tanh GELU as HF writes it (NewGELUActivation)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Gpt2Block(nn.Module):
    def __init__(self, hidden, heads, positions, layers):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.c_attn, self.c_proj = Conv1D(3 * hidden, hidden), Conv1D(hidden, hidden)
        self.c_fc, self.mlp_proj = Conv1D(4 * hidden, hidden), Conv1D(hidden, 4 * hidden)
        for proj in (self.c_proj, self.mlp_proj):  # HF's scaled init of the residual projections
            nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * layers))
        causal = torch.tril(torch.ones(positions, positions, dtype=torch.bool))
        self.register_buffer("bias", causal.view(1, 1, positions, positions))

    def split_heads(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln_1(x)).split(self.heads * self.head_dim, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        t = q.size(-2)
        mask = self.bias[:, :, :t, :t]
        w = torch.where(mask, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        a = torch.matmul(F.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (self.heads * self.head_dim,))
        x = x + self.c_proj(a)
        return x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))


class Gpt2Like(nn.Module):
    """GPT-2 small (HF GPT2LMHeadModel): pre-norm causal decoder, LM head tied to the token embedding."""

    def __init__(self, vocab=50257, hidden=768, heads=12, layers=12, positions=1024):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        self.blocks = nn.ModuleList([Gpt2Block(hidden, heads, positions, layers) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)
        self.register_buffer("position_ids", torch.arange(positions).unsqueeze(0))

    def forward(self, input_ids):
        x = self.wte(input_ids) + self.wpe(self.position_ids[:, : input_ids.size(1)])
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def hf_init(model):
    """Hugging Face's _init_weights: N(0, 0.02) Linears and Embeddings, zero biases, unit LayerNorms."""
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


# ---------------------------------------------------------------------------------------------
# The models. Each builder gets (seed, samples, out_dir); the seed is fixed per model, not by order.


def vit(seed, n, out_dir):
    from torchvision.models import vit_b_16

    torch.manual_seed(seed)
    model = vit_b_16(weights=None)
    nn.init.normal_(model.heads.head.weight, std=0.02)  # torchvision starts the head at zero
    export("vit", model, image_samples(n, seed, (224, 224)), ["input"], ["logits"], out_dir)


def bert(seed, n, out_dir):
    torch.manual_seed(seed)
    model = BertLike()
    hf_init(model)
    g = torch.Generator().manual_seed(seed)
    samples = []
    for _ in range(n):
        # [CLS] words [SEP] then padding, as a tokenizer pads to 128: 40–120 real tokens.
        length = int(torch.randint(40, 121, (1,), generator=g))
        ids = torch.zeros(1, 128, dtype=torch.int64)
        ids[0, 0], ids[0, length - 1] = 101, 102
        ids[0, 1 : length - 1] = torch.randint(1000, 30522, (length - 2,), generator=g)
        mask = torch.zeros(1, 128, dtype=torch.int64)
        mask[0, :length] = 1
        samples.append((ids, mask))
    export("bert", model, samples, ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"], out_dir)


def gpt2(seed, n, out_dir):
    torch.manual_seed(seed)
    model = Gpt2Like()
    hf_init(model)  # Conv1D (not a Linear) keeps its own init, with the scaled residual projections
    g = torch.Generator().manual_seed(seed)
    samples = [(torch.randint(0, 50257, (1, 64), generator=g),) for _ in range(n)]
    export("gpt2", model, samples, ["input_ids"], ["logits"], out_dir)


def convnet(name, build, seed, n, out_dir, size=(224, 224), fix=None):
    torch.manual_seed(seed)
    model = build(weights=None)
    if fix:
        fix(model)
    reestimate_batchnorm(model, lambda g: model(synthetic_images(g, 4, size)), 4, seed + 1000)
    export(name, model, image_samples(n, seed, size), ["input"], ["logits"], out_dir)


def convnext(seed, n, out_dir):
    from torchvision.models import convnext_tiny

    def layer_scales(model):
        # torchvision starts every block's layer scale at 1e-6: the blocks would add nothing to the output.
        g = torch.Generator().manual_seed(seed)
        for name, p in model.named_parameters():
            if name.endswith("layer_scale"):
                with torch.no_grad():
                    p.copy_(0.05 + 0.25 * torch.rand(p.shape, generator=g))

    convnet("convnext", convnext_tiny, seed, n, out_dir, fix=layer_scales)


def efficientnet(seed, n, out_dir):
    from torchvision.models import efficientnet_b0

    convnet("efficientnet", efficientnet_b0, seed, n, out_dir)


def shufflenet(seed, n, out_dir):
    from torchvision.models import shufflenet_v2_x1_0

    convnet("shufflenet", shufflenet_v2_x1_0, seed, n, out_dir)


def resnet50(seed, n, out_dir):
    from torchvision.models import resnet50 as build

    convnet("resnet50", build, seed, n, out_dir)


def detector(name, build, seed, n, out_dir, size, class_layers):
    torch.manual_seed(seed)
    model = build(weights=None, weights_backbone=None)
    # A seeded class head scores every box about alike (SSDlite: all ~0.014; Faster R-CNN: none above its
    # 0.05 threshold, so no detection at all); ×30 on its last layers gives peaked scores as a trained head has.
    with torch.no_grad():
        for layer in class_layers(model):
            layer.weight.mul_(30)
    mean, std = torch.tensor(model.transform.image_mean), torch.tensor(model.transform.image_std)
    # The backbone's BatchNorms see images normalised as the detector's own transform normalises them.
    reestimate_batchnorm(
        model,
        lambda g: model.backbone((synthetic_images(g, 4, size, normalize=False) - mean.view(1, 3, 1, 1))
                                 / std.view(1, 3, 1, 1)),
        4,
        seed + 1000,
    )
    samples = image_samples(n, seed, size, normalize=False)  # the detector normalises itself
    export(name, DetectorOutputs(model), samples, ["image"], ["boxes", "scores", "labels"], out_dir)


def ssdlite(seed, n, out_dir):
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    detector("ssdlite", ssdlite320_mobilenet_v3_large, seed, n, out_dir, (320, 320),
             lambda m: [branch[-1] for branch in m.head.classification_head.module_list])


def fasterrcnn(seed, n, out_dir):
    from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_320_fpn

    detector("fasterrcnn", fasterrcnn_mobilenet_v3_large_320_fpn, seed, n, out_dir, (320, 320),
             lambda m: [m.roi_heads.box_predictor.cls_score])


def lraspp(seed, n, out_dir):
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large

    torch.manual_seed(seed)
    model = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
    size = (320, 320)
    reestimate_batchnorm(model, lambda g: model(synthetic_images(g, 4, size)), 4, seed + 1000)
    export("lraspp", SegmentationOut(model), image_samples(n, seed, size), ["input"], ["out"], out_dir)


# name -> (builder, seed, what it is)
MODELS = {
    "vit": (vit, 1, "torchvision ViT-B/16, 1x3x224x224"),
    "bert": (bert, 2, "BERT-base-like encoder (HF graph), ids + padding mask int64 1x128"),
    "gpt2": (gpt2, 3, "GPT-2-small-like causal decoder (HF graph, tanh GELU, LM head), ids int64 1x64"),
    "convnext": (convnext, 4, "torchvision ConvNeXt-T, 1x3x224x224"),
    "efficientnet": (efficientnet, 5, "torchvision EfficientNet-B0, 1x3x224x224"),
    "shufflenet": (shufflenet, 6, "torchvision ShuffleNetV2 x1.0, 1x3x224x224"),
    "resnet50": (resnet50, 7, "torchvision ResNet-50, 1x3x224x224"),
    "ssdlite": (ssdlite, 8, "torchvision SSDlite320 MobileNetV3 detector (NMS inside), 1x3x320x320"),
    "fasterrcnn": (fasterrcnn, 9, "torchvision Faster R-CNN MobileNetV3-FPN 320 detector, 1x3x320x320"),
    "lraspp": (lraspp, 10, "torchvision LR-ASPP MobileNetV3 segmentation, 1x3x320x320"),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=os.path.join(REPO, ".cache", "bench-models"))
    parser.add_argument("--only", help="comma-separated model names (default: all)")
    parser.add_argument("--samples", type=int, default=8, help="input samples per model (default 8)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    args = parser.parse_args()
    if args.list:
        for name, (_, _, what) in MODELS.items():
            print(f"{name:<13} {what}")
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print(f"torch {torch.__version__}, opset {OPSET}, {args.samples} samples per model -> {args.out_dir}", flush=True)
    failed = []
    for name in names:
        build, seed, _ = MODELS[name]
        try:
            build(seed, args.samples, args.out_dir)
        except Exception as e:  # report every model, then fail
            print(f"{name}: export failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
