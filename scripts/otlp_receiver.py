#!/usr/bin/env python3
"""A small OTLP/HTTP receiver for the tests: accepts what Spin's exporter
sends to /v1/traces and /v1/logs (protobuf, gzip or not), decodes it with the
official opentelemetry-proto messages, and appends one JSON object a span or
log record to a file, which a test reads.

Usage: .venv/bin/python scripts/otlp_receiver.py PORT OUT.jsonl
Prints "listening <port>" once it accepts connections.
"""
import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind in ("string_value", "bool_value", "int_value", "double_value") else str(v)


def attributes(attrs):
    return {a.key: value(a.value) for a in attrs}


class Receiver(BaseHTTPRequestHandler):
    out = None

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        records = []
        if self.path == "/v1/traces":
            request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
            reply = trace_service_pb2.ExportTraceServiceResponse()
            for rs in request.resource_spans:
                resource = attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        records.append({
                            "signal": "span", "trace_id": s.trace_id.hex(), "span_id": s.span_id.hex(),
                            "parent_span_id": s.parent_span_id.hex(), "name": s.name, "kind": s.kind,
                            "start_ns": s.start_time_unix_nano, "end_ns": s.end_time_unix_nano,
                            "attributes": attributes(s.attributes), "status": s.status.code,
                            "service": resource.get("service.name"),
                        })
        elif self.path == "/v1/logs":
            request = logs_service_pb2.ExportLogsServiceRequest.FromString(body)
            reply = logs_service_pb2.ExportLogsServiceResponse()
            for rl in request.resource_logs:
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        records.append({
                            "signal": "log", "trace_id": r.trace_id.hex(), "span_id": r.span_id.hex(),
                            "body": value(r.body), "attributes": attributes(r.attributes),
                        })
        elif self.path == "/v1/metrics":
            metrics_service_pb2.ExportMetricsServiceRequest.FromString(body)
            reply = metrics_service_pb2.ExportMetricsServiceResponse()
        else:
            self.send_response(404)
            self.end_headers()
            return
        with open(self.out, "a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        data = reply.SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    Receiver.out = out
    server = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
