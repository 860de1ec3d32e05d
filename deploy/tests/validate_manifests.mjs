// Validates rendered Kubernetes manifests offline against the Kubernetes schemas of the npm package
// kubernetes-models (and @kubernetes-models/prometheus-operator for ServiceMonitor / PrometheusRule).
//
//   node validate_manifests.mjs --node-modules .tools/node_modules [--skip-kind Kind]... rendered.yaml...
//
// Two checks per document:
//   1. schema: the model's validate() (types, enums, required fields), as the API server's OpenAPI does;
//   2. strict fields: every field name must exist in the model's type definitions (.d.ts), as
//      `kubectl apply --validate=strict` does; the schemas alone accept unknown fields (typos such as
//      `readinesProbe` would otherwise pass and be dropped silently by a lenient API server).
// Kinds without a schema fail, unless listed with --skip-kind (an explicit allow-list; skipped kinds
// are printed). Exit status 0 only when every document passed.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
let nodeModules = null;
const skipKinds = new Set();
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--node-modules") nodeModules = args[++i];
  else if (args[i] === "--skip-kind") skipKinds.add(args[++i]);
  else files.push(args[i]);
}
if (!nodeModules || files.length === 0) {
  console.error("usage: validate_manifests.mjs --node-modules DIR [--skip-kind KIND]... FILE...");
  process.exit(2);
}
nodeModules = path.resolve(nodeModules);
for (const pkg of ["kubernetes-models", "yaml", "@kubernetes-models/prometheus-operator"]) {
  if (!fs.existsSync(path.join(nodeModules, pkg))) {
    console.error(`validate_manifests: npm package ${pkg} missing under ${nodeModules}: run bash tools/get_npm_tools.sh`);
    process.exit(2);
  }
}
const YAML = await import(pathToFileURL(path.join(nodeModules, "yaml/dist/index.js")).href);

// apiVersion group -> npm package holding its models (core groups live in kubernetes-models).
const CRD_PACKAGES = { "monitoring.coreos.com": "@kubernetes-models/prometheus-operator" };

function modelFile(apiVersion, kind) {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const pkg = CRD_PACKAGES[group] || "kubernetes-models";
  const file = path.join(nodeModules, pkg, group, version, `${kind}.js`);
  return fs.existsSync(file) ? file : null;
}

// ---- strict field check from the .d.ts type definitions -------------------------------------------
const dtsCache = new Map();

function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

// Split at depth-0 occurrences of `sep` (outside {}, <>, (), []) .
function splitTop(s, sep) {
  const out = [];
  let depth = 0, cur = "", inStr = null;
  for (const ch of s) {
    if (inStr) { cur += ch; if (ch === inStr) inStr = null; continue; }
    if (ch === '"' || ch === "'") { inStr = ch; cur += ch; continue; }
    if ("{<([".includes(ch)) depth++;
    if ("}>)]".includes(ch)) depth--;
    if (ch === sep && depth === 0) { out.push(cur); cur = ""; continue; }
    cur += ch;
  }
  if (cur.trim()) out.push(cur);
  return out;
}

function matchBrace(s, open) {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === "{") depth++;
    else if (s[i] === "}" && --depth === 0) return i;
  }
  throw new Error("unbalanced braces");
}

// Parses object members `"name"?: Type;` into {name: typeString}; null for an index signature map.
function parseMembers(body) {
  const members = {};
  for (const m of splitTop(body, ";")) {
    const t = m.trim();
    if (!t || t.startsWith("static ") || t.startsWith("constructor")) continue;
    const idx = t.match(/^\[\s*\w+\s*:\s*string\s*\]\s*:\s*([\s\S]+)$/);
    if (idx) return { __map__: idx[1].trim() };
    const mm = t.match(/^"?([A-Za-z0-9_$@.\-]+)"?\??\s*:\s*([\s\S]+)$/);
    if (mm) members[mm[1]] = mm[2].trim();
  }
  return members;
}

function loadDts(file) {
  if (dtsCache.has(file)) return dtsCache.get(file);
  const src = stripComments(fs.readFileSync(file, "utf8"));
  const imports = {};
  for (const m of src.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    for (const name of m[1].split(",").map((x) => x.trim()).filter(Boolean)) {
      imports[name.split(/\s+as\s+/).pop()] = m[2];
    }
  }
  let iface = null;
  const im = src.match(/export interface (\w+)[^{]*\{/);
  if (im) {
    const open = src.indexOf("{", im.index);
    iface = parseMembers(src.slice(open + 1, matchBrace(src, open)));
  }
  const entry = { file, imports, iface };
  dtsCache.set(file, entry);
  return entry;
}

function resolveImport(fromFile, spec) {
  let base;
  if (spec.startsWith(".")) base = path.resolve(path.dirname(fromFile), spec);
  else base = path.join(nodeModules, spec);
  base = base.replace(/\.js$/, "");
  for (const cand of [`${base}.d.ts`, path.join(base, "index.d.ts")]) if (fs.existsSync(cand)) return cand;
  return null;
}

// Type string -> checker descriptor: {kind: "obj", file, members} | {kind: "map", of} | {kind: "arr", of} | {kind: "leaf"}
function typeOf(ctxFile, typeStr) {
  let t = typeStr.trim().replace(/;$/, "").trim();
  if (t.startsWith("Array<") && t.endsWith(">")) return { kind: "arr", of: typeOf(ctxFile, t.slice(6, -1)) };
  if (t.endsWith("[]")) return { kind: "arr", of: typeOf(ctxFile, t.slice(0, -2)) };
  const parts = splitTop(t, "|").map((x) => x.trim());
  if (parts.length > 1) {
    const nonLeaf = parts.map((p) => typeOf(ctxFile, p)).filter((d) => d.kind !== "leaf");
    return nonLeaf.length === 1 ? nonLeaf[0] : { kind: "leaf" };
  }
  if (t.startsWith("{")) {
    const members = parseMembers(t.slice(1, matchBrace(t, 0)));
    if (members.__map__) return { kind: "map", of: typeOf(ctxFile, members.__map__) };
    return { kind: "obj", file: ctxFile, members };
  }
  if (/^I[A-Za-z0-9]+$/.test(t)) {
    const entry = loadDts(ctxFile);
    const spec = entry.imports[t];
    if (!spec) return { kind: "leaf" };
    const target = resolveImport(ctxFile, spec);
    if (!target) return { kind: "leaf" };
    const te = loadDts(target);
    if (!te.iface) return { kind: "leaf" }; // type aliases (Quantity, IntOrString, ...)
    if (te.iface.__map__) return { kind: "map", of: typeOf(target, te.iface.__map__) };
    return { kind: "obj", file: target, members: te.iface };
  }
  return { kind: "leaf" };
}

function strictCheck(desc, value, where, errors) {
  if (value === null || value === undefined) return;
  if (desc.kind === "arr") {
    if (Array.isArray(value)) value.forEach((v, i) => strictCheck(desc.of, v, `${where}/${i}`, errors));
  } else if (desc.kind === "map") {
    if (typeof value === "object" && !Array.isArray(value))
      for (const [k, v] of Object.entries(value)) strictCheck(desc.of, v, `${where}/${k}`, errors);
  } else if (desc.kind === "obj") {
    if (typeof value !== "object" || Array.isArray(value)) return; // type errors: validate() reports them
    for (const [k, v] of Object.entries(value)) {
      if (!(k in desc.members)) { errors.push(`${where}/${k}: unknown field`); continue; }
      strictCheck(typeOf(desc.file, desc.members[k]), v, `${where}/${k}`, errors);
    }
  }
}

// ---- main -------------------------------------------------------------------------------------------
let failed = 0, checked = 0;
for (const f of files) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(f, "utf8"));
  for (const d of docs) {
    if (d.errors.length) { console.log(`FAIL ${f}: YAML: ${d.errors.map((e) => e.message).join("; ")}`); failed++; continue; }
    const obj = d.toJS();
    if (obj === null || obj === undefined) continue;
    const id = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
    if (!obj.apiVersion || !obj.kind) { console.log(`FAIL ${f}: document without apiVersion/kind`); failed++; continue; }
    const file = modelFile(obj.apiVersion, obj.kind);
    if (!file) {
      if (skipKinds.has(obj.kind)) { console.log(`skip ${id} (${obj.apiVersion}, allow-listed: no schema)`); continue; }
      console.log(`FAIL ${id}: no schema for ${obj.apiVersion} ${obj.kind} (add a model package or --skip-kind)`);
      failed++;
      continue;
    }
    const mod = await import(pathToFileURL(file).href);
    const errors = [];
    try {
      new mod[obj.kind](obj).validate();
    } catch (e) {
      errors.push(String(e.message || e));
    }
    const dts = file.replace(/\.js$/, ".d.ts");
    strictCheck({ kind: "obj", file: dts, members: loadDts(dts).iface || {} }, obj, "", errors);
    checked++;
    if (errors.length) { console.log(`FAIL ${id} (${obj.apiVersion}): ${errors.join("; ")}`); failed++; }
    else console.log(`ok   ${id} (${obj.apiVersion})`);
  }
}
console.log(`validate_manifests: ${checked} checked, ${failed} failed`);
process.exit(failed ? 1 : 0);
