#!/usr/bin/env python3
"""`nodescope daemon --metrics` scraped by a real Prometheus (Debian's `prometheus` package):
the daemon and the samples are real processes, Prometheus scrapes the daemon every second and
evaluates docs/fleet/nodescope-rules.yml, and its HTTP query API must answer the same leak counts
as `nodescope leaks`. Also: the endpoint's refusals, `promtool check` of the rules and of the
exposition, and every query of docs/fleet/nodescope-dashboard.json run against the real server.

Run by tools/test; prints one line per check and "fleet: N passed, M failed" at the end; exits 1
when a check failed. Usage: prometheus_test.py BUILD_DIR
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Support", "python"))
from checks import check, start, stop_children, until  # noqa: E402
import checks  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(ROOT, "docs", "fleet", "nodescope-rules.yml")
DASHBOARD = os.path.join(ROOT, "docs", "fleet", "nodescope-dashboard.json")
def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(url, method="GET", headers=None):
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def raw_status(port, request_bytes):
    """The status code of a request sent as raw bytes (urllib always sends the Host it connects to)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request_bytes)
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else -1


def query(prometheus, expression):
    url = f"http://127.0.0.1:{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
    status, _, body = http(url)
    answer = json.loads(body)
    return status, answer


def leak_counts(socket_path):
    """`nodescope leaks --format json`: the leaked count per process name, and the total."""
    out = subprocess.run(
        [os.path.join(BUILD, "nodescope"), "leaks", "--socket", socket_path, "--format", "json"],
        capture_output=True, text=True, timeout=30)
    report = json.loads(out.stdout)
    per_process = {}
    for process in report["processes"]:
        name = process["processName"]
        per_process[name] = per_process.get(name, 0) + process["counts"]["leaked"]
    return report["counts"]["leaked"], per_process


def main():
    if shutil.which("prometheus") is None or shutil.which("promtool") is None:
        check("prometheus and promtool are installed (tools/bootstrap --fleet)", False)
        return
    work = tempfile.mkdtemp(prefix="nodescope-fleet-")
    socket_path = os.path.join(work, "collector.sock")

    # A port that another program holds: a clear message and exit 2, and no socket left behind.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        refused = subprocess.run(
            [os.path.join(BUILD, "nodescope"), "daemon", "--socket", socket_path, "--metrics", str(taken.getsockname()[1])],
            capture_output=True, text=True, timeout=30)
    loose = os.path.join(work, "loose.token")
    with open(loose, "w") as file:
        file.write("t0ken-0123456789abcdef\n")
    os.chmod(loose, 0o644)
    refused_token = subprocess.run(
        [os.path.join(BUILD, "nodescope"), "daemon", "--socket", socket_path, "--metrics", "0", "--metrics-token-file", loose],
        capture_output=True, text=True, timeout=30)
    check("a token file that others can read is refused with exit 2",
          refused_token.returncode == 2 and "chmod 600" in refused_token.stderr and not os.path.exists(socket_path),
          f"{refused_token.returncode} {refused_token.stderr[-300:]}")
    check("a metrics port already taken stops the daemon with exit 2 and says why",
          refused.returncode == 2 and "cannot serve metrics on 127.0.0.1:" in refused.stderr
          and "Address already in use" in refused.stderr and not os.path.exists(socket_path),
          f"{refused.returncode} {refused.stderr[-300:]}")

    metrics_port, prometheus_port = free_port(), free_port()
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    # A bearer token in a file only this user can read, as Prometheus reads credentials_file.
    token_file = os.path.join(work, "metrics.token")
    token = "t0ken-" + os.urandom(12).hex()
    with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as file:
        file.write(token + "\n")
    bearer = {"Authorization": f"Bearer {token}"}
    daemon = start([os.path.join(BUILD, "nodescope"), "daemon", "--socket", socket_path, "--grace", "300ms",
                    "--metrics", f"127.0.0.1:{metrics_port}", "--metrics-token-file", token_file], merge_stderr=True)
    up = until(lambda: http(metrics, headers=bearer)[0] == 200, seconds=20)
    check("the daemon serves /metrics on the address it was given", up)
    if not up:
        return

    # The endpoint as a scraper and as an adversary sees it.
    status, content_type, text = http(metrics, headers=bearer)
    check("without the token, a scrape is refused (401)", http(metrics)[0] == 401)
    check("with another token too", http(metrics, headers={"Authorization": "Bearer " + "x" * len(token)})[0] == 401)
    check("/metrics answers Prometheus' text format", status == 200 and content_type.startswith("text/plain; version=0.0.4"),
          f"{status} {content_type}")
    check("the daemon's own families are there with no process yet",
          "nodescope_connections{kind=\"host\"}" in text and "# TYPE nodescope_sessions gauge" in text, text[:300])
    check("a Host header of another name is refused (DNS rebinding)",
          raw_status(metrics_port, b"GET /metrics HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n") == 421)
    check("a POST is refused", http(metrics, method="POST", headers=bearer)[0] == 405)
    check("another path is not found", http(f"http://127.0.0.1:{metrics_port}/api", headers=bearer)[0] == 404)

    # Hosts: two leaky samples and a clean one.
    env = dict(os.environ, NODESCOPE_SOCKET=socket_path)
    for args in (["sample-nodes", "--leak", "retain-cycle", "--quiet"], ["sample-modules", "--leak", "retain-cycle", "--quiet"],
                 ["sample-ribs", "--quiet"]):
        run = subprocess.run([os.path.join(BUILD, args[0])] + args[1:], env=env, capture_output=True, text=True, timeout=120)
        check(f"{args[0]} ran under the daemon", run.returncode == 0, run.stdout[-300:] + run.stderr[-300:])
    total, per_process = until(lambda: (lambda counts: counts if counts[0] >= 2 else None)(leak_counts(socket_path)), seconds=20) \
        or leak_counts(socket_path)
    check("nodescope leaks sees the two samples' leaks", total >= 2 and per_process.get("sample-ribs", 0) == 0, f"{per_process}")

    lint = subprocess.run(["promtool", "check", "metrics"], input=http(metrics, headers=bearer)[2], capture_output=True, text=True)
    check("promtool check metrics finds nothing to say about the exposition", lint.returncode == 0 and not lint.stdout.strip(),
          lint.stdout + lint.stderr)
    rules = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True)
    check("promtool check rules accepts docs/fleet/nodescope-rules.yml", rules.returncode == 0, rules.stdout + rules.stderr)

    # A real Prometheus scrapes the daemon and evaluates the rules.
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as file:
        file.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {RULES}
scrape_configs:
  - job_name: nodescope
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ["127.0.0.1:{metrics_port}"]
""")
    prometheus = start(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={os.path.join(work, 'data')}",
                        f"--web.listen-address=127.0.0.1:{prometheus_port}", "--log.level=warn"], merge_stderr=True)
    ready = until(lambda: http(f"http://127.0.0.1:{prometheus_port}/-/ready")[0] == 200, seconds=30)
    check("Prometheus started", ready, "" if ready else prometheus.stdout.read() if prometheus.poll() is not None else "")
    if not ready:
        return

    def scraped_total():
        _, answer = query(prometheus_port, 'sum(nodescope_process_leaks{verdict="leaked"})')
        result = answer["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    seen = until(lambda: scraped_total() == total, seconds=30)
    check("Prometheus' query API answers the leaked count of nodescope leaks", seen, f"{scraped_total()} against {total}")
    _, answer = query(prometheus_port, 'sum by (process) (nodescope_process_leaks{verdict="leaked"})')
    scraped = {sample["metric"]["process"]: float(sample["value"][1]) for sample in answer["data"]["result"]}
    check("and the same count per app", all(scraped.get(name, 0) == count for name, count in per_process.items()),
          f"{scraped} against {per_process}")
    _, answer = query(prometheus_port, 'up{job="nodescope"}')
    check("the scrape target is up", [sample["value"][1] for sample in answer["data"]["result"]] == ["1"], f"{answer}")

    status, _, body = http(f"http://127.0.0.1:{prometheus_port}/api/v1/rules")
    groups = json.loads(body)["data"]["groups"] if status == 200 else []
    rules_health = [rule.get("health") for group in groups for rule in group["rules"]]
    check("the rules are loaded and evaluate", groups and all(health == "ok" for health in rules_health), f"{rules_health}")

    def firing():
        _, _, body = http(f"http://127.0.0.1:{prometheus_port}/api/v1/alerts")
        alerts = json.loads(body)["data"]["alerts"]
        return sorted(alert["labels"]["process"] for alert in alerts
                      if alert["labels"]["alertname"] == "NodescopeNodesLeaked" and alert["state"] == "firing")

    fired = until(lambda: firing() == sorted(name for name, count in per_process.items() if count > 0), seconds=30)
    check("NodescopeNodesLeaked fires for each leaky app, not for the clean one", fired, f"{firing()} against {per_process}")

    with open(DASHBOARD) as file:
        dashboard = json.load(file)
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    bad = []
    for expression in expressions:
        status, answer = query(prometheus_port, expression)
        if status != 200 or answer.get("status") != "success":
            bad.append((expression, answer.get("error")))
    check(f"every query of the dashboard ({len(expressions)}) runs on the real Prometheus", not bad and expressions, f"{bad}")
    _, answer = query(prometheus_port, "sum by (process) (nodescope_process_live_nodes)")
    check("the dashboard's live-nodes query names the three apps",
          {sample["metric"]["process"] for sample in answer["data"]["result"]} >= {"sample-nodes", "sample-modules", "sample-ribs"},
          f"{answer['data']['result']}")

    # A daemon that stops answering (SIGSTOP): the scrape fails and Prometheus marks the target
    # down; once it resumes, it is up again and nothing was lost.
    daemon.send_signal(signal.SIGSTOP)
    down = until(lambda: [s["value"][1] for s in query(prometheus_port, 'up{job="nodescope"}')[1]["data"]["result"]] == ["0"],
                 seconds=30)
    daemon.send_signal(signal.SIGCONT)
    check("a stopped daemon is a target down", down)
    back = until(lambda: [s["value"][1] for s in query(prometheus_port, 'up{job="nodescope"}')[1]["data"]["result"]] == ["1"]
                 and scraped_total() == total, seconds=30)
    check("and up again with the same counts once it resumes", back)
    shutil.rmtree(work, ignore_errors=True)


try:
    main()
finally:
    stop_children()
sys.exit(checks.finish("fleet"))
