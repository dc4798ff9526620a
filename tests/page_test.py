#!/usr/bin/python3
"""The service's page in headless chromium, over the Chrome DevTools Protocol (tests/page_test.sh).

Loads the page from the real `trainfit serve`, fills the form as a user would (values set,
input and change events dispatched), and checks what it shows against `trainfit estimate`
for the same request: the verdict line, min_gpus_to_fit, FITS/OOM, a 400's message next to
its field, the three charts as SVG in the DOM, a dropped DeepSpeed config and a chosen HF
config.json filling the form. Screenshots of the page and of `trainfit report --format html`
must not be blank. Issue 23: at a desktop and a phone viewport, the charts as wide as the
content area and their text >= 11 px as drawn, no key/value row's label touching its value,
numbers grouped by thousands; the request kept in the address (a fresh load and the back
button restore it); no chart label touching another text, the capacity or min-GPUs line or
the request's dot, in the page and in `trainfit plot`'s SVG. Every wait is bounded.
"""
import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zlib

import websocket  # python3-websocket

FAILURES = []


def fail(message):
    FAILURES.append(message)
    print("FAIL " + message, flush=True)


def ok(message):
    print("ok   " + message, flush=True)


# ---- chromium and the protocol ----

class Browser:
    def __init__(self, tmp):
        self.profile = os.path.join(tmp, "chromium-profile")
        os.makedirs(self.profile, exist_ok=True)
        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile, "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             "--disable-dev-shm-usage", "--allow-file-access-from-files", "--window-size=1400,1800", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "chromium.err"), "w"), start_new_session=True)
        with open(os.path.join(tmp, "chromium.pid"), "w") as f:  # page_test.sh kills its group on exit too
            f.write(str(self.proc.pid))
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 20
        port = None
        while time.time() < deadline and port is None:
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited with %s" % self.proc.returncode)
            try:
                with open(port_file) as f:
                    port = int(f.readline().strip())
            except (OSError, ValueError):
                time.sleep(0.1)
        if port is None:
            raise RuntimeError("chromium did not open its DevTools port within 20 s")
        deadline = time.time() + 10
        page = None
        while time.time() < deadline and page is None:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                page = pages[0]["webSocketDebuggerUrl"] if pages else None
            except OSError:
                pass
            if page is None:
                time.sleep(0.1)
        if page is None:
            raise RuntimeError("chromium shows no page target")
        self.ws = websocket.create_connection(page, timeout=10, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def close(self):
        """Asks chromium to quit, then kills its process group whatever it did."""
        try:
            self.call("Browser.close", timeout=3)
        except Exception:  # noqa: BLE001 - killed below anyway
            pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001
            pass

    def call(self, method, params=None, timeout=15):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params or {}}))
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.ws.settimeout(max(0.1, deadline - time.time()))
            message = json.loads(self.ws.recv())
            if message.get("id") == mine:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
        raise TimeoutError("%s: no answer in %s s" % (method, timeout))

    def js(self, expression, timeout=15):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           timeout)
        if "exceptionDetails" in result:
            raise RuntimeError("JS error in %r: %s" % (expression[:80], result["exceptionDetails"]))
        return result["result"].get("value")

    def wait(self, expression, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError("waited %s s for %s" % (timeout, what))

    def navigate(self, url, timeout=20):
        self.events.clear()
        self.call("Page.navigate", {"url": url})
        self.wait("document.readyState === 'complete' && location.href === %s" % json.dumps(url), timeout,
                  "%s to load" % url)

    def screenshot(self, path):
        result = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, timeout=30)
        data = __import__("base64").b64decode(result["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data


# ---- PNG: not blank ----

def png_pixels(data):
    """Decodes an 8-bit RGB/RGBA PNG (what chromium writes) into rows of pixel tuples."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace != 0:
        raise ValueError("unsupported PNG: depth %d color %d interlace %d" % (depth, color, interlace))
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_not_blank(name, data, least_share=0.03):
    width, height, bpp, rows = png_pixels(data)
    counts = {}
    for y in range(0, height, 2):  # every other row and column: enough to judge, 4x faster
        row = rows[y]
        for x in range(0, width * bpp, 2 * bpp):
            key = row[x:x + 3]
            counts[key] = counts.get(key, 0) + 1
    total = sum(counts.values())
    background, most = max(counts.items(), key=lambda kv: kv[1])
    share = 1 - most / total
    if len(counts) < 2:
        fail("%s: the screenshot is a single colour" % name)
    elif share < least_share:
        fail("%s: only %.1f%% of the pixels differ from the background %s (wanted >= %.0f%%)" %
             (name, 100 * share, tuple(background), 100 * least_share))
    else:
        ok("%s: %dx%d, %d colours, %.0f%% not background" % (name, width, height, len(counts), 100 * share))


# ---- the page ----

def fill(browser, values):
    """Sets each field as a user would: the value, then input and change events."""
    renders = int(browser.js("Number(document.body.dataset.renders || 0)"))
    browser.js("""(() => {
      for (const [name, value] of Object.entries(%s)) {
        const input = document.getElementById('f-' + name);
        if (!input) throw new Error('no field ' + name);
        input.focus();
        input.value = value;
        input.dispatchEvent(new Event('input', {bubbles: true}));
        input.dispatchEvent(new Event('change', {bubbles: true}));
      }
      return true;
    })()""" % json.dumps(values))
    wait_render(browser, renders)


def wait_render(browser, renders, timeout=15):
    browser.wait("Number(document.body.dataset.renders || 0) > %d && document.body.dataset.pending === '0'" % renders,
                 timeout, "the page to update")


def text_of(browser, element_id):
    return browser.js("document.getElementById(%s).textContent" % json.dumps(element_id))


def cli(trainfit, args, expect_json=True):
    run = subprocess.run([trainfit] + args, capture_output=True, text=True, timeout=30)
    if expect_json:
        return run.returncode, json.loads(run.stdout), run.stderr
    return run.returncode, run.stdout, run.stderr


def check_verdict(browser, trainfit, args, what, want_fits):
    code, expected, _ = cli(trainfit, ["estimate"] + args + ["--format", "json"])
    if want_fits is not None and expected["fits"] != want_fits:
        fail("%s: the CLI says fits=%s; the test wants a case with fits=%s" % (what, expected["fits"], want_fits))
    verdict = text_of(browser, "verdict")
    if verdict != expected["verdict"]:
        fail("%s: the page shows %r, trainfit estimate says %r" % (what, verdict, expected["verdict"]))
    else:
        ok("%s: verdict %r" % (what, verdict))
    want_min = "none" if expected["min_gpus_to_fit"] is None else "{:,}".format(expected["min_gpus_to_fit"])
    got_min = text_of(browser, "min-gpus")
    if got_min != want_min:
        fail("%s: min_gpus_to_fit shown %r, trainfit estimate says %r" % (what, got_min, want_min))
    else:
        ok("%s: min_gpus_to_fit %s" % (what, got_min))
    klass = browser.js("document.getElementById('verdict').className")
    want_class = "fits" if expected["fits"] else "oom"
    if want_class not in klass.split() or (code == 0) != expected["fits"]:
        fail("%s: verdict class %r, CLI exit %d, fits %s" % (what, klass, code, expected["fits"]))
    advice = browser.js("document.querySelectorAll('#advice li code').length")
    if advice != len(expected["advice"]):
        fail("%s: %d advice items shown, trainfit estimate gives %d" % (what, advice, len(expected["advice"])))
    per_gpu = text_of(browser, "per-gpu")
    if per_gpu != "{:,.2f} GiB".format(expected["per_gpu_total_gb"]):
        fail("%s: per GPU shown %r, trainfit estimate says %.4f" % (what, per_gpu, expected["per_gpu_total_gb"]))
    check_likely(browser, expected, what)
    check_bars(browser, expected, what)
    return expected


def check_bars(browser, expected, what):
    """The breakdown's bars as drawn: each as wide, within its cell, as its term's share of the
    nvidia-smi figure in trainfit estimate's JSON, and nothing else in the bar column painted."""
    peak = expected["breakdown"]["measures"]["nvidia_smi_gb"]
    drawn = browser.js("""(() => {
      const out = [];
      for (const table of document.querySelectorAll('#breakdown table.breakdown')) {
        const section = table.querySelector('caption').textContent.replace(/ /g, '_');
        for (const row of table.querySelectorAll('tr')) {
          const cells = row.querySelectorAll('td');
          const bar = cells[2] && cells[2].querySelector('div.bar');
          if (!bar) continue;
          const cell = cells[2], style = getComputedStyle(cell);
          const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
          out.push({section, key: cells[0].textContent, share: bar.getBoundingClientRect().width / inner,
                    cellPaint: style.backgroundColor});
        }
      }
      const cols = [...document.querySelectorAll('#breakdown col')].map(c => getComputedStyle(c).backgroundColor);
      return {rows: out, cols};
    })()""")
    bad = [c for c in drawn["cols"] if c not in ("rgba(0, 0, 0, 0)", "transparent")]
    bad += [r["section"] + "." + r["key"] for r in drawn["rows"] if r["cellPaint"] not in ("rgba(0, 0, 0, 0)", "transparent")]
    if bad:
        fail("%s: the breakdown's bar column is painted beyond the bars: %s" % (what, bad[:4]))
    wrong, checked = [], 0
    for r in drawn["rows"]:
        value = expected["breakdown"].get(r["section"], {}).get(r["key"].replace("\u200b", "") + "_gb")
        if not isinstance(value, (int, float)) or peak <= 0:
            continue
        want = min(1.0, value / peak)
        checked += 1
        # 1 px of min-width, and the share of a cell some 100+ px wide
        if abs(r["share"] - want) > 0.02 and not (want < 0.01 and r["share"] < 0.03):
            wrong.append("%s.%s %.3f drawn, %.3f wanted" % (r["section"], r["key"], r["share"], want))
    if wrong or checked < 10:
        fail("%s: %d bars checked; not proportional to their terms: %s" % (what, checked, wrong[:4]))
    else:
        ok("%s: %d breakdown bars as wide as their share of %.2f GiB" % (what, checked, peak))


def check_likely(browser, expected, what):
    """The per-GPU figure's likely range, beside it, as the JSON answer's likely_low_gb / likely_high_gb."""
    low, high, total = expected["likely_low_gb"], expected["likely_high_gb"], expected["per_gpu_total_gb"]
    if not low < total < high:
        fail("%s: the JSON's range %.4f..%.4f does not hold its figure %.4f" % (what, low, high, total))
    want = "{:,.2f} GiB (likely {:,.2f}\u2013{:,.2f})".format(total, low, high)
    shown = browser.js("document.getElementById('per-gpu').parentElement.textContent")
    if shown != want:
        fail("%s: per GPU shown %r, wanted %r from trainfit estimate's JSON" % (what, shown, want))
        return
    # The numbers read back from the text, not compared as text only: within the 2 decimals shown.
    m = re.fullmatch(r"\(likely ([0-9,.]+)\u2013([0-9,.]+)\)", text_of(browser, "per-gpu-likely"))
    got = [float(g.replace(",", "")) for g in m.groups()] if m else []
    if not got or abs(got[0] - low) > 0.005 or abs(got[1] - high) > 0.005:
        fail("%s: the range reads back as %s, the JSON says %.4f..%.4f" % (what, got, low, high))
        return
    box = browser.js("""(() => { const r = document.getElementById('per-gpu-likely').getBoundingClientRect();
                                   const d = document.getElementById('per-gpu').closest('div').getBoundingClientRect();
                                   return {w: r.width, h: r.height, inside: r.left >= d.left && r.right <= d.right + 0.5}; })()""")
    if box["w"] <= 0 or box["h"] <= 0 or not box["inside"]:
        fail("%s: the range is not visible inside its headline box: %s" % (what, box))
    else:
        ok("%s: per GPU %r" % (what, shown))


def check_charts(browser, what):
    try:
        browser.wait("""['gpus','seq','budget'].every(c => document.querySelector('#chart-' + c + ' .chart-body')
                         .querySelector('svg, .field-error, .status'))""", 15, "the chart boxes")
    except TimeoutError as e:
        fail("%s: %s" % (what, e))
        return
    for chart in ("gpus", "seq", "budget"):
        state = browser.js("""(() => {
          const box = document.querySelector('#chart-%s .chart-body');
          const svg = box.querySelector('svg');
          if (!svg) return {svg: false, text: box.textContent};
          return {svg: svg instanceof SVGSVGElement, drawn: svg.querySelectorAll('path, polyline, line, rect, circle').length,
                  texts: svg.querySelectorAll('text').length, width: svg.getBoundingClientRect().width};
        })()""" % chart)
        if not state.get("svg"):
            fail("%s: chart %s has no SVG; the box says: %r" % (what, chart, state.get("text")))
        elif state["drawn"] < 3 or state["texts"] < 2 or state["width"] < 100:
            fail("%s: chart %s is an SVG with too little in it: %s" % (what, chart, state))
        else:
            ok("%s: chart %s: SVG with %d shapes, %d labels" % (what, chart, state["drawn"], state["texts"]))
    # The two line charts shade the likely range, as drawn in the browser (docs/charts.md).
    for chart in ("gpus", "seq"):
        band = browser.js("""(() => {
          const svg = document.querySelector('#chart-%s .chart-body svg');
          const b = svg && svg.querySelector('polygon[data-series="likely-range"]');
          const legend = svg ? [...svg.querySelectorAll('.legend text')].map((t) => t.textContent) : [];
          return b ? {area: b.getBBox().width * b.getBBox().height, legend} : {area: 0, legend};
        })()""" % chart)
        if band["area"] <= 0 or "likely range" not in band["legend"]:
            fail("%s: chart %s draws no likely-range band in the legend: %s" % (what, chart, band))
        else:
            ok("%s: chart %s shades the likely range" % (what, chart))


def check_form(browser, want, what):
    for name, value in want.items():
        got = browser.js("document.getElementById('f-%s').value" % name)
        if got != value:
            fail("%s: field %s holds %r, wanted %r" % (what, name, got, value))
    ok("%s: form holds %s" % (what, ", ".join("%s=%s" % kv for kv in want.items())))


def run_page(browser, args):
    trainfit, base = args.trainfit, args.base
    # The page and its assets, as served.
    for path, want in (("/", "text/html; charset=utf-8"), ("/app.js", "text/javascript; charset=utf-8"),
                       ("/app.css", "text/css; charset=utf-8")):
        with urllib.request.urlopen(base + path, timeout=10) as r:
            if r.headers["Content-Type"] != want:
                fail("GET %s: Content-Type %r, wanted %r" % (path, r.headers["Content-Type"], want))
    browser.call("Page.enable")
    browser.call("Runtime.enable")
    browser.call("Log.enable")
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": 1400, "height": 1800, "deviceScaleFactor": 1, "mobile": False})
    browser.navigate(base + "/")
    browser.wait("document.body.dataset.ready === '1' && document.body.dataset.renders === '1' && "
                 "document.body.dataset.pending === '0'", 20, "the page's first estimate")
    fields = json.load(urllib.request.urlopen(base + "/v1/fields", timeout=10))
    shown = browser.js("[...document.querySelectorAll('#form [name]')].map(e => e.name)")
    if sorted(shown) != sorted(f["name"] for f in fields):
        fail("the form's fields %s are not the field table's" % sorted(set(shown) ^ {f["name"] for f in fields}))
    else:
        ok("the form has the %d fields of GET /v1/fields" % len(shown))

    # A step that does not fit: the verdict, min_gpus_to_fit and the advice, as the CLI says.
    fill(browser, {"model": "llama3-70b", "gpu": "h100", "num_gpus": "8", "micro_batch": "1", "seq_length": "8192",
                   "zero_stage": "3", "recompute": "full"})
    check_verdict(browser, trainfit, ["--model", "llama3-70b", "--gpu", "h100", "--gpus", "8", "--micro-batch", "1",
                                      "--seq", "8192", "--zero", "3", "--recompute", "full"], "llama3-70b on 8", False)
    check_charts(browser, "llama3-70b on 8")

    # A bad value: the service's 400, next to its field, in the CLI's words.
    fill(browser, {"seq_length": "abc"})
    request = os.path.join(args.tmp, "bad.json")
    with open(request, "w") as f:
        json.dump({"model": "llama3-70b", "gpu": "h100", "num_gpus": 8, "micro_batch": 1, "seq_length": "abc",
                   "zero_stage": 3, "recompute": "full"}, f)
    code, _, stderr = cli(trainfit, ["estimate", "--request", request], expect_json=False)
    want = stderr.strip().split("\n")[-1]
    want = want[len("trainfit: "):] if want.startswith("trainfit: ") else want
    got = text_of(browser, "e-seq_length")
    if code != 2 or got != want:
        fail("seq_length='abc': the page shows %r next to the field; trainfit estimate says %r (exit %d)" % (got, want, code))
    else:
        ok("seq_length='abc': %r next to the field" % got)
    if "error" not in browser.js("document.getElementById('verdict').className"):
        fail("seq_length='abc': the verdict is not marked as an error")
    if text_of(browser, "per-gpu-likely") != "":
        fail("seq_length='abc': a likely range is still shown without an answer: %r" % text_of(browser, "per-gpu-likely"))

    # A step that fits; the screenshot.
    fill(browser, {"model": "llama3-8b", "seq_length": "4096", "recompute": ""})
    check_verdict(browser, trainfit, ["--model", "llama3-8b", "--gpu", "h100", "--gpus", "8", "--micro-batch", "1",
                                      "--seq", "4096", "--zero", "3"], "llama3-8b on 8", True)
    check_charts(browser, "llama3-8b on 8")
    check_not_blank("page.png", browser.screenshot(os.path.join(args.shots, "page.png")))

    # A DeepSpeed config dropped on the page (a File in a DataTransfer, as a drop gives it).
    ds_config = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
                 "bf16": {"enabled": True}, "zero_optimization": {"stage": 2}, "steps_per_print": 10,
                 "optimizer": {"type": "AdamW", "params": {"lr": 0.0001}}}
    ds_path = os.path.join(args.tmp, "ds_config.json")
    with open(ds_path, "w") as f:
        json.dump(ds_config, f)
    renders = int(browser.js("Number(document.body.dataset.renders || 0)"))
    browser.js("""(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([%s], 'ds_config.json', {type: 'application/json'}));
      document.getElementById('drop').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
      return true;
    })()""" % json.dumps(json.dumps(ds_config)))
    wait_render(browser, renders)
    drop_error = text_of(browser, "drop-error")
    if drop_error:
        fail("DeepSpeed drop: the page says %r" % drop_error)
    check_form(browser, {"framework": "deepspeed", "zero_stage": "2", "micro_batch": "2", "num_microbatches": "4",
                         "precision": "bf16", "model": "llama3-8b", "num_gpus": "8"}, "DeepSpeed drop")
    _, _, stderr = cli(trainfit, ["estimate", "--config", ds_path, "--model", "llama3-8b", "--gpu", "h100", "--gpus", "8",
                                  "--seq", "4096", "--format", "json"])
    cli_notes = [line.split("(deepspeed): ", 1)[1] for line in stderr.splitlines() if "(deepspeed): " in line]
    page_notes = browser.js("[...document.querySelectorAll('#drop-notes li')].map(li => li.textContent)")
    if not cli_notes or sorted(cli_notes) != sorted(page_notes):
        fail("DeepSpeed drop: notes %r, trainfit estimate --config says %r" % (page_notes, cli_notes))
    else:
        ok("DeepSpeed drop: the CLI's notes %r" % page_notes)
    check_verdict(browser, trainfit, ["--config", ds_path, "--model", "llama3-8b", "--gpu", "h100", "--gpus", "8",
                                      "--seq", "4096"], "after the DeepSpeed drop", None)

    # An HF config.json chosen with the file input (DOM.setFileInputFiles), from a clean form.
    renders = int(browser.js("Number(document.body.dataset.renders || 0)"))
    browser.js("document.getElementById('reset').click(), true")
    wait_render(browser, renders)
    # Named as Hugging Face users name a downloaded config: the page and the CLI label it alike.
    hf_path = os.path.join(args.tmp, "gemma-2-9b.config.json")
    shutil.copy(os.path.join(args.fixtures, "hf", "gemma-2-9b.config.json"), hf_path)
    hf = json.load(open(hf_path))
    renders = int(browser.js("Number(document.body.dataset.renders || 0)"))
    document = browser.call("DOM.getDocument")
    node = browser.call("DOM.querySelector", {"nodeId": document["root"]["nodeId"], "selector": "#file"})
    browser.call("DOM.setFileInputFiles", {"nodeId": node["nodeId"], "files": [hf_path]})
    wait_render(browser, renders)
    check_form(browser, {"model": "", "num_layers": str(hf["num_hidden_layers"]), "hidden_dim": str(hf["hidden_size"]),
                         "num_heads": str(hf["num_attention_heads"]), "vocab_size": str(hf["vocab_size"]),
                         "num_gpus": "8"}, "HF config.json chosen")
    check_verdict(browser, trainfit, ["--hf-config", hf_path, "--gpu", "h100", "--gpus", "8", "--micro-batch", "1",
                                      "--seq", "4096", "--zero", "3"], "gemma-2-9b config.json", True)
    check_charts(browser, "gemma-2-9b config.json")
    check_not_blank("page-config.png", browser.screenshot(os.path.join(args.shots, "page-config.png")))

    # Exceptions, and errors other than a resource's HTTP status (the 400 above is meant, the
    # favicon is not served, and a chart route's error is checked in the chart box).
    errors = [e for e in browser.events if e["method"] == "Runtime.exceptionThrown" or
              (e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error" and
               e["params"]["entry"].get("source") != "network")]
    if errors:
        fail("the page logged errors (a CSP refusal, an exception): %s" % json.dumps(errors)[:800])
    else:
        ok("no script errors or policy refusals on the page")


AUDIT_LINES = [
    {"time": "2026-12-02T09:00:00Z", "event": "submit", "decision_id": "d-0001", "job_id": "1001", "uid": 1000,
     "user": "alice", "account": "ml", "partition": "gpu", "qos": "normal", "job_name": "pretrain",
     "gpu_request": "gpu:h100:8", "annotation": "model=llama3-8b seq=4096 zero=3", "gpus_requested": 8, "gpu": "h100",
     "predicted_per_gpu_gb": 26.61, "capacity_gb": 79.65, "action": "accept", "reason": "", "min_gpus_to_fit": 1,
     "resized_to": None, "time_limit_min": 600, "advice": [],
     "message": "FITS: llama3-8b at seq 4096 needs 26.6 GiB per GPU on 8 x H100 (79.6 GiB usable, 33%)"},
    {"time": "2026-12-02T09:05:00Z", "event": "submit", "decision_id": "d-0002", "job_id": "1002", "uid": 1001,
     "user": "bob", "account": "ml", "partition": "gpu", "qos": "normal", "job_name": "big",
     "gpu_request": "gpu:h100:8", "annotation": "model=llama3-70b seq=8192 zero=3", "gpus_requested": 8,
     "gpu": "h100", "predicted_per_gpu_gb": 175.9, "capacity_gb": 79.65, "action": "reject", "reason": "too_few_gpus",
     "min_gpus_to_fit": 22, "resized_to": None, "time_limit_min": 1440,
     "advice": [{"field": "recompute", "value": "full"}, {"field": "num_gpus", "value": "22"}],
     "message": "llama3-70b at seq 8192 needs 175.9 GiB per GPU on 8 x H100 (79.6 GiB usable); min_gpus_to_fit=22"},
    {"time": "2026-12-02T09:10:00Z", "event": "submit", "decision_id": "d-0003", "job_id": "1003", "uid": 1001,
     "user": "bob", "account": "ml", "partition": "elastic", "qos": "normal", "job_name": "big",
     "gpu_request": "gpu:h100:8", "annotation": "model=llama3-70b seq=8192 zero=3 recompute=full",
     "gpus_requested": 8, "gpu": "h100", "predicted_per_gpu_gb": 75.1, "capacity_gb": 79.65, "action": "resize",
     "reason": "too_few_gpus", "min_gpus_to_fit": 22, "resized_to": 24, "time_limit_min": 1440,
     "advice": [{"field": "num_gpus", "value": "24"}],
     "message": "resized from 8 to 24 x H100 (3 nodes)"},
]


def run_report(browser, args):
    """`trainfit report --audit FILE --format html`, rendered by chromium: not blank."""
    audit = os.path.join(args.tmp, "audit.log")
    with open(audit, "w") as f:
        for line in AUDIT_LINES:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    run = subprocess.run([args.trainfit, "report", "--audit", audit, "--format", "html"], capture_output=True,
                         text=True, timeout=30)
    if run.returncode != 0 or "<html" not in run.stdout.lower():
        fail("report: `trainfit report --audit FILE --format html` did not give an HTML report (exit %d): %s" %
             (run.returncode, (run.stderr.strip() or run.stdout.strip())[:300]))
        return
    html = os.path.join(args.tmp, "report.html")
    with open(html, "w") as f:
        f.write(run.stdout)
    browser.navigate("file://" + html)
    time.sleep(0.5)  # layout of a static page
    check_not_blank("report.png", browser.screenshot(os.path.join(args.shots, "report.png")))


# ---- issue 23: layout, numbers, the URL, chart labels ----

VIEWPORTS = (("desktop 1280x900", 1280, 900, False), ("phone 390x844", 390, 844, True))


def set_viewport(browser, width, height, mobile):
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def load_page(browser, url):
    """Navigates (via about:blank, so it is a fresh load) and waits for the first estimate."""
    browser.navigate("about:blank")
    browser.navigate(url)
    browser.wait("document.body.dataset.ready === '1' && document.body.dataset.renders === '1' && "
                 "document.body.dataset.pending === '0'", 20, "the page's first estimate at " + url)


# Each chart's SVG: its rendered width against the content area's (main's content box) and
# the smallest text as rendered: the computed font size times the SVG's scale (rendered
# width / viewBox width).
CHART_SIZES_JS = """(() => {
  const main = document.querySelector('main');
  const cs = getComputedStyle(main);
  const content = main.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  return ['gpus', 'seq', 'budget'].map((c) => {
    const svg = document.querySelector('#chart-' + c + ' .chart-body svg');
    if (!svg) return {chart: c, missing: true};
    const width = svg.getBoundingClientRect().width;
    const scale = width / svg.viewBox.baseVal.width;
    let smallest = Infinity, which = '';
    for (const t of svg.querySelectorAll('text')) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < smallest) { smallest = px; which = t.textContent; }
    }
    return {chart: c, width, content, scale, smallest, which};
  });
})()"""

# Every key/value row of the page (the breakdown tables, the headline figures): the text
# boxes (a Range over each cell's contents: where the glyphs are, overflow included) of
# the label and the value must not intersect.
KEY_VALUE_JS = """(() => {
  const box = (node) => { const r = document.createRange(); r.selectNodeContents(node); return r.getBoundingClientRect(); };
  const hit = (a, b) => a.width > 0 && b.width > 0 && a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
                        a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const out = {rows: 0, overlaps: []};
  const pairs = [...document.querySelectorAll('#breakdown tr')].map((tr) => [tr.cells[0], tr.cells[1]])
    .concat([...document.querySelectorAll('#headline > div')].map((d) => [d.querySelector('dt'), d.querySelector('dd')]));
  for (const [k, v] of pairs) {
    if (!k || !v) continue;
    out.rows += 1;
    const a = box(k), b = box(v);
    if (hit(a, b)) out.overlaps.push(k.textContent + ' | ' + v.textContent + ' (' + Math.round(a.right) + ' > ' +
                                     Math.round(b.left) + ')');
  }
  return out;
})()"""


def run_layout(browser, args):
    """Issue 23 points 1-3: charts full width and legible, no key/value collisions, grouped numbers."""
    config = {"model": "llama3-70b", "gpu": "h100", "num_gpus": "8", "micro_batch": "1", "seq_length": "8192",
              "zero_stage": "3", "recompute": "full"}
    for name, width, height, mobile in VIEWPORTS:
        set_viewport(browser, width, height, mobile)
        load_page(browser, args.base + "/")
        fill(browser, config)
        for c in browser.js(CHART_SIZES_JS):
            if c.get("missing"):
                fail("%s: chart %s has no SVG" % (name, c["chart"]))
                continue
            wide = c["width"] >= 0.9 * c["content"] or (not mobile and c["width"] >= 600)
            (ok if wide else fail)("%s: chart %s is %.0f px wide, the content area %.0f px (wanted >= 90%%%s)" % (
                name, c["chart"], c["width"], c["content"], "" if mobile else " or >= 600 px"))
            (ok if c["smallest"] >= 11 else fail)(
                "%s: chart %s: smallest text %.1f px as rendered (scale %.2f; %r) (wanted >= 11)" % (
                    name, c["chart"], c["smallest"], c["scale"], c["which"]))
        kv = browser.js(KEY_VALUE_JS)
        if kv["rows"] < 20:
            fail("%s: only %d key/value rows found" % (name, kv["rows"]))
        elif kv["overlaps"]:
            fail("%s: %d key/value rows where the label's text runs into the value's: %s" % (
                name, len(kv["overlaps"]), "; ".join(kv["overlaps"][:5])))
        else:
            ok("%s: %d key/value rows, no label touches its value" % (name, kv["rows"]))
        browser.screenshot(os.path.join(args.shots, "page-%dx%d.png" % (width, height)))  # to look at, not judged
    set_viewport(browser, 1400, 1800, False)

    # Numbers of 1000 and more, grouped by thousands: every integer of the breakdown (parameter
    # counts, bytes) and the global batch, as the CLI gives them, shown as "70,553,706,496".
    big = dict(config, num_gpus="2048")
    fill(browser, big)
    _, expected, _ = cli(args.trainfit, ["estimate", "--model", "llama3-70b", "--gpu", "h100", "--gpus", "2048",
                                         "--micro-batch", "1", "--seq", "8192", "--zero", "3", "--recompute", "full",
                                         "--format", "json"])
    shown = browser.js("""Object.fromEntries([...document.querySelectorAll('#breakdown table')].flatMap((t) =>
        [...t.rows].map((r) => [t.caption.textContent.replace(/ /g, '_') + '.' + r.cells[0].textContent.replace(/\\u200b/g, ''),
                                r.cells[1].textContent])))""")
    wanted = {}
    shown_sections = {k.split(".")[0] for k in shown}
    for section, part in expected["breakdown"].items():
        if isinstance(part, dict) and section in shown_sections:
            for key, value in part.items():
                if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 1000:
                    wanted["%s.%s" % (section, key)] = "{:,}".format(value)
    wanted["headline.global_batch"] = "{:,}".format(expected["global_batch"])
    shown["headline.global_batch"] = text_of(browser, "global-batch")
    wrong = ["%s shown %r, wanted %r" % (k, shown.get(k), v) for k, v in sorted(wanted.items()) if shown.get(k) != v]
    if len(wanted) < 3:
        fail("thousands: only %d integers >= 1000 in the CLI's breakdown: %s" % (len(wanted), wanted))
    elif wrong:
        fail("thousands: %d of %d numbers not grouped: %s" % (len(wrong), len(wanted), "; ".join(wrong[:4])))
    else:
        ok("thousands: %d numbers grouped, e.g. %s" % (len(wanted), ", ".join(list(wanted.values())[:3])))


def form_values(browser, names):
    return browser.js("Object.fromEntries(%s.map((n) => [n, document.getElementById('f-' + n).value]))" % json.dumps(names))


def run_url(browser, args):
    """Issue 23 point 4: the request in the URL, restored on load and by the back button."""
    a = {"model": "llama3-70b", "gpu": "h100", "num_gpus": "16", "micro_batch": "1", "seq_length": "8192",
         "zero_stage": "3", "recompute": "full"}
    a_cli = ["--model", "llama3-70b", "--gpu", "h100", "--gpus", "16", "--micro-batch", "1", "--seq", "8192",
             "--zero", "3", "--recompute", "full"]
    load_page(browser, args.base + "/")
    fill(browser, a)
    url_a = browser.js("location.href")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url_a).query)
    if {k: v[0] for k, v in query.items() if k in a} != a:
        fail("url: after an estimate the address is %r; wanted the form's fields %s in it" % (url_a, a))
        return
    ok("url: the address holds the request: %s" % url_a)
    load_page(browser, url_a)
    if form_values(browser, list(a)) != a or browser.js("location.href") != url_a:
        fail("url: opened fresh, %s shows %s at %s" % (url_a, form_values(browser, list(a)), browser.js("location.href")))
    else:
        ok("url: opened fresh, the form holds the linked request")
    check_verdict(browser, args.trainfit, a_cli, "url: the linked request", None)
    fill(browser, {"num_gpus": "32", "seq_length": "4096"})
    url_b = browser.js("location.href")
    if url_b == url_a or "num_gpus=32" not in url_b:
        fail("url: after a change the address is %r" % url_b)
    renders = int(browser.js("Number(document.body.dataset.renders || 0)"))
    browser.js("history.back(), true")
    wait_render(browser, renders)
    if form_values(browser, list(a)) != a or browser.js("location.href") != url_a:
        fail("url: back from %s: the form holds %s at %s; wanted %s" % (url_b, form_values(browser, list(a)),
                                                                       browser.js("location.href"), a))
    else:
        ok("url: back restores the previous request (%s)" % url_a)
    check_verdict(browser, args.trainfit, a_cli, "url: after back", None)
    renders = int(browser.js("Number(document.body.dataset.renders || 0)"))
    browser.js("history.forward(), true")
    wait_render(browser, renders)
    got = form_values(browser, ["num_gpus", "seq_length"])
    (ok if got == {"num_gpus": "32", "seq_length": "4096"} else fail)("url: forward again gives %s" % got)
    # A link without gpu: the answer judges the default GPU, and the GPU list names it.
    link = args.base + "/?" + urllib.parse.urlencode({"model": "llama3-8b", "num_gpus": "8", "zero_stage": "3"})
    load_page(browser, link)
    code, expected, _ = cli(args.trainfit, ["estimate", "--model", "llama3-8b", "--gpus", "8", "--zero", "3",
                                            "--format", "json"])
    shown = browser.js("(() => { const s = document.getElementById('f-gpu'); return s.value + '|' + s.selectedOptions[0].textContent; })()")
    want = "|default (%s)" % expected["config"]["gpu"]
    (ok if shown == want else fail)("url: a link without gpu shows the GPU as %r (wanted %r, the answer's GPU)" % (shown, want))


# Overlaps in one chart SVG: every pair of text boxes (getBoundingClientRect: the em box),
# and every text that is not a tick against the reference lines (capacity, min-gpus; their
# box widened by half the stroke) and the request's dot. Texts of different panels are not compared.
CHART_OVERLAPS_JS = """((root) => {
  const boxes = [];
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const panelOf = (n) => n.closest('g.panel');
  const scale = root.getBoundingClientRect().width / root.viewBox.baseVal.width;
  const texts = [...root.querySelectorAll('text')].filter((t) => t.textContent.trim() !== '');
  const out = [];
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      if (panelOf(texts[i]) !== panelOf(texts[j])) continue;
      if (hit(texts[i].getBoundingClientRect(), texts[j].getBoundingClientRect())) {
        out.push('text ' + JSON.stringify(texts[i].textContent) + ' on text ' + JSON.stringify(texts[j].textContent));
      }
    }
  }
  const shapes = [...root.querySelectorAll('line.rule, circle[data-marker]')];
  for (const s of shapes) {
    const r = s.getBoundingClientRect();
    const half = (parseFloat(s.getAttribute('stroke-width') || '1') / 2) * scale;
    const box = {left: r.left - half, right: r.right + half, top: r.top - half, bottom: r.bottom + half};
    for (const t of texts) {
      if (t.classList.contains('tick') || panelOf(t) !== panelOf(s)) continue;
      if (hit(t.getBoundingClientRect(), box)) {
        out.push('text ' + JSON.stringify(t.textContent) + ' on ' + (s.getAttribute('data-series') || 'the request dot'));
      }
    }
  }
  return {texts: texts.length, shapes: shapes.length, overlaps: out};
})"""

LABEL_CASES = (
    ("small model on 1 GPU", {"model": "qwen3-0.6b", "gpu": "h100", "num_gpus": "1", "micro_batch": "1",
                              "seq_length": "4096", "zero_stage": "0"}),
    ("70B on 8, fits from many", {"model": "llama3-70b", "gpu": "h100", "num_gpus": "8", "micro_batch": "1",
                                  "seq_length": "8192", "zero_stage": "3", "recompute": "full"}),
    ("70B on 64, fits from fewer", {"model": "llama3-70b", "gpu": "h100", "num_gpus": "64", "micro_batch": "1",
                                    "seq_length": "8192", "zero_stage": "3", "recompute": "full"}),
    ("never fits", {"model": "llama3-70b", "gpu": "h100", "num_gpus": "8", "micro_batch": "16",
                    "seq_length": "131072", "zero_stage": "0"}),
)


def cli_args(tmp, request):
    path = os.path.join(tmp, "label-request.json")
    with open(path, "w") as f:
        json.dump({k: (int(v) if v.isdigit() else v) for k, v in request.items() if v != ""}, f)
    return ["--request", path]


def run_chart_labels(browser, args):
    """Issue 23 point 5: chart labels clear of each other, of the lines they annotate and of the axes."""
    load_page(browser, args.base + "/")
    for what, request in LABEL_CASES:
        fill(browser, dict({"recompute": ""}, **request))
        _, expected, _ = cli(args.trainfit, ["estimate"] + cli_args(args.tmp, request) + ["--format", "json"])
        want = {"small model on 1 GPU": 1, "never fits": None}.get(what, "many")
        got = expected["min_gpus_to_fit"]
        if (got != want) if want != "many" else not (got and got > 8):
            fail("labels: %s: min_gpus_to_fit is %s, the case wants %s" % (what, got, want))
        for chart in ("gpus", "seq", "budget"):
            result = browser.js("(%s)(document.querySelector('#chart-%s .chart-body svg'))" % (CHART_OVERLAPS_JS, chart))
            (fail if result["overlaps"] else ok)("labels, page, %s (min_gpus_to_fit %s): chart %s: %d texts, %d lines/dots%s" % (
                what, expected["min_gpus_to_fit"], chart, result["texts"], result["shapes"],
                "; overlaps: " + "; ".join(result["overlaps"][:4]) if result["overlaps"] else ", no overlaps"))
    # The same cases as `trainfit plot` writes them (all three panels), opened in chromium.
    for i, (what, request) in enumerate(LABEL_CASES):
        svg = os.path.join(args.tmp, "labels-%d.svg" % i)
        run = subprocess.run([args.trainfit, "plot"] + cli_args(args.tmp, request) + ["--out", svg], capture_output=True,
                             text=True, timeout=30)
        if run.returncode != 0:
            fail("labels: trainfit plot %s: %s" % (what, run.stderr.strip()))
            continue
        browser.navigate("file://" + svg)
        result = browser.js("(%s)(document.documentElement)" % CHART_OVERLAPS_JS)
        (fail if result["overlaps"] else ok)("labels, trainfit plot, %s: %d texts, %d lines/dots%s" % (
            what, result["texts"], result["shapes"],
            "; overlaps: " + "; ".join(result["overlaps"][:4]) if result["overlaps"] else ", no overlaps"))


def main():
    parser = argparse.ArgumentParser()
    for name in ("--trainfit", "--base", "--fixtures", "--tmp", "--shots"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("FAIL page_test.py: terminated (timeout)"))
    browser = Browser(args.tmp)
    try:
        for step in (run_page, run_layout, run_url, run_chart_labels, run_report):
            try:
                step(browser, args)
            except (TimeoutError, RuntimeError, OSError, ValueError, KeyError, websocket.WebSocketException) as e:
                fail("%s: %s: %s" % (step.__name__, type(e).__name__, e))
    finally:
        browser.close()
    print("page test: %d failure(s); screenshots in %s" % (len(FAILURES), args.shots), flush=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
