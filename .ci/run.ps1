# CI entry on Windows (PowerShell twin of .ci/run): on every supported Python the machine has (3.11 to 3.14, by
# the py launcher, `py -3.X`, or python3.X on PATH), runs the README's test command from the workspace root, then
# tests/windows_behaviour.py, which on Windows runs the same tests natively and lists what Windows skips. Names
# each version with its results and times, and each absent version as absent; fails when any run fails or no
# supported Python is found.
$ErrorActionPreference = "Continue"
Set-Location (Join-Path $PSScriptRoot "..")
$versions = "3.11", "3.12", "3.13", "3.14"
$summary = @()
$failed = $false
$found = $false

# The command (an array) that starts Python $version and really reports it, or $null.
function Find-Python($version) {
    $candidates = @(, @("py", "-$version"))
    $onPath = Get-Command "python$version" -ErrorAction SilentlyContinue
    if ($onPath) { $candidates += , @($onPath.Source) }
    foreach ($command in $candidates) {
        $rest = @($command | Select-Object -Skip 1)
        $said = & $command[0] @rest -c "import sys; print('%d.%d' % sys.version_info[:2])" 2>$null
        if ($LASTEXITCODE -eq 0 -and "$said".Trim() -eq $version) { return , $command }
    }
    return $null
}

foreach ($version in $versions) {
    $python = Find-Python $version
    if (-not $python) {
        $summary += "  Python ${version}：这台机器上没有（absent），没有运行"
        continue
    }
    $found = $true
    $rest = @($python | Select-Object -Skip 1)
    $full = & $python[0] @rest -c "import sys; print('%d.%d.%d' % sys.version_info[:3])"
    foreach ($step in @(@("-m", "unittest"), @("tests/windows_behaviour.py"))) {
        $label = "Python $full（$($python -join ' ')）：python3 $($step -join ' ')"
        Write-Host "== $label"
        $started = Get-Date
        & $python[0] @rest @step
        $code = $LASTEXITCODE
        $seconds = [int]((Get-Date) - $started).TotalSeconds
        if ($code -eq 0) { $summary += "  ${label}：通过，$seconds 秒" }
        else { $summary += "  ${label}：失败（退出码 $code），$seconds 秒"; $failed = $true }
    }
}
Write-Host "CI 结果："
$summary | ForEach-Object { Write-Host $_ }
if (-not $found) { Write-Host "没有找到 Python 3.11 或更高版本：什么都没有运行。"; exit 1 }
if ($failed) { exit 1 }
exit 0
