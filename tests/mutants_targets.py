"""The test modules each group of the mutation check's mutants runs (tests/mutants.py and the lists it joins)."""

LOOP = ("tests.test_loop_lab", "tests.test_loop_faults", "tests.test_loop_attempt_timeout", "tests.test_verify_loop",
        "tests.test_verify_loop_cli", "tests.test_verify_loop_clocks", "tests.test_verify_loop_files",
        "tests.test_verify_loop_records", "tests.test_promises_loop")
EXECUTOR = ("tests.test_executor", "tests.test_loop_lab", "tests.test_loop_faults", "tests.test_loop_attempt_timeout",
            "tests.test_promises_loop")
VERIFY = ("tests.test_verify_loop", "tests.test_verify_loop_cli", "tests.test_verify_loop_clocks",
          "tests.test_verify_loop_files", "tests.test_verify_loop_records", "tests.test_explain",
          "tests.test_promises_verifier", "tests.test_verifier_holes",
          "tests.test_attack_review")
HARNESS_CHECK = ("tests.test_verify_harness", "tests.test_verify_harness_files", "tests.test_harness")
EXPORT_CHECK = ("tests.test_verify_export", "tests.test_export_fuzz")
CLASS = ("tests.test_class_check", "tests.test_class_cut_short", "tests.test_class_escaping",
         "tests.test_class_intake", "tests.test_hand_in", "tests.test_promises_classroom",
         "tests.test_class_platforms", "tests.test_copies", "tests.test_verifier_holes",
         "tests.test_promises_class_tools", "tests.test_attack_review")
TEACHER = CLASS + ("tests.test_class_roundtrip", "tests.test_teacher_outputs")
ASSISTANT = ("tests.test_assistant_agent", "tests.test_assistant_client", "tests.test_assistant_other_servers",
             "tests.test_assistant_questions",
             "tests.test_assistant_deadline", "tests.test_promises_assistant", "tests.test_promises_assistant_deadline")
QUESTION = ("tests.test_verify_ask", "tests.test_question_record", "tests.test_stop_corpus")
DEMO = ("tests.test_assistant_subject", "tests.test_assistant_search", "tests.test_assistant_questions")
