#!/usr/bin/python3
"""Every command shown in README.md and docs/*.md is run; every output shown is compared.

    /usr/bin/python3 tests/doc_test.py BUILD/cli/trainfit [-v] [--record FILE]

--record FILE writes every command run and what it printed (the work directory spelled WORK,
timings and curl's progress meter masked) to FILE, so that two builds' outputs on the documented examples can be diffed.

How the Markdown is read (no prose is grepped):
- Code blocks: fenced (```) or indented (4+ spaces after a blank line, list items included).
  An indented block is cut into chunks at blank lines; each chunk is one unit.
- A chunk is shell when its first line starts with `$ `, or its first word (after `NAME=value`
  environment words) is a command this test knows (SHELL_WORDS). Other chunks (config files,
  formulas, YAML, log excerpts) are not run.
- Transcript: in a chunk whose lines start with `$ `, each `$ ` line (with its `\\`
  continuation lines) is a command and the lines up to the next `$ ` line are its output,
  stdout and stderr together.
- A chunk right after the line `<!-- doc-test: output of previous -->` is the output of the
  last command of the shell chunk before it.
- Other shell chunks: every line (with continuations) is a command; `trainfit` commands must
  exit 0 (fits) or 1 (does not fit): 2 (bad input or usage) means the doc is wrong.

How a command is run: with bash (`set -o pipefail`) in a fresh work directory holding the
files the docs name (FIXTURES, from tests/fixtures), with `trainfit` on PATH as the binary
given. Rewrites, the only ones: absolute paths under /var/ and /etc/ (audit logs, access
logs, node-exporter, trainfit.conf) point into the work directory, and `trainfit policy
--partition` without `--conf` reads the work directory's etc/slurm/trainfit.conf (TRAINFIT_CONF)
instead of the default /etc/slurm/trainfit.conf; `trainfit serve` listens on 127.0.0.1 at a free
port, and `localhost:8080`/`127.0.0.1:8080` in the same chunk (or, without a serve in the
chunk, in any chunk: a server this test starts) go to that port. A `trainfit serve` command
runs in the background until its chunk is done; it must say "serving on".

Output comparison: exact, line by line, after removing trailing blanks, except that a line
`...` stands for any number of lines and `...` inside a line for any text.

SKIP lists the commands not run, with the reason; they are printed at the end.
"""
import os, re, shlex, shutil, signal, socket, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
SHELL_WORDS = {"trainfit", "sbatch", "salloc", "srun", "scontrol", "curl", "bash", "cmake",
               "echo", "haproxy", "jq"}
MARK_OUTPUT = "<!-- doc-test: output of previous -->"

# (regex on the command, reason). Keep it short.
SKIP = [
    (r"^(sbatch|salloc|srun|scontrol)\b",
     "needs a Slurm cluster with the plugins (root, munged, slurmctld, slurmd); "
     "tests/slurm/integration_test.sh submits these and checks the messages against `trainfit min-gpus`"),
    (r"^bash scripts/|^cmake --install",
     "installs Debian packages / builds / installs into /usr, as root (minutes); CI runs scripts/test.sh"),
    (r"^bash packaging/build-deb\.sh|^git archive .*rpmbuild",
     "builds the packages (~7 min each) and needs root to install them; tests/install_test.sh "
     "(ctest `install`, -DTRAINFIT_INSTALL_TEST=ON) runs these commands"),
    (r"^bash tests/slurm/releases\.sh|^bash tests/fuzz/run\.sh|^TRAINFIT_FUZZ_SEED=",
     "a Debian root filesystem per release and its build (minutes, root) / the fuzzers (a clang "
     "tree); scripts/test.sh runs both"),
    (r"^bash tests/service_pool_test\.sh|haproxy ",
     "haproxy/nginx in front of replicas (about a minute); the ctest `service_pool` runs it"),
    (r"--endpoint http://trainfit-a",
     "names two hosts of a pool; the ctest `client` runs the same failover against real servers"),
]

# The files the docs name, from tests/fixtures.
FIXTURES = {
    "job.json": "seed_request.json",
    "config.json": "hf/llama-3-8b.config.json",
    "ds_zero3.json": "frameworks/deepspeed_zero3_hf_auto.json",
    "recipes/configs/llama3_1/8B_lora_single_device.yaml":
        "frameworks/torchtune_llama3_1_8B_lora_single_device.yaml",
    "torchtitan/models/llama3/train_configs/llama3_8b.toml": "frameworks/torchtitan_llama3_8b.toml",
    "pretrain_llama3_8b.args": "frameworks/megatron_llama3_8b.args",
    "trainfit-audit.jsonl": "audit/trainfit-audit.jsonl",
    "var/log/slurm/trainfit-audit.jsonl": "audit/trainfit-audit.jsonl",
    "var/log/slurm/trainfit-audit.jsonl.1": "audit/trainfit-audit.jsonl.1",
}
DIRS = ["var/lib/prometheus/node-exporter", "var/log/trainfit"]
# /etc/slurm/trainfit.conf (the default of `trainfit policy --conf`): the example in docs/slurm.md.
TRAINFIT_CONF = """action = reject
headroom = 0.05
gpus_per_node = 8
gpu_alias.h100_80g = h100
partition.elastic.action = resize
partition.elastic.resize_max_gpus = 256
partition.llm.require_annotation = true
"""


def chunks_of(path):
    """Yields (line number, [lines], marked_as_output) for every code chunk of a Markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i, marked = 0, False
    while i < len(lines):
        line = lines[i]
        if line.strip() == MARK_OUTPUT:
            marked = True
            i += 1
            continue
        m = re.match(r"^(\s*)```", line)
        if m:
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```", lines[j]):
                j += 1
            ind = len(m.group(1))
            yield i + 2, [l[ind:] for l in lines[i + 1:j]], marked
            marked, i = False, j + 1
            continue
        if line.startswith("    ") and line.strip() and (i == 0 or not lines[i - 1].strip()):
            ind = len(line) - len(line.lstrip(" "))
            j, cur, start = i, [], i
            while j < len(lines) and (lines[j].startswith(" " * ind) or not lines[j].strip()):
                if not lines[j].strip():
                    if j + 1 < len(lines) and lines[j + 1].startswith(" " * ind) and lines[j + 1].strip():
                        if cur:
                            yield start + 1, cur, marked
                            marked = False
                        cur, start = [], j + 1
                        j += 1
                        continue
                    break
                cur.append(lines[j][ind:])
                j += 1
            if cur:
                yield start + 1, cur, marked
            marked, i = False, j
            continue
        if line.strip():
            marked = False
        i += 1


def first_word(line):
    words = line.split()
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    return words[0] if words else ""


def is_shell(chunk):
    first = chunk[0]
    if first.startswith("$ "):
        return True
    if re.match(r"^[a-z_]+=\S+$", first):  # dir=/var/... on its own line
        return True
    return first_word(first) in SHELL_WORDS


def complete(cmd):
    """False while a quote is open (a JSON body spread over lines)."""
    try:
        shlex.split(cmd, comments=True)
        return True
    except ValueError:
        return False


def commands_of(chunk):
    """[(command, expected output lines or None)]"""
    out, i = [], 0
    transcript = chunk[0].startswith("$ ")
    while i < len(chunk):
        line = chunk[i]
        if transcript and not line.startswith("$ "):
            out[-1][1].append(line)
            i += 1
            continue
        cmd = line[2:] if transcript else line
        while i + 1 < len(chunk) and (cmd.rstrip().endswith("\\") or not complete(cmd)):
            i += 1
            if cmd.rstrip().endswith("\\"):
                cmd = cmd.rstrip()[:-1] + " " + chunk[i].strip()
            else:
                cmd = cmd + "\n" + chunk[i]
        out.append((cmd.strip(), [] if transcript else None))
        i += 1
    return out


def matches(expected, actual):
    exp = [l.rstrip() for l in expected]
    act = [l.rstrip() for l in actual]
    while exp and not exp[-1]:
        exp.pop()
    while act and not act[-1]:
        act.pop()

    def line_ok(e, a):
        if "..." not in e:
            return e == a
        return re.fullmatch(".*".join(re.escape(p) for p in e.split("...")), a) is not None

    def go(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i].strip() == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and line_ok(exp[i], act[j]) and go(i + 1, j + 1)
    return go(0, 0)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Runner:
    def __init__(self, trainfit, verbose):
        self.verbose = verbose
        self.work = tempfile.mkdtemp(prefix="trainfit-doc-test.")
        bindir = os.path.join(self.work, ".bin")
        os.makedirs(bindir)
        os.symlink(os.path.abspath(trainfit), os.path.join(bindir, "trainfit"))
        self.env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"])
        for dst, src in FIXTURES.items():
            d = os.path.join(self.work, dst)
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copy(os.path.join(FIX, src), d)
        for d in DIRS:
            os.makedirs(os.path.join(self.work, d), exist_ok=True)
        os.makedirs(os.path.join(self.work, "etc/slurm"))
        with open(os.path.join(self.work, "etc/slurm/trainfit.conf"), "w") as f:
            f.write(TRAINFIT_CONF)
        self.servers = []
        self.fixture_port = None
        self.failures, self.skipped, self.ran, self.compared = [], [], 0, 0
        self.record = None

    def rewrite(self, cmd, port):
        cmd = re.sub(r"(?<![\w.])/(var|etc)/", self.work + r"/\1/", cmd)
        if re.search(r"\btrainfit policy\b.*--partition", cmd) and "--conf" not in cmd:
            cmd = re.sub(r"(--partition\s+\S+)", r"\1 --conf %s/etc/slurm/trainfit.conf" % self.work, cmd)
        if port:
            cmd = re.sub(r"\b(localhost|127\.0\.0\.1):8080\b", "127.0.0.1:%d" % port, cmd)
        return cmd

    def start_server(self, cmd, where):
        port = free_port()
        argv_tail = re.sub(r"\s*&\s*$", "", cmd)
        if "--listen" in argv_tail:
            argv_tail = re.sub(r"--listen\s+\S+", "--listen 127.0.0.1:%d" % port, argv_tail)
        else:
            argv_tail += " --listen 127.0.0.1:%d" % port
        argv_tail = self.rewrite(argv_tail, None)
        # The server writes through its own open file; this test reads through another, so
        # that a read never moves the offset the server writes at (one shared description
        # would let a seek(0) here make the server overwrite the start of its own log).
        log_path = os.path.join(self.work, "serve-%d.log" % port)
        with open(log_path, "w") as log:
            p = subprocess.Popen(["bash", "-c", "exec " + argv_tail], cwd=self.work, env=self.env,
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.servers.append(p)
        text = ""
        for _ in range(600):  # up to 30 s: a loaded CI machine starts it slowly
            with open(log_path) as log:
                text = log.read()
            if "serving on" in text:
                return port
            if p.poll() is not None:
                break
            time.sleep(0.05)
        self.failures.append("%s: `%s` did not start serving:\n%s" % (where, cmd, text))
        return None

    def fixture_server(self):
        if self.fixture_port is None:
            self.fixture_port = self.start_server("trainfit serve", "fixture server")
        return self.fixture_port

    def run_chunk(self, where, chunk, expected_prev):
        port = None
        last = None
        for cmd, expected in commands_of(chunk):
            bare = re.sub(r"\s+#.*$", "", cmd) if not cmd.startswith("#") else ""
            if not bare:
                continue
            reason = next((r for pat, r in SKIP if re.search(pat, bare)), None)
            if reason:
                self.skipped.append((where, bare, reason))
                last = None
                continue
            if first_word(bare) == "trainfit" and bare.split()[1:2] == ["serve"]:
                port = self.start_server(bare, where)
                self.ran += 1
                continue
            if "8080" in bare and port is None:
                port = self.fixture_server()
            full = self.rewrite(bare, port)
            if self.verbose:
                print("  run %s: %s" % (where, full))
            r = subprocess.run(["bash", "-c", "set -o pipefail\n" + full], cwd=self.work, env=self.env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
            self.ran += 1
            last = (bare, r)
            self.record_output(where, bare, r)
            if expected is not None:
                self.compare(where, bare, expected, r)
            elif r.returncode not in ((0, 1) if re.search(r"(^|[|;&(]\s*)trainfit ", bare) else (0,)):
                self.failures.append("%s: `%s` exited %d:\n%s" % (where, bare, r.returncode, r.stdout[-2000:]))
        return last

    def record_output(self, where, cmd, r):
        """What differs from run to run is masked: timings and curl's progress meter."""
        if not self.record:
            return
        text = re.sub(r'("compute_ms": ?)[0-9.e+-]+', r"\1N", r.stdout.replace(self.work, "WORK"))
        text = "".join(l for l in text.splitlines(True) if "--:--:--" not in l and "% Total" not in l)
        self.record.write("### %s: %s\n%s[exit %d]\n" % (where, cmd, text, r.returncode))

    def compare(self, where, cmd, expected, r):
        self.compared += 1
        actual = r.stdout.split("\n")
        if not matches(expected, actual):
            self.failures.append("%s: the output shown for `%s` is not what it prints.\n--- shown\n%s\n--- printed\n%s"
                                 % (where, cmd, "\n".join(expected), r.stdout.rstrip()))

    def stop_servers(self):
        for p in self.servers:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
        self.servers = []
        self.fixture_port = None


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    record = None
    if "--record" in args:
        at = args.index("--record")
        record = args[at + 1:at + 2]
        del args[at:at + 2]
    if len(args) != 1 or record == []:
        sys.exit("usage: doc_test.py BUILD/cli/trainfit [-v] [--record FILE]")
    runner = Runner(args[0], "-v" in sys.argv)
    if record:
        runner.record = open(record[0], "w")
    docs = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    t0 = time.time()
    try:
        for doc in docs:
            rel = os.path.relpath(doc, ROOT)
            last = None
            for line, chunk, marked in chunks_of(doc):
                where = "%s:%d" % (rel, line)
                if marked:
                    if last is None:
                        runner.failures.append("%s: output block with no command run before it" % where)
                    else:
                        runner.compare(where, last[0], chunk, last[1])
                    continue
                if is_shell(chunk):
                    last = runner.run_chunk(where, chunk, last) or last
                    runner.stop_servers()
    finally:
        runner.stop_servers()
    print("doc_test: %d commands run, %d outputs compared, %d commands skipped, %.1f s"
          % (runner.ran, runner.compared, len(runner.skipped), time.time() - t0))
    if runner.skipped:
        print("skipped (not run here):")
        for where, cmd, reason in runner.skipped:
            print("  %s: %s\n      because: %s" % (where, cmd, reason))
    for f in runner.failures:
        print("FAIL " + f + "\n")
    if runner.failures:
        print("doc_test: %d failure(s); work directory kept: %s" % (len(runner.failures), runner.work))
        sys.exit(1)
    shutil.rmtree(runner.work, ignore_errors=True)
    print("doc_test: OK")


if __name__ == "__main__":
    main()
