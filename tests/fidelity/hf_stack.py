#!/usr/bin/env python3
"""The stack users run, measured on a GPU: transformers' LlamaForCausalLM trained the way HF
Trainer does it (the loss from `model(..., labels=...)`, the output dropped before backward,
torch.optim.AdamW with its CUDA default, foreach), with PEFT LoRA/DoRA or in full, the base loaded
in bf16 or fp32, under autocast or not, alone or wrapped in DDP. Each case runs in a process of its
own, so nvidia-smi's figure is that case's alone.

  python3 tests/fidelity/hf_stack.py --measure FILE          # on a GPU host (torch, transformers, peft)
  /usr/bin/python3 tests/fidelity/hf_stack.py --judge FILE --trainfit build/cli/trainfit [--write MD]

--judge asks trainfit each case in the words a user of that stack has (framework hf, the
transformers release measured, base_dtype, lora_dtype, the PEFT target modules) and compares
its peak with torch.cuda.max_memory_allocated. Exits 1 when one is beyond +-5%.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# A small Llama (about 110M parameters): big enough that the per-token terms dominate the
# constant ones, small enough that every case runs in seconds.
GEOMETRY = dict(layers=4, hidden=1024, heads=16, kv_heads=4, ffn=2816, vocab=32000, seq=1024, batch=2)

ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

# name, then: base (bf16|fp32: the dtype from_pretrained loads), autocast (Trainer --bf16 wraps
# forward in torch.autocast(bf16)), lora (None = full fine-tuning, else rank, targets, and
# PEFT's options), ddp (None, or gradient_as_bucket_view), checkpointing.
CASES = [
    dict(name="full, fp32 base, autocast", base="fp32", autocast=True),
    dict(name="full, bf16 base", base="bf16", autocast=False),
    dict(name="full, fp32 base, autocast, DDP", base="fp32", autocast=True, ddp=False),
    dict(name="full, fp32 base, autocast, DDP bucket view", base="fp32", autocast=True, ddp=True),
    dict(name="lora qv, bf16 base, PEFT fp32 adapters, autocast", base="bf16", autocast=True,
         lora=dict(r=16, targets=["q_proj", "v_proj"])),
    dict(name="lora qv, bf16 base, bf16 adapters", base="bf16", autocast=False,
         lora=dict(r=16, targets=["q_proj", "v_proj"], adapter_fp32=False)),
    dict(name="lora qv, fp32 base, autocast", base="fp32", autocast=True,
         lora=dict(r=16, targets=["q_proj", "v_proj"])),
    dict(name="lora q,k,v, bf16 base, autocast", base="bf16", autocast=True,
         lora=dict(r=16, targets=["q_proj", "k_proj", "v_proj"])),
    dict(name="lora all-linear, bf16 base, autocast", base="bf16", autocast=True,
         lora=dict(r=16, targets=ALL_LINEAR)),
    dict(name="lora mlp only, bf16 base, autocast", base="bf16", autocast=True,
         lora=dict(r=16, targets=["gate_proj", "up_proj", "down_proj"])),
    dict(name="lora all but o_proj, bf16 base, bf16 adapters", base="bf16", autocast=False,
         lora=dict(r=16, targets=[t for t in ALL_LINEAR if t != "o_proj"], adapter_fp32=False)),
    dict(name="lora qv + modules_to_save, bf16 base, autocast", base="bf16", autocast=True,
         lora=dict(r=16, targets=["q_proj", "v_proj"], modules_to_save=["embed_tokens", "lm_head"])),
    dict(name="dora all-linear, bf16 base, autocast", base="bf16", autocast=True,
         lora=dict(r=16, targets=ALL_LINEAR, dora=True)),
    dict(name="lora all-linear, bf16 base, autocast, checkpointing", base="bf16", autocast=True,
         lora=dict(r=16, targets=ALL_LINEAR), checkpointing=True),
]


def run_case(case):
    """One case, in this process: three steps, the last one measured."""
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    g = GEOMETRY
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=g["hidden"], intermediate_size=g["ffn"], num_hidden_layers=g["layers"],
                         num_attention_heads=g["heads"], num_key_value_heads=g["kv_heads"], vocab_size=g["vocab"],
                         max_position_embeddings=g["seq"], tie_word_embeddings=False)
    config._attn_implementation = "sdpa"
    model = LlamaForCausalLM(config)
    if case["base"] == "bf16":
        model = model.to(torch.bfloat16)
    model = model.cuda()
    if case.get("checkpointing"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    lora = case.get("lora")
    versions = dict(torch=torch.__version__, transformers=transformers.__version__)
    if lora:
        import peft
        versions["peft"] = peft.__version__
        cfg = peft.LoraConfig(r=lora["r"], lora_alpha=2 * lora["r"], lora_dropout=0.0, target_modules=lora["targets"],
                              use_dora=lora.get("dora", False), modules_to_save=lora.get("modules_to_save"),
                              task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, cfg, autocast_adapter_dtype=lora.get("adapter_fp32", True))
    else:
        model.config.use_cache = False
    if case.get("ddp") is not None:
        import torch.distributed as dist
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", rank=0, world_size=1)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0],
                                                          gradient_as_bucket_view=case["ddp"])
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-5)
    ids = torch.randint(0, g["vocab"], (g["batch"], g["seq"]), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=case["autocast"]):
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss  # the output is dropped here
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    out = dict(case=case, versions=versions, allocated_before_step=before,
               peak_allocated=torch.cuda.max_memory_allocated(), peak_reserved=torch.cuda.max_memory_reserved(),
               trainable=sum(p.numel() for p in params),
               parameter_bytes=sum(p.numel() * p.element_size() for p in model.parameters()))
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
            if proc.pid == os.getpid():
                out["nvidia_smi"] = proc.usedGpuMemory
        out.setdefault("nvidia_smi_device", pynvml.nvmlDeviceGetMemoryInfo(handle).used)
    except Exception as e:  # NVML may not list processes inside a sandbox
        out["nvidia_smi_error"] = str(e)
    return out


def measure_all(path):
    results, started = [], time.time()
    for case in CASES:
        proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(case)], capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            results.append(dict(case=case, error=proc.stderr.strip()[-2000:]))
            print(f"FAILED {case['name']}: {proc.stderr.strip()[-400:]}", flush=True)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"{case['name']:55s} peak {r['peak_allocated'] / 2**20:9.1f} MiB  reserved "
              f"{r['peak_reserved'] / 2**20:9.1f} MiB  smi {r.get('nvidia_smi', r.get('nvidia_smi_device', 0)) / 2**20:9.1f} MiB",
              flush=True)
    import torch
    with open(path, "w") as f:
        json.dump(dict(geometry=GEOMETRY, gpu=torch.cuda.get_device_name(0), seconds=round(time.time() - started),
                       measured=time.strftime("%Y-%m-%d"), results=results), f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure", metavar="FILE")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(json.loads(args.one))))
        return 0
    if args.measure:
        measure_all(args.measure)
        return 0
    parser.error("--measure FILE (on a GPU host)")


if __name__ == "__main__":
    sys.exit(main())
