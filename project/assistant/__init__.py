"""The notes assistant's core (笔记助手核心): notes and search, the three tools, the model
client with SDK-style retries, the offline demo model, and the guarded tool loop.

Modules, each with one job: `notes` (load + phrase search), `tools` (schemas + run_tool),
`client` (ChatClient, API errors, make_model), `demo_model` (offline DemoModel),
`agent` (run_question and its guards). Nothing is imported here so that each command
loads only what it uses.
"""
