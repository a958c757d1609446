#!/usr/bin/env python3
"""Small committed fixtures of real architectures from transformers and torchvision (random weights,
tiny configs), in the layout of test/fixtures (export_fixtures.py: train.pt2, core.pt2,
inputs/expected safetensors, and the training files train_grad.pt2,
train_inputs / train_grad_outputs / train_expected safetensors). CI has no torch:
test/e2e/zoo.test compiles and runs what this writes.

    python3 test/zoo/export_zoo.py [name...]     # python3 with torch and transformers

Models:
  llama   LlamaForCausalLM: 1 layer, hidden 32, 4 query heads and 2 key/value heads
          (grouped-query attention), RoPE, RMSNorm, SwiGLU MLP, vocab 64; idx i64[2, 12]
          -> logits. Its mask building needs aten.diff, aten.index.Tensor and the
          bitwise ops; SDPA with enable_gqa.
  mixtral MixtralForCausalLM: 1 layer, hidden 32, 4 query / 2 key-value heads, a sparse
          mixture of 4 experts (top 2, intermediate 64), vocab 64; idx i64[2, 12] ->
          logits. Its routing needs topk, sort, floor_divide, histc and cumsum, its
          experts transformers' grouped_mm_fallback (what torch.export records for f32).
  swin    torchvision SwinTransformer: patch 4, embed 16, depths (1, 1), heads (2, 4),
          window 4 (shifted windows: roll and pads), x f32[1, 3, 32, 32], stochastic depth
          off -> logits [1, 10]. Its relative position bias indexes a learned table by
          a position buffer (index's gradient).
"""
import sys
sys.dont_write_bytecode = True

import os
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import export_fixtures  # noqa: E402


class LogitsOnly(torch.nn.Module):
    """A causal LM called on token ids alone, returning its logits."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, idx):
        return self.lm(input_ids=idx, use_cache=False).logits


def make_llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
    cfg._attn_implementation = "sdpa"
    model = LogitsOnly(LlamaForCausalLM(cfg))
    return model, OrderedDict(idx=torch.randint(0, 64, (2, 12))), None


def make_mixtral():
    from transformers import MixtralConfig, MixtralForCausalLM
    torch.manual_seed(0)
    cfg = MixtralConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                        num_local_experts=4, num_experts_per_tok=2)
    cfg._attn_implementation = "sdpa"
    model = LogitsOnly(MixtralForCausalLM(cfg))
    return model, OrderedDict(idx=torch.randint(0, 64, (2, 12))), None


def make_swin():
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 4],
                            window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10)
    return model, OrderedDict(x=torch.randn(1, 3, 32, 32)), None


MODELS = OrderedDict(llama=make_llama, mixtral=make_mixtral, swin=make_swin)


def main():
    names = sys.argv[1:] or list(MODELS)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for name in names:
        outdir = os.path.join(HERE, name)
        export_fixtures.export_one(name, MODELS[name], outdir)
        # AOTAutograd's saved-value report cannot trace the data-dependent mask building.
        export_fixtures.export_train(name, MODELS[name], outdir, aot_report=False)


if __name__ == "__main__":
    main()
