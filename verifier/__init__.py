"""The loop verifier's rooms (verify_loop.py is their command line).

records.py: the verifier's own copy of the rules, and how a loop record is read and shaped;
check.py: one loop folder; clocks.py: a record's clocks; older.py: records of an older workspace;
explain.py: `--explain`.
Nothing in this package imports loop_lab.py, harness.py, export_review.py or the loop's machinery/.
"""
