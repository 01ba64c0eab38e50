"""The mutants of the rules an attack on the resume and the pages added, joined to tests/mutants.py's list (the same
fields): no other output of the class check is one of --feedback's files (a student would receive the class's
grades, report or page as their own feedback), and a model loop's record runs in one segment (it is never resumed).
"""
ATTACK_MUTANTS = [
    dict(id="feedback-file-clash-unchecked", file="classroom/upload.py",
         original='        if text and reached_file(text) in feedback:',
         replacement='        if False:',
         promise="--report、--csv、--grades、--html 不能是 --feedback 要写的某位学生的反馈文件",
         tests=("tests.test_teacher_outputs",)),
    dict(id="feedback-file-clash-by-spelling", file="classroom/upload.py",
         original='        if text and reached_file(text) in feedback:',
         replacement='        if text and Path(text) in {Path(args.feedback) / name for name in feedback.values()}:',
         promise="反馈文件按它最终指向的文件比较（./、..、另一种写法都算同一个）",
         tests=("tests.test_teacher_outputs",)),
    dict(id="feedback-file-clash-grades-forgotten", file="classroom/upload.py",
         original='("--grades", args.grades),\n                         ("--feedback-zip"',
         replacement='\n                         ("--feedback-zip"',
         promise="成绩文件不能写成某位学生的反馈文件（他会收到全班的成绩）",
         tests=("tests.test_teacher_outputs",)),
    dict(id="model-segments-allowed", file="verifier/shape.py",
         original='        segments.append((len(record["segments"]) <= 1, "model_segments",',
         replacement='        segments.append((len(record["segments"]) <= 2, "model_segments",',
         promise="model 情景的循环从不续跑：记录里有两段及以上就是 fail",
         tests=("tests.test_verify_model",)),
    dict(id="model-segments-unchecked", file="verifier/shape.py",
         original='    if schema.calls_model and type(record.get("segments")) is list:',
         replacement='    if False:',
         promise="model 情景的循环从不续跑：记录里有两段及以上就是 fail",
         tests=("tests.test_verify_model",)),
]
