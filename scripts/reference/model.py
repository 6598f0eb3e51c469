"""An independent PyTorch reference of the xsa GPT (GitHub issue 3).

Written from the maths in README.md ("What XSA is") and docs/guide.md ("Model and training") and the header comments of src/xsa/model/gpt.h, not by
translating gpt.cpp: layer norm, GELU, softmax, cross-entropy and RoPE are spelled out here, attention
uses einsum, and the bias metrics use explicit masks. Parameter names equal the C++ module names
("blocks.0.attn.qkv.weight", ...), so a C++ dump loads with load_state_dict(strict=True).

    x = wte[idx] (+ wpe[:T] for learned positions);  x = LN(x) if embed_norm
    per block (pre-LN):  x = x + Attn(LN_1(x));  x = x + MLP(LN_2(x))
    logits = LN_f(x) @ W_out^T   (W_out = wte when tied, else lm_head)

Attention per head h, with causal softmax weights a_ij (j <= i):
    y_i = sum_j a_ij v_j
    z_i = y_i - lambda_h (y_i . v^_i) v^_i,   v^_i = v_i / max(|v_i|, 1e-6)
lambda_h is fixed (0 = SA, 1 = XSA), sigmoid(theta_h) ("learned"), g_h ("gate") or tanh(alpha_h)
("tanh_gate").

Document masking (data.doc_mask, GPT.doc_bos): a document begins at each doc_bos token (and the window's
first token begins one); token i attends only to keys s_i <= j <= i, s_i its document's first token, and
its position (RoPE angle or learned row) is i - s_i.

Works in any floating dtype: the check runs it in float64, the reference trainer in float32.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

XSA_EPS = 1e-6  # guards |v| = 0 in v^ (and |y|, |z| in the cosines); same value as kXsaEps in gpt.h
LN_EPS = 1e-5   # LibTorch's LayerNorm default


# ------------------------------------------------------------------------------------------------
# Building blocks written out from their definitions. The numerics check uses these; the reference
# trainer switches to PyTorch's fused built-ins (use_builtin_ops(True)), as a notebook user would
# write them, so its speed is not handicapped by the written-out versions.

_BUILTIN_OPS = False


def use_builtin_ops(on=True):
    global _BUILTIN_OPS
    _BUILTIN_OPS = on


def has_sdpa():
    """True where torch has F.scaled_dot_product_attention (2.0 and later: Debian 13's 2.6, not 12's 1.13)."""
    return hasattr(F, "scaled_dot_product_attention")


def layer_norm(x, weight, bias):
    if _BUILTIN_OPS:
        return F.layer_norm(x, weight.shape, weight, bias, LN_EPS)
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased variance, as nn.LayerNorm
    return (x - mean) / torch.sqrt(var + LN_EPS) * weight + bias


def gelu(x):
    # The exact (erf) GELU: LibTorch's torch::gelu default, not the tanh approximation.
    if _BUILTIN_OPS:
        return F.gelu(x)
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def document_starts(idx, bos):
    """idx: (B, T) -> (B, T) int64: the index of the first token of each token's document (doc_bos)."""
    B, T = idx.shape
    start = torch.zeros(B, T, dtype=torch.long)
    for b in range(B):
        first = 0
        for t in range(T):
            if t > 0 and int(idx[b, t]) == bos:
                first = t
            start[b, t] = first
    return start


def allowed_keys(T, start=None):
    """(T, T) bool, true where key j <= query i; with start (B, T) also j >= start[b, i]: (B, 1, T, T)."""
    j = torch.arange(T).view(1, T)
    i = torch.arange(T).view(T, 1)
    if start is None:
        return j <= i
    return ((j <= i).unsqueeze(0) & (j.unsqueeze(0) >= start.unsqueeze(-1))).unsqueeze(1)


def causal_softmax(scores, start=None):
    """scores: (B, H, T, T) -> attention weights, row i spread over j <= i only (and j >= start_i)."""
    T = scores.shape[-1]
    scores = scores.masked_fill(~allowed_keys(T, start), float("-inf"))
    if _BUILTIN_OPS:
        return torch.softmax(scores, dim=-1)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def cross_entropy(logits, targets):
    flat = logits.reshape(-1, logits.shape[-1])  # (B*T, V)
    if _BUILTIN_OPS:
        return F.cross_entropy(flat, targets.reshape(-1))
    # mean over tokens of  logsumexp(logits) - logits[target]
    picked = flat.gather(1, targets.reshape(-1, 1)).squeeze(1)  # (B*T)
    return (torch.logsumexp(flat, dim=-1) - picked).mean()


def safe_norm(x):
    return torch.sqrt((x * x).sum(dim=-1)).clamp(min=XSA_EPS)


def rope_tables(max_len, d_head, base=10000.0):
    """cos, sin tables of shape (max_len, d_head), in float32.

    GPT-NeoX half-split convention: channel c < D/2 pairs with channel c + D/2, and both use the
    frequency base^(-2c/D). The angles are computed in float64 and rounded to float32 once (as the C++
    model does), so both sides start from the same table values.
    """
    half = d_head // 2
    freqs = [base ** (-2.0 * c / d_head) for c in range(half)]
    angles = torch.tensor([[t * f for f in freqs] for t in range(max_len)], dtype=torch.float64)  # (T, D/2)
    angles = torch.cat([angles, angles], dim=1)  # (T, D): both halves of a pair share an angle
    return angles.cos().float(), angles.sin().float()


def rotate(x, cos, sin):
    """x: (B, H, T, D). Rotates each pair (x_c, x_{c+D/2}) by its angle: x cos + rotate_half(x) sin."""
    half = x.shape[-1] // 2
    rotated_half = torch.cat([-x[..., half:], x[..., :half]], dim=-1)  # (-x2, x1)
    return x * cos + rotated_half * sin


def exclusive(y, v, lam):
    """z = y - lam (y . v^) v^.  y, v: (B, H, T, D); lam: (H) per-head lambda."""
    v_hat = v / safe_norm(v).unsqueeze(-1)                      # (B, H, T, D)
    along = torch.einsum("bhtd,bhtd->bht", y, v_hat)           # (B, H, T)  y . v^
    return y - torch.einsum("h,bht,bhtd->bhtd", lam, along, v_hat)


# ------------------------------------------------------------------------------------------------
# The model.

def rms_norm(x, gain, eps=1e-6):
    """x / sqrt(mean(x^2) + eps) * gain over the last dim (Qwen3's q/k norm)."""
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gain


class Attention(nn.Module):
    def __init__(self, d_model, n_head, d_head, kind="fixed", lam=0.0, qk_norm=False, output_gate="none"):
        """kind: "fixed" (lam = the lambda), "learned" (lam = initial lambda), "gate" or "tanh_gate" (both
        start at 0). qk_norm: RMSNorm gains over each head's q and k, before RoPE. output_gate: "none",
        "headwise" (one sigmoid gate per head) or "elementwise" (one per channel), from the block's
        normalised input, applied to z before W_o."""
        super().__init__()
        self.n_head, self.d_head, self.kind, self.lam = n_head, d_head, kind, lam
        self.output_gate = output_gate
        self.qkv = nn.Linear(d_model, 3 * n_head * d_head, bias=False)  # rows: all q heads, all k, all v
        self.proj = nn.Linear(n_head * d_head, d_model, bias=False)
        if qk_norm:
            self.q_norm = nn.Parameter(torch.ones(d_head))
            self.k_norm = nn.Parameter(torch.ones(d_head))
        if output_gate != "none":
            self.gate = nn.Linear(d_model, n_head if output_gate == "headwise" else n_head * d_head, bias=True)
        if kind == "learned":
            self.xsa_theta = nn.Parameter(torch.full((n_head,), math.log(lam / (1.0 - lam))))
        elif kind == "gate":
            self.xsa_gate = nn.Parameter(torch.zeros(n_head))
        elif kind == "tanh_gate":
            self.xsa_alpha = nn.Parameter(torch.zeros(n_head))

    def head_lambdas(self, like):
        if self.kind == "learned":
            return torch.sigmoid(self.xsa_theta)
        if self.kind == "gate":
            return self.xsa_gate
        if self.kind == "tanh_gate":
            return torch.tanh(self.xsa_alpha)
        return torch.full((self.n_head,), float(self.lam), dtype=like.dtype)

    def forward(self, x, rope=None, probe=None, start=None):
        """rope: (cos, sin) of shape (T, D), or (B, 1, T, D) per token; start: document starts (B, T) or None."""
        B, T, _ = x.shape
        H, D = self.n_head, self.d_head
        q, k, v = self.qkv(x).split(H * D, dim=-1)  # 3 x (B, T, H*D)
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D) each
        if hasattr(self, "q_norm"):
            q, k = rms_norm(q, self.q_norm), rms_norm(k, self.k_norm)
        if rope is not None:
            cos, sin = (t[:T].to(x.dtype) if t.dim() == 2 else t.to(x.dtype) for t in rope)  # (T, D) / (B, 1, T, D)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)

        if _BUILTIN_OPS and probe is None and has_sdpa() and start is None:
            # PyTorch >= 2.0's fused attention (flash / memory-efficient kernels on CPU): the fastest thing a
            # PyTorch user has, so the speed reference uses it where it exists. Scale 1/sqrt(D) by default.
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
        else:
            scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(D)  # (B, H, T, T)
            att = causal_softmax(scores, start)
            y = torch.einsum("bhij,bhjd->bhid", att, v)                                 # (B, H, T, D)

        lam = self.head_lambdas(y)
        z = y if (self.kind == "fixed" and self.lam == 0.0) else exclusive(y, v, lam)
        if probe is not None:
            probe.append(bias_metrics(att, y, z, v, lam, start))
            probe[-1].update(attention_dynamics(scores, att, start))
        if hasattr(self, "gate"):
            g = torch.sigmoid(self.gate(x))                           # (B, T, H) or (B, T, H*D)
            g = g.view(B, T, H, -1).transpose(1, 2)                  # (B, H, T, 1 or D)
            z = z * g
        merged = z.transpose(1, 2).reshape(B, T, H * D)  # (B, T, H*D), head-major channels
        return self.proj(merged)


class Mlp(nn.Module):
    def __init__(self, d_model, ratio):
        super().__init__()
        self.fc = nn.Linear(d_model, ratio * d_model, bias=False)
        self.proj = nn.Linear(ratio * d_model, d_model, bias=False)

    def forward(self, x):
        return self.proj(gelu(self.fc(x)))


class LayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias)


class Block(nn.Module):
    def __init__(self, cfg, kind, lam, output_gate="none"):
        super().__init__()
        self.ln_1 = LayerNorm(cfg["d_model"])
        self.attn = Attention(cfg["d_model"], cfg["n_head"], cfg["d_head"], kind, lam,
                              qk_norm=cfg.get("qk_norm", False), output_gate=output_gate)
        self.ln_2 = LayerNorm(cfg["d_model"])
        self.mlp = Mlp(cfg["d_model"], cfg["mlp_ratio"])

    def forward(self, x, rope, probe, start=None):
        x = x + self.attn(self.ln_1(x), rope, probe, start)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """cfg: the "model" section of an xsa config (n_layer, d_model, n_head, d_head, mlp_ratio, pos,
    embed_norm, tie_embeddings, qk_norm). variant: ("fixed", lam) | ("learned", initial lam) | ("gate", None) |
    ("tanh_gate", None). layers: the layers the variant applies to (None or empty = all); the others are SA.
    output_gate: the "attention" section's output_gate ("none" | "headwise" | "elementwise"), in every layer."""

    def __init__(self, cfg, vocab_size, max_len, variant=("fixed", 0.0), layers=None, output_gate="none"):
        super().__init__()
        self.cfg = cfg
        kind, lam = variant
        C = cfg["d_model"]
        self.wte = nn.Embedding(vocab_size, C)
        if cfg["pos"] == "learned":
            self.wpe = nn.Embedding(max_len, C)
        if cfg["embed_norm"]:
            self.ln_emb = LayerNorm(C)
        chosen = set(layers or range(cfg["n_layer"]))
        self.blocks = nn.ModuleList(
            Block(cfg, kind, lam, output_gate) if l in chosen else Block(cfg, "fixed", 0.0, output_gate)
            for l in range(cfg["n_layer"]))
        self.ln_f = LayerNorm(C)
        if not cfg["tie_embeddings"]:
            self.lm_head = nn.Linear(C, vocab_size, bias=False)
        self.rope = rope_tables(max_len, cfg["d_head"]) if cfg["pos"] == "rope" else None
        self.doc_bos = None  # data.doc_mask: the token that begins a document (None: no masking)

    def init_weights(self, generator):
        """nanoGPT init: N(0, 0.02), residual projections N(0, 0.02/sqrt(2 n_layer)), LN (1, 0); q/k norm
        gains 1 and the output gate's weight and bias 0, without a draw. Draws in parameter registration
        order from `generator` (the C++ order too)."""
        residual_std = 0.02 / math.sqrt(2 * self.cfg["n_layer"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith(("xsa_theta", "xsa_gate", "xsa_alpha")):
                    continue  # keep their documented initial values
                if name.endswith(("attn.q_norm", "attn.k_norm")):
                    p.fill_(1.0)
                elif name.endswith(("attn.gate.weight", "attn.gate.bias")):
                    p.zero_()
                elif "ln_" in name:
                    p.fill_(1.0 if name.endswith("weight") else 0.0)
                elif name.endswith("attn.proj.weight") or name.endswith("mlp.proj.weight"):
                    p.normal_(0.0, residual_std, generator=generator)
                else:
                    p.normal_(0.0, 0.02, generator=generator)

    def forward(self, idx, probe=None):
        """idx: (B, T) int64 -> logits (B, T, V). probe: a list that receives one dict of bias
        metrics per layer."""
        B, T = idx.shape
        start = None if self.doc_bos is None else document_starts(idx, self.doc_bos)  # (B, T)
        pos = torch.arange(T) if start is None else torch.arange(T).view(1, T) - start  # (T) or (B, T)
        x = self.wte.weight[idx]  # (B, T, C)
        if hasattr(self, "wpe"):
            x = x + self.wpe.weight[pos]
        if hasattr(self, "ln_emb"):
            x = self.ln_emb(x)
        rope = self.rope
        if rope is not None and start is not None:
            rope = tuple(t[pos].unsqueeze(1) for t in rope)  # (B, 1, T, D): each token's angle in its document
        for block in self.blocks:
            x = block(x, rope, probe, start)
        x = self.ln_f(x)
        w_out = self.lm_head.weight if hasattr(self, "lm_head") else self.wte.weight  # (V, C)
        return torch.einsum("btc,vc->btv", x, w_out)

    def loss(self, logits, targets):
        return cross_entropy(logits, targets)


# ------------------------------------------------------------------------------------------------
# Bias metrics (docs/ARCHITECTURE.md "Training", src/xsa/records/bias_metrics.h): per layer, averaged over batch, heads and positions.

def cosine(a, b):
    return (a * b).sum(dim=-1) / (safe_norm(a) * safe_norm(b))


def first_tokens(B, H, T, start):
    """(B, H, T) bool, true at positions that can attend only to themselves: position 0, and with document
    masking every document's first token."""
    first = torch.zeros(B, H, T, dtype=torch.bool)
    first[:, :, 0] = True
    if start is not None:
        first |= (start == torch.arange(T).view(1, T)).unsqueeze(1)
    return first


@torch.no_grad()
def bias_metrics(att, y, z, v, lam, start=None):
    """att: (B, H, T, T); y, z, v: (B, H, T, D); lam: (H); start: document starts (B, T) or None.

    Position 0 (with document masking, every document's first token) is left out of cos_y_v, cos_z_v and
    attn_diag: it can only attend to itself, so y_i = v_i and a_ii = 1 whatever the weights. value_cos uses
    every ordered pair i != j of the window. With T < 2 there is nothing to measure and all four are 0.
    """
    B, H, T, _ = v.shape
    out = {"lambda_per_head": [float(x) for x in lam.detach()]}
    if T < 2:
        out.update(cos_y_v=0.0, cos_z_v=0.0, attn_diag=0.0, value_cos=0.0, cos_z_v_allowance=0.0)
        return out
    kept = ~first_tokens(B, H, T, start)  # (B, H, T)
    cos_y = cosine(y, v)[kept]  # (N)
    cos_z = cosine(z, v)[kept]
    out["cos_y_v"], out["cos_z_v"] = cos_y.mean().item(), cos_z.mean().item()
    diag = torch.stack([att[:, :, i, i] for i in range(T)], dim=-1)[kept]  # (N)
    out["attn_diag"] = diag.mean().item()
    # mean cos(v_i, v_j) over ordered pairs i != j of one head, then over (B, H)
    pair_cos = cosine(v.unsqueeze(3), v.unsqueeze(2))  # (B, H, T, T)
    off_diagonal = ~torch.eye(T, dtype=torch.bool)
    out["value_cos"] = pair_cos[..., off_diagonal].mean().item()
    # Where z vanishes in exact arithmetic (lambda = 1 and a_ii = 1, so y_i = v_i), a computed z is
    # pure rounding noise and its cosine with v is arbitrary in [-1, 1]. A comparison of cos_z_v
    # between two implementations must allow (1 + |cos_i|) / N for each such position.
    vanished = (safe_norm(z) <= 1e-4 * safe_norm(y))[kept]  # (N)
    out["cos_z_v_allowance"] = ((1.0 + cos_z.abs()) * vanished).sum().item() / cos_z.numel()
    return out


@torch.no_grad()
def attention_dynamics(scores, att, start=None):
    """scores (pre-softmax q.k/sqrt(d)), att: (B, H, T, T); start: document starts (B, T) or None. max_logit
    over the allowed pairs (j <= i, and j >= start_i); entropy -sum_j a_ij ln a_ij and the mass on the first
    key the row may see (position 0, or its document's first token), each averaged over the rows that see
    more than themselves (not position 0 nor a document's first token), batch and heads."""
    B, H, T, _ = att.shape
    if T < 2:
        return {"max_logit": 0.0, "attn_entropy": 0.0, "attn_sink": 0.0}
    allowed = allowed_keys(T, start).expand(B, H, T, T)
    kept = ~first_tokens(B, H, T, start)  # (B, H, T)
    plogp = torch.where(att > 0, att * torch.log(att.clamp_min(1e-300)), torch.zeros_like(att))
    first_key = torch.zeros(B, H, T, 1, dtype=torch.long) if start is None else \
        start.view(B, 1, T, 1).expand(B, H, T, 1)
    return {"max_logit": scores[allowed].max().item(),
            "attn_entropy": (-plogp.sum(dim=-1))[kept].mean().item(),
            "attn_sink": att.gather(-1, first_key).squeeze(-1)[kept].mean().item()}



# ------------------------------------------------------------------------------------------------
# Exported models (xsa-export; docs/guide.md "Export"): config.json + model.safetensors -> GPT.

EXPORT_FORMAT = "xsa.export/1"
SAFETENSORS_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
                      "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
                      "U8": torch.uint8, "BOOL": torch.bool}


def read_safetensors(path):
    """{name: tensor} and the __metadata__ dict of a safetensors file, read from the format's definition (an
    8-byte little-endian header length N, N bytes of JSON, then the tensors' little-endian bytes at their
    data_offsets). For machines without Hugging Face's library (Debian 12); checks what that library checks."""
    import json
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"{path}: header length {n} exceeds the file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = memoryview(data)[8 + n:]
    metadata = header.pop("__metadata__", {})
    tensors, end = {}, 0
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = e["data_offsets"]
        dtype = SAFETENSORS_DTYPES[e["dtype"]]
        if begin != end or stop > len(body):
            raise ValueError(f"{path}: tensor {name}: data_offsets {e['data_offsets']} overlap, leave a hole or "
                             f"exceed the data")
        t = torch.frombuffer(bytearray(body[begin:stop]), dtype=dtype) if stop > begin else torch.empty(0, dtype=dtype)
        numel = math.prod(e["shape"])
        if t.numel() != numel:
            raise ValueError(f"{path}: tensor {name}: {stop - begin} bytes for shape {e['shape']}")
        tensors[name] = t.reshape(e["shape"])
        end = stop
    if end != len(body):
        raise ValueError(f"{path}: the tensors end at {end} of {len(body)} data bytes")
    return tensors, metadata


def load_safetensors(path):
    """{name: tensor}: with Hugging Face's safetensors library where it is installed, else read_safetensors."""
    try:
        from safetensors.torch import load_file
    except ImportError:
        return read_safetensors(path)[0]
    return load_file(path)


def load_exported(folder, dtype=torch.float32, tensors=None):
    """The reference GPT of an xsa-export folder, weights loaded (strict: every name must match), in eval mode.
    tensors: the state dict to load instead of reading model.safetensors (a test compares readers)."""
    import json
    import os
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("format") != EXPORT_FORMAT:
        raise ValueError(f"{folder}/config.json: format {cfg.get('format')!r}, expected {EXPORT_FORMAT!r}")
    arch = cfg["architecture"]
    for key, value in (("layer_norm_eps", LN_EPS), ("xsa_eps", XSA_EPS), ("qk_norm_eps", 1e-6),
                       ("rope_base", 10000.0)):
        if arch[key] != value:
            raise ValueError(f"{folder}/config.json: architecture.{key} {arch[key]}, this reference uses {value}")
    layers = cfg["variant"]["layers"]
    modified = [l for l in layers if not (l["kind"] == "fixed" and l.get("lambda", 0.0) == 0.0)]
    if modified:
        first = modified[0]
        variant = (first["kind"], first.get("lambda", first.get("initial_lambda")))
    else:
        variant = ("fixed", 0.0)
    model = GPT(arch, arch["vocab_size"], cfg["max_len"], variant, [l["layer"] for l in modified],
                arch["output_gate"])
    if tensors is None:
        tensors = load_safetensors(os.path.join(folder, "model.safetensors"))
    model.load_state_dict(tensors, strict=True)
    return model.to(dtype).eval()
