#!/usr/bin/env python3
"""Validates documents socair wrote against the committed schemas, offline.

    scripts/validate-json-schema.py sarif DOC...       # SARIF 2.1.0 (errata 01, draft-04)
    scripts/validate-json-schema.py cyclonedx DOC...   # CycloneDX 1.6 (draft-07, with spdx and jsf)
    scripts/validate-json-schema.py github-action action.yml             # YAML: needs PyYAML
    scripts/validate-json-schema.py pre-commit-hooks .pre-commit-hooks.yaml

The schemas are fixtures/schemas/ (its README says where each comes from); the CycloneDX one
refers to the other two by relative `$ref`, resolved here from the same folder and never
fetched. Formats the installed jsonschema can check (date-time, uri, email...) are checked.
Exit 0 when every document is valid, 1 listing every error (the document, the JSON path and
the message), 2 when jsonschema (4.18 or later: `referencing`) is not installed.

Why Python: the `jsonschema` crate as a test dependency changes the features of crates the
host uses (url, reqwest, chrono...), so `cargo test` would build the host twice
(scripts/check-build-reuse.py refuses that). .ci/run installs jsonschema into a virtualenv
and points the tests at it (SOCAIR_TEST_JSONSCHEMA_PYTHON).
"""
import json
import sys
from pathlib import Path

SCHEMAS = Path(__file__).resolve().parent.parent / "fixtures" / "schemas"

try:
    import jsonschema
    from referencing import Registry, Resource
except ImportError as e:
    print(f"jsonschema is not installed ({e}): pip install 'jsonschema>=4.18'", file=sys.stderr)
    sys.exit(2)


def load(name):
    return json.loads((SCHEMAS / name).read_text())


def validator(kind):
    if kind == "sarif":
        schema = load("sarif-schema-2.1.0.json")
        cls = jsonschema.Draft4Validator
        return cls(schema, format_checker=cls.FORMAT_CHECKER)
    if kind == "cyclonedx":
        schema = load("bom-1.6.schema.json")
        resources = []
        for name in ["bom-1.6.schema.json", "spdx.schema.json", "jsf-0.82.schema.json"]:
            doc = load(name)
            resource = Resource.from_contents(doc)
            # Both the $id and the bare relative name the $ref uses resolve offline.
            resources += [(doc["$id"], resource), (name, resource)]
        registry = Registry().with_resources(resources)
        cls = jsonschema.Draft7Validator
        return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)
    if kind in ("github-action", "pre-commit-hooks"):
        # SchemaStore's schemas of GitHub's action metadata and pre-commit's hook list.
        schema = load(f"{kind}.json")
        cls = jsonschema.Draft7Validator
        return cls(schema, format_checker=cls.FORMAT_CHECKER)
    sys.exit(f"unknown schema {kind!r}: sarif, cyclonedx, github-action or pre-commit-hooks")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    v = validator(sys.argv[1])
    v.check_schema(v.schema)
    bad = 0
    for path in sys.argv[2:]:
        text = Path(path).read_text()
        if path.endswith((".yml", ".yaml")):
            try:
                import yaml
            except ImportError as e:
                print(f"PyYAML is not installed ({e}): pip install pyyaml", file=sys.stderr)
                sys.exit(2)
            doc = yaml.safe_load(text)
        else:
            doc = json.loads(text)
        for error in sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in error.absolute_path)
            print(f"{path}: /{where}: {error.message}")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
