"""The benchmark models beyond test/fixtures: larger variants of the fixture modules and
models at realistic sizes (torchvision resnet18 / mobilenet_v2, a 4-layer GPT, a wide
MLP), and any torchvision classification model as `tv:<name>` (torchvision_spec). Each
builder returns (model, OrderedDict of inputs, dynamic_shapes or None) with
random weights; the caller seeds torch first. `Spec.eval` says whether the model runs
inference in eval() mode (the realistic models) or, like the fixture archives, in
train() mode. `TrainLoss` turns any of them into a training step's loss."""

from collections import OrderedDict, namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import models  # test/fixtures/models.py (the caller puts it on sys.path)


class Skip(Exception):
    """A model that cannot be built here (e.g. torchvision is not installed)."""


Spec = namedtuple("Spec", "builder desc eval")


# ------------------------------------------------------------------ larger fixture variants
class WideMLP(models.MLP):
    """models.MLP's structure (Linear-ReLU-Linear), wider."""

    def __init__(self, d_in=512, d_hidden=2048, d_out=512):
        nn.Module.__init__(self)
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_out)


class WideConvBN(models.ConvBN):
    """models.ConvBN's structure and forward (train-mode BN), more channels."""

    def __init__(self, c1=32, c2=64, n_out=10):
        nn.Module.__init__(self)
        self.conv1 = nn.Conv2d(3, c1, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c1)
        self.conv2 = nn.Conv2d(c1, c2, 3, stride=2)
        self.bn2 = nn.BatchNorm2d(c2)
        self.fc = nn.Linear(c2, n_out)


def make_mlp_large():
    return WideMLP(512, 2048, 512), OrderedDict(x=torch.randn(64, 512)), None


def make_convbn_large():
    m = WideConvBN(32, 64, 10)
    with torch.no_grad():  # as models.make_convbn
        for bn in (m.bn1, m.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    return m, OrderedDict(x=torch.randn(16, 3, 64, 64)), None


def randomize_layer_norms(module):
    """Non-trivial LayerNorm affine parameters, as models.make_gpt2."""
    with torch.no_grad():
        for ln in module.modules():
            if isinstance(ln, nn.LayerNorm):
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.5, 0.5)


def make_gpt2_large():
    m = models.GPT2Block(n_embd=256, n_head=8, block_size=128)
    randomize_layer_norms(m)
    batch = torch.export.Dim("batch", min=1, max=64)
    return m, OrderedDict(x=torch.randn(8, 128, 256)), {"x": {0: batch}}


# ------------------------------------------------------------------ realistic sizes
class SdpaSelfAttention(nn.Module):
    """models.CausalSelfAttention as nanoGPT and transformers write it today: one
    F.scaled_dot_product_attention(is_causal=True) instead of the explicit softmax."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class GPT(nn.Module):
    """GPT-2: token + position embeddings, `n_layer` models.GPT2Block, final LayerNorm,
    a linear LM head; idx int64 [B, T] -> logits [B, T, vocab]."""

    def __init__(self, vocab=2048, block_size=128, n_layer=4, n_embd=256, n_head=8, sdpa=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList(models.GPT2Block(n_embd, n_head, block_size)
                               for _ in range(n_layer))
        if sdpa:
            for block in self.h:
                block.attn = SdpaSelfAttention(n_embd, n_head)
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def make_gpt():
    m = GPT(vocab=2048, block_size=128, n_layer=4, n_embd=256, n_head=8)
    randomize_layer_norms(m)
    return m, OrderedDict(idx=torch.randint(0, 2048, (4, 128))), None


def make_gpt_sdpa():
    m = GPT(vocab=2048, block_size=256, n_layer=4, n_embd=256, n_head=8, sdpa=True)
    randomize_layer_norms(m)
    return m, OrderedDict(idx=torch.randint(0, 2048, (4, 256))), None


def make_mlp_wide():
    return WideMLP(1024, 4096, 1024), OrderedDict(x=torch.randn(128, 1024)), None


def torchvision_models():
    try:
        import torchvision
    except ImportError as e:
        raise Skip(f"torchvision is not installed ({e}); `pip install torchvision` into "
                   f"this Python (the CPU wheel matching torch {torch.__version__})")
    return torchvision.models


def make_resnet18():
    m = torchvision_models().resnet18(weights=None, num_classes=1000)
    return m, OrderedDict(x=torch.randn(8, 3, 64, 64)), None


def make_mobilenet_v2():
    m = torchvision_models().mobilenet_v2(weights=None, num_classes=1000)
    # Its classifier's Dropout(0.2) would make every train step random: eager, Inductor
    # and tgc would draw different masks and could not be checked against each other.
    for d in m.modules():
        if isinstance(d, nn.Dropout):
            d.p = 0.0
    return m, OrderedDict(x=torch.randn(8, 3, 64, 64)), None


LARGE = OrderedDict(
    mlp_large=Spec(make_mlp_large, "MLP 512-2048-512, x[64,512]", False),
    convbn_large=Spec(make_convbn_large, "ConvBN 3-32-64 (train BN), x[16,3,64,64]", False),
    gpt2_large=Spec(make_gpt2_large, "GPT-2 block C=256 8 heads, x[8,128,256], dyn batch",
                    False),
)
REALISTIC = OrderedDict(
    mlp_wide=Spec(make_mlp_wide, "MLP 1024-4096-1024, x[128,1024]", True),
    gpt=Spec(make_gpt, "GPT 4 layers C=256 8 heads vocab 2048, idx[4,128]", True),
    gpt_sdpa=Spec(make_gpt_sdpa, "GPT as gpt, attention by causal SDPA, idx[4,256]", True),
    resnet18=Spec(make_resnet18, "torchvision resnet18, x[8,3,64,64]", True),
    mobilenet_v2=Spec(make_mobilenet_v2, "torchvision mobilenet_v2 (dropout p=0), x[8,3,64,64]",
                      True),
)


def torchvision_spec(name):
    """Spec of `tv:<model>[@<size>]`: any torchvision classification model by its
    builder's name (e.g. tv:efficientnet_b0, tv:regnet_y_400mf@96), random weights,
    dropout and stochastic depth p=0 (as mobilenet_v2), x[8,3,size,size] with size 64 unless given; None for
    other names. For trying the benchmark on models it does not list."""
    if not name.startswith("tv:"):
        return None
    model, _, size = name[3:].partition("@")
    size = int(size) if size else 64

    def build():
        builder = getattr(torchvision_models(), model, None)
        if builder is None or not callable(builder):
            raise Skip(f"torchvision.models has no model '{model}'")
        m = builder(weights=None)
        # Dropout and stochastic depth (torchvision.ops.StochasticDepth, in EfficientNet,
        # ConvNeXt, Swin) would make every train step random.
        for d in m.modules():
            if isinstance(d, nn.Dropout) or type(d).__name__ == "StochasticDepth":
                d.p = 0.0
        return m, OrderedDict(x=torch.randn(8, 3, size, size)), None

    return Spec(build, f"torchvision {model} (dropout p=0), x[8,3,{size},{size}]", True)


class TrainLoss(nn.Module):
    """A training step's loss: mean(model(x)^2), for the single-input models above. Its
    input is named `x` (the archive's input name) whatever the model calls it."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        out = self.model(x)
        if isinstance(out, (tuple, list)):
            out = out[0]
        return out.pow(2).mean()
