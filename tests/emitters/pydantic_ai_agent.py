"""A pydantic-ai agent as its users run it, instrumented, exporting its spans over OTLP/HTTP.

Run in the emitters' venv (`make emitters`): `python pydantic_ai_agent.py MODEL_URL PROMPT`.
The endpoint comes from OTEL_EXPORTER_OTLP_ENDPOINT, as for any OpenTelemetry SDK user. The
agent has one tool, `get_weather`, whose calls it counts on stderr (`tool calls: N`).
"""

import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

model = OpenAIChatModel(
    "gpt-4o-mini", provider=OpenAIProvider(base_url=sys.argv[1], api_key="test-key")
)
agent = Agent(model, name="weather", instructions="You are a weather bot.")
agent.instrument = True
calls = 0


@agent.tool_plain
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    global calls
    calls += 1
    return f"Sunny in {city}"


result = agent.run_sync(sys.argv[2])
print(result.output)
print(f"tool calls: {calls}", file=sys.stderr)
provider.shutdown()
