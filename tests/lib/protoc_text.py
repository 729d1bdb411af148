# SPDX-License-Identifier: MIT
"""protoc_text.py - reads what `protoc --decode` prints (its text format), for the
tests that check `convert --to perfetto`'s ftrace events against Perfetto's protos:

  unknown(path)       the lines naming a field by its number (protoc prints a field
                      that no .proto defines so): tracebuf wrote what Perfetto does not define
  parse(lines)        the text as nested lists of (key, value | list)
  get(node, key, d)   the first value of key in node, else d
  all_of(node, key)   every value of key in node
"""
import json
import re


def unknown(path):
    return [l for l in open(path) if re.match(r"\s*\d+\s*[:{]", l)]


def parse(lines):
    stack = [[]]
    for l in lines:
        l = l.strip()
        if not l:
            continue
        if l.endswith("{"):
            node = []
            stack[-1].append((l[:-1].strip(), node))
            stack.append(node)
        elif l == "}":
            stack.pop()
        else:
            k, v = l.split(":", 1)
            v = v.strip()
            stack[-1].append((k, json.loads(v) if v.startswith('"') else int(v) if re.fullmatch(r"-?\d+", v) else v))
    return stack[0]


def get(node, key, d=None):
    for k, v in node:
        if k == key:
            return v
    return d


def all_of(node, key):
    return [v for k, v in node if k == key]
