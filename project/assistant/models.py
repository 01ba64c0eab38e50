"""Which model a command uses: `make_model` gives the real API's ChatClient when DEEPSEEK_API_KEY is set
(non-empty after stripping) and --offline is not given, else the offline demo model.

Each is imported only when chosen, so an offline command never loads the HTTP client. Shared with:
`config` (the environment's values), `client` / `demo_model` (the two models), `app.py` (calls `make_model`).
"""
import os

from . import config


def make_model(offline: bool = False, env=os.environ, **client_options):
    """ChatClient when DEEPSEEK_API_KEY is set (and not offline), else the offline demo model."""
    key = config.api_key(env) if not offline else ""
    if not key:
        from .demo_model import DemoModel
        return DemoModel()
    from .client import ChatClient
    model = (env.get("DEEPSEEK_MODEL") or "").strip() or config.DEFAULT_MODEL
    return ChatClient(config.base_url(env), key, model=model, timeout=config.timeout(env),
                      deadline=config.deadline(env), **client_options)
