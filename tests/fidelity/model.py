"""Small decoders written after Hugging Face transformers' eager implementations.

Llama-style (modeling_llama.py, eager attention): RMSNorm computed in fp32 and cast back,
then multiplied by its weight; RoPE with rotate_half; GQA via repeat_kv; eager attention
with the softmax in fp32; SwiGLU MLP; untied lm_head; logits upcast to fp32 for the loss;
cross-entropy on shifted labels. GPT-2-style (modeling_gpt2.py): LayerNorm, GeLU MLP, MHA,
learned positions, tied embeddings, no dropout.

The code is ours; it mirrors the tensor-level behaviour that decides what autograd saves.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_tables(seq, head_dim, dtype, device, theta=500000.0):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def repeat_kv(x, n_rep):
    if n_rep == 1:
        return x
    b, g, s, d = x.shape
    return x[:, :, None, :, :].expand(b, g, n_rep, s, d).reshape(b, g * n_rep, s, d)


class LlamaAttention(nn.Module):
    def __init__(self, hidden, heads, kv_heads, bias=False, attention="eager"):
        super().__init__()
        self.attention = attention
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = self.heads // self.kv_heads
        if self.attention == "sdpa":  # PyTorch >= 2.0: flash / memory-efficient kernels on CUDA
            out = F.scaled_dot_product_attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), is_causal=True)
            return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))
        k = repeat_kv(k, n_rep)
        v = repeat_kv(v, n_rep)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(probs, v)
        out = out.transpose(1, 2).contiguous().reshape(b, s, -1)
        return self.o_proj(out)


class SwiGLU(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn, attention="eager"):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = LlamaAttention(hidden, heads, kv_heads, attention=attention)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = SwiGLU(hidden, ffn)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class GPT2Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)

    def forward(self, x, mask):
        b, s, h = x.shape
        q, k, v = self.c_attn(x).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(probs, v).transpose(1, 2).contiguous().reshape(b, s, h)
        return self.c_proj(out)


class GPT2Layer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = GPT2Attention(hidden, heads)
        self.ln_2 = nn.LayerNorm(hidden)
        self.c_fc = nn.Linear(hidden, ffn)
        self.c_proj = nn.Linear(ffn, hidden)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


def shifted_loss(logits, labels):
    """HF ForCausalLMLoss: upcast to fp32, shift, cross-entropy."""
    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
    return loss, logits


class Decoder(nn.Module):
    """arch: 'llama' or 'gpt2'. Returns (loss, fp32 logits) like HF's CausalLMOutput."""

    def __init__(self, arch, layers, hidden, heads, kv_heads, ffn, vocab, positions=0, recompute=False,
                 attention="eager"):
        super().__init__()
        self.arch, self.recompute, self.heads = arch, recompute, heads
        self.embed_tokens = nn.Embedding(vocab, hidden)
        if arch == "llama":
            self.layers = nn.ModuleList(LlamaLayer(hidden, heads, kv_heads, ffn, attention) for _ in range(layers))
            self.norm = RMSNorm(hidden)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
        else:
            self.wpe = nn.Embedding(positions, hidden)
            self.layers = nn.ModuleList(GPT2Layer(hidden, heads, ffn) for _ in range(layers))
            self.norm = nn.LayerNorm(hidden)
            self.lm_head = None  # tied to embed_tokens

    def forward(self, ids, labels):
        b, s = ids.shape
        x = self.embed_tokens(ids)
        dtype = self.embed_tokens.weight.dtype
        if torch.is_autocast_cpu_enabled() or torch.is_autocast_enabled():
            dtype = torch.bfloat16
        mask = torch.full((s, s), float("-inf"), device=ids.device).triu(1).to(dtype)
        if self.arch == "llama":
            cos, sin = rope_tables(s, x.shape[-1] // self.heads, dtype, ids.device)
            args = (cos, sin, mask)
        else:
            x = x + self.wpe(torch.arange(s, device=ids.device))
            args = (mask,)
        for layer in self.layers:
            if self.recompute:
                x = checkpoint(layer, x, *args)
            else:
                x = layer(x, *args)
        x = self.norm(x)
        logits = self.lm_head(x) if self.lm_head is not None else F.linear(x, self.embed_tokens.weight)
        return shifted_loss(logits, labels)
