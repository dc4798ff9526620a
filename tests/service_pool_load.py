"""Load through a load balancer in front of `trainfit serve` replicas, for tests/service_pool_test.sh.

  load  PORT SECONDS THREADS REQUEST EXPECTED RECORDS READY
        THREADS keep-alive clients POST REQUEST to 127.0.0.1:PORT/edge/training for SECONDS; every
        request is one line of RECORDS: start and end (time.time()), status, serving_node, and
        error (empty when the body is exactly EXPECTED, the CLI's answer, but for serving_node and
        compute_ms). READY is created when the first request has been answered.
  check RECORDS SIGNAL_FROM SIGNAL_TO GONE_TIME VICTIM SURVIVOR EXPECT
        Counts the requests before the signal (sent between SIGNAL_FROM and SIGNAL_TO), between
        it and GONE_TIME (the victim out of service: marked DOWN, or exited) and after, and
        checks them: EXPECT 'no-loss'
        wants every request answered 200 with the expected body, both replicas serving before
        the signal and only SURVIVOR after GONE_TIME; EXPECT 'loss' (retries turned off) wants
        at least one failed request.
"""
import http.client
import json
import sys
import threading
import time


def load(port, seconds, threads, request, expected, records, ready):
    body = open(request, "rb").read()
    want = json.load(open(expected))
    for k in ("serving_node", "compute_ms"):
        want.pop(k, None)
    out = open(records, "w")
    lock = threading.Lock()
    first = threading.Event()
    end = time.time() + seconds

    def client():
        conn = None
        while time.time() < end:
            t0 = time.time()
            status, node, error = 0, "", ""
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
                conn.request("POST", "/edge/training", body, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                status = resp.status
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                if status != 200:
                    error = "status %d: %r" % (status, data[:60])
                else:
                    got = json.loads(data)
                    node = got.pop("serving_node", "")
                    got.pop("compute_ms", None)
                    if got != want:
                        error = "body differs from the CLI's"
            except Exception as e:  # every failure is recorded, none ends the load
                error = "%s: %s" % (type(e).__name__, e)
                if conn is not None:
                    conn.close()
                    conn = None
            t1 = time.time()
            with lock:
                out.write(json.dumps({"t0": t0, "t1": t1, "status": status, "node": node, "error": error}) + "\n")
            if not error and not first.is_set():
                first.set()
                open(ready, "w").close()

    workers = [threading.Thread(target=client) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.close()


def check(records, signal_from, kill_time, gone_time, victim, survivor, expect):
    rows = [json.loads(line) for line in open(records)]
    failed = [r for r in rows if r["error"]]
    before = [r for r in rows if r["t1"] < signal_from]
    between = [r for r in rows if r["t1"] >= signal_from and r["t0"] < gone_time]
    after = [r for r in rows if r["t0"] >= gone_time]
    in_flight = [r for r in rows if r["t0"] < kill_time and r["t1"] > signal_from]

    def nodes(rs):
        return {n: sum(1 for r in rs if r["node"] == n) for n in (victim, survivor)}

    slowest = max(rows, key=lambda r: r["t1"] - r["t0"])
    print("  %d requests, %d failed; before the signal %s; signal to gone (%.1f s) %s; after %s;"
          " %d in flight at the signal; slowest %.2f s, at %+.1f s" % (
              len(rows), len(failed), nodes(before), gone_time - kill_time, nodes(between), nodes(after),
              len(in_flight), slowest["t1"] - slowest["t0"], slowest["t0"] - kill_time))
    for r in failed[:5]:
        why = ""
        if r["error"].startswith("IncompleteRead"):
            why = " (the headers came through, then the replica died: too late for any proxy to retry)"
        print("  failed at %+.2f s: %s%s" % (r["t0"] - kill_time, r["error"], why))
    problems = []
    if expect == "loss":
        if not failed:
            problems.append("no request failed with retries off: the test cannot tell")
    else:
        if failed:
            problems.append("%d requests failed" % len(failed))
        if len(rows) < 200:
            problems.append("only %d requests" % len(rows))
        if min(nodes(before).values()) < 10:
            problems.append("both replicas did not serve before the signal: %s" % nodes(before))
        if not in_flight:
            problems.append("no request was in flight at the signal")
        if not after or any(r["node"] != survivor for r in after if not r["error"]):
            problems.append("after the victim was gone, not only %s served: %s" % (survivor, nodes(after)))
        if len(after) < 50:
            problems.append("only %d requests after the victim was gone" % len(after))
        if any(r["node"] not in (victim, survivor) for r in rows if not r["error"]):
            problems.append("an unknown serving_node")
    for p in problems:
        print("  " + p)
    return not problems


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "load":
        load(int(args[0]), float(args[1]), int(args[2]), *args[3:])
    else:
        sys.exit(0 if check(args[0], float(args[1]), float(args[2]), float(args[3]), *args[4:]) else 1)
