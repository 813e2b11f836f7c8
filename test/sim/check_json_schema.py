#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Holds nvlblock-sim --json to docs/nvlblock-sim.schema.json (ctest:
# unit.python.sim_json_schema). Python's standard library only, so the
# validator here implements the subset of JSON Schema (draft 2020-12) the
# schema file uses, and refuses any other keyword: the schema cannot rely on
# one that would be silently ignored.
#
#   1. the schema uses only the keywords below, and its $refs resolve;
#   2. the validator is not vacuous: a document the simulator wrote passes, and
#      the same document with a required field removed, a field added, an
#      integer written as a fraction, an enum value changed fails;
#   3. nvlblock-sim runs on small inputs that between them write every
#      conditional field (--timing's performance objects, spread and ledger
#      both as null and as objects, every policy), each file validates, and
#      every property of the schema occurs in some file (so a field the writer
#      drops, or a typo in the schema, fails too);
#   4. every field name docs/sim.md's JSON table and JSON paragraph list is a
#      property of the schema.
#
# usage: check_json_schema.py --sim BIN --schema FILE --doc docs/sim.md [--workdir DIR]
#
# "integer" is stricter than the standard: a JSON number written without a
# fraction or exponent (Python int), so that a count written as 3.0 fails.

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Keywords that constrain; annotations that do not.
CONSTRAINTS = {"type", "properties", "required", "additionalProperties", "items", "enum", "minimum", "maximum",
               "$ref"}
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "$comment"}
TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}

# Properties the writer need not write in the runs below (none today).
MAY_BE_ABSENT = set()


class SchemaError(Exception):
    pass


def strict_loads(text, what):
    """json.loads, but NaN/Infinity and duplicate keys are errors."""

    def constant(name):
        raise ValueError(f"{what}: {name} is not JSON")

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"{what}: duplicate key {k!r}")
            out[k] = v
        return out

    return json.loads(text, parse_constant=constant, object_pairs_hook=pairs)


def check_schema(schema, root, where="#"):
    """Refuses keywords the validator does not implement, and bad values of those it does."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object")
    for key, value in schema.items():
        if key not in CONSTRAINTS and key not in ANNOTATIONS:
            raise SchemaError(f"{where}: keyword {key!r} is not implemented by {os.path.basename(__file__)}")
        if key == "type":
            types = value if isinstance(value, list) else [value]
            bad = [t for t in types if t not in TYPES]
            if bad or not types:
                raise SchemaError(f"{where}/type: unknown type(s) {bad}")
        elif key == "properties":
            for name, sub in value.items():
                check_schema(sub, root, f"{where}/properties/{name}")
        elif key == "$defs":
            for name, sub in value.items():
                check_schema(sub, root, f"{where}/$defs/{name}")
        elif key == "additionalProperties":
            if isinstance(value, dict):
                check_schema(value, root, f"{where}/additionalProperties")
            elif value is not False and value is not True:
                raise SchemaError(f"{where}/additionalProperties: must be a schema or a boolean")
        elif key == "items":
            check_schema(value, root, f"{where}/items")
        elif key == "required":
            props = schema.get("properties", {})
            missing = [r for r in value if r not in props]
            if missing:
                raise SchemaError(f"{where}/required: {missing} not in properties")
        elif key == "enum":
            if not isinstance(value, list) or not value:
                raise SchemaError(f"{where}/enum: must be a non-empty list")
        elif key in ("minimum", "maximum"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SchemaError(f"{where}/{key}: must be a number")
        elif key == "$ref":
            resolve(root, value)


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise SchemaError(f"$ref {ref!r}: only local references (#/...) are implemented")
    node = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"$ref {ref!r} does not resolve")
        node = node[part]
    return node


def type_ok(value, t):
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    raise SchemaError(f"unknown type {t!r}")


def type_name(value):
    for t in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if type_ok(value, t):
            return t
    return type(value).__name__


def validate(value, schema, root, path="$", seen=None, spath=""):
    """Returns a list of 'PATH: message' for every way value breaks schema.

    seen (a set) collects the schema paths ("run.seed", "policies.restarts.ledger")
    of the properties present in value, for the coverage check.
    """
    errors = []
    if "$ref" in schema:
        errors += validate(value, resolve(root, schema["$ref"]), root, path, seen, spath)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(value, t) for t in types):
            shown = "" if value is None else " " + json.dumps(value)[:60]
            return errors + [f"{path}: {type_name(value)}{shown}, expected {' or '.join(types)}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {json.dumps(value)} is not one of {schema['enum']}")
    if type_ok(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} is above the maximum {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: required property {name!r} is missing")
        extra = schema.get("additionalProperties", True)
        for name, sub in value.items():
            sub_path = f"{path}.{name}"
            sub_spath = f"{spath}.{name}" if spath else name
            if name in props:
                if seen is not None:
                    seen.add(sub_spath)
                errors += validate(sub, props[name], root, sub_path, seen, sub_spath)
            elif extra is False:
                errors.append(f"{path}: property {name!r} is not in the schema (additionalProperties false)")
            elif isinstance(extra, dict):
                errors += validate(sub, extra, root, sub_path, seen, sub_spath)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], root, f"{path}[{i}]", seen, spath)
    return errors


def schema_paths(schema, root, prefix="", stack=()):
    """Every property path the schema defines ("run.seed", "policies.wait_s.all.count")."""
    out = set()
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in stack:
            return out
        out |= schema_paths(resolve(root, ref), root, prefix, stack + (ref,))
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        out.add(path)
        out |= schema_paths(sub, root, path, stack)
    if "items" in schema:
        out |= schema_paths(schema["items"], root, prefix, stack)
    return out


def sub_schema(schema, root, path):
    """The schema of the property at path (a list of names), following $refs and array items; None if none."""
    node = schema
    for name in path:
        while "$ref" in node:
            node = resolve(root, node["$ref"])
        if "items" in node and "properties" not in node:
            node = node["items"]
            while "$ref" in node:
                node = resolve(root, node["$ref"])
        node = node.get("properties", {}).get(name)
        if node is None:
            return None
    return node


# --- the runs -----------------------------------------------------------------

ALL_POLICIES = "full-rack,block,nvlblock,nvlblock+lend,recommended,block-expedite,nvrx-16+2"

# Each: a name and the arguments after --json FILE. Small: 16 racks, a few
# simulated hours; each takes well under a few seconds.
RUNS = [
    # Every policy; preemption everywhere, reclaim victims with a grace time
    # that checkpoint half the time; SUs of 8 racks, crossing after an hour;
    # failures frequent enough to restart jobs; --timing.
    ("all-policies", ["--trace", "synthetic:load=0.9,small_load=0.08,hours=12,mean_hours=2,max_slices=4",
                      "--racks", "16", "--horizon", "16h", "--policies", ALL_POLICIES,
                      "--preemption", "all", "--grace-time", "60", "--checkpoint-on-signal", "0.5",
                      "--hierarchy", "8", "--crossing", "1h",
                      "--failures", "mtbi=300h,mttr=4h,rack_mtbf=2000h,rack_mttr=2h",
                      "--reclaim-from", "qos=normal,scavenger", "--timing"]),
    # Defaults otherwise: no hierarchy (spread null), no timing (no
    # performance), fifo, lend preemption.
    ("plain", ["--trace", "synthetic:load=0.8,hours=8,mean_hours=2,max_slices=2", "--racks", "8",
               "--horizon", "10h", "--policies", "block,nvlblock,nvlblock+lend", "--queue", "fifo",
               "--failures", "mtbi=500h,mttr=4h", "--requeue-order", "requeue"]),
]


def run_sim(sim, workdir, name, args):
    out = os.path.join(workdir, f"{name}.json")
    cmd = [os.path.abspath(sim), "--json", out, "--quiet", "--threads", "2"] + args
    proc = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stdout}")
    with open(out) as f:
        return strict_loads(f.read(), out)


def conditional_errors(name, doc):
    """The fields a file must write as objects, or as null, given its run."""
    errors = []
    timing = "--timing" in dict(RUNS)[name]
    if ("performance" in doc) != timing:
        errors.append(f"{name}: $.performance {'missing with' if timing else 'present without'} --timing")
    hierarchy = bool(doc["run"].get("hierarchy"))
    for i, p in enumerate(doc.get("policies", [])):
        where = f"{name}: $.policies[{i}] ({p.get('policy')})"
        if ("performance" in p) != timing:
            errors.append(f"{where}.performance {'missing with' if timing else 'present without'} --timing")
        if (p.get("spread") is not None) != hierarchy:
            errors.append(f"{where}.spread: {'null with' if hierarchy else 'an object without'} --hierarchy")
        recovery = p.get("topology", {}).get("recovery")
        ledger = p.get("restarts", {}).get("ledger")
        if (ledger is not None) != bool(recovery):
            errors.append(f"{where}.restarts.ledger: {'null' if ledger is None else 'an object'} with "
                          f"topology.recovery {recovery}")
    return errors


def self_test(doc, schema):
    """The validator catches what it must: mutations of a document that passes."""
    import copy

    def mutate(fn):
        d = copy.deepcopy(doc)
        fn(d)
        return validate(d, schema, schema)

    cases = {
        "a required property removed": lambda d: d["policies"][0]["restarts"].pop("in_place"),
        "a property added": lambda d: d["run"].__setitem__("new_field", 1),
        "an integer written as a fraction": lambda d: d["policies"][0]["jobs"].__setitem__("submitted", 3.0),
        "an enum value changed": lambda d: d["policies"][0].__setitem__("policy", "nvlblock2"),
        "a number below its minimum": lambda d: d["run"].__setitem__("crossing_s", -2),
        "null where an object is required": lambda d: d["policies"][0].__setitem__("victims", None),
    }
    failures = []
    if validate(doc, schema, schema):
        failures.append("self-test: the unmodified document does not validate")
    for what, fn in cases.items():
        if not mutate(fn):
            failures.append(f"self-test: {what} passes the validator")
    return failures


# --- docs/sim.md ----------------------------------------------------------------

def expand(token):
    """'wait_s.<class>.{count,mean}' -> [['wait_s', '<class>', 'count'], ['wait_s', '<class>', 'mean']]."""
    m = re.search(r"\{([^}]*)\}", token)
    if m:
        return [p for alt in m.group(1).split(",")
                for p in expand(token[:m.start()] + alt.strip() + token[m.end():])]
    return [token.split(".")]


def doc_names(doc_text):
    """(path, where) pairs for every field docs/sim.md names in its JSON table and paragraph."""
    names = []
    lines = doc_text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("| JSON name |"))
    except StopIteration:
        raise RuntimeError("docs/sim.md: no table starting '| JSON name |'")
    for n, line in enumerate(lines[start + 2:], start + 3):
        if not line.startswith("|"):
            break
        first = line.split("|")[1]
        prefix = []
        for token in re.findall(r"`([^`]+)`", first):
            for path in expand(token):
                if len(path) > 1:
                    prefix = path[:-1]
                    names.append((["policies"] + path, f"docs/sim.md:{n}"))
                else:
                    names.append((["policies"] + prefix + path, f"docs/sim.md:{n}"))
    # "The JSON file is ... `run` repeats every input (...`grace_time_s`, ...);
    # each policy's `topology` gives `slice`, ..."
    text = "\n".join(lines)
    m = re.search(r"`run` repeats every input(.*?)each policy's `topology`(.*?)Fields are only", text, re.S)
    if not m:
        raise RuntimeError("docs/sim.md: no paragraph '`run` repeats every input ... each policy's `topology` ...'")
    line_of = text[:m.start()].count("\n") + 1
    for token in re.findall(r"`([^`]+)`", m.group(1)):
        names.append((["run", token], f"docs/sim.md:{line_of} (run)"))
    for token in re.findall(r"`([^`]+)`", m.group(2)):
        names.append((["policies", "topology", token], f"docs/sim.md:{line_of} (topology)"))
    return names


def doc_errors(doc_text, schema):
    errors = []
    checked = 0
    for path, where in doc_names(doc_text):
        resolved = []
        for name in path:
            if name.startswith("<"):  # <class>: each size class has the same fields; check the first
                node = sub_schema(schema, schema, resolved)
                while node is not None and "$ref" in node:
                    node = resolve(schema, node["$ref"])
                name = next(iter(node.get("properties", {}))) if node else name
            resolved.append(name)
        checked += 1
        if sub_schema(schema, schema, resolved) is None:
            errors.append(f"{where}: {'.'.join(path)} is documented but not in the schema")
    if checked < 40:
        errors.append(f"docs/sim.md: only {checked} field names found; did the table's format change?")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sim", required=True, help="the nvlblock-sim binary")
    ap.add_argument("--schema", required=True)
    ap.add_argument("--doc", required=True, help="docs/sim.md")
    ap.add_argument("--workdir", help="where the JSON files go (default: a temporary directory)")
    args = ap.parse_args()

    with open(args.schema) as f:
        schema = strict_loads(f.read(), args.schema)
    try:
        check_schema(schema, schema)
    except SchemaError as e:
        print(f"{args.schema}: {e}", file=sys.stderr)
        return 1

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        seen = set()
        docs = {}
        for name, run_args in RUNS:
            doc = run_sim(args.sim, workdir, name, run_args)
            docs[name] = doc
            errors = validate(doc, schema, schema, seen=seen)
            failures += [f"{name}.json {e}" for e in errors]
            failures += conditional_errors(name, doc)
            print(f"{name}: {len(doc['policies'])} policies, {len(errors)} schema errors")
        policies = {p["policy"] for d in docs.values() for p in d["policies"]}
        missing = sorted(set(ALL_POLICIES.split(",")) - policies)
        if missing:
            failures.append(f"runs: no file has policies {missing}")
        never = sorted(schema_paths(schema, schema) - seen - MAY_BE_ABSENT)
        failures += [f"schema property {p} occurs in no file the runs wrote" for p in never]
        failures += self_test(docs[RUNS[0][0]], schema)

    with open(args.doc) as f:
        failures += doc_errors(f.read(), schema)

    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    if failures:
        print(f"check_json_schema: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"check_json_schema: {len(RUNS)} files match {os.path.basename(args.schema)}; "
          f"{len(doc_names(open(args.doc).read()))} documented names are in it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
