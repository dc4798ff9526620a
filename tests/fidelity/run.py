#!/usr/bin/env python3
"""Holds trainfit to measured truth: real training steps of small decoders (model.py),
measured by measure.py, against `trainfit estimate --format json` for the same geometry.

  /usr/bin/python3 tests/fidelity/run.py --trainfit build/cli/trainfit            # check (CI)
  /usr/bin/python3 tests/fidelity/run.py --trainfit build/cli/trainfit --write docs/fidelity.md
  /usr/bin/python3 tests/fidelity/run.py --trainfit ... --device cuda                # on a GPU
  /usr/bin/python3 tests/fidelity/run.py --trainfit ... --conventions --list-saved   # new cases, tensor by tensor
  python3 tests/fidelity/run.py --device cuda --measure-only m.json   # on a GPU host without trainfit's build
  /usr/bin/python3 tests/fidelity/run.py --trainfit build/cli/trainfit --measured m.json --write docs/fidelity-cuda.md

Exits 1 when a figure is beyond tolerance: saved activations +-3%, peak +-5%, model states exact.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import measure  # noqa: E402

LLAMA = dict(arch="llama", layers=2, hidden=256, heads=8, kv_heads=2, ffn=704, vocab=4096, seq=256, batch=2)
MOE_WIDE = dict(LLAMA, vocab=512, experts=8, top_k=2, moe_ffn=1408)
GPT2 = dict(arch="gpt2", layers=2, hidden=256, heads=4, kv_heads=4, ffn=1024, vocab=4096, seq=256, batch=2)

# Each varies one thing from a base so that every term is separated.
GEOMETRIES = [
    ("llama base", LLAMA),
    ("llama seq 128", dict(LLAMA, seq=128)),
    ("llama seq 512", dict(LLAMA, seq=512)),
    ("llama vocab 512", dict(LLAMA, vocab=512)),
    ("llama vocab 16384", dict(LLAMA, vocab=16384)),
    ("llama MHA (kv 8)", dict(LLAMA, kv_heads=8)),
    ("llama MQA (kv 1)", dict(LLAMA, kv_heads=1)),
    ("llama micro-batch 4", dict(LLAMA, batch=4)),
    ("llama 4 layers", dict(LLAMA, layers=4)),
    ("llama hidden 512", dict(LLAMA, hidden=512, heads=8, kv_heads=4, ffn=1376)),
    ("llama 16 heads", dict(LLAMA, heads=16, kv_heads=4)),
    ("llama MoE 4 experts top-2", dict(LLAMA, experts=4, top_k=2, moe_ffn=352)),
    ("llama MoE 8 experts, wide, vocab 512", MOE_WIDE),
    ("gpt2 base", GPT2),
    ("gpt2 seq 512", dict(GPT2, seq=512)),
]

# Conventions of the training loop and of the recipe, each measured on both sides: the logits
# dropped before backward (HF Trainer, torchtune, Lightning) where the rows above hold them (a
# loop that keeps `out = model(...)`); LoRA adapters on a frozen base; torchtitan's op-level
# selective checkpointing and its "checkpoint one block in N". Options: held_logits, lora=(rank,
# targets), recompute ("none", "full", "op"), recompute_every.
CONVENTIONS = [
    (name, geo, precision, options)
    for name, geo, options in [
        ("llama base", LLAMA, dict(held_logits=False)),
        ("gpt2 base", GPT2, dict(held_logits=False)),
        ("llama base", LLAMA, dict(held_logits=False, logits="forward")),
        ("llama base", LLAMA, dict(held_logits=False, logits="loss-nocopy")),
        ("llama base", LLAMA, dict(held_logits=True, logits="loss-nocopy")),
        ("llama base", LLAMA, dict(held_logits=False, ddp=True)),  # gloo has no bf16: bf16-amp only
        ("llama base", LLAMA, dict(lora=(8, "qv"))),
        ("llama base", LLAMA, dict(lora=(8, "all-linear"))),
        ("llama base", LLAMA, dict(lora=(8, "q+k+v"))),
        ("llama base", LLAMA, dict(lora=(8, "gate+up+down"))),
        ("llama base", LLAMA, dict(lora=(8, "all-linear", "dora"))),
        ("llama base", LLAMA, dict(lora=(8, "qv", "embedding", "lm_head"))),
        ("llama base", LLAMA, dict(recompute="op")),
        ("llama 4 layers", dict(LLAMA, layers=4), dict(recompute="full", recompute_every=2)),
        ("llama MoE 8 experts, wide, vocab 512, batch 8", dict(MOE_WIDE, batch=8), dict(lora=(8, "qv"))),
    ]
    for precision in ("bf16", "bf16-amp") if not (options.get("ddp") and precision == "bf16")
] + [
    # PEFT over a bf16 base under Trainer --bf16: the adapters fp32, everything frozen bf16.
    ("llama base", LLAMA, "bf16-amp", dict(held_logits=False, lora=(8, "qv", "bf16-base"))),
    ("llama base", LLAMA, "bf16-amp", dict(held_logits=False, lora=(8, "all-linear", "bf16-base"))),
]

# The conventions section of docs/fidelity.md (write_table puts it under the table).
CONVENTIONS_DOC = """\
## Conventions of the loop and the recipe

The rows whose `logits`, `adapter` or `recompute` column differs from `held`, `-`, `none`/`full` measure
a convention the model has to be told about (run them alone with `run.py --conventions`; add
`--list-saved` to print every saved storage with the autograd nodes that saved it). Every request
says `held_logits` explicitly.

- **held_logits** (`logits` column). `held`: the loop keeps the model output (`loss, logits =
  model(...)`, then `loss.backward()`), so the fp32 logits stay referenced through backward, as in
  any hand-written loop that keeps `out`; the request says `held_logits: true`. `dropped`: every
  reference to the logits is deleted before `loss.backward()`, as HF Trainer (`compute_loss` returns
  the loss), torchtune and Lightning do; `held_logits: false`. The loss is still computed inside
  the model's forward (HF), so the 16-bit logits, their fp32 upcast and the shifted copy are all
  alive while the loss' forward runs, whichever way.
- **LoRA** (`adapter` column; `model.py` LoRALinear, written after PEFT's `lora.Linear` with dropout
  0): a frozen base weight (`requires_grad=False`, in the model dtype), trainable A (r x in, kaiming
  uniform) and B (out x r, zeros), `base(x) + lora_B(lora_A(x)) * alpha/r`; everything else in the
  model (embeddings, norms, lm_head) frozen; AdamW gets the adapters only. The adapters are in the
  model's dtype (torchtune, LitGPT; under bf16-amp all parameters are fp32, as with PEFT), which
  is trainfit's default outside `framework: hf`; `measure.build(lora=(r, targets, "fp32"))` gives
  PEFT's fp32 adapters on a bf16 base (`autocast_adapter_dtype`). Request: `adapter: lora,
  lora_rank: 8, lora_targets: qv|all-linear`. What torch 1.13 keeps: an op saves an input only
  when the gradient of another input that requires grad needs it, so a frozen linear does not
  save its input (dX needs W, not X) - under autocast it saves its bf16 weight copy instead (not
  cached: autocast caches only leaf tensors that require grad); lora_A saves its input as its
  matmul sees it (bf16: the base's input tensor itself, one storage per distinct input; autocast:
  one bf16 cast per target; PEFT fp32 adapters: one fp32 copy per target); lora_B saves the b*s*r
  intermediate; an RMSNorm with a frozen weight keeps its fp32 upcast, square and rstd but not the
  normalized tensor; nothing upstream of the first adapter is saved (the embedding, layer 0's
  input norm, and with `qv` layer 0's q for the k-gradient); the frozen lm_head keeps no input.
- **where the logits are upcast** (`upcast` in the name; `model.py` `Decoder(logits=...)`): `forward` is
  transformers before 4.46 (`LlamaForCausalLM.forward` upcasts, the 16-bit logits have no other
  reference and are freed at once; request `logits_upcast: forward`); `loss-nocopy` is 4.49 and
  later (`ForCausalLMLoss` pads and shifts the labels, no copy of the logits; request
  `logits_shift_copy: false`); the rows without it are 4.46-4.48 (upcast in the loss, shifted copy).
- **LoRA variants**: target lists (`q+k+v`, `gate+up+down`: request `lora_targets` with the same
  modules); DoRA (`model.py` DoRALinear, after PEFT's DoraLinearLayer: a trainable magnitude per
  output feature, the norm of W + s·BA detached, `(m/n - 1)·base + m/n·s·lora`; request `dora:
  true`); `embedding lm_head` (PEFT modules_to_save: a trainable copy of each beside the frozen
  original; request `modules_to_save: embedding+lm_head`); `bf16-base` (a bf16 base with fp32
  adapters run under autocast, PEFT over `torch_dtype=bfloat16` with Trainer `--bf16`; request
  `base_dtype: bf16, lora_dtype: fp32, precision: bf16-amp`). With the MLP alone adapted, the
  first layer's attention and both its norms save nothing, nor do the autocast copies of the
  weights of linears whose input needs no gradient (in the first layer q, k and v always).
- **DDP** (`measure.ddp`): PyTorch DistributedDataParallel over a world of one (gloo; gloo has no
  bf16 all-reduce, so bf16-amp only). The Reducer allocates its buckets, as large as the
  gradients, when it is built; the peak counts them among the bytes live at the step's start
  (measured by the profiler around the construction). The all-reduce of a world of one is
  the identity, and the harness registers it as DDP's comm hook: gloo's all-reduce works on its
  own thread, which the profiler does not see, and finishes at a time that varies from run to
  run (a gradient-sized difference, 13.4 MiB, seen in 2 CI runs of many); NCCL's works in place.
  Request: `num_gpus: 2` (the buckets do not depend on the world size), `ddp_full_buckets` left
  at its default.
- **recompute op** (`model.py` OpSAC): torchtitan's op-level selective activation checkpointing
  (v0.2.1 `_apply_op_sac`: inside each block keep the outputs of aten.mm except every second one,
  i.e. wq, wv, w1 (gate), w2 (down) of the order wq, wk, wv, wo, w1, w3, w2, the SDPA output and its
  logsumexp, and the block input; recompute everything else). torch 1.13 has no selective
  checkpoint policy, so OpSAC is a reentrant checkpoint that keeps exactly those tensors: forward
  runs the block under no_grad and saves its inputs plus the outputs of the four mms and of the
  attention core; backward reruns the block, replaying those four mms from the kept outputs (their
  backward still gets their inputs and weights) and recomputing the rest. What differs from
  torchtitan: the harness' attention is eager (torch 1.13 has no SDPA), so the kept "SDPA output" is
  the eager core's `probs @ v` (same shape and dtype) and there is no logsumexp (trainfit counts 4
  bytes x heads x tokens per layer for it: 16 KiB per layer here); in backward the eager core is
  recomputed (SDPA's backward would recompute the probabilities inside the kernel). The held
  activations are otherwise exactly torchtitan's. Request: `recompute: op`.
- **MoE** (the `llama MoE` rows; `model.py` SparseMoE, after transformers' MixtralSparseMoeBlock of
  4.48): an fp32 softmax router over the post-attention norm, top-k renormalized in place, then a
  Python loop over the experts (SwiGLU MLPs), each run on the tokens routed to it and added back
  with `index_add_`. Request: `num_experts`, `experts_per_token`, `moe_ffn_hidden`,
  `moe_expert_loop: true`. What torch keeps: the router's fp32 probabilities and top-k indices;
  per routed copy of a token, the gathered input (once in bf16; under autocast gate and up each
  save their own bf16 cast), the expert MLP's tensors, the expert output and its routing weight
  (for the weighting's two gradients), and the weighted output again, which `index_add_` saves
  as its source (in the residual dtype: fp32 under autocast), with the routed tokens' indices.
  A frozen expert (the LoRA row) saves none of its linears' inputs. Backward finishes one expert
  before the next (autograd runs the later-created chain first): one expert's gradient buffers
  at a time, while trainable experts' weight gradients appear as each expert's saved tensors go
  (the `wide` rows, 8 experts of 1408, make those terms the peak's).
- **recompute every N** (`recompute` column `full every 2`): torchtitan's `selective_ac_option: "N"`
  (`_apply_layer_sac`): block k (1-based) is fully checkpointed iff k % N == 0, the others keep
  everything; the 4-layer Llama with N = 2 checkpoints blocks 2 and 4. Request: `recompute: full,
  recompute_every: 2`.
"""

TOLERANCE = {"activations": 0.03, "peak": 0.05}


def request_for(geo, precision, recompute, held_logits=True, lora=None, recompute_every=1, logits="loss",
                data_parallel=False):
    if recompute in (False, True):
        recompute = "full" if recompute else "none"
    r = {
        "num_layers": geo["layers"], "hidden_dim": geo["hidden"], "num_heads": geo["heads"],
        "num_kv_heads": geo["kv_heads"], "ffn_hidden": geo["ffn"], "vocab_size": geo["vocab"],
        "micro_batch": geo["batch"], "seq_length": geo["seq"], "num_gpus": 1, "zero_stage": 0,
        "precision": precision, "optimizer": "adamw", "optimizer_impl": "loop", "recompute": recompute,
        "attention": "eager", "ops": "eager", "logits_fp32": True, "runtime_overhead": False,
        "gpu_memory_gb": 1000, "held_logits": held_logits,
    }
    if recompute_every != 1:
        r["recompute_every"] = recompute_every
    if data_parallel:
        r["num_gpus"] = 2  # a DDP job (the harness runs a world of one: the same buckets)
    if logits == "forward":
        r["logits_upcast"] = "forward"
    elif logits == "loss-nocopy":
        r["logits_shift_copy"] = False
    if lora is not None:
        r.update(adapter="lora", lora_rank=lora[0], lora_targets=lora[1])
        flags = set(lora[2:])
        if "dora" in flags:
            r["dora"] = True
        saved = [f for f in ("embedding", "lm_head") if f in flags]
        if saved:
            r["modules_to_save"] = "+".join(saved)
        if "bf16-base" in flags:
            r.update(base_dtype="bf16", lora_dtype="fp32")
    if geo.get("experts"):
        r.update(num_experts=geo["experts"], experts_per_token=geo["top_k"], moe_ffn_hidden=geo["moe_ffn"],
                 moe_expert_loop=True)
    if geo["arch"] == "gpt2":
        r.update(mlp="gelu", norm="layernorm", bias="all", tied_embeddings=True, learned_positions=geo["seq"])
    else:
        r.update(mlp="swiglu", norm="rmsnorm", bias="none", tied_embeddings=False)
    return r


def predict(trainfit, request):
    out = subprocess.run([trainfit, "estimate", "--request", "-", "--format", "json"], input=json.dumps(request),
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        return out.stderr.strip() or f"exit {out.returncode}"  # the request was refused
    return json.loads(out.stdout)


def error(predicted, measured):
    return (predicted - measured) / measured


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainfit", help="path to the trainfit binary (not with --measure-only)")
    parser.add_argument("--measure-only", metavar="FILE",
                        help="measure and write the measurements here as JSON; trainfit is not run (a GPU host)")
    parser.add_argument("--measured", metavar="FILE",
                        help="judge measurements written by --measure-only instead of measuring")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--write", metavar="FILE", help="write the markdown table here")
    parser.add_argument("--only", help="run only rows whose label (geometry and variant) contains this")
    parser.add_argument("--conventions", action="store_true",
                        help="run only the convention cases (held logits, LoRA, op / every-N recompute)")
    parser.add_argument("--list-saved", action="store_true",
                        help="print every saved storage with the autograd nodes that saved it")
    args = parser.parse_args()
    if not args.trainfit and not args.measure_only:
        parser.error("--trainfit is needed unless --measure-only")
    recorded = load_measured(args.measured) if args.measured else None
    if recorded is not None:
        args.device = recorded["device"]
    torch.set_num_threads(1)
    if args.device == "cuda" and recorded is None and not torch.cuda.is_available():
        print("run.py: --device cuda needs a CUDA GPU; torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    # On a GPU also: SDPA (flash) attention, and transformers' own LlamaForCausalLM when importable.
    variants = [("ours", "eager")]
    if args.device == "cuda":
        variants.append(("ours", "sdpa"))
        if recorded is not None or importlib.util.find_spec("transformers") is not None:
            variants += [("hf", "eager"), ("hf", "sdpa")]
        else:
            print("transformers is not importable: the HF LlamaForCausalLM rows are skipped", file=sys.stderr)

    rows, failures = [], 0
    measured_runs = {}
    started = time.time()
    runs = [] if args.conventions else [
        (name, geo, impl, attention, precision, dict(recompute="full" if recompute else "none"))
        for name, geo in GEOMETRIES
        for impl, attention in variants if impl == "ours" or geo["arch"] == "llama"
        for precision in ("bf16", "bf16-amp") for recompute in (False, True)]
    runs += [(name, geo, "ours", "eager", precision, options) for name, geo, precision, options in CONVENTIONS]
    runs = [r for r in runs if not args.only or args.only in label(r[0], r[5])]
    for name, geo, impl, attention, precision, options in runs:
        recompute = options.get("recompute", "none")
        held, lora, every = options.get("held_logits", True), options.get("lora"), options.get("recompute_every", 1)
        logits, data_parallel = options.get("logits", "loss"), options.get("ddp", False)
        key = f"{label(name, options)} | {impl} {attention} | {precision}"
        if recorded is not None:
            if key not in recorded["runs"]:
                continue  # not measured there (e.g. transformers missing on that host)
            m = recorded["runs"][key]
        else:
            try:
                m = measure.measure(geo, precision, recompute, args.device, attention, hf=impl == "hf",
                                    held_logits=held, recompute_every=every, lora=lora, list_saved=args.list_saved,
                                    logits=logits, data_parallel=data_parallel)
            except Exception as e:  # e.g. a transformers release whose API moved: that row alone fails
                failures += 1
                print(f"FAIL {key}: could not measure: {type(e).__name__}: {e}", flush=True)
                continue
        if args.measure_only:
            measured_runs[key] = {k: v for k, v in m.items() if k != "saved_report"}
            print(f"measured {key}: peak {m['peak'] / 2**20:.3f} MiB", flush=True)
            continue
        request = request_for(geo, precision, recompute, held, lora, every, logits, data_parallel)
        if attention == "sdpa":
            request["attention"] = "flash"
        if args.device == "cuda":
            request["optimizer_impl"] = "foreach"  # PyTorch's CUDA default
        p = predict(args.trainfit, request)
        if isinstance(p, str):
            failures += 1
            print(f"FAIL {label(name, options):40s} {precision:8s} saved {m['saved'] / 2**20:8.3f} MiB  "
                  f"peak {m['peak'] / 2**20:8.3f} MiB  trainfit refused the request: {p}", flush=True)
            continue
        p = p["breakdown"]["bytes"]
        states = m["params"] + m["grads"] + m["optimizer"]
        if impl == "hf" or attention != "eager":
            name = f"{name} [{impl} {attention}]"
        row = dict(name=name, precision=precision,
                   recompute=recompute + (f" every {every}" if every != 1 else ""),
                   logits="held" if held else "dropped", adapter=f"lora r{lora[0]} {lora[1]}" if lora else "-",
                   saved=m["saved"], p_saved=p["activations"], peak=m["peak"], p_peak=p["per_gpu_total"],
                   states=states, p_states=p["model_states"])
        if "reserved" in m:
            row["reserved"] = m["reserved"]
        row["e_saved"] = error(row["p_saved"], row["saved"])
        row["e_peak"] = error(row["p_peak"], row["peak"])
        row["ok"] = (abs(row["e_saved"]) <= TOLERANCE["activations"] and abs(row["e_peak"]) <= TOLERANCE["peak"]
                     and row["p_states"] == states)
        failures += not row["ok"]
        rows.append(row)
        print(f"{'ok  ' if row['ok'] else 'FAIL'} {label(name, options):40s} {precision:8s} "
              f"saved {m['saved'] / 2**20:8.3f} MiB pred {row['e_saved']:+6.2%}  "
              f"peak {m['peak'] / 2**20:8.3f} MiB pred {row['e_peak']:+6.2%}  "
              f"states {'exact' if row['p_states'] == states else str(row['p_states'] - states)}", flush=True)
        if args.list_saved:
            print_saved(m["saved_report"], p)
    if args.measure_only:
        with open(args.measure_only, "w") as f:
            json.dump(dict(device=args.device, torch=torch.__version__, environment=environment(args.device),
                           seconds=round(time.time() - started), runs=measured_runs), f, indent=1)
        return 0
    if args.write:
        env = recorded["environment"] if recorded else environment(args.device)
        command = (f"--measured {args.measured} " if args.measured else "") + f"--write {args.write}"
        write_table(args.write, rows, args.device, recorded["seconds"] if recorded else time.time() - started, env,
                    command)
    print(f"{sum(r['ok'] for r in rows)} passed, {failures} failed")
    return 1 if failures else 0


def environment(device):
    """Where the measurements were taken: torch (and transformers) versions, the GPU."""
    env = f"torch {torch.__version__}"
    if importlib.util.find_spec("transformers") is not None:
        import transformers
        env += f", transformers {transformers.__version__}"
    if device == "cuda":
        env += f", {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda}"
    return env


def load_measured(path):
    with open(path) as f:
        recorded = json.load(f)
    if not isinstance(recorded, dict) or not isinstance(recorded.get("runs"), dict):
        sys.exit(f"run.py: {path}: not a file written by --measure-only")
    return recorded


def label(name, options):
    """A row's name: the geometry, then what differs from the default step."""
    parts = [name]
    if options.get("recompute", "none") != "none":
        every = options.get("recompute_every", 1)
        parts.append(f"recompute={options['recompute']}" + (f"/{every}" if every != 1 else ""))
    if not options.get("held_logits", True):
        parts.append("logits dropped")
    if options.get("ddp"):
        parts.append("DDP")
    if options.get("logits", "loss") != "loss":
        parts.append(f"upcast {options['logits']}")
    if options.get("lora"):
        parts.append(" ".join(["lora", f"r{options['lora'][0]}", *options["lora"][1:]]))
    return ", ".join(parts)


def print_saved(report, predicted):
    """The saved storages, largest first, each with the autograd nodes that saved it."""
    total = sum(nbytes for nbytes, is_param, _ in report if not is_param)
    print(f"     saved storages (parameters apart): {total / 2**20:.3f} MiB; trainfit activations "
          f"{predicted['activations'] / 2**20:.3f} MiB")
    for nbytes, is_param, users in report:
        if is_param:
            continue
        shape, dtype = users[0][2], users[0][3]
        nodes = ", ".join(sorted({f"{node}.{attr.replace('_saved_', '')}" for node, attr, _, _ in users}))
        print(f"       {nbytes / 2**20:8.3f} MiB {dtype:9s} {str(list(shape)):20s} {nodes}")


def kept_sections(path):
    """The '## ' sections of an existing file that this script does not write (kept as they are)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    own = CONVENTIONS_DOC.splitlines()[0]
    sections, current = [], None
    for line in text.splitlines():
        if line.startswith("## "):
            current = None if line == own else []
            if current is not None:
                sections.append(current)
        if current is not None:
            current.append(line)
    return [line for section in sections for line in section + [""]] if sections else []


def write_table(path, rows, device, seconds, env, command):
    worst = {k: max(abs(r[k]) for r in rows) for k in ("e_saved", "e_peak")}
    reserved = any("reserved" in r for r in rows)  # CUDA: torch.cuda.max_memory_reserved
    mean = {k: sum(abs(r[k]) for r in rows) / len(rows) for k in ("e_saved", "e_peak")}
    lines = [
        "# Fidelity: trainfit against measured PyTorch training steps",
        "",
        f"Regenerate with `/usr/bin/python3 tests/fidelity/run.py --trainfit build/cli/trainfit {command}`",
        f"(device `{device}`, {env}, {len(rows)} runs in {seconds:.0f} s).",
        "",
        "Each row is one real AdamW training step of the decoders in `tests/fidelity/model.py` (written after HF",
        "transformers' eager Llama and GPT-2), measured on a steady-state step (`tests/fidelity/measure.py`):",
        "**saved** = bytes autograd saves for backward (`saved_tensors_hooks`, each storage once, parameters",
        "excluded); **peak** = the profiler's running sum of allocations over forward, backward and optimizer",
        "step plus the bytes live at its start; **states** = parameters + gradients + AdamW moments (AdamW's",
        "4-byte per-tensor step counters excluded). trainfit is asked the same geometry with `attention: eager`,",
        "`ops: eager`, `logits_fp32: true`, `runtime_overhead: false`, one GPU, ZeRO-0. Tolerance: saved ±3%,",
        "peak ±5%, states exact. The CPU runs use PyTorch's single-tensor AdamW (its CPU default), so the",
        "requests say `optimizer_impl: loop`. What these measurements changed in the model: docs/model.md",
        "(\"Measured against PyTorch\").",
        "",
        "GPU: `run.py --device cuda` adds SDPA (flash) attention and, when importable, transformers' own",
        "LlamaForCausalLM, with torch.cuda.max_memory_allocated as the peak and max_memory_reserved beside it;",
        "on a GPU host without trainfit's build, `--measure-only FILE` there and `--measured FILE` here",
        "(docs/fidelity-cuda.md, from tests/fidelity/gpu/). The GPU rows are a record, not a CI check.",
        "",
        f"Worst |error|: saved {worst['e_saved']:.2%}, peak {worst['e_peak']:.2%}. "
        f"Mean |error|: saved {mean['e_saved']:.2%}, peak {mean['e_peak']:.2%}.",
        "",
        "| geometry | precision | recompute | logits | adapter | saved MiB | predicted | error | peak MiB | predicted | error | states MiB | predicted |"
        + (" reserved MiB |" if reserved else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if reserved else ""),
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['precision']} | {r['recompute']} | {r['logits']} | {r['adapter']} | "
            f"{r['saved'] / 2**20:.3f} | {r['p_saved'] / 2**20:.3f} | "
            f"{r['e_saved']:+.2%} | {r['peak'] / 2**20:.3f} | {r['p_peak'] / 2**20:.3f} | {r['e_peak']:+.2%} | "
            f"{r['states'] / 2**20:.3f} | {'exact' if r['p_states'] == r['states'] else r['p_states'] / 2**20} |"
            + (f" {r['reserved'] / 2**20:.3f} |" if reserved else ""))
    lines += ["", "Geometries (base values, each row varies one):", "",
              f"- llama: `{json.dumps(LLAMA)}`", f"- gpt2: `{json.dumps(GPT2)}`",
              f"- llama MoE, wide: `{json.dumps(MOE_WIDE)}`", ""]
    lines += kept_sections(path) + [CONVENTIONS_DOC]
    with open(path, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
