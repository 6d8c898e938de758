"""The numerics every reference run is made under (expected outputs, anchors, the eager baseline)."""

from __future__ import annotations

import torch


class StrictNumerics:
    """Reference runs (the expected outputs, anchors and the eager baseline): TF32 off,
    reduced-precision reductions off, float32 matmul 'highest', float32 default dtype."""

    def __enter__(self):
        m = torch.backends.cuda.matmul
        self.saved = (
            m.allow_tf32,
            torch.backends.cudnn.allow_tf32,
            torch.get_float32_matmul_precision(),
            m.allow_fp16_reduced_precision_reduction,
            m.allow_bf16_reduced_precision_reduction,
            torch.get_default_dtype(),
        )
        m.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        m.allow_fp16_reduced_precision_reduction = False
        m.allow_bf16_reduced_precision_reduction = False
        torch.set_default_dtype(torch.float32)
        self.grad = torch.is_grad_enabled()
        return self

    def __exit__(self, *exc):
        m = torch.backends.cuda.matmul
        m.allow_tf32, torch.backends.cudnn.allow_tf32 = self.saved[0], self.saved[1]
        torch.set_float32_matmul_precision(self.saved[2])
        m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = self.saved[3:5]
        torch.set_default_dtype(self.saved[5])
        torch.set_grad_enabled(self.grad)
        return False
