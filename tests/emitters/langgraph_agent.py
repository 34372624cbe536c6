"""A LangGraph agent (its prebuilt ReAct agent on langchain-openai) as its users run it with
OpenInference's LangChain instrumentation, exporting spans over OTLP/HTTP (to
OTEL_EXPORTER_OTLP_ENDPOINT).

Run in the emitters' venv (`make emitters`): `python langgraph_agent.py MODEL_URL PROMPT`.
The agent has one tool, `get_weather`, whose calls it counts on stderr (`tool calls: N`).
"""

import sys
import warnings

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

warnings.simplefilter("ignore")
from langgraph.prebuilt import create_react_agent  # noqa: E402

provider = TracerProvider(resource=Resource.create({"service.name": "graph-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
LangChainInstrumentor().instrument(tracer_provider=provider)
calls = 0


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    global calls
    calls += 1
    return f"Sunny in {city}"


model = ChatOpenAI(model="gpt-4o-mini", base_url=sys.argv[1], api_key="test-key", max_retries=0)
agent = create_react_agent(model, [get_weather], prompt="You are a weather bot.", name="weather")
state = agent.invoke({"messages": [("user", sys.argv[2])]})
print(state["messages"][-1].content)
print(f"tool calls: {calls}", file=sys.stderr)
provider.shutdown()
