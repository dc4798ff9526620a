"""Measures one steady-state training step: saved-for-backward bytes, model-state bytes, peak.

- saved: torch.autograd.graph.saved_tensors_hooks during forward; each storage once;
  parameters excluded.
- states: parameters + gradients + optimizer states after the step (AdamW's per-tensor step
  counters reported apart).
- peak (CPU): torch.profiler(profile_memory=True); the running sum of its [memory] events
  over the whole step (forward, backward, optimizer), plus the bytes live at its start.
  (CUDA: torch.cuda.max_memory_allocated / max_memory_reserved.)
"""
import torch

from model import Decoder

DTYPES = {"bf16": torch.bfloat16, "bf16-amp": torch.float32}


def storage_of(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def build(geo, precision, recompute, device, attention="eager", hf=False):
    torch.manual_seed(0)
    if hf:
        model = hf_llama(geo, attention, recompute).to(device)
    else:
        model = Decoder(geo["arch"], geo["layers"], geo["hidden"], geo["heads"], geo["kv_heads"], geo["ffn"],
                        geo["vocab"], positions=geo["seq"], recompute=recompute, attention=attention).to(device)
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, geo["vocab"], (geo["batch"], geo["seq"]), device=device)
    return model, optimizer, ids


class HfWrapper(torch.nn.Module):
    """Gives transformers' LlamaForCausalLM the harness' (loss, logits) interface."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, labels):
        out = self.model(input_ids=ids, labels=labels, use_cache=False)
        return out.loss, out.logits


def hf_llama(geo, attention, recompute):
    """The real transformers LlamaForCausalLM with a small config (only when importable)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(hidden_size=geo["hidden"], num_hidden_layers=geo["layers"],
                         num_attention_heads=geo["heads"], num_key_value_heads=geo["kv_heads"],
                         intermediate_size=geo["ffn"], vocab_size=geo["vocab"], tie_word_embeddings=False,
                         max_position_embeddings=max(geo["seq"], 128), attn_implementation=attention)
    model = LlamaForCausalLM(config)
    if recompute:
        model.gradient_checkpointing_enable()
    return HfWrapper(model)


def forward(model, ids, precision, device):
    if precision == "bf16-amp":
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            return model(ids, ids)
    return model(ids, ids)


def step(model, optimizer, ids, precision, device):
    loss, logits = forward(model, ids, precision, device)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return logits


def saved_bytes(model, ids, precision, device):
    params = {p.storage().data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        ptr, nbytes = storage_of(t)
        if ptr not in params:
            seen[ptr] = max(nbytes, seen.get(ptr, 0))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss, logits = forward(model, ids, precision, device)
    total = sum(seen.values())
    loss.backward()
    model.zero_grad(set_to_none=True)
    return total


def state_bytes(model, optimizer):
    """Params + grads + optimizer states, as held right after optimizer.step()."""
    tensors = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    states, counters = 0, 0
    for state in optimizer.state.values():
        for key, value in state.items():
            if torch.is_tensor(value):
                if key == "step":
                    counters += value.numel() * value.element_size()
                else:
                    states += value.numel() * value.element_size()
    return tensors, grads, states, counters


def live_bytes(model, optimizer, ids):
    total = sum(p.numel() * p.element_size() for p in model.parameters()) + ids.numel() * ids.element_size()
    for state in optimizer.state.values():
        total += sum(v.numel() * v.element_size() for v in state.values() if torch.is_tensor(v))
    return total


def peak_bytes_cpu(model, optimizer, ids, precision):
    start = live_bytes(model, optimizer, ids)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        logits = step(model, optimizer, ids, precision, "cpu")
        del logits
    # Every allocation and free, in time order (a stable sort keeps same-microsecond order).
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_us())
    running, peak = 0, 0
    for e in events:
        running += e.nbytes()
        peak = max(peak, running)
    return start + peak


def measure(geo, precision, recompute, device="cpu", attention="eager", hf=False):
    model, optimizer, ids = build(geo, precision, recompute, device, attention, hf)
    # Two warm-up steps: the optimizer states exist from the first step on.
    for _ in range(2):
        step(model, optimizer, ids, precision, device)
    out = {"saved": saved_bytes(model, ids, precision, device)}
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step(model, optimizer, ids, precision, device)
        torch.cuda.synchronize()
        out["peak"] = torch.cuda.max_memory_allocated()
        out["reserved"] = torch.cuda.max_memory_reserved()
    else:
        out["peak"] = peak_bytes_cpu(model, optimizer, ids, precision)
    # States right after a step, before zero_grad.
    loss, logits = forward(model, ids, precision, device)
    loss.backward()
    optimizer.step()
    params, grads, states, counters = state_bytes(model, optimizer)
    out.update(params=params, grads=grads, optimizer=states, step_counters=counters)
    return out
