"""The strict `response_format` an agent sends is the one the openai SDK itself sends for the
same output type: each model of a corpus (defaults, optionals, nested models, enums, literals,
lists, unions, a recursive model, constraints) is sent once by an agent and once by the real
openai client's `chat.completions.parse(response_format=Model)`, both over HTTP to the tests'
server, and the two request bodies' `response_format` are equal, key order included."""

from __future__ import annotations

import json
from enum import Enum, StrEnum
from typing import Annotated, Any, Literal, Optional

import openai
import pytest
from pydantic import BaseModel, Field

from agentor import Agentor
from tests.openai_server import FakeOpenAI


class Color(StrEnum):
    red = "red"
    green = "green"


class Size(Enum):
    small = 1
    large = 2


class Inner(BaseModel):
    x: int
    label: str = "inner"


class Other(BaseModel):
    y: float


class Defaults(BaseModel):
    n: int = 3
    word: str = "hello"
    note: str | None = None
    ratio: float = 0.5
    flag: bool = False
    tags: list[str] = []


class Optionals(BaseModel):
    a: int | None
    b: Optional[str] = None  # noqa: UP045 (the spelling users write is part of the corpus)
    c: Inner | None = None
    d: list[int] | None = None


class Nested(BaseModel):
    inner: Inner
    described: Inner = Field(description="An inner one, described.")
    given: Inner = Inner(x=1)
    many: list[Inner]


class Enums(BaseModel):
    color: Color
    default_color: Color = Color.green
    described_color: Color = Field(Color.red, description="A colour.")
    kind: Literal["a", "b"] = "a"
    size: Size = Size.small
    maybe_size: Size | None = None


class Lists(BaseModel):
    numbers: list[int]
    rows: list[list[str]]
    inners: list[Inner] = Field(default_factory=list)


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class Unions(BaseModel):
    either: Inner | Other
    scalar: int | str = 0
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    maybe_pet: Cat | Dog | None = None


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Constrained(BaseModel):
    """A model with a docstring, so its schema has a description."""

    age: int = Field(ge=0, le=150, description="Years.")
    code: str = Field(min_length=2, max_length=8, pattern="^[A-Z]+$", title="Code")
    score: float = Field(0.0, multiple_of=0.5)


CORPUS = [Defaults, Optionals, Nested, Enums, Lists, Unions, Node, Constrained]


def refusing(request: dict[str, Any]) -> dict[str, Any]:
    return {"status": 400, "message": "only the request is wanted"}


def sent_by_agent(srv: FakeOpenAI, output_type: type[BaseModel]) -> dict[str, Any]:
    agent = Agentor(
        name="s",
        model="gpt-4o-mini",
        base_url=srv.url,
        api_key="sk",
        max_retries=0,
        output_type=output_type,
    )
    assert agent.run("Answer.").status == "failed"  # the server refuses: only the request counts
    return srv.requests[-1]["response_format"]


def sent_by_sdk(srv: FakeOpenAI, output_type: type[BaseModel]) -> dict[str, Any]:
    client = openai.OpenAI(base_url=srv.url, api_key="sk", max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.parse(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Answer."}],
            response_format=output_type,
        )
    return srv.requests[-1]["response_format"]


@pytest.mark.parametrize("output_type", CORPUS, ids=lambda t: t.__name__)
def test_the_response_format_is_the_one_the_openai_sdk_sends(output_type: type[BaseModel]) -> None:
    with FakeOpenAI(refusing) as srv:
        ours = sent_by_agent(srv, output_type)
        sdks = sent_by_sdk(srv, output_type)
    assert json.dumps(ours, indent=1) == json.dumps(sdks, indent=1)


def test_a_none_default_is_not_sent_and_another_default_is() -> None:
    with FakeOpenAI(refusing) as srv:
        schema = sent_by_agent(srv, Defaults)["json_schema"]["schema"]
    assert "default" not in schema["properties"]["note"]
    assert schema["properties"]["n"]["default"] == 3
