"""Runs of any agent framework, from the OpenTelemetry spans it sends (docs/collect.md).

`spans` is the one shape a received span takes; `otlp_proto` and `otlp_json` decode OTLP
requests into it; `conventions` reads the GenAI and OpenInference attributes; `mapping` makes
runs of spans; `writing` puts them into a store so that the same spans twice change nothing;
`files` reads the OTLP files `agentor import` takes.
"""
