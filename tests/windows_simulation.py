"""Windows' behaviour, simulated inside a Python process on Linux or macOS (for tests/windows_behaviour.py).

    python3 tests/windows_simulation.py BEHAVIOUR,... SCRIPT|-c CODE|-m MODULE [ARGS ...]

runs the target as `python3` would, with the named behaviours installed first. Every Python child the
process starts (`[sys.executable, ...]`) is started the same way, so a test's subprocesses and theirs
behave as on Windows too. The behaviours (BEHAVIOURS names them):

- newlines: a file written in text mode turns "\\n" into "\\r\\n" (open(), Path.write_text, and the
  process's own stdout and stderr, as Windows does when they go to a pipe or a file);
- separators: the paths a person reads are made from Windows' strings: in cli.py, where every shown
  path is made, os.sep is "\\" and os.path.relpath / os.path.abspath answer with it (`runs\\demo-01`);
- launcher: cli.py sees os.name "nt", so the commands it suggests start with `py -3`;
- no-sighup: the signal module has no SIGHUP;
- sigterm: os.kill(pid, SIGTERM) ends that process at once (TerminateProcess): no handler runs, the
  exit code of the process itself is 15;
- no-process-groups: os.killpg, os.getpgid, os.setpgid, os.setsid, os.getpgrp, os.setpgrp and os.getsid do not
  exist, so what ends a child takes the path it takes on Windows (Popen.terminate: the sigterm behaviour above);
- posix-modules: fcntl, termios, resource, pwd and grp cannot be imported;
- held-files: os.replace, os.rename or os.remove of a file this process holds open raises
  PermissionError; os.rename onto an existing name raises FileExistsError;
- no-dev-shm: /dev/shm does not exist, as os.path sees that folder (the runner's linked temporary folder may
  still lead into it, for speed);
- linked-temp: the temporary folder is reached through a symbolic link (macOS's /var -> /private/var,
  Windows' short names such as RUNNER~1). The runner sets TMPDIR; nothing to install in the process.

Not simulated: Windows' own path parsing (on Linux a typed `\\` stays part of a name), drive letters,
case-insensitive file names, console code pages, how Ctrl-C reaches a process.
"""
import builtins
import errno
import importlib.abc
import importlib.machinery
import io
import os
import signal
import subprocess
import sys
import types
import weakref

THIS_FILE = os.path.abspath(__file__)
MARKER = "LESSON_WINDOWS_BEHAVIOUR"  # the behaviours in effect, for the tests (tests/support.py) and children
ABSENT_MODULES = ("fcntl", "termios", "resource", "pwd", "grp")
PROCESS_GROUP_CALLS = ("killpg", "getpgid", "setpgid", "setsid", "getpgrp", "setpgrp", "getsid")


# --- newlines ------------------------------------------------------------------------------------

def _wrap_open(wrapper):
    """Puts WRAPPER(real_open) in place of open() everywhere it is looked up at call time."""
    wrapped = wrapper(io.open)
    builtins.open = io.open = wrapped


def translating(real_open):
    """REAL_OPEN as Windows' open(): text written without a `newline` argument gets "\\r\\n" line ends."""
    def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
        if "b" not in mode and newline is None and any(letter in mode for letter in "wax+"):
            newline = "\r\n"  # what newline=None means for writing on Windows
        return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
    return open_


def install_newlines():
    _wrap_open(translating)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(newline="\r\n")
        except (AttributeError, ValueError):
            pass


# --- separators and launcher: cli.py's view of the platform --------------------------------------

class _WindowsSeparators(types.ModuleType):
    """os.path as cli.py sees it: relpath and abspath answer with backslashes; the rest is the real one."""

    sep = "\\"

    def __init__(self):
        super().__init__("ntpath")

    def __getattr__(self, name):
        return getattr(os.path, name)

    @staticmethod
    def relpath(path, start=None):
        return os.path.relpath(path, start).replace("/", "\\")

    @staticmethod
    def abspath(path):
        return os.path.abspath(path).replace("/", "\\")


class CliOs(types.ModuleType):
    """os as cli.py sees it: Windows' name and/or separators; everything else is the real module."""

    def __init__(self, launcher, separators):
        super().__init__("os")
        if launcher:
            self.name = "nt"
        if separators:
            self.sep, self.path = "\\", _WindowsSeparators()

    def __getattr__(self, name):
        return getattr(os, name)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls CHANGE(module) right after the top-level module NAME is imported, before anyone uses it."""

    def __init__(self, name, change):
        self.name, self.change = name, change

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            execute, change = spec.loader.exec_module, self.change
            spec.loader.exec_module = lambda module: (execute(module), change(module))
        return spec


def install_cli_view(launcher, separators):
    sys.meta_path.insert(0, _AfterImport("cli", lambda cli: setattr(cli, "os", CliOs(launcher, separators))))


# --- signals ------------------------------------------------------------------------------------

def install_no_sighup():
    if hasattr(signal, "SIGHUP"):
        del signal.SIGHUP


def install_sigterm():
    real_kill, sigterm, sigkill = os.kill, signal.SIGTERM, signal.SIGKILL

    def kill(pid, sig):
        if sig == sigterm:
            if pid == os.getpid():
                os._exit(15)  # TerminateProcess(process, 15): no handler, no clean-up
            sig = sigkill  # another process ends the same way: it cannot catch it either
        return real_kill(pid, sig)
    os.kill = kill


def install_no_process_groups():
    for name in PROCESS_GROUP_CALLS:
        if hasattr(os, name):
            delattr(os, name)


# --- modules Windows does not have ---------------------------------------------------------------

class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in ABSENT_MODULES:
            raise ModuleNotFoundError(f"No module named '{fullname}'", name=fullname)
        return None


def install_posix_modules():
    for name in ABSENT_MODULES:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, _Absent())


# --- files held open -----------------------------------------------------------------------------

_HELD = {}  # absolute path -> weak references to the file objects open on it


def _holding(real_open):
    def open_(file, *args, **kwargs):
        opened = real_open(file, *args, **kwargs)
        if isinstance(file, (str, bytes, os.PathLike)):
            _HELD.setdefault(os.path.abspath(os.fsdecode(file)), []).append(weakref.ref(opened))
        return opened
    return open_


def _is_open(key):
    alive = [ref for ref in _HELD.get(key, ()) if ref() is not None and not ref().closed]
    if alive:
        _HELD[key] = alive
    else:
        _HELD.pop(key, None)
    return bool(alive)


def _held(path):
    """PATH, or a file inside the folder PATH, is open in this process."""
    key = os.path.abspath(os.fsdecode(path))
    return any(_is_open(held) for held in list(_HELD) if held == key or held.startswith(key + os.sep))


def _refuse(path, path2=None, code=errno.EACCES, text="Access is denied"):
    raise OSError(code, text, os.fsdecode(path), None, None if path2 is None else os.fsdecode(path2))


def install_held_files():
    _wrap_open(_holding)
    real_replace, real_rename, real_remove = os.replace, os.rename, os.remove

    def replace(src, dst, **fds):
        if not fds and (_held(src) or _held(dst)):
            _refuse(src, dst)
        return real_replace(src, dst, **fds)

    def rename(src, dst, **fds):
        if not fds and os.path.lexists(dst):
            _refuse(src, dst, errno.EEXIST, "Cannot create a file when that file already exists")
        if not fds and _held(src):
            _refuse(src, dst)
        return real_rename(src, dst, **fds)

    def remove(path, **fd):
        if not fd and _held(path):
            _refuse(path, text="The process cannot access the file because it is being used by another process")
        return real_remove(path, **fd)
    os.replace, os.rename, os.remove, os.unlink = replace, rename, remove, remove


# --- /dev/shm ------------------------------------------------------------------------------------

def install_no_dev_shm():
    def absent(real):
        def check(path, *args, **kwargs):
            text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
            if text.rstrip("/") == "/dev/shm":  # what is inside stays reachable: the runner's link may lead there
                return False
            return real(path, *args, **kwargs)
        return check
    os.path.isdir, os.path.exists, os.path.lexists = (absent(f) for f in (os.path.isdir, os.path.exists,
                                                                          os.path.lexists))
    os.access = absent(os.access)


BEHAVIOURS = {
    "newlines": install_newlines,
    "separators": lambda: None,  # with launcher, below: one view of cli.py
    "launcher": lambda: None,
    "no-sighup": install_no_sighup,
    "sigterm": install_sigterm,
    "no-process-groups": install_no_process_groups,
    "posix-modules": install_posix_modules,
    "held-files": install_held_files,
    "no-dev-shm": install_no_dev_shm,
    "linked-temp": lambda: None,  # made by the runner: TMPDIR is a link
}


# --- children ------------------------------------------------------------------------------------

def _with_behaviours(args, names):
    """[python, options..., target...] -> [python, options..., this file, NAMES, target...]."""
    index = 1
    while index < len(args) and str(args[index]).startswith("-") and args[index] not in ("-c", "-m", "-"):
        index += 2 if args[index] in ("-X", "-W") else 1
    if index >= len(args) or args[index] == "-":
        return args  # an interactive interpreter: nothing to run
    return [*args[:index], THIS_FILE, ",".join(names), *args[index:]]


def install_children(names):
    real_init = subprocess.Popen.__init__

    def init(self, args, *rest, **kwargs):
        if isinstance(args, (list, tuple)) and args and os.fspath(args[0]) == sys.executable:
            args = _with_behaviours(list(args), names)
        real_init(self, args, *rest, **kwargs)
    subprocess.Popen.__init__ = init


def install(names):
    unknown = set(names) - set(BEHAVIOURS)
    if unknown:
        raise SystemExit(f"unknown behaviours: {', '.join(sorted(unknown))} (known: {', '.join(BEHAVIOURS)})")
    os.environ[MARKER] = ",".join(names) or "none"
    for name in names:
        BEHAVIOURS[name]()
    if "separators" in names or "launcher" in names:
        install_cli_view("launcher" in names, "separators" in names)
    install_children(names)


def run_target(target):
    """Runs TARGET (`SCRIPT ARGS`, `-c CODE ARGS` or `-m MODULE ARGS`) as `python3 TARGET` would."""
    import runpy
    if target[0] == "-c":
        sys.argv, sys.path[0] = ["-c", *target[2:]], ""
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(target[1], "<string>", "exec"), main.__dict__)
    elif target[0] == "-m":
        sys.argv, sys.path[0] = [target[1], *target[2:]], os.getcwd()
        runpy.run_module(target[1], run_name="__main__", alter_sys=True)
    elif not os.path.exists(target[0]):  # said as the interpreter says it
        print(f"{sys.executable}: can't open file '{os.path.abspath(target[0])}': [Errno 2] No such file or directory",
              file=sys.stderr)
        sys.exit(2)
    else:
        sys.argv, sys.path[0] = list(target), os.path.dirname(os.path.realpath(target[0]))
        runpy.run_path(target[0], run_name="__main__")


if __name__ == "__main__":
    install([name for name in sys.argv[1].split(",") if name])
    run_target(sys.argv[2:])
