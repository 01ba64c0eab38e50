"""The teacher's and the student's classroom tools around verify_loop.py (its `--class` and `--pack`).

intake.py: what each entry of a class folder is; check.py: one row per student; report.py: what is
written for people; hand_in.py: the student's `--pack`. Nothing in this package imports loop_lab.py,
harness.py, export_review.py or the loop's machinery/.
"""
