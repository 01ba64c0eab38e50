"""The notes assistant's core (笔记助手核心): notes and search, the three tools, the guarded tool
loop, the model client, and the offline demo model.

Modules, each with one job: `notes` (loading, exact-phrase search), `ranking` (Chinese bigram
BM25 for questions in a learner's words), `tools` (schemas + run_tool), `agent` (run_question
and its named guard checks), `cycle` (the no-progress detector and its reminder), `history`
(what the API accepts, sealing, reminders), `budget` (the token budget), `client` (ChatClient),
`retry` (the SDK retry rule), `transport` (one HTTP request within a deadline), `errors` (failure
classes and their Chinese sentences), `config` (defaults and the environment), `models` (make_model:
which model a command uses), `text` (normalize: the one form text is compared in), `demo_model` (offline
DemoModel), `passages` (the sentences of a note that answer a question), `followup` (a short
follow-up question read with the one before). The rules are written out in docs/assistant/DESIGN.md. Nothing is imported here so
that each command loads only what it uses.
"""
