#!/usr/bin/python3
"""Writes a small seeded RetinaFace/UltraFace-like face detector (ONNX) for the QDQ round-trip peer test.

Usage: make-face-detector.py OUT.onnx [--opset N]   (input "input" [1,3,96,128]; outputs boxes, scores, landmarks)
"""
import argparse

import torch
from torch import nn
import torch.nn.functional as F

ANCHORS = 2


def conv_bn(cin, cout, stride=1, groups=1, relu=True):
    layers = [nn.Conv2d(cin, cout, 3, stride, 1, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if relu:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


def conv1x1_bn(cin, cout, relu=True):
    layers = [nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout)]
    if relu:
        layers.append(nn.LeakyReLU(0.1, inplace=True) if relu == "leaky" else nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


def dw_block(cin, cout, stride):
    # MobileNet-style depthwise separable block (RetinaFace-mnet / UltraFace backbones).
    return nn.Sequential(conv_bn(cin, cin, stride, groups=cin), conv1x1_bn(cin, cout))


class ContextModule(nn.Module):
    """SSH context module: 3x3, 5x5 (two 3x3) and 7x7 (three 3x3) branches concatenated, then ReLU."""

    def __init__(self, c):
        super().__init__()
        self.b3 = conv_bn(c, c // 2, relu=False)
        self.b5_1 = conv_bn(c, c // 4)
        self.b5_2 = conv_bn(c // 4, c // 4, relu=False)
        self.b7_2 = conv_bn(c // 4, c // 4)
        self.b7_3 = conv_bn(c // 4, c // 4, relu=False)

    def forward(self, x):
        a = self.b3(x)
        t = self.b5_1(x)
        b = self.b5_2(t)
        c = self.b7_3(self.b7_2(t))
        return F.relu(torch.cat([a, b, c], dim=1))


class FaceDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 2)
        self.stage1 = nn.Sequential(dw_block(8, 16, 1), dw_block(16, 32, 2))  # /4
        self.stage2 = nn.Sequential(dw_block(32, 64, 2))  # /8
        self.stage3 = nn.Sequential(dw_block(64, 128, 2))  # /16
        fpn = 32
        self.lat1 = conv1x1_bn(32, fpn, "leaky")
        self.lat2 = conv1x1_bn(64, fpn, "leaky")
        self.lat3 = conv1x1_bn(128, fpn, "leaky")
        self.merge1 = conv_bn(fpn, fpn)
        self.merge2 = conv_bn(fpn, fpn)
        self.ctx = nn.ModuleList([ContextModule(fpn) for _ in range(3)])
        self.cls = nn.ModuleList([nn.Conv2d(fpn, ANCHORS * 2, 1) for _ in range(3)])
        self.box = nn.ModuleList([nn.Conv2d(fpn, ANCHORS * 4, 1) for _ in range(3)])
        self.ldm = nn.ModuleList([nn.Conv2d(fpn, ANCHORS * 10, 1) for _ in range(3)])

    def forward(self, x):
        c1 = self.stage1(self.stem(x))
        c2 = self.stage2(c1)
        c3 = self.stage3(c2)
        p3 = self.lat3(c3)
        p2 = self.lat2(c2)
        p2 = self.merge2(p2 + F.interpolate(p3, size=p2.shape[2:], mode="nearest"))
        p1 = self.lat1(c1)
        p1 = self.merge1(p1 + F.interpolate(p2, size=p1.shape[2:], mode="nearest"))
        feats = [ctx(p) for ctx, p in zip(self.ctx, (p1, p2, p3))]

        def head(convs, width):
            return torch.cat([c(f).permute(0, 2, 3, 1).reshape(1, -1, width) for c, f in zip(convs, feats)], dim=1)

        boxes = head(self.box, 4)
        scores = F.softmax(head(self.cls, 2), dim=-1)
        landmarks = head(self.ldm, 10)
        return boxes, scores, landmarks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = FaceDetector()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            if m.bias is not None:
                nn.init.uniform_(m.bias, -0.2, 0.2)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.6, 1.4)
            nn.init.uniform_(m.bias, -0.2, 0.2)
    # BatchNorm statistics from seeded batches, so each layer's activations are roughly unit-scaled.
    model.train()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = None  # cumulative average over the batches
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(8):
            model(torch.rand(4, 3, 96, 128, generator=gen))
    model.eval()
    torch.onnx.export(model, torch.rand(1, 3, 96, 128, generator=gen), args.out, opset_version=args.opset,
                      input_names=["input"], output_names=["boxes", "scores", "landmarks"],
                      do_constant_folding=True)


if __name__ == "__main__":
    main()
