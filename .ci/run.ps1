# CI entry on Windows (PowerShell twin of .ci/run): the README's test command from the workspace root, then
# tests/windows_behaviour.py, which on Windows runs the same tests natively and lists what Windows skips.
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")
py -3 -m unittest
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
py -3 tests/windows_behaviour.py
exit $LASTEXITCODE
