"""The development model's side of `loop_lab.py --scenario model`: a model proposes, the loop disposes.

proposal.py: the question each proposal asks (with the feedback so far), the one read-only tool
(`list_samples`) and the rule a final reply must follow to be a proposal (`NotAProposal`);
budget.py: the loop's own budget of HTTP requests, admitted before every request, retries included;
server.py: the local mock the loop starts (127.0.0.1, script mode) and always ends, also when the loop is killed;
developer.py: one proposal asked through the notes assistant's retrying client and kept as a question record;
scenario.py: the model scenario's part of the loop (its record's entries, its context files, its stops' words);
options.py: where the development model comes from, checked before anything runs.
Only the model scenario imports this package (the six lesson cases never load it, nor the client). Nothing here
decides whether a proposal runs or whether an attempt passed: the loop's scope check and the independent check
do, never the model's claim.
"""
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent / "project"


def use_project():
    """The notes assistant's packages (assistant/, mockapi/) importable by their own names, as project/'s programs
    import them."""
    if str(PROJECT) not in sys.path:
        sys.path.insert(0, str(PROJECT))
