"""The loop verifier's rooms (verify_loop.py is their command line).

records.py: the verifier's own copy of the rules and the record schemas, and how a loop record is read;
shape.py: each field of a record; check.py: one loop folder; outcome.py: its stop, decisions and timeouts
re-derived; clocks.py: a record's clocks; resumed.py: a resumed record's segments and judgements; older.py:
records of an older workspace; explain.py: `--explain`; findings.py: every finding's kind, fields and Chinese
sentence; proposals.py: a model loop's proposals, each from its own question record (with project/verify_ask.py's
rules).
Nothing in this package imports loop_lab.py, harness.py, export_review.py, the loop's machinery/, proposer/ or
project/assistant/.
"""
