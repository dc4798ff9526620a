#!/usr/bin/python3
"""Black-box tests of `trainfit policy` (docs/charts.md).

Each cell's min_gpus_to_fit must be what `trainfit min-gpus` answers for the same
request, its per-GPU figure what `trainfit estimate --gpus MIN` predicts; with
--partition, the partition's headroom must shrink the capacity as trainfit.conf says, and
the answer must be the first GPU count in the partition's node layout at which
`trainfit estimate` fits under that capacity (a brute-force check).

usage: policy_test.py TRAINFIT
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

TRAINFIT = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="trainfit-policy-")
failures = []
MODELS, GPUS, SEQS, RECOMPUTE = ["llama3-8b", "llama3-70b"], ["h100", "a100-80gb"], [4096, 8192], ["none", "full"]
COMMON = ["--zero", "3"]


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*args):
    return subprocess.run([TRAINFIT, *args], capture_output=True, text=True, timeout=120)


def estimate(*args):
    return json.loads(run("estimate", *args, "--format", "json").stdout)


def matrix(*extra, fmt="json"):
    r = run("policy", "--models", ",".join(MODELS), "--gpu-types", ",".join(GPUS), "--seqs", ",".join(map(str, SEQS)),
            "--recompute", ",".join(RECOMPUTE), *COMMON, *extra, "--format", fmt)
    check(r.returncode == 0, f"policy {' '.join(extra)} --format {fmt} (rc {r.returncode}: {r.stderr.strip()})")
    return r.stdout


def test_against_min_gpus():
    rows = json.loads(matrix())["rows"]
    check(len(rows) == 16, f"2 models x 2 GPUs x 2 seqs x 2 recompute = 16 rows (got {len(rows)})")
    fitting = 0
    for row, (m, g, s, rc) in zip(rows, [(m, g, s, rc) for m in MODELS for g in GPUS for s in SEQS for rc in RECOMPUTE]):
        cell = ["--model", m, "--gpu", g, "--seq", str(s), "--recompute", rc, *COMMON]
        r = run("min-gpus", *cell)
        want = int(r.stdout) if r.returncode == 0 else None
        check(row["min_gpus_to_fit"] == want and row["seq_length"] == s and row["recompute"] == rc,
              f"{m} {g} seq {s} {rc}: min_gpus_to_fit {row['min_gpus_to_fit']} == `trainfit min-gpus` {want}")
        if want:
            fitting += 1
            est = estimate(*cell, "--gpus", str(want))
            check(abs(row["per_gpu_gb"] - est["per_gpu_total_gb"]) < 1e-3 and est["fits"],
                  f"{m} {g} seq {s} {rc}: per_gpu_gb {row['per_gpu_gb']} == estimate at {want} GPUs {est['per_gpu_total_gb']}")
    check(fitting >= 8, f"the matrix has fitting and non-fitting cells ({fitting} of 16 fit)")


def test_partition():
    conf = os.path.join(TMP, "trainfit.conf")
    with open(conf, "w") as f:
        f.write("# written by tests/policy_test.py\nheadroom = 0.05\ngpus_per_node = 8\n"
                "partition.tight.headroom = 0.2\npartition.tight.gpus_per_node = 4\ngpu_alias.hopper = h100\n")
    full = estimate("--model", "llama3-70b", "--gpu", "h100", "--gpus", "8")["gpu_capacity_gb"]
    for partition, headroom, per_node in [("tight", 0.2, 4), ("", 0.05, 8)]:
        extra = ["--conf", conf] + (["--partition", partition] if partition else [])
        r = run("policy", "--models", "llama3-70b", "--gpu-types", "hopper", "--seqs", "4096,8192", "--recompute", "full",
                *COMMON, *extra, "--format", "json")
        check(r.returncode == 0, f"policy {' '.join(extra)} (rc {r.returncode}: {r.stderr.strip()})")
        doc = json.loads(r.stdout)
        label = partition or "(default)"
        check(doc["headroom"] == headroom, f"partition {label}: headroom {headroom} from trainfit.conf")
        for row in doc["rows"]:
            cap = row["capacity_gb"]
            check(abs(cap - full * (1 - headroom)) < 1e-3,
                  f"partition {label}: capacity {cap} == {full} x (1 - {headroom}) (gpu_alias hopper -> {row['gpu']})")
            n = row["min_gpus_to_fit"]
            check(n is not None and row.get("gpus_per_node") == per_node and row["nodes"] == -(-n // per_node),
                  f"partition {label} seq {row['seq_length']}: {n} GPUs on {row.get('nodes')} nodes of {per_node}")
            if n is None:
                continue
            cell = ["--model", "llama3-70b", "--gpu", "h100", "--seq", str(row["seq_length"]), "--recompute", "full", *COMMON,
                    "--gpus-per-node", str(per_node)]
            # The partition's layout: any count up to one node, whole nodes beyond; the figure its
            # resize_to names (high, the default: the likely range's high end), as job_submit finds it.
            counts = list(range(1, per_node + 1)) + list(range(2 * per_node, n + per_node, per_node))
            first = next((c for c in counts if estimate(*cell, "--gpus", str(c))["likely_high_gb"] <= cap), None)
            check(first == n, f"partition {label} seq {row['seq_length']}: the first count fitting under {cap} GiB is {first}, "
                              f"policy says {n}")
            # The uncertain band (refuse_when = certain, the default): from the first count whose range's
            # low end fits to the count before the high end's; job_submit warns there.
            runs = next((c for c in counts if estimate(*cell, "--gpus", str(c))["likely_low_gb"] <= cap), None)
            want = {"from": runs, "to": n - 1} if runs is not None and runs < n else None
            check(row.get("uncertain_gpus") == want,
                  f"partition {label} seq {row['seq_length']}: uncertain_gpus {row.get('uncertain_gpus')}, brute force {want}")
    plain = json.loads(run("policy", "--models", "llama3-70b", "--gpu-types", "h100", "--seqs", "8192", "--recompute", "full",
                           *COMMON, "--format", "json").stdout)["rows"][0]
    tight = json.loads(run("policy", "--models", "llama3-70b", "--gpu-types", "hopper", "--seqs", "8192", "--recompute", "full",
                           *COMMON, "--conf", conf, "--partition", "tight", "--format", "json").stdout)["rows"][0]
    check(tight["min_gpus_to_fit"] > plain["min_gpus_to_fit"],
          f"20% headroom needs more GPUs: {tight['min_gpus_to_fit']} > {plain['min_gpus_to_fit']}")
    r = run("policy", "--models", "llama3-70b", "--partition", "tight", "--conf", os.path.join(TMP, "missing.conf"))
    check(r.returncode == 2 and "missing.conf" in r.stderr, "a missing trainfit.conf is exit 2 naming it")


def test_formats():
    table = matrix(fmt="table")
    check(len(table.splitlines()) >= 18 and "min_gpus_to_fit" in table, "table: a header and 16 rows")
    rows = list(csv.DictReader(io.StringIO(matrix(fmt="csv"))))
    check(len(rows) == 16 and rows[0]["model"] == "llama3-8b" and "min_gpus_to_fit" in rows[0], "csv: 16 rows with a header")
    html = matrix(fmt="html")
    check(html.startswith("<!DOCTYPE html>") and html.count("<tr") == 17 and "<style>" in html, "html: one table, inline CSS")
    check(not re.search(r"<link|<script|src=|href=|@import|url\((?!#)", html), "html: self-contained (no links, scripts, fonts)")
    svg = re.search(r"<svg.*?</svg>", html, re.S)
    check(svg is not None, "html: embeds the min_gpus chart")
    if svg:
        import xml.etree.ElementTree as ET
        try:
            ET.fromstring(svg.group(0))
            check(True, "html: the embedded SVG is well-formed")
        except ET.ParseError as e:
            check(False, f"html: the embedded SVG is well-formed ({e})")
    r = run("policy", "--models", "llama3-8b", "--gpu-types", "h1000")
    check(r.returncode == 2 and "h100" in r.stderr, f"an unknown GPU type is exit 2 with a suggestion ({r.stderr.strip()})")
    r = run("policy", "--models", "llama3-8b", "--format", "xml")
    check(r.returncode == 2 and "format='xml'" in r.stderr, "--format xml is exit 2")
    r = run("policy", "--models", "llama3-8b", "--gpus-types", "h100", "--seqs", "4096", *COMMON, "--format", "json")
    check(r.returncode == 0 and json.loads(r.stdout)["rows"][0]["gpu"] == "H100", "--gpus-types is accepted too")


test_against_min_gpus()
test_partition()
test_formats()
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
