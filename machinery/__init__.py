"""The loop's machinery: what loop_lab.py uses but a learner need not read to follow the lesson.

executor.py: one attempt in a process of its own, ended at its time limit (--attempt-timeout);
interrupts.py: when Ctrl-C and termination are answered, held back or ignored;
arguments.py: the command line's options and ranges, and names already used;
progress.py: what the person reads on stderr, and how a hand-off says attempts and what they left;
resume.py: every loop's lock (is it live?), and `--resume`: its checks and its judgement of the attempt in flight.
Each module's docstring says what it guarantees. None of them imports loop_lab.py: they are told what to
run. Every module here runs when the loop runs, so each is one of the loop's watched files (docs/loop/TASK.md).
"""
