"""Measures one steady-state training step: saved-for-backward bytes, model-state bytes, peak.

- saved: torch.autograd.graph.saved_tensors_hooks during forward; each storage once;
  parameters excluded.
- states: parameters + gradients + optimizer states after the step (AdamW's per-tensor step
  counters reported apart).
- peak (CPU): torch.profiler(profile_memory=True); the running sum of its [memory] events
  over the whole step (forward, backward, optimizer), plus the bytes live at its start.
  (CUDA: torch.cuda.max_memory_allocated / max_memory_reserved.)
- saved_report: the saved tensors one by one (which autograd node saved which storage), for
  finding what a disagreement is made of (run.py --list-saved).

Step conventions (options): held_logits=True keeps the model output (the fp32 logits) referenced
through backward, as a hand-written loop that keeps `out = model(...)` does; False drops every
reference before loss.backward(), as HF Trainer, torchtune and Lightning do. lora=(rank, targets)
trains adapters on a frozen base (model.apply_lora), in the model's dtype (torchtune, LitGPT; under
bf16-amp everything is fp32, as PEFT has it too); lora=(rank, targets, "fp32") keeps them fp32 on
a bf16 base (PEFT autocast_adapter_dtype=True). recompute: "none", "full" (with
recompute_every), "op".
"""
import torch

from model import Decoder, apply_lora, lora_to_fp32

DTYPES = {"bf16": torch.bfloat16, "bf16-amp": torch.float32}


def storage_of(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def ddp(model, device):
    """PyTorch DDP over a world of one (gloo on the CPU, NCCL on a GPU): its Reducer builds the
    gradient buckets as it does for any world size."""
    import torch.distributed as dist
    if not dist.is_initialized():
        # A port free now (not a fixed one another run or service may hold).
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        dist.init_process_group("nccl" if device == "cuda" else "gloo", init_method=f"tcp://127.0.0.1:{port}",
                                rank=0, world_size=1)
    if device == "cuda":
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
    # What the Reducer allocates at construction (its buckets) lives outside every step: the CPU
    # peak counts it among the bytes live at the step's start (live_bytes). The sizes come from
    # the Reducer itself (its logging data), not from the memory events around the constructor:
    # the constructor's parameter broadcast copies every parameter into a buffer that gloo frees
    # on its own thread, inside the window in one run and after it in another (+13.4 MiB, seen
    # failing a CI run).
    wrapped = torch.nn.parallel.DistributedDataParallel(model)
    sizes = wrapped._get_ddp_logging_data().get("bucket_sizes", "")
    wrapped.construction_bytes = sum(int(n) for n in str(sizes).split(",") if n.strip())
    # A world of one's all-reduce is the identity. gloo's copies the bucket on its own thread and
    # frees it when its Work is released, a time that varies from run to run (a gradient-sized
    # buffer, 13.4 MiB here, now in the peak and now not); NCCL's all-reduce on a GPU works in
    # place. So the CPU harness hands DDP the bucket back as reduced, and measures what DDP
    # itself keeps (its buckets), the same in every run.
    def identity(_state, bucket):
        done = torch.futures.Future()
        done.set_result(bucket.buffer())
        return done
    wrapped.register_comm_hook(None, identity)
    return wrapped


def build(geo, precision, recompute, device, attention="eager", hf=False, recompute_every=1, lora=None,
          logits="loss", data_parallel=False):
    torch.manual_seed(0)
    if hf:
        model = hf_llama(geo, attention, recompute).to(device)
    else:
        model = Decoder(geo["arch"], geo["layers"], geo["hidden"], geo["heads"], geo["kv_heads"], geo["ffn"],
                        geo["vocab"], positions=geo["seq"], recompute=recompute, attention=attention,
                        recompute_every=recompute_every, logits=logits,
                        moe=(geo["experts"], geo["top_k"], geo["moe_ffn"]) if geo.get("experts") else None).to(device)
    trainable = None
    flags = set(lora[2:]) if lora is not None else set()
    if lora is not None:
        rank, targets = lora[:2]
        saved = tuple(f for f in ("embedding", "lm_head") if f in flags)
        trainable = apply_lora(model, rank, targets, dora="dora" in flags, modules_to_save=saved)
        model = model.to(device)
    if precision == "bf16" or "bf16-base" in flags:
        # "bf16-base" under bf16-amp: a bf16 base (from_pretrained torch_dtype=bf16) run under
        # autocast (Trainer --bf16), its adapters fp32 (PEFT autocast_adapter_dtype).
        model = model.to(torch.bfloat16)
        if "fp32" in flags or "bf16-base" in flags:
            lora_to_fp32(model)  # PEFT autocast_adapter_dtype: fp32 adapters on the bf16 base
    if data_parallel:
        model = ddp(model, device)
    # The optimizer gets only what trains: with LoRA the adapters, the frozen base has no state.
    params = [p for p in model.parameters() if p.requires_grad] if trainable is not None else model.parameters()
    optimizer = torch.optim.AdamW(params, lr=1e-4)
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
    if recompute in (True, "full"):
        model.gradient_checkpointing_enable()
    return HfWrapper(model)


def forward(model, ids, precision, device):
    if precision == "bf16-amp":
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            return model(ids, ids)
    return model(ids, ids)


def step(model, optimizer, ids, precision, device, held_logits=True):
    loss, logits = forward(model, ids, precision, device)
    if not held_logits:  # HF Trainer / torchtune / Lightning: only the loss survives the forward
        del logits
        logits = None
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


def saved_report(model, ids, precision, device):
    """Every storage autograd saves in one forward (parameters apart), with the nodes that saved it:
    [(nbytes, is_param, [(node, attribute, shape, dtype), ...])], largest first."""
    params = {p.storage().data_ptr() for p in model.parameters()}
    loss, logits = forward(model, ids, precision, device)
    del logits
    storages, seen_nodes, stack = {}, set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen_nodes:
            continue
        seen_nodes.add(node)
        stack.extend(n for n, _ in node.next_functions)
        found = []
        try:
            found += [(f"saved_tensors[{i}]", t) for i, t in enumerate(node.saved_tensors)]  # custom Functions
        except (AttributeError, RuntimeError):
            pass
        for attr in dir(node):
            if attr.startswith("_saved_"):
                try:
                    value = getattr(node, attr)
                except RuntimeError:
                    continue
                values = value if isinstance(value, (tuple, list)) else (value,)
                found += [(attr, v) for v in values if torch.is_tensor(v)]
        for attr, t in found:
            ptr, nbytes = storage_of(t)
            entry = storages.setdefault(ptr, [nbytes, ptr in params, []])
            entry[0] = max(entry[0], nbytes)
            entry[2].append((node.name(), attr, tuple(t.shape), str(t.dtype).replace("torch.", "")))
    loss.backward()
    model.zero_grad(set_to_none=True)
    return sorted(storages.values(), key=lambda e: -e[0])


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
    total += getattr(model, "construction_bytes", 0)  # DDP's buckets
    for state in optimizer.state.values():
        total += sum(v.numel() * v.element_size() for v in state.values() if torch.is_tensor(v))
    return total


def peak_bytes_cpu(model, optimizer, ids, precision, held_logits=True):
    start = live_bytes(model, optimizer, ids)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        logits = step(model, optimizer, ids, precision, "cpu", held_logits)
        del logits
    # Every allocation and free, in time order (a stable sort keeps same-microsecond order).
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_us())
    running, peak = 0, 0
    for e in events:
        running += e.nbytes()
        peak = max(peak, running)
    return start + peak


def measure(geo, precision, recompute, device="cpu", attention="eager", hf=False, held_logits=True,
            recompute_every=1, lora=None, list_saved=False, logits="loss", data_parallel=False):
    model, optimizer, ids = build(geo, precision, recompute, device, attention, hf, recompute_every, lora, logits,
                                  data_parallel)
    # Two warm-up steps: the optimizer states exist from the first step on.
    for _ in range(2):
        step(model, optimizer, ids, precision, device, held_logits)
    out = {"saved": saved_bytes(model, ids, precision, device)}
    if list_saved:
        out["saved_report"] = saved_report(model, ids, precision, device)
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step(model, optimizer, ids, precision, device, held_logits)
        torch.cuda.synchronize()
        out["peak"] = torch.cuda.max_memory_allocated()
        out["reserved"] = torch.cuda.max_memory_reserved()
    else:
        out["peak"] = peak_bytes_cpu(model, optimizer, ids, precision, held_logits)
    # States right after a step, before zero_grad.
    loss, logits = forward(model, ids, precision, device)
    loss.backward()
    optimizer.step()
    params, grads, states, counters = state_bytes(model, optimizer)
    out.update(params=params, grads=grads, optimizer=states, step_counters=counters)
    return out
