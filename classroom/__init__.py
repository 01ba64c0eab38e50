"""The teacher's and the student's classroom tools around verify_loop.py (its `--class` and `--pack`).

platforms.py: who handed in what, by each learning platform's names; intake.py: what each entry of a class
folder is; check.py: one row per student; copies.py: the same records or clocks in two submissions;
report.py: what is written for people; roster.py: the platform's roster and the grades file; upload.py: the
feedback ZIP; releases.py: the course's earlier releases; hand_in.py: the student's `--pack`; pitfalls.py: the
mistakes `--pack` tells the student of before packing. Nothing in this package imports loop_lab.py, harness.py,
export_review.py or the loop's machinery/.
"""
