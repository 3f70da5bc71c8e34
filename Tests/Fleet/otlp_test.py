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
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Support", "python"))
from checks import check, start, stop_children, until  # noqa: E402
import checks  # noqa: E402

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2  # noqa: E402
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2  # noqa: E402
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODESCOPE = os.path.join(BUILD, "nodescope")
SAMPLE = os.path.join(BUILD, "sample-nodes")
FIXTURE = os.path.join(ROOT, "Tests", "Fixtures", "LeakyPackage")
FIXTURE_BUILD = "/tmp/nodescope-fixture-build"


SIGNALS = {
    "/v1/logs": (logs_service_pb2.ExportLogsServiceRequest, logs_service_pb2.ExportLogsServiceResponse),
    "/v1/traces": (trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
}


class Receiver:
    """An OTLP/HTTP receiver: takes POST /v1/logs, /v1/traces and /v1/metrics with protobuf bodies
    and decodes each with its signal's message."""

    def __init__(self, status=200):
        self.requests = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                kinds = SIGNALS.get(self.path)
                if kinds is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = kinds[0]()
                request.ParseFromString(body)
                with receiver.lock:
                    receiver.requests.append((self.path, dict(self.headers), request, len(body)))
                answer = kinds[1]().SerializeToString() if status == 200 else b"no"
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

    def of(self, path):
        with self.lock:
            return [request for p, _, request, _ in self.requests if p == path]

    def records(self):
        """(resource attributes, scope name, log record) for every record received."""
        result = []
        for request in self.of("/v1/logs"):
            for resource_logs in request.resource_logs:
                resource = attributes(resource_logs.resource.attributes)
                for scope_logs in resource_logs.scope_logs:
                    for record in scope_logs.log_records:
                        result.append((resource, scope_logs.scope.name, record))
        return result

    def spans(self):
        """(resource attributes, span) for every span received."""
        result = []
        for request in self.of("/v1/traces"):
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        result.append((resource, span))
        return result

    def points(self, request_index=None):
        """(resource attributes, metric name, point attributes, value) of every data point, of
        every request or of one (-1: the last)."""
        requests = self.of("/v1/metrics")
        if request_index is not None:
            requests = requests[request_index:][:1]
        result = []
        for request in requests:
            for resource_metrics in request.resource_metrics:
                resource = attributes(resource_metrics.resource.attributes)
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        data = metric.gauge if metric.HasField("gauge") else metric.sum
                        for point in data.data_points:
                            result.append((resource, metric.name, attributes(point.attributes), point.as_int))
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


def check_trace(receiver, report, recording):
    """The trace of a check run: the run's span, a span per process under it, a span per node
    under its parent's, as many as `nodescope timeline` counts in the run's recording."""
    spans = receiver.spans()
    by_id = {span.span_id: (resource, span) for resource, span in spans}
    runs = [span for resource, span in spans if span.name == "nodescope check" and resource.get("service.name") == "nodescope"]
    check("one trace: every span has the run's trace id", len({span.trace_id for _, span in spans}) == 1 and len(runs) == 1,
          "%d runs" % len(runs))
    if len(runs) != 1:
        return
    run = runs[0]
    run_attributes = attributes(run.attributes)
    check("the run's span has no parent, says the command and the exit, and is an error (exit 1)",
          run.parent_span_id == b"" and run_attributes.get("nodescope.check.exit_code") == "1"
          and run_attributes.get("nodescope.check.command", "").endswith("--leak retain-cycle --quiet")
          and run.status.code == 2 and "new leak" in run.status.message, str(run_attributes) + run.status.message)
    processes = [span for _, span in spans if span.parent_span_id == run.span_id]
    check("one span per process under the run's, as many as the report's processes",
          len(processes) == len(report["processes"]) == 1 and processes[0].name == "sample-nodes", str([p.name for p in processes]))
    nodes = [(resource, span) for resource, span in spans if "nodescope.node.path" in attributes(span.attributes)]
    files = os.listdir(recording) if os.path.isdir(recording) else []
    timeline = subprocess.run([NODESCOPE, "timeline", os.path.join(recording, files[0]), "-o", os.path.join(recording, "t.svg")],
                              capture_output=True, text=True, timeout=60) if files else None
    counted = timeline.stderr.split("wrote ")[-1] if timeline else ""
    check("one span per node: as many as nodescope timeline counts in the run's recording (%d)" % len(nodes),
          timeline is not None and (": %d nodes in " % len(nodes)) in timeline.stderr, counted)
    wrong = []
    for resource, span in nodes:
        path = attributes(span.attributes)["nodescope.node.path"]
        parent = by_id.get(span.parent_span_id)
        parent_path = attributes(parent[1].attributes).get("nodescope.node.path") if parent else None
        if len(path) == 1 and not (parent and parent[1].span_id == processes[0].span_id):
            wrong.append(path)
        elif len(path) > 1 and parent_path != path[:-1]:
            wrong.append(path)
        if not (run.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano <= run.end_time_unix_nano):
            wrong.append(path)
    check("each node's span is under its parent node's (a root under its process's), within the run",
          nodes and not wrong, str(wrong[:5]))
    leaked = [span for _, span in nodes if attributes(span.attributes).get("nodescope.node.outcome") == "leaked"]
    events = [event for span in leaked for event in span.events if event.name == "nodescope.leak"]
    check("a leaked node's span is an error with a nodescope.leak event carrying the report's fingerprint",
          len(leaked) == len(leak_records(report)) and all(span.status.code == 2 for span in leaked)
          and all(attributes(event.attributes).get("nodescope.leak.fingerprint") == report["leaks"][0]["fingerprint"]
                  for event in events) and len(events) == len(leaked), "%d leaked spans" % len(leaked))
    released = [span for _, span in nodes if attributes(span.attributes).get("nodescope.node.outcome") == "released"]
    check("a released node's span ends at its release and carries its detach, with no error",
          released and all(span.status.code == 0 and [e.name for e in span.events] == ["nodescope.detach"] for span in released))


def check_metrics(points, report):
    """A check run's counts as OTLP metrics: each process's leaks by verdict, as the report says."""
    leaked = {}
    for resource, name, point, count in points:
        if name == "nodescope.process.leaks":
            leaked[(resource.get("service.name"), point.get("verdict"))] = count
    want = len([g for g in leak_records(report) if g["verdict"] == "leaked"])
    ingested = [count for _, name, _, count in points if name == "nodescope.process.events_ingested"]
    check("the metrics count the process's leaks by verdict, as the report does (%d leaked)" % want,
          leaked.get(("sample-nodes", "leaked")) == want > 0 and leaked.get(("sample-nodes", "unverified")) == 0, str(leaked))
    check("and the events it sent", ingested and ingested[0] > 0, str(ingested))


def check_test_spans(receiver, report):
    """A check of a test package: one span per test under its process, the test's nodes under it."""
    spans = receiver.spans()
    by_id = {span.span_id: span for _, span in spans}
    tests = {span.name: span for _, span in spans if "nodescope.test" in attributes(span.attributes)
             and "nodescope.node.path" not in attributes(span.attributes)}
    def name(test):
        return test["name"] if not test["suite"] else test["suite"] + "/" + test["name"]
    reported = {name(entry) for entry in report["tests"]}
    leaking = {name(entry) for entry in report["tests"] if entry["leaks"]}
    # A node attached and released before its host's connection was accepted is not in the stream
    # (the host's first snapshot holds the nodes alive then): a test whose nodes all came and went
    # that early has no span; a test with a leak always has one.
    of_nodes = {attributes(span.attributes)["nodescope.test"] for _, span in spans
                if "nodescope.node.path" in attributes(span.attributes) and "nodescope.test" in attributes(span.attributes)}
    check("one span per test whose nodes were streamed, each a test the report names, each leaking test among them (%d)"
          % len(tests), set(tests) == of_nodes and set(tests) <= reported and leaking <= set(tests) and leaking,
          "%s against %s" % (sorted(tests), sorted(reported)))
    lost = []
    for _, span in spans:
        test = attributes(span.attributes).get("nodescope.test")
        if test is None or "nodescope.node.path" not in attributes(span.attributes):
            continue
        ancestor = by_id.get(span.parent_span_id)
        while ancestor is not None and "nodescope.node.path" in attributes(ancestor.attributes):
            ancestor = by_id.get(ancestor.parent_span_id)
        if ancestor is None or ancestor.name != test:
            lost.append(test)
    check("each test's nodes are under its span", not lost, str(lost[:5]))
    failing = {name(entry) for entry in report["tests"] if entry["fails"]}
    failed = {span_name for span_name, span in tests.items() if span.status.code == 2}
    check("a test whose leaks fail the run is an error span, and no other (%d)" % len(failing),
          failed == failing and failing, "%s against %s" % (sorted(failed), sorted(failing)))


def main():
    scratch = tempfile.mkdtemp(prefix="nsotlp-")
    report_file = os.path.join(scratch, "report.json")
    receiver = Receiver()
    ci = {"GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "team/app", "GITHUB_REF_NAME": "feature/x",
          "GITHUB_SHA": "0123456789abcdef", "GITHUB_RUN_ID": "42",
          "OTEL_RESOURCE_ATTRIBUTES": "team=mobile,deployment.environment.name=ci%20linux",
          "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cret"}

    # 1. A sample with a leak: one record per leak, as the JSON report says.
    recording = os.path.join(scratch, "recording")
    status, stderr, _ = run_check(["--json", report_file, "--record", recording, "--otlp-endpoint", receiver.url()],
                                  [SAMPLE, "--leak", "retain-cycle", "--quiet"], ci)
    check("check on a leaky sample exits 1 with an endpoint set", status == 1, stderr[-2000:])
    report = json.load(open(report_file))
    expected = leak_records(report)
    records = receiver.records()
    wire = sum(request[3] for request in receiver.requests)
    check("the receiver got one log record per leak (%d, %d bytes on the wire)" % (len(expected), wire),
          len(records) == len(expected) > 0, "%d records" % len(records))
    check("the check says where they went",
          "OTLP: sent %d leak log records, " % len(expected) in stderr and " to %s\n" % receiver.url() in stderr, stderr[-800:])
    paths = {request[0] for request in receiver.requests}
    headers = [request[1] for request in receiver.requests]
    check("posted to /v1/logs, /v1/traces and /v1/metrics as protobuf", paths == set(SIGNALS) and all(
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

        check_trace(receiver, report, recording)
        check_metrics(receiver.points(), report)

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
    check_test_spans(fixture, report)
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
    before_clean = len(receiver.records())
    status, stderr, _ = run_check(["--quiet", "--otlp-endpoint", receiver.url()], [SAMPLE, "--quiet"])
    check("a clean run exits 0, posts no log record and, with --quiet, says nothing",
          status == 0 and stderr == "" and not receiver.records()[before_clean:], stderr[-800:])

    # 5. Settings that cannot work: refused before the command runs when --otlp-endpoint asks for the
    # export; set only in the environment (perhaps for other programs), they turn it off with a note.
    for arguments, environment, words in [
        (["--otlp-endpoint", "ftp://collector:4318"], {}, "give an http:// or https:// URL"),
        (["--otlp-endpoint", "http://user:pw@collector:4318"], {}, "no user or password"),
        (["--otlp-endpoint", "http://127.0.0.1:1"], {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "only http/protobuf"),
        (["--otlp-endpoint", "http://127.0.0.1:1"], {"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "give milliseconds"),
        (["--otlp-endpoint", "http://127.0.0.1:1"], {"OTEL_EXPORTER_OTLP_HEADERS": "key=%zz"}, "OTEL_EXPORTER_OTLP_HEADERS"),
    ]:
        status, stderr, _ = run_check(arguments, ["/bin/true"], environment)
        check("refused with exit 2: %s" % words, status == 2 and words in stderr and "%zz" not in stderr, stderr[-500:])
    for environment, words in [
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "only http/protobuf"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://collector:4318"}, "give an http:// or https:// URL"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_HEADERS": "key=%zz"}, "OTEL_EXPORTER_OTLP_HEADERS"),
    ]:
        status, stderr, _ = run_check([], ["/bin/true"], environment)
        check("set only in the environment, turned off with a note: %s" % words,
              status == 0 and "OTLP export off: " in stderr and words in stderr and "%zz" not in stderr, stderr[-500:])

    # The run's trace joins the caller's (TRACEPARENT), and the command gets the run's span.
    joined = Receiver()
    parent_trace, parent_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    seen = os.path.join(scratch, "traceparent")
    status, stderr, _ = run_check(["--otlp-endpoint", joined.url()], ["/bin/sh", "-c", 'printf %s "$TRACEPARENT" > ' + seen],
                                  {"TRACEPARENT": "00-%s-%s-01" % (parent_trace, parent_span)})
    runs = [span for _, span in joined.spans() if span.name == "nodescope check"]
    given = open(seen).read() if os.path.exists(seen) else ""
    check("with TRACEPARENT, the run's span is a child of the caller's, in its trace",
          status == 0 and len(runs) == 1 and runs[0].trace_id.hex() == parent_trace and runs[0].parent_span_id.hex() == parent_span,
          "%d %s" % (status, stderr[-500:]))
    check("and the command's TRACEPARENT names the run's span",
          bool(runs) and given == "00-%s-%s-01" % (parent_trace, runs[0].span_id.hex()), given)
    joined.stop()
    status, _, _ = run_check([], [SAMPLE, "--leak", "retain-cycle", "--quiet"],
                             {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url(), "OTEL_SDK_DISABLED": "true"})
    before = len(receiver.records())
    check("OTEL_SDK_DISABLED=true turns the export off", status == 1 and len(receiver.records()) == before)
    receiver.stop()

    # 6. The daemon: each verdict as a record, posted once its host's explanation is in.
    live = Receiver()
    socket_path = os.path.join(scratch, "d.sock")
    daemon = start([NODESCOPE, "daemon", "--socket", socket_path, "--grace", "300ms", "--otlp-endpoint", live.url()],
                   merge_stderr=True, env=dict(os.environ, OTEL_METRIC_EXPORT_INTERVAL="500"))
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
    # The counts as OTLP metrics every 500 ms: the last export has the leaks nodescope leaks lists.
    time.sleep(1.0)
    points = live.points(-1)
    got = {}
    for resource, name, point, count in points:
        if name == "nodescope.process.leaks" and count:
            key = (resource.get("service.name"), point.get("verdict"))
            got[key] = got.get(key, 0) + count
    want = {}
    for group in expected:
        key = (group["processName"], "retained_by_global" if group.get("retainedByGlobal") else group["verdict"])
        want[key] = want.get(key, 0) + 1
    check("the daemon's OTLP metrics count each process's leaks by verdict as nodescope leaks does",
          got == want and len(live.of("/v1/metrics")) >= 2, "%s against %s" % (got, want))
    own = {(name, tuple(sorted(point.items()))): count for resource, name, point, count in points
           if resource.get("service.name") == "nodescope"}
    check("and the daemon's own: sessions ended, connections, what its OTLP export sent",
          own.get(("nodescope.sessions", (("state", "ended"),))) == 3 and ("nodescope.connections", (("kind", "host"),)) in own
          and own.get(("nodescope.otlp.sent", (("signal", "logs"),))) == len(records)
          and own.get(("nodescope.otlp.dropped", (("signal", "logs"),))) == 0, str(own))
    daemon.terminate()
    daemon.wait(timeout=20)
    # Node lives as spans, one trace per process: posted as they end, the rest as the daemon stops.
    spans = live.spans()
    by_trace = {}
    for resource, span in spans:
        by_trace.setdefault(span.trace_id, []).append((resource, span))
    roots = {}
    orphans = []
    for trace_id, members in by_trace.items():
        ids = {span.span_id for _, span in members}
        roots[trace_id] = [(resource.get("service.name"), span.name) for resource, span in members if not span.parent_span_id]
        orphans += [span.name for _, span in members if span.parent_span_id and span.parent_span_id not in ids]
    names = sorted(root[0][0] for root in roots.values() if len(root) == 1)
    check("the daemon's spans: one trace per process, rooted at the process's span (%d traces)" % len(by_trace),
          names == ["sample-modules", "sample-nodes", "sample-ribs"] and all(len(r) == 1 and r[0][0] == r[0][1] for r in roots.values()),
          str(roots))
    check("every span's parent is in its trace", spans and not orphans, str(orphans[:5]))
    flagged = sorted((resource.get("service.name"), attributes(event.attributes).get("nodescope.leak.fingerprint"))
                     for resource, span in spans for event in span.events if event.name == "nodescope.leak")
    check("each verdict of nodescope leaks is an event of its node's span",
          flagged == sorted((g["processName"], g["fingerprint"]) for g in expected), "%s against %s" % (
              flagged, sorted((g["processName"], g["fingerprint"]) for g in expected)))
    live.stop()

    # 7. A daemon whose endpoint never answers: still answers its clients, and says so once.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    socket_path = os.path.join(scratch, "s.sock")
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    metrics_port = free.getsockname()[1]
    free.close()
    daemon = start([NODESCOPE, "daemon", "--socket", socket_path, "--grace", "300ms", "--otlp-endpoint",
                    "http://127.0.0.1:%d" % silent.getsockname()[1], "--metrics", "127.0.0.1:%d" % metrics_port],
                   merge_stderr=True, env=dict(os.environ, OTEL_EXPORTER_OTLP_TIMEOUT="3000"))
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
    try:
        exposition = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10).read().decode()
    except OSError as error:
        exposition = str(error)
    dropped = [line for line in exposition.splitlines() if line.startswith('nodescope_otlp_dropped_total{signal="logs"}')]
    check("/metrics counts the log records the OTLP export dropped",
          dropped and float(dropped[0].split()[-1]) >= 1, exposition[-800:])
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
