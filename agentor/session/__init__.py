"""One run of an `Agentor`, made from the agent's configuration frozen for the call
(`agentor.session.config.AgentConfig`) and the call's own options
(`agentor.session.options.CallOptions`), as the OpenAI Agents SDK's `Runner.run(agent,
run_config=)` keeps them apart: nothing copies and edits the agent for a call.

`agentor.session.run.RunSession` holds the run from its lock to its release: every verb that
runs a segment (run, resume, fork, replay) goes through it.
"""
