#!/usr/bin/python3
"""Black-box tests of `trainfit plot` and GET/POST /v1/plot.svg (docs/charts.md).

Every plotted coordinate is turned back into data through the mapping the SVG states on
its plot area (data-left/right/top/bottom, data-x-*/data-y-*) and compared with the
numbers of `trainfit estimate --format json` and `trainfit sweep --format json` for the
same request: the renderer's own output is never the expectation.

usage: plot_test.py TRAINFIT
"""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
TRAINFIT = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="trainfit-plot-")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*args, env=None):
    return subprocess.run([TRAINFIT, *args], capture_output=True, text=True, env=env, timeout=120)


def close(got, expected, scale_tol=0.0):
    """Within 0.5% of the expected value, plus the coordinate's rounding (0.01 px) in data units."""
    return abs(got - expected) <= 0.005 * abs(expected) + scale_tol


class Area:
    """The plot area's stated mapping, inverted."""

    def __init__(self, g):
        a = g.attrib
        self.left, self.right = float(a["data-left"]), float(a["data-right"])
        self.top, self.bottom = float(a["data-top"]), float(a["data-bottom"])
        self.xmin, self.xmax, self.xlog = float(a["data-x-min"]), float(a["data-x-max"]), a["data-x-scale"] == "log"
        if "data-y-min" in a:
            self.ymin, self.ymax = float(a["data-y-min"]), float(a["data-y-max"])
            assert a["data-y-scale"] == "linear"
            self.y_tol = 0.02 * (self.ymax - self.ymin) / (self.bottom - self.top)

    def x(self, px):
        f = (px - self.left) / (self.right - self.left)
        if self.xlog:
            return 10 ** (math.log10(self.xmin) + f * (math.log10(self.xmax) - math.log10(self.xmin)))
        return self.xmin + f * (self.xmax - self.xmin)

    def width(self, px):  # a linear width in data units
        return px / (self.right - self.left) * (self.xmax - self.xmin)

    def y(self, py):
        return self.ymin + (self.bottom - py) / (self.bottom - self.top) * (self.ymax - self.ymin)


def panels(svg_path):
    root = ET.parse(svg_path).getroot()
    return root, {p.get("data-chart"): p for p in root.iter(NS + "g") if p.get("class") == "panel"}


def area_of(panel):
    return Area(next(g for g in panel.iter(NS + "g") if g.get("class") == "plot-area"))


def series(panel, role):
    for el in panel.iter():
        if el.get("data-series") == role:
            return el
    return None


def polyline_points(el):
    return [tuple(map(float, p.split(","))) for p in el.get("points").split()]


def check_line(panel, area, role, xs, ys, what):
    el = series(panel, role)
    check(el is not None and el.tag == NS + "polyline", f"{what}: a '{role}' line is drawn")
    if el is None:
        return
    pts = polyline_points(el)
    check(len(pts) == len(xs), f"{what}: '{role}' has {len(xs)} points (got {len(pts)})")
    bad = [(x, y, area.x(px), area.y(py)) for (px, py), x, y in zip(pts, xs, ys)
           if not (close(area.x(px), x) and close(area.y(py), y, area.y_tol))]
    check(not bad, f"{what}: '{role}' points invert to the profile within 0.5%" + (f"; first miss {bad[0]}" if bad else ""))


CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conf", "likely_range.json")


def class_factors(adapter, sharded):
    """(low, high) of the shipped file's class (conf/likely_range.json), read here."""
    for k in json.load(open(CONF))["classes"]:
        if k["adapter"] == adapter and k["sharded"] == sharded:
            return k["low"], k["high"]
    raise SystemExit(f"FAIL no class adapter={adapter} sharded={sharded} in {CONF}")


def check_point_ranges(points, key, sharded_at, what):
    """Each point's range is its figure times its own class's factors (full fine-tuning here)."""
    bad = []
    for q in points:
        low, high = class_factors("full", sharded_at(q[key]))
        for got, factor in ((q["likely_low_gb"], low), (q["likely_high_gb"], high)):
            if abs(got - q["per_gpu_gb"] * factor) > 2e-4 + 1e-6 * got:  # two roundings to 4 decimals
                bad.append((q[key], got, q["per_gpu_gb"], factor))
    check(not bad, f"{what}: every point's range is its figure x its class's factors" +
          (f"; first miss {bad[0]}" if bad else ""))


def check_band(panel, area, xs, lows, highs, what):
    """The likely range's polygon: the upper edge left to right at the highs, then the lower edge
    back at the lows, drawn before (under) the total, translucent, with a legend row."""
    el = series(panel, "likely-range")
    check(el is not None and el.tag == NS + "polygon", f"{what}: the likely range is a polygon")
    if el is None:
        return
    pts = polyline_points(el)
    n = len(xs)
    check(len(pts) == 2 * n, f"{what}: the band has 2 x {n} points (got {len(pts)})")
    upper, lower = pts[:n], pts[n:][::-1]
    bad = [(x, want, area.x(px), area.y(py)) for edge, wants in ((upper, highs), (lower, lows))
           for (px, py), x, want in zip(edge, xs, wants)
           if not (close(area.x(px), x) and close(area.y(py), want, area.y_tol))]
    check(not bad, f"{what}: the band's edges invert to likely_high_gb / likely_low_gb within 0.5%" +
          (f"; first miss {bad[0]}" if bad else ""))
    check(0 < float(el.get("fill-opacity", "1")) < 1, f"{what}: the band is translucent")
    order = [e.get("data-series") for e in panel.iter() if e.get("data-series") in ("likely-range", "total")]
    check(order == ["likely-range", "total"], f"{what}: the band is drawn under the total ({order})")
    legend = [t.text for g in panel.iter(NS + "g") if g.get("class") == "legend" for t in g.iter(NS + "text")]
    check(legend.count("likely range") == 1, f"{what}: the legend has one 'likely range' row")


def check_marker(panel, area, x, y, what):
    m = [c for c in panel.iter(NS + "circle") if c.get("data-marker") == "request"]
    check(len(m) == 1, f"{what}: one marker for the request")
    if m:
        gx, gy = area.x(float(m[0].get("cx"))), area.y(float(m[0].get("cy")))
        check(close(gx, x) and close(gy, y, area.y_tol), f"{what}: marker at ({x}, {y:.3f} GiB), got ({gx:.3f}, {gy:.3f})")


def check_hline(panel, area, role, y, what):
    el = series(panel, role)
    ok = el is not None and el.get("y1") == el.get("y2") and close(area.y(float(el.get("y1"))), y, area.y_tol)
    check(ok, f"{what}: '{role}' line at {y} GiB" + (f" (got {area.y(float(el.get('y1'))):.3f})" if el is not None else ""))
    if el is not None:
        check(el.get("stroke-dasharray") is not None, f"{what}: '{role}' line is dashed")


def check_document(path, panel_count, what):
    root, _ = panels(path)
    check(root.get("viewBox") == f"0 0 720 {420 * panel_count}", f"{what}: viewBox 720 x {420 * panel_count}")
    text = open(path, encoding="utf-8").read()
    check(not re.search(r"href|@import|url\((?!#)|<image|<script|@font-face", text),
          f"{what}: no external assets, links, scripts or fonts")
    sizes = [float(s) for s in re.findall(r'font-size="([0-9.]+)"', text)]
    check(sizes and min(sizes) >= 11, f"{what}: every font size >= 11px (smallest {min(sizes) if sizes else None})")
    labels = [t.text or "" for t in root.iter(NS + "text") if t.get("class") == "axis-label"]
    return root, text, labels


def estimate_json(args):
    r = run("estimate", *args, "--format", "json")
    check(r.returncode in (0, 1), f"estimate {' '.join(args)} answers")
    return json.loads(r.stdout)


def check_case(args, name):
    est = estimate_json(args)
    sweep = json.loads(run("sweep", *args, "--format", "json").stdout)
    check(sweep["profile"] == est["profile"], f"{name}: sweep and estimate give the same profile")
    out = os.path.join(TMP, name + ".svg")
    r = run("plot", *args, "--out", out)
    check(r.returncode == 0 and os.path.exists(out), f"{name}: plot writes {out} (rc {r.returncode}: {r.stderr.strip()})")
    root, text, labels = check_document(out, 3, name)
    _, by_chart = panels(out)
    check(sorted(by_chart) == ["budget", "gpus", "seq"], f"{name}: three panels gpus, seq, budget")
    check(any("GiB" in l for l in labels) and any("GPUs" in l for l in labels) and any("tokens" in l for l in labels),
          f"{name}: axes labelled in GiB, GPUs and tokens ({labels})")
    prof, b = est["profile"], est["breakdown"]
    total, capacity = est["per_gpu_total_gb"], est["gpu_capacity_gb"]

    # (1) memory vs GPU count, log x
    p = by_chart["gpus"]
    a = area_of(p)
    check(a.xlog, f"{name}: the GPU axis is log")
    g = prof["mem_vs_gpus"]
    xs = [q["num_gpus"] for q in g]
    check_line(p, a, "total", xs, [q["per_gpu_gb"] for q in g], name + " gpus")
    check_line(p, a, "model-states", xs, [q["model_state_gb"] for q in g], name + " gpus")
    check_line(p, a, "activations", xs, [q["activation_gb"] for q in g], name + " gpus")
    check(series(p, "activations").get("stroke-dasharray") is not None, f"{name}: the activation floor is dashed")
    check_band(p, a, xs, [q["likely_low_gb"] for q in g], [q["likely_high_gb"] for q in g], name + " gpus")
    # ZeRO-3 over data parallelism alone: one GPU has nothing to shard over.
    check_point_ranges(g, "num_gpus", lambda n: n > 1, name + " gpus")
    at_request = [q for q in g if q["num_gpus"] == prof["num_gpus"]]
    if at_request:
        check(at_request[0]["likely_low_gb"] == est["likely_low_gb"] and at_request[0]["likely_high_gb"] == est["likely_high_gb"],
              f"{name} gpus: the point at the request's count has the answer's range")
    check_hline(p, a, "capacity", capacity, name + " gpus")
    check_marker(p, a, prof["num_gpus"], total, name + " gpus")
    gap = capacity - total
    want = f"{gap:.1f} GiB headroom" if gap >= 0 else f"over by {-gap:.1f} GiB"
    check(want in text, f"{name}: the marker states '{want}'")
    if est["min_gpus_to_fit"] and est["min_gpus_to_fit"] != prof["num_gpus"]:
        rule = series(p, "min-gpus")
        check(rule is not None and close(a.x(float(rule.get("x1"))), est["min_gpus_to_fit"]),
              f"{name}: min_gpus_to_fit {est['min_gpus_to_fit']} marked")

    # (2) memory vs sequence length
    p = by_chart["seq"]
    a = area_of(p)
    s = prof["mem_vs_seq"]
    xs = [q["seq_length"] for q in s]
    check_line(p, a, "total", xs, [q["per_gpu_gb"] for q in s], name + " seq")
    check_line(p, a, "activations", xs, [q["activation_gb"] for q in s], name + " seq")
    check_band(p, a, xs, [q["likely_low_gb"] for q in s], [q["likely_high_gb"] for q in s], name + " seq")
    check_point_ranges(s, "seq_length", lambda _: prof["num_gpus"] > 1, name + " seq")
    check_hline(p, a, "capacity", capacity, name + " seq")
    check_marker(p, a, prof["seq_length"], total, name + " seq")

    # (3) the budget: segments add up to the total, free (or over) to the capacity
    p = by_chart["budget"]
    a = area_of(p)
    rects = [r for r in p.iter(NS + "rect") if r.get("class") == "segment"]
    width = {r.get("data-series"): a.width(float(r.get("width"))) for r in rects}
    tol = a.width(0.02)
    states, acts = b["model_states"]["total_gb"], b["activations"]["total_gb"]
    overheads = sum(b["overheads"].values())
    transients = total - states - acts - overheads
    if transients >= 0:  # the peak holds all model states and saved activations
        for role, want_gb in [("model-states", states), ("activations", acts), ("transients", transients),
                              ("overheads", overheads)]:
            check(role in width and close(width[role], want_gb, tol),
                  f"{name} budget: {role} {want_gb:.3f} GiB (drawn {width.get(role, float('nan')):.3f})")
    drawn = sum(v for k, v in width.items() if k != "free")
    check(close(drawn, total, 4 * tol), f"{name} budget: the segments add up to per_gpu_total {total} (drawn {drawn:.3f})")
    if gap > 0:
        check(close(drawn + width.get("free", 0), capacity, 5 * tol), f"{name} budget: used + free = capacity {capacity}")
    else:
        check("free" not in width, f"{name} budget: nothing free when over")
    xs_px = [float(r.get("x")) for r in rects]
    ends = [float(r.get("x")) + float(r.get("width")) for r in rects]
    check(all(abs(xs_px[i + 1] - ends[i]) < 0.02 for i in range(len(rects) - 1)) and abs(xs_px[0] - a.left) < 0.02,
          f"{name} budget: segments stacked from 0")
    cap = series(p, "capacity")
    check(close(a.x(float(cap.get("x1"))), capacity, tol), f"{name} budget: capacity line at {capacity} GiB")
    return est


def free_port_serve():
    err = open(os.path.join(TMP, "serve.err"), "w+")
    proc = subprocess.Popen([TRAINFIT, "serve", "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=err)
    for _ in range(100):
        err.seek(0)
        m = re.search(r"serving on 127\.0\.0\.1:(\d+) ", err.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("FAIL trainfit serve did not start: " + open(err.name).read())


def http(method, url, body=None, content_type="application/json"):
    req = urllib.request.Request(url, data=body.encode() if body is not None else None, method=method)
    if body is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def test_service():
    proc, port = free_port_serve()
    base = f"http://127.0.0.1:{port}"
    try:
        fields = {"model": "llama3-8b", "num_gpus": 8, "zero_stage": 3, "seq_length": 8192, "logits_fp32": True,
                  "recompute": "full"}
        query = "model=llama3-8b&num_gpus=8&zero_stage=3&seq_length=8192&logits_fp32=true&recompute=full"
        for chart in ("gpus", "seq", "budget"):
            s1, t1, get = http("GET", f"{base}/v1/plot.svg?chart={chart}&{query}")
            s2, t2, post = http("POST", f"{base}/v1/plot.svg?chart={chart}", json.dumps(fields))
            check(s1 == 200 and t1 == "image/svg+xml", f"service: GET chart={chart} is 200 image/svg+xml ({s1} {t1})")
            check(s2 == 200 and t2 == "image/svg+xml", f"service: POST chart={chart} is 200 image/svg+xml ({s2} {t2})")
            check(get == post, f"service: GET and POST give the same SVG ({chart})")
            cli = run("plot", "--chart", chart, "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--seq", "8192",
                      "--logits-fp32", "--recompute", "full", "--out", "-")
            check(cli.stdout == get, f"service: the SVG is the CLI's for the same request ({chart})")
            path = os.path.join(TMP, f"service-{chart}.svg")
            open(path, "w").write(get)
            _, by_chart = panels(path)
            check(list(by_chart) == [chart], f"service: chart={chart} holds that panel only")
        # Bad values: the same 400 as POST /edge/training
        s, t, body = http("GET", f"{base}/v1/plot.svg?chart=gpus&model=llama3-8b&seq_length=abc")
        s_edge, _, edge = http("POST", f"{base}/edge/training", json.dumps({"model": "llama3-8b", "seq_length": "abc"}))
        err = json.loads(body).get("error", {}) if t and t.startswith("application/json") else {}
        check(s == 400 and err.get("field") == "seq_length", f"service: seq_length=abc is a 400 naming the field ({s} {body.strip()})")
        check(s_edge == 400 and json.loads(edge) == json.loads(body), "service: the same error body as POST /edge/training")
        s, _, body = http("GET", f"{base}/v1/plot.svg?model=llama3-8b&num_gpus=0")
        check(s == 400 and json.loads(body)["error"]["field"] == "num_gpus", f"service: num_gpus=0 is a 400 naming num_gpus")
        s, _, body = http("GET", f"{base}/v1/plot.svg?model=llama3-8b&seq_lenght=4096")
        check(s == 400 and "seq_lenght" in body, f"service: an unknown field is a 400 naming it ({body.strip()})")
        s, _, body = http("GET", f"{base}/v1/plot.svg?chart=pie&model=llama3-8b")
        check(s == 400 and json.loads(body)["error"]["field"] == "chart", "service: chart=pie is a 400 naming chart")
        s, _, body = http("POST", f"{base}/v1/plot.svg?chart=gpus", '{"model":"llama3-8b","num_gpus":"x"}')
        check(s == 400 and json.loads(body)["error"]["field"] == "num_gpus", "service: POST with a bad field is a 400 naming it")
        s, _, _ = http("POST", f"{base}/v1/plot.svg", "model=x", "text/plain")
        check(s == 415, "service: POST with a non-JSON body type is 415")
        s, _, _ = http("PUT", f"{base}/v1/plot.svg", "{}")
        check(s == 405, "service: PUT is 405")
        _, _, metrics = http("GET", f"{base}/metrics")
        check('path="/v1/plot.svg"' in metrics, "service: /metrics labels the route /v1/plot.svg")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    fits = check_case(["--model", "llama3-8b", "--gpus", "8", "--zero", "3"], "fits")
    check(fits["fits"], "the first case fits (it exercises the headroom label)")
    oom = check_case(["--model", "llama3-70b", "--gpus", "8", "--zero", "3", "--seq", "8192"], "oom")
    check(not oom["fits"], "the second case does not fit (it exercises 'over by')")
    check_case(["--model", "llama3-70b", "--gpus", "16", "--zero", "3", "--seq", "8192", "--recompute", "full",
                "--gpus-per-node", "8"], "oom-fits-from-24")

    # --chart, --request, determinism, atomic writes, errors
    req = os.path.join(TMP, "req.json")
    json.dump({"model": "llama3-8b", "num_gpus": 8, "zero_stage": 3}, open(req, "w"))
    one = os.path.join(TMP, "seq.svg")
    r = run("plot", "--request", req, "--chart", "seq", "--out", one)
    check(r.returncode == 0, "plot --request FILE --chart seq")
    _, by_chart = panels(one)
    check(list(by_chart) == ["seq"], "--chart seq writes the seq panel only")
    check_document(one, 1, "--chart seq")
    again = run("plot", "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--chart", "seq", "--out", "-").stdout
    check(again == open(one).read(), "--request and flags give the same bytes; output is deterministic")
    check(not [f for f in os.listdir(TMP) if ".tmp." in f], "no temporary files left behind")
    r = run("plot", "--model", "llama3-8b", "--out", os.path.join(TMP, "no-such-dir", "x.svg"))
    check(r.returncode == 2 and "cannot be written" in r.stderr, "an unwritable path is exit 2 with one line")
    r = run("plot", "--model", "llama3-8b", "--chart", "pie", "--out", one)
    check(r.returncode == 2 and "chart='pie'" in r.stderr, "--chart pie is exit 2 naming chart")
    r = run("plot", "--model", "llama3-8b", "--out", os.path.join(TMP, "x.pdf"))
    check(r.returncode == 2 and ".svg or .png" in r.stderr, "--out x.pdf is exit 2")
    r = run("plot", "--model", "llama3-8b", "--seq", "abc", "--out", one)
    check(r.returncode == 2 and "seq_length='abc'" in r.stderr, "a bad request flag is exit 2 naming the field")

    # PNG: through rsvg-convert when installed; a clear error line when not
    png = os.path.join(TMP, "all.png")
    env = dict(os.environ, PATH=os.path.join(TMP, "empty-path"))
    r = run("plot", "--model", "llama3-8b", "--gpus", "8", "--out", png, env=env)
    check(r.returncode == 2 and "librsvg2-bin" in r.stderr and r.stderr.count("\n") == 1 and not os.path.exists(png),
          f"without rsvg-convert, --out x.png is one line naming librsvg2-bin ({r.stderr.strip()})")
    if shutil.which("rsvg-convert"):
        r = run("plot", "--model", "llama3-8b", "--gpus", "8", "--out", png)
        data = open(png, "rb").read() if os.path.exists(png) else b""
        ok = data[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) if ok else (0, 0)
        check(r.returncode == 0 and ok and (w, h) == (720, 1260), f"--out x.png writes a 720x1260 PNG ({w}x{h})")
    else:
        print("SKIP the PNG check: rsvg-convert is not installed (Debian package librsvg2-bin)")

    test_service()
    shutil.rmtree(TMP, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


main()
