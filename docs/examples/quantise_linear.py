"""A Linear layer's weights quantised to 4 bits (u4 codes, a scale and a
zero point per 128 inputs and output, min/max per group) and the layer
replaced by TL's quantised matmul; the result compared with the f16
layer's on the same inputs. Runs on a CUDA GPU with PyTorch:

    PYTHONPATH=python python3 docs/examples/quantise_linear.py
"""
import torch

import tl


class QuantLinear(torch.nn.Module):
    """y = x W^T + b with W quantised: u4 codes, per group of `group`
    inputs and per output a scale and a zero point (AWQ/GPTQ's format)."""

    def __init__(self, linear, group=128):
        super().__init__()
        w = linear.weight.detach().float().t()          # [K, N]: inputs x outputs
        k, n = w.shape
        g = w.reshape(k // group, group, n)
        lo, hi = g.amin(dim=1), g.amax(dim=1)           # [K / group, N]
        scale = ((hi - lo) / 15).clamp(min=1e-8).half().float()
        zero = torch.round(-lo / scale).clamp(0, 15)
        codes = torch.round(g / scale[:, None] + zero[:, None]).clamp(0, 15)
        codes = codes.reshape(k, n).to(torch.uint8)
        self.packed = tl.ops.pack_weights(codes, scale, zero, wtype="u4", group=group)
        self.bias = linear.bias

    def forward(self, x):
        y = tl.ops.quant_matmul(x.reshape(-1, x.shape[-1]), self.packed)
        y = y.reshape(*x.shape[:-1], -1)
        return y + self.bias if self.bias is not None else y


def main():
    torch.manual_seed(0)
    layer = torch.nn.Linear(4096, 11008, dtype=torch.float16, device="cuda")
    q = QuantLinear(layer)
    for m in (1, 7, 16, 64, 256):
        x = torch.randn(m, 4096, dtype=torch.float16, device="cuda")
        want, got = layer(x).float(), q(x).float()
        rel = ((got - want).norm() / want.norm()).item()
        print("m=%-3d relative error of the 4-bit layer against f16: %.4f" % (m, rel))
        # 4-bit weights round each weight by up to half a step: a few
        # percent of the layer's output, not more.
        assert rel < 0.1, rel
    print("quantise_linear: ok")


if __name__ == "__main__":
    main()
