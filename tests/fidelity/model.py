"""Small decoders written after Hugging Face transformers' eager implementations.

Llama-style (modeling_llama.py, eager attention): RMSNorm computed in fp32 and cast back,
then multiplied by its weight; RoPE with rotate_half; GQA via repeat_kv; eager attention
with the softmax in fp32; SwiGLU MLP; untied lm_head; logits upcast to fp32 for the loss;
cross-entropy on shifted labels; optionally Mixtral's sparse MoE block in place of the MLP
(modeling_mixtral.py: a loop over the experts). GPT-2-style (modeling_gpt2.py): LayerNorm, GeLU MLP, MHA,
learned positions, tied embeddings, no dropout.

LoRA (LoRALinear, apply_lora): PEFT's lora.Linear with dropout 0 - a frozen base plus
lora_B(lora_A(x)) * alpha/r, the input cast to the adapters' dtype first. Recompute: "full"
checkpoints every block (or one block in recompute_every, torchtitan's selective "N"); "op"
emulates torchtitan's op-level selective activation checkpointing (see OpSAC).

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


# --- op-level selective activation checkpointing (torchtitan _apply_op_sac, v0.2.1) -----------
# torchtitan saves, inside each checkpointed block, the outputs of aten.mm except every second one
# (a Llama block's mm order is wq, wk, wv, wo, w1, w3, w2: wq, wv, w1, w2 are saved), the SDPA
# output (+ logsumexp) and the block input; everything else is recomputed in backward. torch 1.13
# has no selective-checkpoint policy, so OpSAC is a reentrant checkpoint that keeps exactly those
# tensors: forward runs the block under no_grad, recording the outputs of the saved mms and of the
# attention core (the eager analogue of SDPA's output: probs @ v, before the transpose), and saves
# them with the block's inputs; backward reruns the block with those mms replayed from the kept
# outputs (their backward still gets their inputs and weights) and everything else recomputed.
SAC_SAVED_MMS = ("wq", "wv", "w1", "w2")


class _ReplayLinear(torch.autograd.Function):
    """A bias-free linear whose output is given (kept in forward); backward is the linear's."""

    @staticmethod
    def forward(ctx, x, weight, holder):
        ctx.save_for_backward(x, weight)
        return holder[0].view_as(holder[0])

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_x = grad.matmul(weight.to(grad.dtype))
        if ctx.needs_input_grad[1]:
            g2 = grad.reshape(-1, grad.shape[-1])
            grad_w = g2.t().matmul(x.reshape(-1, x.shape[-1]).to(grad.dtype)).to(weight.dtype)
        return grad_x, grad_w, None


def sac_linear(module, x, tag, sac):
    """module(x), recording (sac=("record", kept)) or replaying (("replay", kept)) its output
    when tag is one of the saved mms."""
    if sac is None or tag not in SAC_SAVED_MMS:
        return module(x)
    mode, kept = sac
    if mode == "record":
        out = module(x)
        kept.append(out)
        return out
    cached = kept.pop(0)
    weight = module.weight
    if torch.is_autocast_cpu_enabled():  # what autocast's mm would save: bf16 input and weight
        x, weight = x.to(torch.get_autocast_cpu_dtype()), weight.to(torch.get_autocast_cpu_dtype())
    elif torch.is_autocast_enabled():
        x, weight = x.to(torch.get_autocast_gpu_dtype()), weight.to(torch.get_autocast_gpu_dtype())
    return _ReplayLinear.apply(x, weight, [cached])


def sac_keep(t, sac):
    """The attention core's output: kept in forward, recomputed (and the kept one dropped) in backward."""
    if sac is not None:
        mode, kept = sac
        if mode == "record":
            kept.append(t)
        else:
            kept.pop(0)
    return t


class OpSAC(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layer, x, *args):
        ctx.layer, ctx.nargs = layer, len(args)
        ctx.autocast = (torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype(),
                        torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype())
        kept = []
        with torch.no_grad():
            out = layer(x, *args, sac=("record", kept))
        ctx.save_for_backward(x, *args, *kept)
        return out

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        x = saved[0].detach().requires_grad_(True)
        args = saved[1:1 + ctx.nargs]
        kept = list(saved[1 + ctx.nargs:])
        cpu_on, cpu_dtype, gpu_on, gpu_dtype = ctx.autocast
        with torch.enable_grad(), torch.cpu.amp.autocast(enabled=cpu_on, dtype=cpu_dtype), \
                torch.cuda.amp.autocast(enabled=gpu_on, dtype=gpu_dtype):
            out = ctx.layer(x, *args, sac=("replay", kept))
        torch.autograd.backward(out, grad)
        return (None, x.grad) + (None,) * ctx.nargs


# --- LoRA (PEFT lora.Linear, dropout 0) ----------------------------------------------------------
class LoRALinear(nn.Module):
    """base(x) + lora_B(lora_A(x)) * alpha / r on a frozen base. PEFT casts x to the adapters'
    dtype (a no-op under autocast, where everything is fp32) and the sum back to the base's."""

    def __init__(self, base, rank, alpha):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = alpha / rank

    @property
    def weight(self):
        return self.base.weight

    def forward(self, x):
        result = self.base(x)
        dtype = result.dtype
        x = x.to(self.lora_A.dtype)
        result = result + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scaling
        return result.to(dtype)


class DoRALinear(LoRALinear):
    """DoRA (Liu et al. 2024, arXiv 2402.09353) as PEFT's DoraLinearLayer computes it: a trainable
    magnitude per output feature, initialised to the column norms of W; the norm of W + s*BA is
    detached (the paper's section 4.3), and the output is base + (m/||W + s*BA|| - 1) * base
    + m/||W + s*BA|| * s * B(A(x))."""

    def __init__(self, base, rank, alpha):
        super().__init__(base, rank, alpha)
        self.magnitude = nn.Parameter(base.weight.detach().norm(p=2, dim=1).float())

    def forward(self, x):
        base_result = self.base(x)
        dtype = base_result.dtype
        x = x.to(self.lora_A.dtype)
        lora_weight = (self.lora_B @ self.lora_A).detach()
        weight = self.base.weight.to(lora_weight.dtype)
        weight_norm = (weight + self.scaling * lora_weight).norm(p=2, dim=1).detach()
        scale = (self.magnitude / weight_norm).view(1, -1)
        lora_result = F.linear(F.linear(x, self.lora_A), self.lora_B)
        dora = (scale - 1) * base_result + scale * lora_result * self.scaling
        return (base_result + dora).to(dtype)


LORA_TARGETS = {
    "qv": ("q_proj", "v_proj"),
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
}


def apply_lora(model, rank, targets, alpha=16, dora=False, modules_to_save=()):
    """Wraps the target linears of every Llama layer and freezes everything else (PEFT).
    targets: a shorthand, or short module names joined by '+' (q+k+v, gate+up+down).
    modules_to_save: "embedding"/"lm_head" get a trainable copy beside the frozen original
    (PEFT ModulesToSaveWrapper)."""
    for p in model.parameters():
        p.requires_grad_(False)
    names = LORA_TARGETS.get(targets) or tuple(f"{t}_proj" for t in targets.split("+"))
    wrapper = DoRALinear if dora else LoRALinear
    for layer in model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name in names:
                if hasattr(parent, name):
                    setattr(parent, name, wrapper(getattr(parent, name), rank, alpha))
    trainable = [p for n, p in model.named_parameters() if "lora_" in n or "magnitude" in n]
    originals = []
    for kind in modules_to_save:
        attr = {"embedding": "embed_tokens", "lm_head": "lm_head"}[kind]
        original = getattr(model, attr)
        copy = type(original)(*original.weight.shape[::-1] if kind == "lm_head" else original.weight.shape,
                              **({"bias": False} if kind == "lm_head" else {}))
        copy.weight.data = original.weight.detach().clone()
        copy.weight.requires_grad_(True)
        originals.append(original)  # PEFT keeps the frozen original module beside the copy
        setattr(model, attr, copy)
        trainable.append(copy.weight)
    model.frozen_originals = nn.ModuleList(originals)
    return trainable


def lora_to_fp32(model):
    """PEFT autocast_adapter_dtype=True: adapters (and DoRA magnitudes) in fp32 under a 16-bit base."""
    for m in model.modules():
        if isinstance(m, LoRALinear):
            m.lora_A.data = m.lora_A.data.float()
            m.lora_B.data = m.lora_B.data.float()
        if isinstance(m, DoRALinear):
            m.magnitude.data = m.magnitude.data.float()


class LlamaAttention(nn.Module):
    def __init__(self, hidden, heads, kv_heads, bias=False, attention="eager"):
        super().__init__()
        self.attention = attention
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask, sac=None):
        b, s, _ = x.shape
        q = sac_linear(self.q_proj, x, "wq", sac).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = sac_linear(self.k_proj, x, "wk", sac).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = sac_linear(self.v_proj, x, "wv", sac).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
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
        out = sac_keep(torch.matmul(probs, v), sac)
        out = out.transpose(1, 2).contiguous().reshape(b, s, -1)
        return sac_linear(self.o_proj, out, "wo", sac)


class SwiGLU(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, sac=None):
        gate = F.silu(sac_linear(self.gate_proj, x, "w1", sac))
        return sac_linear(self.down_proj, gate * sac_linear(self.up_proj, x, "w3", sac), "w2", sac)


class SparseMoE(nn.Module):
    """After transformers' MixtralSparseMoeBlock (4.48): an fp32 softmax router, top-k with the
    weights renormalized in place, then a Python loop over the experts, each a SwiGLU MLP run on
    the tokens routed to it and added back with index_add_."""

    def __init__(self, hidden, moe_ffn, experts, top_k):
        super().__init__()
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(hidden, moe_ffn) for _ in range(experts))
        self.top_k = top_k

    def forward(self, x, sac=None):
        b, s, h = x.shape
        flat = x.view(-1, h)
        weights = F.softmax(self.gate(flat), dim=1, dtype=torch.float)
        weights, chosen = torch.topk(weights, self.top_k, dim=-1)
        weights /= weights.sum(dim=-1, keepdim=True)
        weights = weights.to(flat.dtype)
        out = torch.zeros((b * s, h), dtype=flat.dtype, device=flat.device)
        routed = F.one_hot(chosen, num_classes=len(self.experts)).permute(2, 1, 0)
        for e, expert in enumerate(self.experts):
            slot, token = torch.where(routed[e])
            y = expert(flat[None, token].reshape(-1, h)) * weights[token, slot, None]
            out.index_add_(0, token, y.to(flat.dtype))
        return out.reshape(b, s, h)


class LlamaLayer(nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn, attention="eager", moe=None):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = LlamaAttention(hidden, heads, kv_heads, attention=attention)
        self.post_attention_layernorm = RMSNorm(hidden)
        # moe = (experts, top_k, expert ffn): Mixtral's sparse block in place of the MLP
        self.mlp = SwiGLU(hidden, ffn) if moe is None else SparseMoE(hidden, moe[2], moe[0], moe[1])

    def forward(self, x, cos, sin, mask, sac=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask, sac)
        return x + self.mlp(self.post_attention_layernorm(x), sac)


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
    """HF ForCausalLMLoss (4.46-4.48): upcast to fp32, shift with a copy, cross-entropy. The model
    returns its logits as they were (16-bit under bf16): the upcast is the loss's own local
    (src/transformers/loss/loss_utils.py ForCausalLMLoss; LlamaForCausalLM returns `logits`)."""
    upcast = logits.float()
    shift_logits = upcast[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
    return loss, logits


def padded_loss(logits, labels):
    """HF ForCausalLMLoss (4.49+): upcast to fp32, labels padded and shifted, no logits copy; the
    model returns its logits as they were (the upcast is the loss's local)."""
    upcast = logits.float()
    shift_labels = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
    loss = F.cross_entropy(upcast.view(-1, upcast.size(-1)), shift_labels.view(-1), ignore_index=-100)
    return loss, logits


class Decoder(nn.Module):
    """arch: 'llama' or 'gpt2'. Returns (loss, logits) like HF's CausalLMOutput: fp32 where the
    forward upcasts them (logits="forward", HF < 4.46), else as the LM head made them."""

    def __init__(self, arch, layers, hidden, heads, kv_heads, ffn, vocab, positions=0, recompute=False,
                 attention="eager", recompute_every=1, logits="loss", moe=None):
        super().__init__()
        # logits: where the fp32 upcast happens - "loss" (HF 4.46-4.48, shifted copy), "forward"
        # (HF < 4.46: LlamaForCausalLM.forward upcasts, the 16-bit logits are freed at once),
        # "loss-nocopy" (HF 4.49+: labels padded, no copy of the logits).
        self.logits = logits
        # recompute: False/"none", True/"full" (every recompute_every-th block, 1-based), "op" (OpSAC)
        recompute = {False: "none", True: "full"}.get(recompute, recompute)
        if recompute == "op" and arch != "llama":
            raise ValueError("recompute 'op' is written for the Llama block")
        self.arch, self.recompute, self.recompute_every, self.heads = arch, recompute, recompute_every, heads
        self.embed_tokens = nn.Embedding(vocab, hidden)
        if arch == "llama":
            self.layers = nn.ModuleList(LlamaLayer(hidden, heads, kv_heads, ffn, attention, moe) for _ in range(layers))
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
        for i, layer in enumerate(self.layers):
            if self.recompute == "full" and (i + 1) % self.recompute_every == 0:
                x = checkpoint(layer, x, *args)
            elif self.recompute == "op":
                x = OpSAC.apply(layer, x, *args)
            else:
                x = layer(x, *args)
        x = self.norm(x)
        logits = self.lm_head(x) if self.lm_head is not None else F.linear(x, self.embed_tokens.weight)
        if self.logits == "forward":
            logits = logits.float()  # the 16-bit tensor has no other reference: freed here
        if self.logits == "loss-nocopy":
            return padded_loss(logits, labels)
        return shifted_loss(logits, labels)
