#!/usr/bin/env python3
"""The model zoo check (issue 13): architectures from torchvision and transformers, built
with random weights and small configs, exported, compiled with tgc and compared with
eager PyTorch. For each model:

  - inference (eval mode): the training IR (`torch.export.export`) and the core ATen IR
    (`run_decompositions()`; SDPA kept where torch fails to decompose it, see
    `_core_aten`) are each compiled, loaded with `tgc.load` and compared with
    eager on the same inputs (rel 1e-4: max |tgc - eager| / max |eager|);
  - one training step (train mode, loss mean(out^2)) with every dropout probability set
    to 0: `tgc compile --train`, `tgc.load(train=True)`, the loss's backward; the output,
    every parameter's gradient and the buffers batch norm updates against autograd in
    float64. Each must be within rel 1e-3 of it, or within 4x the error float32
    arithmetic itself makes there: eager float32's error, or the change of the float64
    result under a perturbation of the parameters and inputs that moves its output as
    far as float32 rounding moves eager's (a gradient that is zero in exact arithmetic,
    such as a bias before a batch norm, is rounding in float32, eager's too; a gradient
    through a ReLU whose input is within rounding of zero jumps with any rounding);
  - the same training step once more with dropout on: it must run and give finite
    gradients (it cannot be compared with eager's random masks);
  - inference through tgc's own capture (`tgc.compile`: tgc-capture's .trace of the
    model's bytecode and objects, compiled by tgc) against eager (rel 1e-4), on the
    Python that runs the script (3.11 to 3.13).

Each model runs in a subprocess (a crash is a result, not the end of the run). The
table goes to docs/models.md, between the markers there.

    python3 test/zoo/run_zoo.py [--tgc build/bin/tgc] [--workdir DIR] [--only NAME...]
        [--no-docs] [--json results.json]

python3 must have torch, torchvision and transformers (PyPI)."""
import argparse
import copy
import json
import math
import os
import subprocess
import sys
import time
import traceback
from collections import OrderedDict

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

INFER_TOL = 1e-4
TRAIN_TOL = 1e-3


# ------------------------------------------------------------------ models
class Entry:
    """A zoo model: `build()` returns (module, OrderedDict of inputs, dynamic_shapes),
    seeded by the caller."""

    def __init__(self, name, library, config, build):
        self.name, self.library, self.config, self.build = name, library, config, build


def _torch():
    import torch
    return torch


class FirstOutput(_torch().nn.Module):
    """A model whose result is a dict or ModelOutput, reduced to one tensor; `names`
    name the positional arguments (keyword arguments of the model)."""

    def __init__(self, model, key, names=None, **kwargs):
        super().__init__()
        self.model, self.key, self.names, self.kwargs = model, key, names, kwargs

    def forward(self, *args):
        if self.names:
            out = self.model(**dict(zip(self.names, args)), **self.kwargs)
        else:
            out = self.model(*args, **self.kwargs)
        return out[self.key]


def _image(n=2, size=64):
    torch = _torch()
    return OrderedDict(x=torch.randn(n, 3, size, size))


def _tv(fn, size=64, **kwargs):
    def build():
        import torchvision.models as tvm
        return getattr(tvm, fn)(weights=None, **kwargs), _image(2, size), None
    return build


def _vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return (VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                              hidden_dim=64, mlp_dim=128, num_classes=10),
            _image(2, 32), None)


def _swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return (SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                            window_size=[4, 4], num_classes=10),
            _image(2, 32), None)


def _convnext():
    from torchvision.models.convnext import ConvNeXt, CNBlockConfig
    settings = [CNBlockConfig(32, 64, 2), CNBlockConfig(64, None, 2)]
    return ConvNeXt(settings, num_classes=10), _image(2, 32), None


def _fcn():
    import torchvision.models.segmentation as seg
    model = seg.fcn_resnet50(weights=None, weights_backbone=None, num_classes=4,
                             aux_loss=False)
    return FirstOutput(model, "out"), _image(2, 64), None


def _ids(vocab, shape):
    torch = _torch()
    return torch.randint(0, vocab, shape)


def _bert():
    from transformers import BertConfig, BertModel
    cfg = BertConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=128,
                     max_position_embeddings=64, attn_implementation="sdpa")
    return (FirstOutput(BertModel(cfg), "last_hidden_state"),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=2, n_head=4,
                     attn_implementation="sdpa")
    return (FirstOutput(GPT2LMHeadModel(cfg), "logits", use_cache=False),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


def _llama_config(cls_name, **extra):
    import transformers
    cfg = getattr(transformers, cls_name)(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        attn_implementation="sdpa", **extra)
    return cfg


def _llama(dynamic=False):
    def build():
        from transformers import LlamaForCausalLM
        torch = _torch()
        model = FirstOutput(LlamaForCausalLM(_llama_config("LlamaConfig")), "logits",
                            use_cache=False)
        dyn = None
        if dynamic:
            dyn = {"args": ({1: torch.export.Dim("T", min=2, max=64)},)}  # forward(*args)
        return model, OrderedDict(input_ids=_ids(128, (2, 16))), dyn
    return build


def _qwen2():
    from transformers import Qwen2ForCausalLM
    return (FirstOutput(Qwen2ForCausalLM(_llama_config("Qwen2Config")), "logits",
                        use_cache=False),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


def _causal_lm(cls_name, cfg_name, **cfg):
    """A transformers causal LM as a user calls it: with its default KV cache (the first
    keys are concatenated onto an empty cache tensor)."""
    def build():
        import transformers
        config = getattr(transformers, cfg_name)(vocab_size=128, hidden_size=64,
                                                 num_hidden_layers=2, num_attention_heads=4,
                                                 max_position_embeddings=64,
                                                 attn_implementation="sdpa", **cfg)
        model = getattr(transformers, cls_name)(config)
        return FirstOutput(model, "logits"), OrderedDict(input_ids=_ids(128, (2, 16))), None
    return build


def _mixtral():
    from transformers import MixtralForCausalLM
    model = MixtralForCausalLM(_llama_config("MixtralConfig", num_local_experts=4,
                                             num_experts_per_tok=2))
    return (FirstOutput(model, "logits", use_cache=False),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


def _t5():
    from transformers import T5Config, T5EncoderModel
    cfg = T5Config(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                   num_heads=4, relative_attention_num_buckets=8)
    return (FirstOutput(T5EncoderModel(cfg), "last_hidden_state"),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


def _whisper():
    from transformers import WhisperConfig, WhisperForConditionalGeneration
    cfg = WhisperConfig(vocab_size=128, num_mel_bins=16, d_model=64, encoder_layers=2,
                        decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=128,
                        decoder_ffn_dim=128, max_source_positions=32,
                        max_target_positions=32, pad_token_id=0, bos_token_id=1,
                        eos_token_id=2, decoder_start_token_id=1,
                        attn_implementation="sdpa")
    torch = _torch()
    return (FirstOutput(WhisperForConditionalGeneration(cfg), "logits",
                        ["input_features", "decoder_input_ids"], use_cache=False),
            OrderedDict(input_features=torch.randn(1, 16, 64),
                        decoder_input_ids=_ids(128, (1, 8))), None)


def _r3d():
    import torchvision.models.video as video
    torch = _torch()
    return video.r3d_18(weights=None, num_classes=10), OrderedDict(x=torch.randn(2, 3, 4, 32, 32)), None


def _wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC
    cfg = Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=128, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2),
                         conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4, feat_extract_norm="group",
                         do_stable_layer_norm=False, vocab_size=32,
                         # SpecAugment masks and LayerDrop's skipped layers depend on
                         # random values: torch.export cannot capture them.
                         mask_time_prob=0.0, layerdrop=0.0)
    torch = _torch()
    return (FirstOutput(Wav2Vec2ForCTC(cfg), "logits"),
            OrderedDict(input_values=torch.randn(2, 1600)), None)


def _mistral():
    from transformers import MistralForCausalLM
    return (FirstOutput(MistralForCausalLM(_llama_config("MistralConfig")), "logits",
                        use_cache=False),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


def _deberta():
    from transformers import DebertaV2Config, DebertaV2Model
    cfg = DebertaV2Config(vocab_size=128, hidden_size=64, num_hidden_layers=2,
                          num_attention_heads=4, intermediate_size=128,
                          max_position_embeddings=64)
    return (FirstOutput(DebertaV2Model(cfg), "last_hidden_state"),
            OrderedDict(input_ids=_ids(128, (2, 16))), None)


MODELS = OrderedDict((e.name, e) for e in [
    Entry("resnet18", "torchvision", "x[2,3,64,64]", _tv("resnet18")),
    Entry("resnet50", "torchvision", "x[2,3,64,64]", _tv("resnet50")),
    Entry("mobilenet_v2", "torchvision", "x[2,3,64,64]", _tv("mobilenet_v2")),
    Entry("mobilenet_v3_small", "torchvision", "x[2,3,64,64]", _tv("mobilenet_v3_small")),
    Entry("efficientnet_b0", "torchvision", "x[2,3,64,64]", _tv("efficientnet_b0")),
    Entry("convnext", "torchvision", "ConvNeXt, 2 stages (32, 64), x[2,3,32,32]", _convnext),
    Entry("swin", "torchvision", "SwinTransformer, embed 32, depths (2, 2), window 4, "
          "x[2,3,32,32]", _swin),
    Entry("vit", "torchvision", "VisionTransformer, patch 8, 2 layers, hidden 64, "
          "x[2,3,32,32]", _vit),
    Entry("fcn_resnet50", "torchvision", "4 classes, x[2,3,64,64]", _fcn),
    Entry("r3d_18", "torchvision", "video ResNet (3-d convolutions), x[2,3,4,32,32]", _r3d),
    Entry("bert", "transformers", "BertModel, 2 layers, hidden 64, ids[2,16]", _bert),
    Entry("gpt2", "transformers", "GPT2LMHeadModel, 2 layers, hidden 64, ids[2,16]", _gpt2),
    Entry("llama", "transformers", "LlamaForCausalLM, 2 layers, hidden 64, 4/2 heads, "
          "ids[2,16]", _llama()),
    Entry("llama_dynamic", "transformers", "as llama, T dynamic (2..64)", _llama(True)),
    Entry("qwen2", "transformers", "Qwen2ForCausalLM, 2 layers, hidden 64, 4/2 heads, "
          "ids[2,16]", _qwen2),
    Entry("mistral", "transformers", "MistralForCausalLM, 2 layers, hidden 64, 4/2 heads, "
          "ids[2,16]", _mistral),
    Entry("mixtral", "transformers", "MixtralForCausalLM, 2 layers, hidden 64, 4/2 heads, "
          "4 experts (top 2), ids[2,16]", _mixtral),
    Entry("phi", "transformers", "PhiForCausalLM, 2 layers, hidden 64, 4 heads, KV cache on, "
          "ids[2,16]", _causal_lm("PhiForCausalLM", "PhiConfig", intermediate_size=128)),
    Entry("gemma", "transformers", "GemmaForCausalLM, 2 layers, hidden 64, 4/2 heads, KV cache "
          "on, ids[2,16]", _causal_lm("GemmaForCausalLM", "GemmaConfig", intermediate_size=128,
                                      num_key_value_heads=2, head_dim=16)),
    Entry("opt", "transformers", "OPTForCausalLM, 2 layers, hidden 64, 4 heads, KV cache on, "
          "ids[2,16]", _causal_lm("OPTForCausalLM", "OPTConfig", ffn_dim=128,
                                  word_embed_proj_dim=64)),
    Entry("deberta_v2", "transformers", "DebertaV2Model, 2 layers, hidden 64, ids[2,16]",
          _deberta),
    Entry("wav2vec2", "transformers", "Wav2Vec2ForCTC, conv front end (group norm, weight-"
          "normed positional conv), 2 layers, hidden 64, 1600 samples", _wav2vec2),
    Entry("t5_encoder", "transformers", "T5EncoderModel, 2 layers, d 64, ids[2,16]", _t5),
    Entry("whisper", "transformers", "WhisperForConditionalGeneration, 2+2 layers, d 64, "
          "16 mel bins x 64 frames, 8 decoder ids", _whisper),
])


# ------------------------------------------------------------------ one model
def _rel(actual, expected):
    torch = _torch()
    a, e = actual.detach().double(), expected.detach().double()
    if a.shape != e.shape:
        return math.inf
    if not torch.isfinite(a).all():
        return math.inf
    scale = e.abs().max().item() if e.numel() else 0.0
    err = (a - e).abs().max().item() if e.numel() else 0.0
    return err / scale if scale > 0 else err


def _float64_copy(model):
    """A float64 copy of `model` for the reference steps. transformers' mixture-of-experts
    layers compute their experts with torch._grouped_mm, which has no float64 kernel: the
    copy takes transformers' "eager" experts (a product per expert, the same math)."""
    m = copy.deepcopy(model).double()
    for sub in m.modules():
        if hasattr(sub, "set_experts_implementation") and hasattr(sub, "config"):
            sub.set_experts_implementation("eager")
            break
    return m


def _perturbed_step(model, args, delta, seed):
    """The float64 training step with every float parameter and input multiplied by
    (1 + delta * N(0, 1)): its output, parameter gradients and buffers by the names
    run_one compares."""
    torch = _torch()
    gen = torch.Generator().manual_seed(seed)
    noisy = lambda t: t * (1 + delta * torch.randn(t.shape, generator=gen,  # noqa: E731
                                                   dtype=t.dtype))
    m = _float64_copy(model)
    with torch.no_grad():
        for p in m.parameters():
            if p.is_floating_point():
                p.copy_(noisy(p))
    ins = tuple(noisy(a.double()) if a.is_floating_point() else a for a in args)
    out = m(*ins)
    out.pow(2).mean().backward()
    return _step_tensors(m, out)


def _step_tensors(m, out):
    """A training step's output, parameter gradients and float buffers, by the names
    run_one compares."""
    result = {"output": out.detach()}
    for n, p in m.named_parameters():
        if p.grad is not None:
            result[n] = p.grad
    for n, b in m.named_buffers():
        if b.is_floating_point():
            result["buffer " + n] = b
    return result


def _sensitivity(model, args, ref, out32_err, samples=2):
    """How much float32 rounding alone can move each compared tensor: the float64 step
    is run with its parameters and inputs perturbed so that its output moves as far from
    the exact one as eager float32's does (out32_err), and each tensor's change against
    the unperturbed float64 step (`ref`, _step_tensors) is taken (the largest of
    `samples` perturbations).
    A gradient through a ReLU whose input is within rounding of zero, or through a
    max-pool tie, jumps under such a perturbation, for float32 arithmetic in any order."""
    try:
        probe_delta = 1e-7
        probe = _perturbed_step(model, args, probe_delta, seed=1)
        moved = _rel(probe["output"], ref["output"])
        if not moved or not out32_err or not math.isfinite(moved):
            return {}
        # The output moves linearly with a small delta.
        delta = min(max(probe_delta * out32_err / moved, 1e-9), 1e-4)
        worst = {}
        for seed in range(2, 2 + samples):
            run = _perturbed_step(model, args, delta, seed=seed)
            for k, v in run.items():
                if k in ref:
                    worst[k] = max(worst.get(k, 0.0), _rel(v, ref[k]))
        return worst
    except Exception:  # noqa: BLE001 -- a model that cannot run perturbed: eager's error only
        return {}


def _set_dropout(model, p):
    """Every dropout probability of `model` to p (nn.Dropout modules, and the float
    attributes transformers' attention modules pass to SDPA), or back to what it was
    (p=None)."""
    torch = _torch()
    for m in model.modules():
        # nn.Dropout*, and torchvision's StochasticDepth (and timm-style DropPath): `p`.
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) or (
                isinstance(getattr(m, "p", None), float)
                and any(k in type(m).__name__ for k in ("StochasticDepth", "DropPath"))):
            if not hasattr(m, "_zoo_p"):
                m._zoo_p = m.p
            m.p = m._zoo_p if p is None else p
        # ... and transformers' DropPath modules (SegFormer, Swin, BEiT): `drop_prob`.
        for attr in ("dropout", "attention_dropout", "activation_dropout", "dropout_prob",
                     "attn_dropout_p", "drop_prob"):
            v = getattr(m, attr, None)
            if isinstance(v, float):
                key = "_zoo_" + attr
                if not hasattr(m, key):
                    setattr(m, key, v)
                setattr(m, attr, getattr(m, key) if p is None else p)


def _compile(tgc, ep, path, train=False):
    torch = _torch()
    torch.export.save(ep, path)
    so = os.path.splitext(path)[0] + ".so"
    cmd = [tgc, "compile", path, "-o", so] + (["--train"] if train else [])
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        lines = [ln for ln in r.stdout.splitlines() if "error" in ln] or r.stdout.splitlines()
        raise RuntimeError("tgc compile: " + (lines[0] if lines else f"exit {r.returncode}"))
    return so, dt


def _short(exc):
    text = str(exc).strip().splitlines()
    text = text[0] if text else type(exc).__name__
    return text[:200]


def _export(model, inputs, dyn):
    torch = _torch()
    return torch.export.export(model, tuple(inputs.values()), dynamic_shapes=dyn)


LOW_PRECISION = "bfloat16"  # --low-precision


def _low_precision(entry, model, inputs, dyn, tgc, workdir):
    torch = _torch()
    import tgc as tgc_py
    dtype = getattr(torch, LOW_PRECISION)
    try:
        with torch.no_grad():
            ref = _float64_copy(model)(
                *(a.double() if a.is_floating_point() else a for a in inputs.values()))
            low = copy.deepcopy(model).to(dtype)
            low_inputs = OrderedDict((k, a.to(dtype) if a.is_floating_point() else a)
                                     for k, a in inputs.items())
            low_out = low(*low_inputs.values())
            eager_err = _rel(low_out, ref)
    except Exception as e:  # noqa: BLE001 -- the model itself does not run in this dtype
        return {"status": "eager fails", "detail": _short(e), "dtype": LOW_PRECISION}
    try:
        ep = _export(low, low_inputs, dyn)
        ir = "core ATen IR"
        try:
            ep, _ = _core_aten(ep)
        except Exception:  # noqa: BLE001 -- torch's own failure: the training IR
            ir = "training IR"
        so, secs = _compile(tgc, ep, os.path.join(workdir, f"{entry.name}-{LOW_PRECISION}.pt2"))
        with torch.no_grad():
            got = tgc_py.load(so, low)(*low_inputs.values())
        err = _rel(got, ref)
        # The result's dtype is eager's (a model may compute its output in float32,
        # as Mamba does).
        ok = got.dtype == low_out.dtype and err <= max(2 * eager_err, 2 * torch.finfo(dtype).eps)
        return {"status": "matches" if ok else "mismatch", "rel_err": err,
                "eager_rel_err": eager_err, "dtype": LOW_PRECISION, "ir": ir,
                "compile_s": round(secs, 1)}
    except Exception as e:  # noqa: BLE001
        return {"status": "fails", "detail": _short(e), "dtype": LOW_PRECISION}


def run_one(entry, tgc, workdir):
    torch = _torch()
    import tgc as tgc_py
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    model, inputs, dyn = entry.build()
    # Some architectures initialize a weight to zero (ViT's head, residual scales): give
    # every all-zero parameter small random values, so the outputs and gradients depend
    # on everything before it.
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() and not p.any():
                p.normal_(0.0, 0.02)
    result = OrderedDict(name=entry.name, library=entry.library, config=entry.config)
    os.makedirs(workdir, exist_ok=True)
    args = tuple(inputs.values())
    # A second input set (another sequence length) for the dynamic model.
    if dyn is not None:
        alt = tuple(_ids(128, (2, 9)) if a.dtype == torch.int64 else a for a in args)

    # Inference, from both IRs.
    model.eval()
    with torch.no_grad():
        expected = model(*args)
        expected_alt = model(*alt) if dyn is not None else None
    notes = {}
    try:
        ep = _export(copy.deepcopy(model), inputs, dyn)
        irs = [("training_ir", ep)]
        try:
            core, notes["core_aten"] = _core_aten(ep)
            irs.append(("core_aten", core))
        except Exception as e:  # noqa: BLE001 -- torch's own failure is a result
            result["core_aten"] = {"status": "export fails", "detail": _short(e)}
    except Exception as e:  # noqa: BLE001
        result["training_ir"] = result["core_aten"] = {"status": "export fails",
                                                        "detail": _short(e)}
        irs = []
    for key, prog in irs:
        try:
            so, secs = _compile(tgc, prog, os.path.join(workdir, f"{entry.name}-{key}.pt2"))
            f = tgc_py.load(so, model)
            with torch.no_grad():
                err = _rel(f(*args), expected)
                if dyn is not None:
                    err = max(err, _rel(f(*alt), expected_alt))
            result[key] = {"status": "matches" if err <= INFER_TOL else "mismatch",
                           "rel_err": err, "compile_s": round(secs, 1)}
            if notes.get(key):
                result[key]["note"] = notes[key]
        except Exception as e:  # noqa: BLE001
            result[key] = {"status": "fails", "detail": _short(e)}

    # Inference through tgc's own capture: tgc-capture writes the model's bytecode and
    # objects as a .trace, tgc compiles it (tgc.compile), compared as above.
    try:
        t0 = time.perf_counter()
        f = tgc_py.compile(model, args, compiler=tgc,
                           cache_dir=os.path.join(workdir, f"{entry.name}-trace-cache"))
        with torch.no_grad():
            err = _rel(f(*args), expected)
        result["trace"] = {"status": "matches" if err <= INFER_TOL else "mismatch",
                           "rel_err": err, "compile_s": round(time.perf_counter() - t0, 1)}
    except Exception as e:  # noqa: BLE001
        result["trace"] = {"status": "fails", "detail": _short(e)}

    # Inference in a low-precision dtype (the model and its float inputs converted before
    # the export): tgc's error against float64 must be at most twice eager's own.
    result["low_precision"] = _low_precision(entry, model, inputs, dyn, tgc, workdir)

    # One training step, dropout 0, against autograd in float64. Eager float32's own
    # error against it shows how well conditioned each gradient is: a gradient that is
    # zero in exact arithmetic (a bias before a batch norm, a key bias before softmax)
    # or cancels (batch norm over a few elements) is mostly rounding in float32 too.
    model.train()
    _set_dropout(model, 0.0)

    def step(m, dtype=None):
        ins = tuple(a.to(dtype) if dtype and a.is_floating_point() else a for a in args)
        out = m(*ins)
        out.pow(2).mean().backward()
        return out

    ref64 = _float64_copy(model)
    out64 = step(ref64, torch.float64)
    ref32 = copy.deepcopy(model)
    out32 = step(ref32)
    sensitivity = _sensitivity(model, args, _step_tensors(ref64, out64), _rel(out32, out64))
    try:
        ep = _export(copy.deepcopy(model), inputs, dyn)
        so, secs = _compile(tgc, ep, os.path.join(workdir, f"{entry.name}-train.pt2"), True)
        f = tgc_py.load(so, model, train=True)
        out = f(*args)
        out.pow(2).mean().backward()
        pairs = {"output": (out, out32, out64)}
        p64, p32 = dict(ref64.named_parameters()), dict(ref32.named_parameters())
        for n, p in model.named_parameters():
            if p64[n].grad is None and p.grad is None:
                continue
            # A parameter the loss does not reach: autograd leaves None, tgc may give 0.
            zeros = torch.zeros_like(p)
            grad = lambda t: zeros if t.grad is None else t.grad  # noqa: E731
            pairs[n] = (grad(p), grad(p32[n]), grad(p64[n]))
        b64, b32 = dict(ref64.named_buffers()), dict(ref32.named_buffers())
        for n, b in model.named_buffers():
            if b.is_floating_point():
                pairs["buffer " + n] = (b, b32[n], b64[n])
        # Per tensor: tgc's error, and how inexact float32 arithmetic makes it: eager
        # float32's own error, or the change of the float64 result when the forward is
        # perturbed as much as float32 rounding perturbs it, whichever is larger.
        errs = {k: (_rel(t, r), max(_rel(e, r), sensitivity.get(k, 0.0)))
                for k, (t, e, r) in pairs.items()}
        # tgc's error against float64, as a multiple of that (at least TRAIN_TOL).
        score = {k: t / max(TRAIN_TOL, 4 * e) for k, (t, e) in errs.items()}
        worst = max(score, key=score.get)
        # Shown: the worst error where float32 is accurate (rel < TRAIN_TOL / 10), and
        # how many tensors are not (ill-conditioned: compared with 4x that error).
        good = [t for t, e in errs.values() if e < TRAIN_TOL / 10]
        result["train"] = {"status": "matches" if score[worst] <= 1 else "mismatch",
                           "rel_err": max(good) if good else 0.0,
                           "ill_conditioned": len(errs) - len(good),
                           "worst": worst, "worst_rel_err": errs[worst][0],
                           "worst_eager_rel_err": errs[worst][1],
                           "gradients": sum(1 for k in errs if k != "output"
                                            and not k.startswith("buffer ")),
                           "compile_s": round(secs, 1)}
    except Exception as e:  # noqa: BLE001
        result["train"] = {"status": "fails", "detail": _short(e)}

    # Dropout on: runs, finite gradients.
    _set_dropout(model, None)
    has_dropout = any(getattr(m, "_zoo_" + a, 0) for m in model.modules()
                      for a in ("p", "dropout", "attention_dropout", "activation_dropout",
                                "dropout_prob", "attn_dropout_p"))
    if not has_dropout:
        result["train_dropout"] = {"status": "no dropout"}
    else:
        model.zero_grad(set_to_none=True)
        try:
            ep = _export(copy.deepcopy(model), inputs, dyn)
            so, _ = _compile(tgc, ep, os.path.join(workdir, f"{entry.name}-dropout.pt2"),
                             True)
            f = tgc_py.load(so, model, train=True)
            out = f(*args)
            out.pow(2).mean().backward()
            finite = torch.isfinite(out).all().item() and all(
                p.grad is None or torch.isfinite(p.grad).all().item()
                for p in model.parameters())
            result["train_dropout"] = {"status": "runs" if finite else "not finite"}
        except Exception as e:  # noqa: BLE001
            result["train_dropout"] = {"status": "fails", "detail": _short(e)}
    return result


# ------------------------------------------------------------------ table
def _cell(r):
    if r is None:
        return "-"
    s = r["status"]
    if "rel_err" in r:
        s += f" ({r['rel_err']:.0e}" if r["rel_err"] > 0 else " (0"
        if "eager_rel_err" in r:
            s += f", eager {r['eager_rel_err']:.0e}"
        if r.get("ir") == "training IR":
            s += ", from the training IR"
        if r.get("note"):
            s += f"; {r['note']}"
        if r.get("ill_conditioned"):
            s += f"; {r['ill_conditioned']} ill-conditioned"
        if r["status"] == "mismatch" and "worst" in r:
            s += (f"; worst {r['worst']}: {r['worst_rel_err']:.0e}, eager fp32 "
                  f"{r['worst_eager_rel_err']:.0e}")
        s += ")"
    if "detail" in r:
        s += ": " + r["detail"].replace("|", "\\|").replace("`", "'")
    return s



def _core_aten(ep):
    """The core ATen IR of `ep` and a note: run_decompositions(), or, where torch's own
    decomposition of scaled_dot_product_attention fails under fake tensors (gpt2: its
    math path views a transposed output), the default table without it, keeping SDPA
    (tgc lowers it as a fused kernel) and decomposing everything else."""
    import torch
    try:
        return ep.run_decompositions(), None
    except Exception as e:  # noqa: BLE001
        table = torch.export.default_decompositions()
        table.pop(torch.ops.aten.scaled_dot_product_attention.default, None)
        try:
            return ep.run_decompositions(table), "SDPA kept: torch fails to decompose it"
        except Exception:  # noqa: BLE001 -- report torch's first failure
            raise e


def table(results):
    rows = ["| model | library | config | training IR | core ATen IR | "
            f"through .trace (Python {sys.version_info[0]}.{sys.version_info[1]}) | "
            f"{LOW_PRECISION} inference (core ATen IR) | training step (dropout 0) | "
            "training step (dropout on) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        rows.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["name"], r["library"], r["config"], _cell(r.get("training_ir")),
            _cell(r.get("core_aten")), _cell(r.get("trace")), _cell(r.get("low_precision")),
            _cell(r.get("train")), _cell(r.get("train_dropout"))))
    return "\n".join(rows) + "\n"


BEGIN = "<!-- zoo table: generated by test/zoo/run_zoo.py, do not edit -->\n"
END = "<!-- end of zoo table -->\n"


def write_docs(results, path):
    import torch
    import transformers
    import torchvision
    with open(path) as f:
        text = f.read()
    stamp = (f"torch {torch.__version__.split('+')[0]}, torchvision "
             f"{torchvision.__version__.split('+')[0]}, transformers "
             f"{transformers.__version__}. Errors are max |tgc - ref| / max |ref|: inference "
             f"against eager (rel {INFER_TOL:g}); the training step against autograd in "
             f"float64 over the output, every gradient and buffer: rel {TRAIN_TOL:g}, or 4x "
             f"float32's own error where that is larger (eager float32's error, or the "
             f"change of the float64 result when the parameters and inputs are perturbed "
             f"until its output moves as far as eager float32's). Shown: the worst error "
             f"where float32 is within {TRAIN_TOL / 10:g}, and how many tensors are "
             f"ill-conditioned (float32 is not: gradients that are zero in exact "
             f"arithmetic, such as a bias before a batch norm, that cancel, or that pass "
             f"a ReLU whose input is within rounding of zero).\n\n")
    block = BEGIN + stamp + table(results) + END
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text += "\n" + block
    with open(path, "w") as f:
        f.write(text)


def main():
    global LOW_PRECISION
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tgc", default=os.path.join(ROOT, "build", "bin", "tgc"))
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--low-precision", default=LOW_PRECISION, choices=["bfloat16", "float16"],
                    help="the dtype of the low-precision inference check")
    args = ap.parse_args()
    LOW_PRECISION = args.low_precision
    tgc = os.path.abspath(args.tgc)
    workdir = os.path.abspath(args.workdir or os.path.join(ROOT, "build", "zoo"))
    if args.one:
        sys.path.insert(0, os.path.join(ROOT, "tools", "tgc-capture"))
        sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
        try:
            res = run_one(MODELS[args.one], tgc, workdir)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            raise
        print("ZOO-RESULT " + json.dumps(res))
        return
    names = args.only or list(MODELS)
    results = []
    for name in names:
        if name not in MODELS:
            sys.exit(f"error: no zoo model '{name}' (have: {', '.join(MODELS)})")
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name,
                            "--tgc", tgc, "--workdir", workdir,
                            "--low-precision", LOW_PRECISION],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("ZOO-RESULT ")]
        if line:
            res = json.loads(line[-1][len("ZOO-RESULT "):], object_pairs_hook=OrderedDict)
        else:
            tail = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
            e = MODELS[name]
            res = OrderedDict(name=name, library=e.library, config=e.config,
                              training_ir={"status": "crashes", "detail": tail[:200]})
        results.append(res)
        print(f"{name} ({time.perf_counter() - t0:.0f} s): " + "; ".join(
            f"{k} {_cell(res.get(k))}" for k in ("training_ir", "core_aten", "trace",
                                                 "low_precision", "train", "train_dropout")),
            flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if not args.no_docs and not args.only:
        write_docs(results, os.path.join(ROOT, "docs", "models.md"))


if __name__ == "__main__":
    main()
