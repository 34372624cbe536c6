"""An OpenAI Agents SDK agent as its users run it with OpenInference's instrumentation,
exporting its spans over OTLP/HTTP (to OTEL_EXPORTER_OTLP_ENDPOINT).

Run in the emitters' venv (`make emitters`): `python openai_agents_agent.py MODEL_URL PROMPT`.
The agent has one tool, `get_weather`, whose calls it counts on stderr (`tool calls: N`).
"""

import asyncio
import sys

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "agents-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
set_tracing_disabled(False)
calls = 0


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    global calls
    calls += 1
    return f"Sunny in {city}"


async def main() -> None:
    client = AsyncOpenAI(base_url=sys.argv[1], api_key="test-key", max_retries=0)
    agent = Agent(
        name="Weather agent",
        instructions="You are a weather bot.",
        model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client),
        tools=[get_weather],
    )
    result = await Runner.run(agent, sys.argv[2])
    print(result.final_output)


asyncio.run(main())
print(f"tool calls: {calls}", file=sys.stderr)
provider.shutdown()
