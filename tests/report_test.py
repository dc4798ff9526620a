#!/usr/bin/env python3
"""`trainfit report` against audit log fixtures (tests/fixtures/audit/).

The expected numbers are computed here from the raw lines with json and gzip, by rules
written from docs/report.md, not from trainfit's code; then the JSON, CSV, HTML and
Prometheus outputs are checked against them. Usage: report_test.py TRAINFIT FIXTURES_DIR
"""
import collections
import csv
import gzip
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

TRAINFIT, FIXTURES = sys.argv[1], sys.argv[2]
CAP = 1 << 20
ACTIONS = ["accept", "warn", "reject", "resize", "exempt", "unchecked"]
SINCE, UNTIL = "2026-11-30T12:00", "2026-12-03T12:00:00Z"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def utc(text):
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def run(*args, expect=0):
    p = subprocess.run([TRAINFIT, "report", *args], capture_output=True)
    check(p.returncode == expect, f"exit {p.returncode} != {expect} for {args}: {p.stderr.decode()[-400:]}")
    return p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


# ---- the input: plain, rotated, gzip with and without the suffix, an over-long line ----

def make_logs(tmp):
    shutil.copy(os.path.join(FIXTURES, "trainfit-audit.jsonl"), tmp)
    shutil.copy(os.path.join(FIXTURES, "trainfit-audit.jsonl.1"), tmp)
    for source, target in [("rotated-2.jsonl", "trainfit-audit.jsonl.2.gz"), ("rotated-3.jsonl", "trainfit-audit.jsonl.3")]:
        with open(os.path.join(FIXTURES, source), "rb") as f, gzip.open(os.path.join(tmp, target), "wb") as g:
            g.write(f.read())
    long_record = {"time": "2026-12-02T10:00:00Z", "action": "reject", "reason": "too_few_gpus", "user": "long",
                   "job_name": "y" * (CAP + 1000), "gpus_requested": 64}
    # What users control (account, partition, model) written as spreadsheet formulas.
    hostile = [{"time": "2026-12-02T10:30:00Z", "action": "reject", "reason": "too_few_gpus", "user": "+mallory",
                "account": "=HYPERLINK(\"http://x\",\"y\")", "partition": "@SUM(A1)", "gpus_requested": 8,
                "gpu": "h100", "min_gpus_to_fit": 16, "resized_to": None, "time_limit_min": 60, "advice": [],
                "annotation": "model=-2+3 seq_length=4096"},
               {"time": "2026-12-02T10:31:00Z", "action": "accept", "user": "mallory", "account": "\t=1+1",
                "partition": "-1", "gpus_requested": 8, "gpu": "h100", "min_gpus_to_fit": 4, "resized_to": None,
                "time_limit_min": None, "advice": []}]
    # Offload: host RAM per node against the memory request (more, none, enough).
    offload = [{"time": "2026-12-02T11:00:00Z", "action": "accept", "user": "olga", "gpus_requested": 16, "gpu": "h100",
                "host_ram_per_node_gb": 131.3, "mem_per_node_gb": 64.0},
               {"time": "2026-12-02T11:01:00Z", "action": "accept", "user": "olga", "gpus_requested": 8, "gpu": "h100",
                "host_ram_per_node_gb": 65.6, "mem_per_node_gb": None},
               {"time": "2026-12-02T11:02:00Z", "action": "accept", "user": "olga", "gpus_requested": 8, "gpu": "h100",
                "host_ram_per_node_gb": 40.0, "mem_per_node_gb": 40.0}]
    with open(os.path.join(tmp, "trainfit-audit.jsonl"), "a") as f:
        f.write(json.dumps(long_record) + "\n")
        f.writelines(json.dumps(r) + "\n" for r in hostile + offload)
    names = ["trainfit-audit.jsonl", "trainfit-audit.jsonl.1", "trainfit-audit.jsonl.2.gz", "trainfit-audit.jsonl.3"]
    return [os.path.join(tmp, n) for n in names]


def raw_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


# ---- the expected numbers ----

def annotation(text):
    """(model, sorted config tokens) as docs/report.md says the annotation is read."""
    if text == "":
        return "(none)", ()
    tokens = text.split()
    if any("=" not in t or "…" in t for t in tokens):
        return "(unreadable)", None
    fields = dict(t.split("=", 1) for t in tokens)
    model = fields.pop("model", "(custom)")
    return model, tuple(sorted(f"{k}={v}" for k, v in fields.items()))


def parse(line):
    try:
        r = json.loads(line)
        datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%SZ")
        assert r["action"] in ACTIONS and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["time"])
        return r
    except Exception:
        return None


def expected(paths):
    since, until = utc(SINCE + ":00Z"), utc(UNTIL)
    inp = collections.Counter()
    records = []
    for p in paths:
        for line in raw_lines(p):
            inp["lines"] += 1
            if len(line) > CAP:
                inp["skipped_oversize"] += 1
                continue
            if line.strip() == b"":
                continue
            r = parse(line)
            if r is None:
                inp["skipped_malformed"] += 1
                continue
            if not since <= utc(r["time"]) < until:
                inp["outside_window"] += 1
                continue
            records.append(r)
    inp["records"] = len(records)
    return inp, records


def key_of(r, dim):
    if dim == "model":
        return annotation(r.get("annotation", ""))[0]
    if dim == "partition":
        return r.get("partition") or "(default)"
    return r.get(dim) or "(none)"


def counts(rs):
    c = {a: sum(1 for r in rs if r["action"] == a) for a in ACTIONS}
    c["records"] = len(rs)
    c["checked"] = sum(c[a] for a in ["accept", "warn", "reject", "resize"])
    c["oom"] = sum(1 for r in rs if r.get("reason") == "too_few_gpus" and r["action"] in ("reject", "warn"))
    # The range straddles the usable HBM: low <= capacity < high (docs/report.md).
    c["uncertain"] = sum(1 for r in rs if r["action"] in ("accept", "warn", "reject", "resize")
                         and r.get("likely_high_gb") and r.get("capacity_gb") is not None
                         and r["likely_low_gb"] <= r["capacity_gb"] < r["likely_high_gb"])
    return c


def oom_gpus(rs, action):
    rs = [r for r in rs if r["action"] == action and r.get("reason") == "too_few_gpus"]
    timed = [r for r in rs if r.get("time_limit_min") is not None]
    return {"jobs": len(rs), "gpus_requested": sum(r["gpus_requested"] for r in rs),
            "gpus_needed": sum(r["min_gpus_to_fit"] or 0 for r in rs),
            "no_fit": sum(1 for r in rs if r.get("min_gpus_to_fit") is None),
            "with_time_limit": len(timed), "without_time_limit": len(rs) - len(timed),
            # GPU-hours of what the job holds: an --exclusive job its nodes' GPUs (gpus_held).
            "gpu_hours": sum(r.get("gpus_held", r["gpus_requested"]) * r["time_limit_min"] / 60 for r in timed)}


def oom_configs(rs):
    groups = collections.Counter()
    for r in rs:
        if r.get("reason") == "too_few_gpus" and r["action"] in ("reject", "warn"):
            model, config = annotation(r.get("annotation", ""))
            groups[(model, config, r.get("gpu", ""), r["gpus_requested"])] += 1
    return groups


def advice(rs):
    return collections.Counter(" ".join(f"{c['field']}={c['value']}" for c in r["advice"]) for r in rs if r.get("advice"))


def host_ram(rs):
    offload = [r for r in rs if r.get("host_ram_per_node_gb") is not None]
    over = [r for r in offload if r.get("mem_per_node_gb") is not None and r["host_ram_per_node_gb"] > r["mem_per_node_gb"]]
    return {"jobs": len(offload), "over_memory_request": len(over),
            "largest_per_node_gb": max([r["host_ram_per_node_gb"] for r in offload], default=0)}


def period(since, until):
    """The window as docs/report.md says people read it, from the --since/--until given."""
    a, b = (datetime.strptime(t, f).replace(tzinfo=timezone.utc) for t, f in
            [(since, "%Y-%m-%dT%H:%M"), (until, "%Y-%m-%dT%H:%M:%SZ")])
    days = round((b - a).total_seconds() / 86400)
    return f"{a:%Y-%m-%d %H:%M} \u2013 {b:%Y-%m-%d %H:%M} UTC ({days} day{'s' if days != 1 else ''})"


# ---- the checks ----

def check_json(out, inp, rs):
    j = json.loads(out)
    for k in ["lines", "records", "outside_window", "skipped_malformed", "skipped_oversize"]:
        check(j["input"][k] == inp[k], f"input.{k}: {j['input'][k]} != {inp[k]}")
    check({k: j["totals"][k] for k in counts(rs)} == counts(rs), f"totals {j['totals']} != {counts(rs)}")
    for dim in ["user", "account", "partition", "gpu", "model"]:
        want = {}
        for r in rs:
            want.setdefault(key_of(r, dim), []).append(r)
        got = {row["key"]: {k: row[k] for k in counts([])} for row in j["by"][dim]}
        check(got == {k: counts(v) for k, v in want.items()}, f"by {dim}: {got} != { {k: counts(v) for k, v in want.items()} }")
    for name, action in [("rejected_oom", "reject"), ("warned_oom", "warn")]:
        want, got = oom_gpus(rs, action), j["gpus"][name]
        check(abs(got["gpu_hours"] - want["gpu_hours"]) < 1e-6, f"{name}.gpu_hours {got['gpu_hours']} != {want['gpu_hours']}")
        check({k: got[k] for k in want if k != "gpu_hours"} == {k: v for k, v in want.items() if k != "gpu_hours"},
              f"gpus.{name}: {got} != {want}")
    resized = [r for r in rs if r["action"] == "resize"]
    check(j["gpus"]["resized"] == len(resized), "resized count")
    check(j["gpus"]["gpus_added_by_resize"] == sum(r["resized_to"] - r["gpus_requested"] for r in resized), "GPUs added")
    got = collections.Counter()
    for c in j["top_oom_configs"]:
        got[(c["model"], tuple(sorted(c["config"].split())), c["gpu"], c["gpus"])] = c["count"]
    check(got == oom_configs(rs), f"OOM configurations: {got} != {oom_configs(rs)}")
    counts_in_order = [c["count"] for c in j["top_oom_configs"]]
    check(counts_in_order == sorted(counts_in_order, reverse=True), "configurations most frequent first")
    got = collections.Counter({a["advice"]: a["count"] for a in j["top_advice"]})
    check(got == advice(rs), f"advice: {got} != {advice(rs)}")
    check(j["host_ram"] == host_ram(rs), f"host_ram: {j['host_ram']} != {host_ram(rs)}")
    return j


def check_csv(out, rs):
    rows = list(csv.reader(io.StringIO(out, newline="")))
    check(rows[0] == ["section", "dimension", "key", "metric", "value"], f"CSV header {rows[0]}")
    check(all(len(r) == 5 for r in rows), "every CSV row has 5 fields")
    got = {(r[1], r[2], r[3]): r[4] for r in rows if r[0] == "by"}
    formula = [r[2] for r in rows if r[2][:1] in ("=", "+", "-", "@", "\t", "\r")]
    check(not formula, f"CSV cells a spreadsheet would run as formulas: {formula}")
    for r in rs:
        for dim in ["user", "account", "partition"]:
            key = key_of(r, dim)
            cell = "'" + key if key[:1] in ("=", "+", "-", "@", "\t", "\r") else key  # OWASP: inert
            want = counts([x for x in rs if key_of(x, dim) == key])
            for metric, value in want.items():
                check(got.get((dim, cell, metric)) == str(value), f"CSV by {dim} {cell!r} {metric}: {got.get((dim, cell, metric))} != {value}")
    totals = {r[3]: r[4] for r in rows if r[0] == "totals"}
    check(totals == {k: str(v) for k, v in counts(rs).items()}, f"CSV totals {totals}")


class Balance(html.parser.HTMLParser):
    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.tags, self.cells, self.text = [], [], collections.Counter(), [], ""

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        if any(n in ("src", "href") for n, _ in attrs):
            self.errors.append(f"external reference in <{tag}>")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(f"unbalanced </{tag}>")
        if tag in ("td", "th"):
            self.cells.append(self.text.strip())
        self.text = ""

    def handle_data(self, data):
        self.text += data


def check_html(out, rs):
    b = Balance()
    b.feed(out)
    b.close()
    check(not b.errors and not b.stack, f"HTML balance: {b.errors} open {b.stack}")
    check(b.tags["script"] == 0 and b.tags["link"] == 0 and b.tags["style"] == 1, f"self-contained: {dict(b.tags)}")
    check(out.startswith("<!DOCTYPE html>"), "HTML doctype")
    try:
        ET.fromstring(out[out.index("<html"):])
    except ET.ParseError as e:
        check(False, f"HTML is not well-formed XML: {e}")
    user = "o'brien \"q\" <script>x</script>"
    check(user in b.cells, "the user with markup shows as text")
    for u in {r["user"] for r in rs}:
        if u not in b.cells:
            check(False, f"HTML has no row for {u!r}")
            continue
        i = b.cells.index(u)
        c = counts([r for r in rs if r["user"] == u])
        check(b.cells[i + 1] == str(c["records"]) and b.cells[i + 5] == str(c["reject"]), f"HTML row for {u!r}: {b.cells[i:i + 10]}")


METRIC = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.]+(e[+-]?\d+)?|NaN|\+Inf|-Inf)( -?\d+)?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)')


def labels_of(text):
    out, at = {}, 0
    while at < len(text):
        m = LABEL.match(text, at)
        if m is None:
            raise ValueError(f"bad labels {text!r}")
        out[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        at = m.end()
    return out


def check_prometheus(out, rs):
    typed, helped, seen, samples = set(), set(), set(), {}
    for line in out.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            check(kind in ("gauge", "counter") and name not in typed, f"TYPE line {line}")
            typed.add(name)
        else:
            m = METRIC.match(line)
            check(m is not None, f"not exposition format: {line!r}")
            if m is None:
                continue
            name, labels = m.group(1), labels_of(m.group(3) or "")
            check(name in typed and name in helped, f"{name} sample before its HELP/TYPE")
            key = (name, tuple(sorted(labels.items())))
            check(key not in seen, f"duplicate series {key}")
            seen.add(key)
            samples[key] = float(m.group(4))
    for r in rs:
        part = key_of(r, "partition")
        for a in ACTIONS:
            want = sum(1 for x in rs if key_of(x, "partition") == part and x["action"] == a)
            got = samples.get(("trainfit_audit_jobs", (("action", a), ("partition", part))))
            check(got == want, f"trainfit_audit_jobs{{action={a},partition={part}}}: {got} != {want}")
    hours = oom_gpus(rs, "reject")["gpu_hours"]
    got = samples.get(("trainfit_audit_oom_gpu_hours", (("action", "reject"),)))
    check(got is not None and abs(got - hours) < 0.06, f"GPU-hours saved {got} != {hours}")


def check_errors(tmp, paths):
    _, err = run("--audit", paths[0], "--format", "xml", expect=2)
    check(err.count("\n") == 1 and "--format='xml'" in err and "table|csv|json|html|prometheus" in err, f"bad format: {err!r}")
    _, err = run("--audit", paths[0], "--since", "2026-02-30", expect=2)
    check("--since='2026-02-30'" in err and "YYYY-MM-DD" in err, f"bad date: {err!r}")
    _, err = run("--audit", paths[0], "--top", "0", expect=2)
    check("--top='0'" in err, f"bad top: {err!r}")
    _, err = run("--audit", os.path.join(tmp, "missing.jsonl"), expect=2)
    check("missing.jsonl" in err, f"missing file: {err!r}")
    _, err = run("--audit", tmp, expect=2)
    check("directory" in err, f"a directory: {err!r}")
    _, err = run("--audti", paths[0], expect=2)
    check("did you mean '--audit'" in err, f"typo: {err!r}")
    damaged = os.path.join(tmp, "damaged")
    with open(paths[2], "rb") as f:
        data = f.read()
    with open(damaged, "wb") as f:
        f.write(data[: len(data) // 2])
    out, err = run("--audit", damaged, "--format", "json")
    check("damaged" in err and json.loads(out)["input"]["unreadable_files"] == 1, f"damaged gzip: {err!r}")
    out, err = run("--audit", paths[0], "--format", "html")
    check(out.rstrip().endswith("</html>"), "HTML on stdout")


def write_log(tmp, name, records):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    return path


def check_wording(tmp):
    """One of each: singular nouns, a zero that is not an alarm, an empty log, host RAM."""
    one = write_log(tmp, "one.jsonl", [
        {"time": "2026-12-02T10:00:00Z", "action": "reject", "reason": "too_few_gpus", "user": "ann",
         "gpus_requested": 1, "gpu": "h100", "min_gpus_to_fit": 2, "time_limit_min": None},
        {"time": "2026-12-02T19:00:00Z", "action": "accept", "user": "ann", "gpus_requested": 16, "gpu": "h100",
         "host_ram_per_node_gb": 131.3, "mem_per_node_gb": 64.0}])
    table = run("--audit", one)[0]
    head = table.splitlines()[0]
    check(head == "trainfit audit report: 2026-12-02 10:00 \u2013 2026-12-02 19:00 UTC (9 hours, first to last record)",
          f"open period: {head!r}")
    for want in ["read 1 file, 2 lines: 2 records", "rejected: 1 job asking for 1 GPU;",
                 "GPU-hours saved: unknown", "1 job offload (at most 131.3 GiB per node); 1 job asked for less memory"]:
        check(want in table, f"table lacks {want!r}:\n{table}")
    for wrong in ["1 jobs", "1 GPUs", "1 files", "0.0"]:
        check(wrong not in table, f"table says {wrong!r}:\n{table}")
    page = run("--audit", one, "--format", "html")[0]
    saved = re.search(r'<div class="([^"]*)"><b>([^<]*)</b><span>GPU-hours saved</span>', page)
    check(saved is not None and saved.group(1) == "card" and saved.group(2) == "0", f"GPU-hours saved card: {saved and saved.groups()}")
    empty = write_log(tmp, "empty.jsonl", [])
    table = run("--audit", empty)[0]
    check("no records" in table.splitlines()[0] and "no decisions in this period" in table and "by user" not in table,
          f"empty log:\n{table}")
    check(json.loads(run("--audit", empty, "--format", "json")[0])["totals"]["records"] == 0, "empty log JSON")


def check_held_and_confirmed(tmp):
    """GPU-hours of an --exclusive job's whole node; --jobs leaves out admitted submissions no job carries."""
    def rec(i, action, event="submit", **more):
        return {"time": f"2026-12-02T1{i}:00:00Z", "event": event, "decision_id": f"a1-{i}", "action": action,
                "user": "ann", "gpu": "h100", "gpus_requested": 8, **more}
    log = write_log(tmp, "confirm.jsonl", [
        # sbatch --exclusive --gpus=h100:2 on a 64-GPU node: Slurm allocates all 64 (scontrol show job -d).
        rec(1, "reject", reason="too_few_gpus", gpus_requested=2, gpus_held=64, time_limit_min=30, min_gpus_to_fit=4),
        rec(2, "accept"),                  # a job: its AdminComment carries a1-2
        rec(3, "accept"),                  # sbatch --test-only: no job
        rec(4, "warn"),                    # refused by Slurm after trainfit: no job
        rec(5, "reject"),                  # refused: never a job, always counted
        rec(6, "accept", event="modify"),  # an update of an existing job
        rec(7, "exempt")])                 # not checked, not stamped
    jobs = os.path.join(tmp, "jobs.txt")
    # As squeue -a -h -t all -O "State:|,Reason:|,admin_comment:|" printed them on the loopback cluster:
    # a1-4's job is the record Slurm leaves of a submission it refused after trainfit (FAILED, BadConstraints).
    with open(jobs, "w") as f:
        f.write("COMPLETED|None|trainfit accept: 26.6 of 79.6 GiB per GPU on 8 x h100; decision a1-2|\n"
                "FAILED|BadConstraints|trainfit warn: 90.1 of 79.6 GiB per GPU on 8 x h100; decision a1-4|\n"
                "PENDING|JobHeldUser|(null)|\nRUNNING|None|site note; decision later|\n\nnot a job line\n")
    plain = json.loads(run("--audit", log, "--format", "json")[0])
    check(plain["gpus"]["rejected_oom"]["gpu_hours"] == 64 * 30 / 60, f"held GPU-hours {plain['gpus']['rejected_oom']}")
    check(plain["gpus"]["rejected_oom"]["gpus_requested"] == 2, "gpus_requested stays what the job asked for")
    check(plain["totals"]["records"] == 7 and plain["input"]["unconfirmed_submissions"] is None, f"no --jobs: {plain['input']}")
    confirmed = json.loads(run("--audit", log, "--jobs", jobs, "--format", "json")[0])
    got = (confirmed["totals"]["records"], confirmed["totals"]["accept"], confirmed["totals"]["warn"],
           confirmed["input"]["unconfirmed_submissions"], confirmed["input"]["stamped_jobs"],
           confirmed["input"]["jobs_refused_by_slurm"])
    check(got == (5, 2, 0, 2, 1, 1), f"--jobs: (records, accept, warn, unconfirmed, stamped_jobs, refused) {got}")
    table, err = run("--audit", log, "--jobs", jobs)
    check("confirmed against 1 job with a trainfit decision (1 refused by Slurm not counted); 2 admitted submissions "
          "that no job carries left out" in table, f"table confirmation line:\n{table}")
    check(re.search(r"jobs\.txt:6: skipped: not STATE\|REASON\|ADMINCOMMENT", err), f"a malformed jobs line is named: {err!r}")
    check("not confirmed (no --jobs)" in run("--audit", log)[0], "table says the submissions are not confirmed")
    csv_rows = list(csv.reader(io.StringIO(run("--audit", log, "--jobs", jobs, "--format", "csv")[0])))
    check(["input", "", "", "unconfirmed_submissions", "2"] in csv_rows, "CSV unconfirmed_submissions")
    prom = run("--audit", log, "--jobs", jobs, "--format", "prometheus")[0]
    check("\ntrainfit_audit_unconfirmed_submissions 2\n" in prom, "Prometheus unconfirmed_submissions")
    run("--audit", log, "--jobs", os.path.join(tmp, "no-such-file"), expect=2)


def main():
    tmp = tempfile.mkdtemp(prefix="trainfit-report-")
    try:
        paths = make_logs(tmp)
        inp, rs = expected(paths)
        check(inp["skipped_oversize"] == 1 and inp["skipped_malformed"] >= 3 and inp["outside_window"] >= 3, f"fixture {inp}")
        window = ["--since", SINCE, "--until", UNTIL]
        out, err = run("--audit", *paths, *window, "--format", "json", "--top", "1000")
        check_json(out, inp, rs)
        warnings = [l for l in err.splitlines() if "skipped" in l]
        check(len(warnings) == inp["skipped_malformed"] + inp["skipped_oversize"], f"one warning per skipped line: {err}")
        check(all(re.search(r"trainfit-audit\.jsonl(\.\d)?:\d+: skipped", l) for l in warnings), f"file:line in {warnings}")
        check_csv(run("--audit", *paths, *window, "--format", "csv")[0], rs)
        check_html(run("--audit", *paths, *window, "--format", "html")[0], rs)
        check_prometheus(run("--audit", *paths, *window, "--format", "prometheus")[0], rs)
        table = run("--audit", *paths, *window)[0]
        check("most common advice" in table and "recompute=full" in table, "table sections")
        want = "trainfit audit report: " + period(SINCE, UNTIL)
        check(table.splitlines()[0] == want, f"period: {table.splitlines()[0]!r} != {want!r}")
        check(json.loads(out)["window"]["period"] == period(SINCE, UNTIL), "JSON window.period")
        check(f"Period: {period(SINCE, UNTIL)}</p>" in run("--audit", *paths, *window, "--format", "html")[0], "HTML period")
        check_wording(tmp)
        check_held_and_confirmed(tmp)
        check_errors(tmp, paths)
    finally:
        shutil.rmtree(tmp)
    print(f"report: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
