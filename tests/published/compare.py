#!/usr/bin/env python3
"""Holds trainfit to peak-memory figures measured on real GPUs and published by others.

Each tests/published/*.json case carries the figure, its kind (allocated, reserved,
nvidia-smi), and the job in its framework's own words. This script asks
`trainfit estimate --request` for each and compares the matching breakdown.measures
figure. Cases whose configuration is fully known must land within +-10%.

  /usr/bin/python3 tests/published/compare.py --trainfit build/cli/trainfit
  /usr/bin/python3 tests/published/compare.py --trainfit build/cli/trainfit --markdown   # the docs table
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

TOLERANCE = 0.10
UNIT_BYTES = {"GiB": 2**30, "GB": 1e9, "MiB": 2**20, "MB": 1e6, "bytes": 1}
MEASURE = {"max_memory_allocated": "max_memory_allocated_gb", "max_memory_reserved": "max_memory_reserved_gb",
           "nvidia_smi": "nvidia_smi_gb"}


def predicted_gib(trainfit, request):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(request, f)
        path = f.name
    try:
        out = subprocess.run([trainfit, "estimate", "--request", path, "--format", "json"], capture_output=True,
                             text=True, timeout=60)
    finally:
        os.unlink(path)
    if out.returncode not in (0, 1):  # 1: the job does not fit the GPU named, still an estimate
        raise RuntimeError(out.stderr.strip() or out.stdout.strip())
    return json.loads(out.stdout)


def held_to_tolerance(case):
    """A fully known configuration, a one-step figure, and the software versions trainfit
    models (scope "run": a whole-run peak that includes e.g. model loading; other_version:
    a library that has since changed what it keeps)."""
    return case["config_fully_known"] and case.get("scope", "step") == "step" and "other_version" not in case


def why_not_held(case):
    if not case["config_fully_known"]:
        return "no: config partly assumed"
    if case.get("scope", "step") != "step":
        return "no: whole-run peak"
    return "no: older library version"


def load_cases(directory):
    cases = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            cases.append(json.load(f))
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainfit", required=True)
    parser.add_argument("--cases", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--markdown", action="store_true", help="print the docs/fidelity.md table")
    args = parser.parse_args()

    failures, rows = [], []
    for case in load_cases(args.cases):
        published = case["figure"] * UNIT_BYTES[case["figure_unit"]] / 2**30
        try:
            response = predicted_gib(args.trainfit, case["request"])
        except RuntimeError as e:
            failures.append(f"{case['id']}: trainfit refused the request: {e}")
            continue
        measures = response["breakdown"]["measures"]
        predicted = measures[MEASURE[case["kind"]]]
        error = predicted / published - 1.0
        gated = held_to_tolerance(case)
        rows.append((case, published, predicted, error))
        if gated and abs(error) > TOLERANCE:
            failures.append(f"{case['id']}: predicted {predicted:.2f} GiB vs published {published:.2f} GiB "
                            f"({error:+.1%}, tolerance +-{TOLERANCE:.0%})")

    if args.markdown:
        print("| case | framework | kind | published GiB | trainfit GiB | error | held to ±10% |")
        print("|---|---|---|---|---|---|---|")
        for case, published, predicted, error in rows:
            why = "yes" if held_to_tolerance(case) else why_not_held(case)
            print(f"| {case['id']} | {case['framework']} | {case['kind']} | {published:.2f} | {predicted:.2f} | "
                  f"{error:+.1%} | {why} |")
    else:
        for case, published, predicted, error in rows:
            mark = "" if held_to_tolerance(case) else " (" + why_not_held(case)[4:] + ")"
            print(f"{case['id']:55s} {published:8.2f} {predicted:8.2f} {error:+7.1%}{mark}")
    known = [r for r in rows if held_to_tolerance(r[0])]
    if known and not args.markdown:
        worst = max(abs(r[3]) for r in known)
        print(f"{len(rows)} cases, {len(known)} held to +-{TOLERANCE:.0%}; worst of those {worst:.1%}")
    for line in failures:
        print("FAIL " + line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
