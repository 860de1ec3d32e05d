#!/usr/bin/python3
"""Metric names used by the Grafana dashboard and the Prometheus rules, and checks of those names.

  metric_names.py list    [--dashboard F] [--rules F]     names the dashboard/rules read (one a line)
  metric_names.py catalog [--dashboard F] [--rules F] [--catalog docs/METRICS.md]
        every name (and label) used must be in the catalog; exit 1 otherwise
  metric_names.py exposition [--dashboard F] [--rules F] (--url http://127.0.0.1:9464/metrics | --file F | -)
        every name used must be in a Prometheus text exposition (a live /metrics): a family counts
        when its `# TYPE` line is there, samples or not; exit 1 otherwise

Defaults: deploy/grafana/rollout-dashboard.json and deploy/prometheus/rollout-rules.yaml of this
checkout. Names produced by Prometheus itself (`up`) and by recording rules (`a:b:c`) are not
expected in /metrics. Histogram sample names (`x_bucket`, `x_sum`, `x_count`) count as their family.
Only the Python standard library and PyYAML (Debian python3-yaml).
"""
import argparse
import json
import os
import re
import sys
import urllib.request

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
DEFAULT_DASHBOARD = os.path.join(_ROOT, "deploy", "grafana", "rollout-dashboard.json")
DEFAULT_RULES = os.path.join(_ROOT, "deploy", "prometheus", "rollout-rules.yaml")
DEFAULT_CATALOG = os.path.join(_ROOT, "docs", "METRICS.md")

# Series that Prometheus makes itself for every target: never in an exporter's /metrics.
PROMETHEUS_SYNTHETIC = {"up"}
# Labels the scrape adds (static configs, Kubernetes service discovery, the Prometheus Operator).
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "endpoint", "container", "node"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

_KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
             "group_left", "group_right", "inf", "nan", "atan2", "start", "end"}
_IDENT = re.compile(r"(?<![\w:.$])([a-zA-Z_:][a-zA-Z0-9_:]*)")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_MATCHER_LABEL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")


class Usage(object):
    """What one PromQL expression reads: selectors (metric name, matcher labels) and grouping labels."""

    def __init__(self):
        self.selectors = []  # [(name, set(matcher label names))]
        self.grouping_labels = set()

    @property
    def names(self):
        return {n for n, _ in self.selectors if n}


def parse_promql(expr):
    """Extracts metric selectors and grouping labels from a PromQL expression (Grafana variables allowed).

    A deliberately small lexer, not a full parser: strings are blanked first (so label values and
    regexes never look like names), then matcher blocks {...} are read and removed, then range and
    subquery brackets [...], then by/without/on/ignoring/group_x (...) label lists; what is left that
    looks like an identifier and is not a function call or a keyword is a metric name.
    """
    u = Usage()
    s = _STRING.sub('""', expr)
    # Matcher blocks, with the metric name (if any) right before them.
    out, i = [], 0
    while i < len(s):
        if s[i] == "{":
            j = s.index("}", i)
            block = s[i + 1:j]
            k = len(out)
            while k > 0 and out[k - 1] == " ":
                k -= 1
            m = re.search(r"([a-zA-Z_:][a-zA-Z0-9_:]*)$", "".join(out[:k]))
            name = m.group(1) if m and m.group(1) not in _KEYWORDS else None
            if name:
                del out[k - len(name):]
            labels = set(_MATCHER_LABEL.findall(block))
            u.selectors.append((name, labels))
            out.append(" __SEL__ ")
            i = j + 1
            continue
        out.append(s[i])
        i += 1
    s = "".join(out)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    for m in _GROUPING.finditer(s):
        u.grouping_labels |= {x.strip() for x in m.group(2).split(",") if x.strip()}
    s = _GROUPING.sub(" ", s)
    for m in _IDENT.finditer(s):
        tok = m.group(1)
        rest = s[m.end():].lstrip()
        if tok in _KEYWORDS or tok == "__SEL__" or rest.startswith("("):
            continue
        u.selectors.append((tok, set()))
    return u


def family_of(name, families):
    """The catalog/exposition family a sample name belongs to (histogram suffixes stripped), or None.

    families: {name: type}.
    """
    if name in families:
        return name
    for suf in HISTOGRAM_SUFFIXES:
        if name.endswith(suf) and families.get(name[:-len(suf)]) in ("histogram", "summary"):
            return name[:-len(suf)]
    return None


# ------------------------------------------------------------------ sources
def dashboard_exprs(path):
    """(where, expr) for every PromQL expression of a dashboard: targets, variables, annotations."""
    with open(path) as f:
        d = json.load(f)
    out = []

    def walk_panels(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append(("panel %r target %s" % (p.get("title"), t.get("refId")), t["expr"]))
            walk_panels(p.get("panels", []))

    walk_panels(d.get("panels", []))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = re.match(r"^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$", q)
        if m:
            q = m.group(1)
        elif re.match(r"^\s*query_result\((.*)\)\s*$", q):
            q = re.match(r"^\s*query_result\((.*)\)\s*$", q).group(1)
        if q.strip():
            out.append(("variable %s" % v.get("name"), q))
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            out.append(("annotation %r" % a.get("name"), a["expr"]))
    return out


def rules_exprs(path):
    """((where, expr) list, set of recorded names) of a Prometheus rules file."""
    import yaml  # Debian python3-yaml
    with open(path) as f:
        doc = yaml.safe_load(f)
    out, recorded = [], set()
    for g in doc.get("groups", []):
        for r in g.get("rules", []):
            what = r.get("alert") or r.get("record")
            out.append(("rule %s" % what, r["expr"]))
            if r.get("record"):
                recorded.add(r["record"])
    return out, recorded


def collect(dashboard=DEFAULT_DASHBOARD, rules=DEFAULT_RULES):
    """[(where, Usage)] over both sources, and the recorded names of the rules."""
    exprs, recorded = [], set()
    if dashboard:
        exprs += dashboard_exprs(dashboard)
    if rules:
        r, recorded = rules_exprs(rules)
        exprs += r
    return [(w, parse_promql(e)) for w, e in exprs], recorded


def used_names(usages, recorded):
    """Sample names that must come from rolloutd's /metrics."""
    names = set()
    for _, u in usages:
        names |= u.names
    return {n for n in names if n not in PROMETHEUS_SYNTHETIC and n not in recorded and ":" not in n}


# ------------------------------------------------------------------ catalog and exposition
def parse_catalog(path):
    """{name: {"type": ..., "labels": set}} from the tables of docs/METRICS.md."""
    cat = {}
    row = re.compile(r"^\|\s*`(rollout_[a-z0-9_]+)`\s*\|\s*([a-z]+)[^|]*\|([^|]*)\|")
    with open(path) as f:
        for line in f:
            m = row.match(line)
            if not m:
                continue
            labels_col = re.sub(r"\([^)]*\)", "", m.group(3))
            cat[m.group(1)] = {"type": m.group(2), "labels": set(re.findall(r"`([a-z_][a-z0-9_]*)`", labels_col))}
    return cat


def parse_exposition(text):
    """{family or sample name: type} from Prometheus text format (TYPE lines and sample lines)."""
    fams = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                fams[parts[2]] = parts[3]
        elif line and not line.startswith("#"):
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
            if name:
                fams.setdefault(name.group(0), "untyped")
    return fams


def check_catalog(usages, recorded, catalog):
    """Problems (strings): unknown metric names, and labels a metric does not have."""
    families = {n: c["type"] for n, c in catalog.items()}
    problems = []
    for where, u in usages:
        expr_labels = set(TARGET_LABELS)
        for name, labels in u.selectors:
            if not name or name in PROMETHEUS_SYNTHETIC or name in recorded or ":" in name:
                continue
            fam = family_of(name, families)
            if fam is None:
                problems.append("%s: metric %s is not in docs/METRICS.md" % (where, name))
                continue
            allowed = catalog[fam]["labels"] | TARGET_LABELS | ({"le"} if name.endswith("_bucket") else set())
            expr_labels |= allowed
            for l in sorted(labels - allowed - {"__name__"}):
                problems.append("%s: metric %s has no label %r (catalog: %s)" %
                                (where, name, l, ", ".join(sorted(catalog[fam]["labels"])) or "none"))
        for l in sorted(u.grouping_labels - expr_labels):
            problems.append("%s: grouping label %r is not a label of the metrics used" % (where, l))
    return problems


def check_exposition(names, exposition_families):
    """Names (sorted) that a /metrics exposition lacks."""
    return sorted(n for n in names if family_of(n, exposition_families) is None)


# ------------------------------------------------------------------ command line
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["list", "catalog", "exposition"])
    ap.add_argument("--dashboard", default=DEFAULT_DASHBOARD)
    ap.add_argument("--rules", default=DEFAULT_RULES)
    ap.add_argument("--catalog", default=DEFAULT_CATALOG)
    ap.add_argument("--url", help="a /metrics URL (exposition)")
    ap.add_argument("--file", help="a saved exposition, '-' for stdin (exposition)")
    a = ap.parse_args(argv)
    usages, recorded = collect(a.dashboard, a.rules)
    names = used_names(usages, recorded)
    if a.command == "list":
        print("\n".join(sorted(names)))
        return 0
    if a.command == "catalog":
        problems = check_catalog(usages, recorded, parse_catalog(a.catalog))
        for p in problems:
            print(p)
        print("metric_names: %d names used, %d problems" % (len(names), len(problems)))
        return 1 if problems else 0
    if a.url:
        with urllib.request.urlopen(a.url, timeout=10) as r:
            text = r.read().decode("utf-8")
    elif a.file == "-":
        text = sys.stdin.read()
    elif a.file:
        with open(a.file) as f:
            text = f.read()
    else:
        ap.error("exposition needs --url or --file")
    missing = check_exposition(names, parse_exposition(text))
    for n in missing:
        print("missing from /metrics: %s" % n)
    print("metric_names: %d names used, %d missing" % (len(names), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
