#!/usr/bin/env python3
"""Holds trainfit to peak-memory figures measured on real GPUs and published by others.

Each tests/published/*.json case carries the figure, its kind (allocated, reserved,
nvidia-smi), the job in its framework's own words and the strength of the evidence. This
script asks `trainfit estimate --request` for each and compares the matching
breakdown.measures figure. Every case is judged, with a tolerance set by its strength:
strong +-5%, medium +-10%, weak +-20%. A case outside it fails unless its file says why
(`known_miss`); a known miss that comes within its tolerance fails too (the file must say so).

  /usr/bin/python3 tests/published/compare.py --trainfit build/cli/trainfit
  /usr/bin/python3 tests/published/compare.py --trainfit build/cli/trainfit --markdown   # the docs table

Besides the cases it reports each source's own median |error| and hit rate, and headline figures
that count a source once however many rows it has (each case weighted 1/rows of its source):
39 rows of one benchmark CSV must not outvote a source with one.

With --terms FILE (tests/published/terms/tuned.json) it also runs every case with each tuned term switched
off and reports, term by term, what the term does to the sources that motivated it and, apart, to
every other source: a term earns its place when it helps sources it was not written for.

  /usr/bin/python3 tests/published/compare.py --trainfit build/cli/trainfit --terms tests/published/terms/tuned.json
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

TOLERANCE = {"strong": 0.05, "medium": 0.10, "weak": 0.20}
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


def published_gib(case):
    return case["figure"] * UNIT_BYTES[case["figure_unit"]] / 2**30


def predicted_figure_gib(response, case):
    """The response's figure of the case's kind (allocated, reserved or nvidia-smi)."""
    return response["breakdown"]["measures"][MEASURE[case["kind"]]]


def tolerance(case):
    strength = case.get("strength")
    if strength not in TOLERANCE:
        raise ValueError(f"{case['id']}: strength {strength!r}; accepted: strong|medium|weak")
    return TOLERANCE[strength]


def source_of(case):
    """Who published the figure: a case's `source_group`, else its repository and the folder of
    the file (up to three levels: one benchmark's result files, one test suite's golden values)."""
    if case.get("source_group"):
        return case["source_group"]
    url = case["source"].get("url", "")
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:blob|tree)/[^/]+/([^#?]*)", url)
    if not m:
        return re.sub(r"[#?].*$", "", url)
    folder = "/".join(m.group(2).split("/")[:-1][:3])
    return m.group(1) + (":" + folder if folder else "")


def weighted_median(values, weights):
    pairs = sorted(zip(values, weights))
    half, seen = sum(weights) / 2, 0.0
    for value, weight in pairs:
        seen += weight
        if seen >= half:
            return value
    return pairs[-1][0]


def source_summary(rows):
    """(per-source lines, headline line): |error| median and share within +-10%, a source once."""
    by_source = collections.defaultdict(list)
    for r in rows:
        by_source[source_of(r[0])].append(abs(r[3]))
    lines = []
    for source, errors in sorted(by_source.items(), key=lambda kv: -len(kv[1])):
        inside = sum(1 for e in errors if e <= 0.10)
        lines.append(f"  {source:70s} {len(errors):3d} cases  median |error| {median(errors):5.1%}  "
                     f"within +-10% {inside / len(errors):4.0%}")
    weights = [1.0 / len(by_source[source_of(r[0])]) for r in rows]
    errors = [abs(r[3]) for r in rows]
    inside = sum(w for w, e in zip(weights, errors) if e <= 0.10) / sum(weights)
    headline = (f"counting each of {len(by_source)} sources once: median |error| {weighted_median(errors, weights):.1%}, "
                f"within +-10% {inside:.0%}")
    return lines, headline


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def term_changes(trainfit, rows, off):
    """(source, error with the term, error without it) for every case whose figure the term moves;
    a request that refuses the override is one the term does not apply to."""
    def without(row):
        case, published = row[0], row[1]
        request = dict(case["request"], **off)
        try:
            response = predicted_gib(trainfit, request)
        except RuntimeError:
            return None
        return predicted_figure_gib(response, case) / published - 1.0

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        errors_off = list(pool.map(without, rows))
    if all(e is None for e in errors_off):
        raise RuntimeError(f"every case refused the override {off}: not a field that switches a term off")
    return [(source_of(row[0]), row[3], e) for row, e in zip(rows, errors_off)
            if e is not None and abs(e - row[3]) >= 5e-4]


def describe(changes):
    """'n cases of k sources: median |error| a -> b, within +-10% c -> d' (term off -> on)."""
    if not changes:
        return "none"
    on = [abs(c[1]) for c in changes]
    off = [abs(c[2]) for c in changes]
    sources = len({c[0] for c in changes})
    inside = lambda errors: sum(1 for e in errors if e <= 0.10) / len(errors)
    return (f"{len(changes)} cases of {sources} sources: median |error| {median(off):.1%} -> {median(on):.1%}, "
            f"within +-10% {inside(off):.0%} -> {inside(on):.0%}")


def verdict(changes):
    if not changes:
        return "touches no other source"
    gained = sum(1 for c in changes if abs(c[1]) < abs(c[2]))
    return f"helps {gained} of {len(changes)} other cases" if gained * 2 >= len(changes) else \
        f"hurts {len(changes) - gained} of {len(changes)} other cases"


def term_report(trainfit, rows, path, markdown):
    """Each tuned term, off -> on, on its motivating sources and on the others (leave-one-source-out)."""
    with open(path) as f:
        terms = json.load(f)["terms"]
    problems, lines = [], []
    if markdown:
        lines += ["| term | motivated by | its own sources (off → on) | other sources (off → on) | verdict |",
                  "|---|---|---|---|---|"]
    for term in terms:
        motivated = set(term["motivated_by"])
        try:
            changes = term_changes(trainfit, rows, term["off"])
        except RuntimeError as e:
            problems.append(f"term {term['term']}: {e}")
            continue
        own = [c for c in changes if c[0] in motivated]
        others = [c for c in changes if c[0] not in motivated]
        if motivated and not own:
            problems.append(f"term {term['term']}: switching it off ({term['off']}) moves no case of the sources "
                            f"said to motivate it")
        origin = ", ".join(sorted(motivated)) or "framework source + CPU harness"
        if markdown:
            cell = lambda changes: describe(changes).replace("|", "\\|")
            lines.append(f"| `{term['term']}` | {origin} | {cell(own)} | {cell(others)} | {verdict(others)} |")
        else:
            lines += [f"  {term['term']} (motivated by {origin})",
                      f"    its own sources:   {describe(own)}",
                      f"    other sources:     {describe(others)}  [{verdict(others)}]"]
    return lines, problems


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
    parser.add_argument("--terms", help="tests/published/terms/tuned.json: report each tuned term's effect, off -> on")
    args = parser.parse_args()

    failures, rows = [], []
    for case in load_cases(args.cases):
        published = published_gib(case)
        try:
            response = predicted_gib(args.trainfit, case["request"])
        except RuntimeError as e:
            failures.append(f"{case['id']}: trainfit refused the request: {e}")
            continue
        predicted = predicted_figure_gib(response, case)
        error = predicted / published - 1.0
        within = abs(error) <= tolerance(case)
        rows.append((case, published, predicted, error, within))
        if not within and "known_miss" not in case:
            failures.append(f"{case['id']}: predicted {predicted:.2f} GiB vs published {published:.2f} GiB "
                            f"({error:+.1%}, {case['strength']}: +-{tolerance(case):.0%})")
        if within and "known_miss" in case:
            failures.append(f"{case['id']}: {error:+.1%} is within +-{tolerance(case):.0%} now; drop its known_miss")

    if args.markdown:
        print("| case | framework | kind | strength | published GiB | trainfit GiB | error | judged |")
        print("|---|---|---|---|---|---|---|---|")
        for case, published, predicted, error, within in rows:
            verdict = f"within ±{tolerance(case):.0%}" if within else "miss: " + case.get("known_miss", "")
            print(f"| {case['id']} | {case['framework']} | {case['kind']} | {case['strength']} | {published:.2f} | "
                  f"{predicted:.2f} | {error:+.1%} | {verdict} |")
    else:
        for case, published, predicted, error, within in rows:
            mark = "" if within else "  (known miss)" if "known_miss" in case else "  FAIL"
            print(f"{case['id']:55s} {case['strength']:6s} {published:8.2f} {predicted:8.2f} {error:+7.1%}{mark}")
    if rows:
        inside = sum(1 for r in rows if abs(r[3]) <= 0.10)
        summary = (f"{len(rows)} cases: {sum(r[4] for r in rows)} within their strength's tolerance; "
                   f"{inside} within +-10% ({inside / len(rows):.0%}); median |error| {median([abs(r[3]) for r in rows]):.1%}")
        print(summary if not args.markdown else "\n" + summary + ".")
        per_source, headline = source_summary(rows)
        if args.markdown:
            print("\n" + headline + ".")
        else:
            print("by source:")
            print("\n".join(per_source))
            print(headline)
    if args.terms and rows:
        lines, problems = term_report(args.trainfit, rows, args.terms, args.markdown)
        print("\nwhat each tuned term does, off -> on (errors of the cases it moves):" if not args.markdown else "")
        print("\n".join(lines))
        failures += problems
    for line in failures:
        print("FAIL " + line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
