# SPDX-License-Identifier: MIT
"""speedscope_check.py FILE FOLDED HZ - checks `tracebuf convert --to speedscope`
against the folded stacks of the same profile: valid JSON in speedscope's file
format (the keys its schema requires), one sampled profile per thread, frames
shared, every stack (outermost first) with the folded output's weights: the
sum over the profiles of each stack's weights = its folded count (periods)
x 1000/HZ ms; startValue 0 and endValue = the sum of the profile's weights;
no two consecutive samples of a profile with the same stack."""
import collections
import json
import sys


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def main():
    path, folded, hz = sys.argv[1], sys.argv[2], float(sys.argv[3])
    d = json.load(open(path, encoding="utf-8"))
    expect(d.get("$schema") == "https://www.speedscope.app/file-format-schema.json", "$schema")
    frames = d["shared"]["frames"]
    expect(all(isinstance(f.get("name"), str) for f in frames), "frames need a name")
    got = collections.Counter()
    names = []
    for p in d["profiles"]:
        expect(p["type"] == "sampled" and p["unit"] == "milliseconds", f"profile {p['name']}: type/unit")
        expect(len(p["samples"]) == len(p["weights"]), "samples and weights differ in length")
        expect(p["startValue"] == 0 and abs(p["endValue"] - sum(p["weights"])) <= 1e-9 * p["endValue"], "start/end values")
        for a, b in zip(p["samples"], p["samples"][1:]):
            expect(a != b, "two consecutive samples with the same stack were not merged")
        for s, w in zip(p["samples"], p["weights"]):
            expect(all(0 <= i < len(frames) for i in s), "frame index out of range")
            got[";".join(frames[i]["name"] for i in s)] += w
        names.append(p["name"])
    want = collections.Counter()
    for line in open(folded, encoding="utf-8"):
        stack, n = line.rsplit(" ", 1)
        want[stack.split(";", 1)[1]] += int(n) * 1000.0 / hz
    expect(set(got) == set(want) and all(abs(got[k] - want[k]) <= 1e-9 * want[k] for k in want),
           f"weights by stack {dict(got)}, expected {dict(want)}")
    print(f"ok: speedscope: {len(d['profiles'])} profiles ({', '.join(names)}), {len(frames)} frames")


if __name__ == "__main__":
    main()
