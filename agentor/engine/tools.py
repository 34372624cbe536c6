"""`function_tool`: a Python function as a tool the model can call.

The JSON schema comes from the signature and type hints (through pydantic); Google-style
`Args:` lines of the docstring become parameter descriptions. Sync tools run in a thread,
async ones are awaited. `needs_approval` / `approval_timeout` gate a tool behind a person's
approval (agentor.engine.approval.gating); `on_interrupt` says what a crash during a call means
(agentor.engine.interrupted).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any, overload

from pydantic import ConfigDict, Field, ValidationError, create_model

from agentor.engine.approval.gating import ApprovalRule, check_rule, check_timeout
from agentor.engine.interrupted import check_on_interrupt
from agentor.errors import ToolArgumentsError


def arguments_object(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as the JSON object they must be; `ToolArgumentsError` if not."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ToolArgumentsError(f"arguments are not valid JSON: {exc}") from None
    else:
        data = raw
    if not isinstance(data, dict):
        raise ToolArgumentsError("arguments must be a JSON object")
    return data


class Tool:
    # The MCP server the tool comes from (agentor.engine.mcp); None for a function.
    server: str | None = None

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        needs_approval: ApprovalRule = False,
        approval_timeout: timedelta | None = None,
        on_interrupt: str | None = None,
    ) -> None:
        self.fn = fn
        self.needs_approval = check_rule(needs_approval)
        self.approval_timeout = check_timeout(approval_timeout)
        self.on_interrupt = check_on_interrupt(on_interrupt)
        self.name = name or fn.__name__
        summary, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
        self.description = description if description is not None else summary
        self._model = _params_model(fn, arg_docs)
        self._params: dict[str, Any] | None = None
        self.is_async = inspect.iscoroutinefunction(fn)

    @property
    def schema(self) -> dict[str, Any]:
        """The tool in the chat-completions `tools` shape (a copy of its own: callers may keep
        or change it)."""
        if self._params is None:
            # pydantic builds the JSON schema anew at each call, about a millisecond: every
            # segment of every run asks for it twice (a fleet's worker, thousands of times).
            params = self._model.model_json_schema()
            params.pop("title", None)
            for prop in params.get("properties", {}).values():
                prop.pop("title", None)
            self._params = params
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(self._params),
            },
        }

    def parse_args(self, raw: str | dict[str, Any] | None) -> dict[str, Any]:
        """Validate the model's arguments; raise `ToolArgumentsError` saying what is wrong."""
        data = arguments_object(raw)
        try:
            model = self._model.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {problems}") from None
        return {k: getattr(model, k) for k in type(model).model_fields}

    async def invoke(self, args: dict[str, Any]) -> Any:
        if self.is_async:
            return await self.fn(**args)
        return await asyncio.to_thread(self.fn, **args)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


@overload
def function_tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def function_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: ApprovalRule = False,
    approval_timeout: timedelta | None = None,
    on_interrupt: str | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def function_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: ApprovalRule = False,
    approval_timeout: timedelta | None = None,
    on_interrupt: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """A tool from a function: `@function_tool`, or `@function_tool(name=..., description=...,
    needs_approval=..., approval_timeout=..., on_interrupt=...)`.

    `needs_approval=True` makes every call wait for a person's approval; a function of the
    call's arguments (a dict) decides per call, failing closed (agentor.engine.approval.gating).
    `approval_timeout` (a `timedelta`) makes a call still undecided after it count as rejected.
    `on_interrupt`: what a crash during a call means for the resume: "rerun" runs it again,
    "ask" pauses the run for a person (agentor.engine.interrupted); by default "ask" for a call a
    person approved, else "rerun".
    """
    if fn is not None:
        return Tool(fn)
    # Checked here, so a mistake is refused where the decorator is written.
    rule, timeout = check_rule(needs_approval), check_timeout(approval_timeout)
    policy = check_on_interrupt(on_interrupt)

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name,
            description,
            needs_approval=rule,
            approval_timeout=timeout,
            on_interrupt=policy,
        )

    return wrap


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^\s+(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and `Args:` descriptions."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        m = _SECTION.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if m:
            section, current = m.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            am = _ARG_LINE.match(line)
            if am:
                current = am.group(1).lstrip("*")
                args[current] = am.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), args


def _params_model(fn: Callable[..., Any], arg_docs: dict[str, str]) -> Any:
    sig = inspect.signature(fn)
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception:
        hints = {}
    fields: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, Any)
        default = ... if param.default is param.empty else param.default
        fields[pname] = (annotation, Field(default, description=arg_docs.get(pname)))
    return create_model(f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)


class RecordedTool(Tool):
    """A tool known only from a run's record (its schema on the `run_start`): offered to the
    model as it was, its calls answered from the record by a replay; never run here (a run
    another framework made has no tool here to run)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        function = f if isinstance(f := schema.get("function"), dict) else {}
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a recorded tool needs a name")

        def unavailable(**args: Any) -> Any:
            raise RuntimeError(f"{name} is not available here: only its recorded calls are")

        super().__init__(unavailable, name=name, description=function.get("description") or "")
        parameters = function.get("parameters")
        self._params = (
            copy.deepcopy(parameters)
            if isinstance(parameters, dict)
            else {
                "type": "object",
                "properties": {},
            }
        )

    def parse_args(self, raw: str | dict[str, Any] | None) -> dict[str, Any]:
        """Any JSON object (the recorded schema is the model's to follow; the record answers
        by equal arguments)."""
        return arguments_object(raw)
