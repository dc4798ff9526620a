#!/usr/bin/env python3
"""Derives the likely range trainfit states beside every per-GPU figure, from the published suite.

For each case the ratio measured / predicted (the figure of the case's kind) is taken. Cases are
grouped by class: full fine-tuning or adapters (LoRA, QLoRA, ...), sharded (ZeRO/FSDP) or not;
a class with fewer than MIN_CASES cases falls back to its adapter group, then to all cases.
A class's range is [predicted x low, predicted x high], low and high the ratios' TAIL and
1 - TAIL quantiles. TAIL is the largest of TAILS whose ranges, judged leave-one-source-out (each
source's cases against ranges derived without that source, compare.source_of), hold at least
COVERAGE of the cases; where even the extremes (TAIL 0) hold fewer, both ends move out by
WIDEN_STEP until they do. The file records the coverage. The shipped factors use every case.

  /usr/bin/python3 tests/published/ranges.py --trainfit build/cli/trainfit --write conf/likely_range.json
  /usr/bin/python3 tests/published/ranges.py --trainfit build/cli/trainfit --check conf/likely_range.json
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

MIN_CASES = 8
MIN_SOURCES = 3  # a class of fewer sources says more about those sources than about the class
COVERAGE = 0.90
TAILS = [0.10, 0.075, 0.05, 0.025, 0.0]
WIDEN_STEP = 0.01  # beyond the extremes: both ends moved out by 1% of the figure at a time


def class_of(response):
    config = response["config"]
    adapter = "full" if config.get("adapter", "none") == "none" else "adapter"
    # ZeRO/FSDP over more than one rank (shard_group is the degree it would shard over)
    sharded = response["zero_stage"] > 0 and response["breakdown"]["model_states"]["shard_group"] > 1
    return adapter, sharded


def quantile(values, q):
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    pos = q * (len(v) - 1)
    i = int(pos)
    return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (pos - i)


def factors(points, tail, widen=0.0):
    """Class key -> (low, high, cases, sources); keys (adapter, sharded), (adapter, None), (None, None)."""
    out = {}
    groups = {}
    for p in points:
        for key in ((p["adapter"], p["sharded"]), (p["adapter"], None), (None, None)):
            groups.setdefault(key, []).append(p)
    for key, members in groups.items():
        sources = len({m["source"] for m in members})
        if (len(members) < MIN_CASES or sources < MIN_SOURCES) and key != (None, None):
            continue
        ratios = [m["ratio"] for m in members]
        out[key] = (quantile(ratios, tail) - widen, quantile(ratios, 1 - tail) + widen, len(members), sources)
    return out


def range_for(table, adapter, sharded):
    for key in ((adapter, sharded), (adapter, None), (None, None)):
        if key in table:
            return table[key]
    raise KeyError("no pooled class")


def loso_coverage(points, tail, widen=0.0):
    held = 0
    for source in {p["source"] for p in points}:
        table = factors([p for p in points if p["source"] != source], tail, widen)
        for p in points:
            if p["source"] == source:
                low, high = range_for(table, p["adapter"], p["sharded"])[:2]
                held += low <= p["ratio"] <= high
    return held / len(points)


def collect(trainfit, directory):
    points = []
    for case in compare.load_cases(directory):
        response = compare.predicted_gib(trainfit, case["request"])
        published, predicted = compare.published_gib(case), compare.predicted_figure_gib(response, case)
        adapter, sharded = class_of(response)
        points.append({"id": case["id"], "source": compare.source_of(case), "ratio": published / predicted,
                       "adapter": adapter, "sharded": sharded})
    return points


def derive(points):
    widen = 0.0
    for tail in TAILS:
        coverage = loso_coverage(points, tail)
        if coverage >= COVERAGE:
            break
    while coverage < COVERAGE and widen < 0.5:
        widen = round(widen + WIDEN_STEP, 4)
        coverage = loso_coverage(points, tail, widen)
    table = factors(points, tail, widen)
    classes = []
    for (adapter, sharded), (low, high, cases, sources) in sorted(table.items(), key=lambda kv: (kv[0][0] is None, kv[0][1] is None, str(kv[0]))):
        classes.append({"adapter": adapter or "any", "sharded": "any" if sharded is None else sharded,
                        "low": round(low, 4), "high": round(high, 4), "cases": cases, "sources": sources})
    return {
        "about": "measured / predicted per-GPU peak on the published suite (tests/published): the range "
                 "stated beside every figure is [predicted x low, predicted x high] for the job's class",
        "derived_by": "tests/published/ranges.py",
        "tail": tail,
        "widen": widen,
        "min_cases": MIN_CASES,
        "leave_one_source_out_coverage": round(coverage, 4),
        "cases": len(points),
        "sources": len({p["source"] for p in points}),
        "classes": classes,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainfit", required=True)
    parser.add_argument("--cases", default=os.path.dirname(os.path.abspath(__file__)))
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", help="write the range file")
    group.add_argument("--check", help="fail unless the range file is what the suite derives now")
    args = parser.parse_args()
    derived = derive(collect(args.trainfit, args.cases))
    text = json.dumps(derived, indent=1) + "\n"
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)
        print(f"{args.write}: {len(derived['classes'])} classes, tail {derived['tail']}, "
              f"leave-one-source-out coverage {derived['leave_one_source_out_coverage']:.0%}")
        return 0
    with open(args.check) as f:
        shipped = json.load(f)
    if shipped != derived:
        print(f"{args.check} is not what the published suite derives now; run ranges.py --write {args.check}",
              file=sys.stderr)
        return 1
    if derived["leave_one_source_out_coverage"] < COVERAGE:
        print(f"the range holds {derived['leave_one_source_out_coverage']:.0%} of the cases leave-one-source-out; "
              f"at least {COVERAGE:.0%} is required", file=sys.stderr)
        return 1
    print(f"{args.check}: as derived; leave-one-source-out coverage {derived['leave_one_source_out_coverage']:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
