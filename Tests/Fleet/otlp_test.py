#!/usr/bin/env python3
"""`nodescope check --otlp-endpoint` into a real OTLP/HTTP receiver: the receiver is an HTTP
server started here that decodes every body with the OpenTelemetry project's own protobuf
definitions (PyPI `opentelemetry-proto`), and the check runs real hosts (sample-nodes with a leak,
and the fixture test package's attributed tests under `swift test`). Every log record must match the check's own
JSON report: one record per leak, its verdict, path, fingerprint, attach site, test, retain path
and suspect; the resource names the process, the command and the CI's repository, branch and
commit. Also: an endpoint that never answers delays the check's exit by less than a second, an
endpoint that fails is said and changes no exit code, and bad settings are refused (exit 2).
And the daemon (`daemon --otlp-endpoint`): one record per verdict that `nodescope leaks` shows,
each with its retain path; with an endpoint that never answers it still answers at once, and
logs the failure once.

Run by tools/test; prints one line per check and "otlp: N passed, M failed" at the end; exits 1
when a check failed. Usage: otlp_test.py BUILD_DIR
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Support", "python"))
from checks import check, start, stop_children, until  # noqa: E402
import checks  # noqa: E402

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODESCOPE = os.path.join(BUILD, "nodescope")
SAMPLE = os.path.join(BUILD, "sample-nodes")
FIXTURE = os.path.join(ROOT, "Tests", "Fixtures", "LeakyPackage")
FIXTURE_BUILD = "/tmp/nodescope-fixture-build"


class Receiver:
    """An OTLP/HTTP receiver: takes POST /v1/logs with a protobuf body and decodes it."""

    def __init__(self, status=200):
        self.requests = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                request = logs_service_pb2.ExportLogsServiceRequest()
                request.ParseFromString(body)
                with receiver.lock:
                    receiver.requests.append((self.path, dict(self.headers), request, len(body)))
                answer = logs_service_pb2.ExportLogsServiceResponse().SerializeToString() if status == 200 else b"no"
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def records(self):
        """(resource attributes, log record) for every record received."""
        result = []
        with self.lock:
            for _, _, request, _ in self.requests:
                for resource_logs in request.resource_logs:
                    resource = attributes(resource_logs.resource.attributes)
                    for scope_logs in resource_logs.scope_logs:
                        for record in scope_logs.log_records:
                            result.append((resource, scope_logs.scope.name, record))
        return result

    def stop(self):
        self.server.shutdown()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(item) for item in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(pairs):
    return {pair.key: value(pair.value) for pair in pairs}


def run_check(arguments, command, environment=None, seconds=300):
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("OTEL_") or name.startswith("GITHUB_") or name == "NODESCOPE_SOCKET":
            del env[name]
    env.update(environment or {})
    started = time.monotonic()
    done = subprocess.run([NODESCOPE, "check"] + arguments + ["--"] + command, env=env, capture_output=True, text=True,
                          timeout=seconds)
    return done.returncode, done.stderr, time.monotonic() - started


def leak_records(report):
    """Every leak record of a check's JSON report: its groups, each as many times as it occurred."""
    result = []
    for group in report["leaks"]:
        result += [group] * group.get("occurrences", 1)
    return result


def main():
    scratch = tempfile.mkdtemp(prefix="nsotlp-")
    report_file = os.path.join(scratch, "report.json")
    receiver = Receiver()
    ci = {"GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "team/app", "GITHUB_REF_NAME": "feature/x",
          "GITHUB_SHA": "0123456789abcdef", "GITHUB_RUN_ID": "42",
          "OTEL_RESOURCE_ATTRIBUTES": "team=mobile,deployment.environment.name=ci%20linux",
          "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cret"}

    # 1. A sample with a leak: one record per leak, as the JSON report says.
    status, stderr, _ = run_check(["--json", report_file, "--otlp-endpoint", receiver.url()],
                                  [SAMPLE, "--leak", "retain-cycle", "--quiet"], ci)
    check("check on a leaky sample exits 1 with an endpoint set", status == 1, stderr[-2000:])
    report = json.load(open(report_file))
    expected = leak_records(report)
    records = receiver.records()
    wire = sum(request[3] for request in receiver.requests)
    check("the receiver got one log record per leak (%d, %d bytes on the wire)" % (len(expected), wire),
          len(records) == len(expected) > 0, "%d records" % len(records))
    check("the check says where they went", "leak log records sent to %s/v1/logs" % receiver.url() in stderr, stderr[-800:])
    paths = {request[0] for request in receiver.requests}
    headers = [request[1] for request in receiver.requests]
    check("posted to /v1/logs as protobuf", paths == {"/v1/logs"} and all(
        h.get("Content-Type") == "application/x-protobuf" for h in headers), str(paths))
    check("OTEL_EXPORTER_OTLP_HEADERS are sent", all(h.get("api-key") == "s3cret" for h in headers))
    if records:
        resource, scope, record = records[0]
        group = expected[0]
        attrs = attributes(record.attributes)
        check("the resource names the process", resource.get("service.name") == "sample-nodes"
              and resource.get("process.pid") == group["pid"] and resource.get("process.executable.name") == "sample-nodes",
              str(resource))
        check("the resource names the command and the CI's repository, branch, commit and run",
              resource.get("nodescope.check.command", "").endswith("sample-nodes --leak retain-cycle --quiet")
              and resource.get("vcs.repository.url.full") == "https://github.example/team/app"
              and resource.get("vcs.ref.head.name") == "feature/x" and resource.get("vcs.ref.head.revision") == "0123456789abcdef"
              and resource.get("cicd.pipeline.run.id") == "42", str(resource))
        check("OTEL_RESOURCE_ATTRIBUTES are in the resource, percent-decoded",
              resource.get("team") == "mobile" and resource.get("deployment.environment.name") == "ci linux", str(resource))
        check("the scope is nodescope", scope == "nodescope")
        check("a leak is an ERROR record named nodescope.leak",
              record.severity_number == 17 and record.severity_text == "ERROR" and record.event_name == "nodescope.leak")
        check("its verdict, path, kind and fingerprint are the report's",
              attrs.get("nodescope.verdict") == "leaked" and attrs.get("nodescope.node.path") == group["path"]
              and attrs.get("nodescope.node.kind") == group["kind"]
              and attrs.get("nodescope.leak.fingerprint") == group["fingerprint"], str(attrs))
        site = group["attachSite"]
        check("the attach site is code.file.path and code.line.number",
              attrs.get("code.file.path") == site["file"] and attrs.get("code.line.number") == site["line"], str(attrs))
        retainers = group["retainers"][0]
        suspect = retainers["suspectClosure"]
        check("the retain path and the suspect are there, with the line to change",
              attrs.get("nodescope.retain_path") == retainers["text"]
              and attrs.get("nodescope.suspect") == 'Session.listeners[0]'
              and attrs.get("nodescope.suspect.closure") == suspect["symbol"]
              and attrs.get("nodescope.suspect.file.path") == suspect["file"]
              and attrs.get("nodescope.suspect.line.number") == suspect["line"], str(attrs))
        check("the body says it in words", record.body.string_value.startswith("leaked: ProfileFlow (Flow), still alive")
              and "made at ProfileNode.swift:20" in record.body.string_value, record.body.string_value)
        now = time.time_ns()
        check("the record's time is when it was flagged, in Unix time",
              now - 120 * 10**9 < record.time_unix_nano <= record.observed_time_unix_nano <= now)

    # 2. The fixture test package under swift test: the record names the test.
    fixture = Receiver()
    status, stderr, _ = run_check(
        ["--json", report_file, "--otlp-endpoint", fixture.url()],
        ["swift", "test", "--package-path", FIXTURE, "--scratch-path", FIXTURE_BUILD, "--filter", "AttributedTests"])
    check("check on the fixture package exits 1", status == 1, stderr[-2000:])
    report = json.load(open(report_file))
    expected = leak_records(report)
    records = fixture.records()
    check("one record per leak of the fixture (%d)" % len(expected), len(records) == len(expected) > 0, "%d" % len(records))
    def test_name(test):
        return None if test is None else (test["name"] if not test["suite"] else test["suite"] + "/" + test["name"])
    got = sorted((attributes(rec.attributes).get("nodescope.test") or "", r.get("service.name")) for r, _, rec in records)
    want = sorted((test_name(g["test"]) or "", g["processName"]) for g in expected)
    check("each record names its test and its process, as the report does",
          got == want and all(name for name, _ in got), "%s against %s" % (got, want))
    fixture.stop()

    # 3. An endpoint that never answers: the exit comes less than a second after its usual time.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    usual = []
    slow = []
    for _ in range(5):
        _, _, seconds = run_check([], [SAMPLE, "--leak", "retain-cycle", "--quiet"])
        usual.append(seconds)
        status, stderr, seconds = run_check(["--otlp-endpoint", "http://127.0.0.1:%d" % silent.getsockname()[1]],
                                            [SAMPLE, "--leak", "retain-cycle", "--quiet"])
        slow.append(seconds)
    check("with an endpoint that never answers, check still exits 1 and says the records were not sent",
          status == 1 and "not sent" in stderr and "no answer within the export's bound" in stderr, stderr[-800:])
    check("and exits less than a second after its usual time (median %.2f s against %.2f s)" % (
        sorted(slow)[2], sorted(usual)[2]), sorted(slow)[2] - sorted(usual)[2] < 1.0)
    silent.close()

    # 4. An endpoint that fails: said, and the exit code is the verdict's.
    failing = Receiver(status=503)
    status, stderr, _ = run_check(["--otlp-endpoint", failing.url()], [SAMPLE, "--leak", "retain-cycle", "--quiet"])
    check("an endpoint answering 503 is said, and check still exits 1",
          status == 1 and "answered 503" in stderr, stderr[-800:])
    failing.stop()
    status, stderr, _ = run_check(["--quiet", "--otlp-endpoint", receiver.url()], [SAMPLE, "--quiet"])
    check("a clean run exits 0 and posts nothing", status == 0 and stderr == "", stderr[-800:])

    # 5. Settings that cannot work are refused before the command runs.
    for arguments, environment, words in [
        (["--otlp-endpoint", "ftp://collector:4318"], {}, "give an http:// or https:// URL"),
        (["--otlp-endpoint", "http://user:pw@collector:4318"], {}, "no user or password"),
        ([], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "only http/protobuf"),
        ([], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "give milliseconds"),
        ([], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_HEADERS": "key=%zz"}, "OTEL_EXPORTER_OTLP_HEADERS"),
    ]:
        status, stderr, _ = run_check(arguments, ["/bin/true"], environment)
        check("refused with exit 2: %s" % words, status == 2 and words in stderr and "%zz" not in stderr, stderr[-500:])
    status, _, _ = run_check([], [SAMPLE, "--leak", "retain-cycle", "--quiet"],
                             {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url(), "OTEL_SDK_DISABLED": "true"})
    before = len(receiver.records())
    check("OTEL_SDK_DISABLED=true turns the export off", status == 1 and len(receiver.records()) == before)
    receiver.stop()

    # 6. The daemon: each verdict as a record, posted once its host's explanation is in.
    live = Receiver()
    socket_path = os.path.join(scratch, "d.sock")
    daemon = start([NODESCOPE, "daemon", "--socket", socket_path, "--grace", "300ms", "--otlp-endpoint", live.url()],
                   merge_stderr=True)
    check("the daemon starts with --otlp-endpoint", until(lambda: os.path.exists(socket_path), seconds=20))
    env = dict(os.environ, NODESCOPE_SOCKET=socket_path)
    for args in (["sample-nodes", "--leak", "retain-cycle", "--quiet"], ["sample-modules", "--leak", "retain-cycle", "--quiet"],
                 ["sample-ribs", "--quiet"]):
        subprocess.run([os.path.join(BUILD, args[0])] + args[1:], env=env, capture_output=True, text=True, timeout=120)
    leaks = subprocess.run([NODESCOPE, "leaks", "--socket", socket_path, "--format", "json"], capture_output=True, text=True,
                           timeout=30)
    expected = leak_records(json.loads(leaks.stdout))
    until(lambda: len(live.records()) >= len(expected), seconds=20)
    time.sleep(1.5)
    records = live.records()
    got = sorted((r.get("service.name"), attributes(rec.attributes).get("nodescope.leak.fingerprint"),
                  attributes(rec.attributes).get("nodescope.verdict")) for r, _, rec in records)
    want = sorted((g["processName"], g["fingerprint"], "retained_by_global" if g.get("retainedByGlobal") else g["verdict"])
                  for g in expected)
    check("the daemon posts one record per verdict of nodescope leaks, with its fingerprint (%d)" % len(want),
          got == want and len(want) >= 2, "%s against %s" % (got, want))
    check("each posted after its explanation arrived: it has its retain path",
          all("nodescope.retain_path" in attributes(rec.attributes) for _, _, rec in records))
    daemon.terminate()
    daemon.wait(timeout=20)
    live.stop()

    # 7. A daemon whose endpoint never answers: still answers its clients, and says so once.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    socket_path = os.path.join(scratch, "s.sock")
    daemon = start([NODESCOPE, "daemon", "--socket", socket_path, "--grace", "300ms", "--otlp-endpoint",
                    "http://127.0.0.1:%d" % silent.getsockname()[1]], merge_stderr=True,
                   env=dict(os.environ, OTEL_EXPORTER_OTLP_TIMEOUT="3000"))
    until(lambda: os.path.exists(socket_path), seconds=20)
    env = dict(os.environ, NODESCOPE_SOCKET=socket_path)
    subprocess.run([SAMPLE, "--leak", "retain-cycle", "--quiet"], env=env, capture_output=True, timeout=120)
    started = time.monotonic()
    leaks = subprocess.run([NODESCOPE, "leaks", "--socket", socket_path, "--format", "json"], capture_output=True, text=True,
                           timeout=30)
    check("with an endpoint that never answers, the daemon answers nodescope leaks at once (%.2f s)" % (
        time.monotonic() - started), time.monotonic() - started < 2.0 and json.loads(leaks.stdout or "{}").get(
            "counts", {}).get("leaked", 0) >= 1, "%d %s" % (leaks.returncode, leaks.stderr[-300:]))
    time.sleep(5)
    # A second leak, and the daemon stopped while its record waits: the last post is bounded.
    subprocess.run([SAMPLE, "--leak", "retain-cycle", "--quiet"], env=env, capture_output=True, timeout=120)
    started = time.monotonic()
    daemon.terminate()
    output = daemon.communicate(timeout=20)[0]
    stopped = time.monotonic() - started
    check("stopped with records waiting, the daemon exits within 3 s (%.2f s)" % stopped, stopped < 3.0)
    check("and logs the failing export once for the outage", output.count("OTLP export failing") == 1, output[-1500:])
    silent.close()
    stop_children()
    return checks.finish("otlp")


if __name__ == "__main__":
    sys.exit(main())
