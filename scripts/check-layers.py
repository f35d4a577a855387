#!/usr/bin/env python3
"""Checks the declared layers of each crate: a top-level module may import (`crate::name`, or
`use crate::{name, ..}`) only modules of its own layer or below, and no import cycle may run
through a layer. Run from the repository root; exits 1 naming each import that goes up.

The layers are declared here, lowest first, and described in each crate's lib.rs."""
import os
import re
import sys

LAYERS = {
    "core/src": [
        ["dims", "dtype", "limits", "layout", "rules", "feature_level"],
        ["error"],
        ["tensor", "ranges", "keys"],
        ["gather", "slice", "convert", "scatter"],
        ["chain", "gradient"],
        ["kernel"],
        ["dynamic"],
        ["describe", "seeds"],
        ["op"],
    ],
    "backends/src": [
        ["element", "error", "staging", "tensor"],
        ["launch"],
        ["kernels"],
        ["explain", "device"],
        ["buffers", "ops"],
        ["builder", "burn"],
    ],
    "macros/syntax/src": [
        ["ctxt"],
        ["parse"],
        ["validate"],
        ["expand"],
    ],
}

PATH = re.compile(r"\bcrate::(\w+)")
GROUP = re.compile(r"use\s+crate::\{([^;]*)\};", re.S)


def modules(src):
    """Top-level module name -> its source files."""
    found = {}
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(".rs"):
                rel = os.path.relpath(os.path.join(root, f), src)
                top = rel.split(os.sep)[0].removesuffix(".rs")
                if top not in ("lib", "main"):
                    found.setdefault(top, []).append(os.path.join(root, f))
    return found


def imports(files):
    names = set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        names.update(PATH.findall(text))
        for group in GROUP.findall(text):
            for part in re.split(r",(?![^{]*\})", group):
                m = re.match(r"\s*(\w+)", part)
                if m:
                    names.add(m.group(1))
    return names


def cycles(edges):
    """Strongly connected sets of more than one module (Tarjan)."""
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def check(src, layers):
    mods = modules(src)
    layer_of = {m: i for i, layer in enumerate(layers) for m in layer}
    faults = [f"{src}: module `{m}` is in no layer of scripts/check-layers.py" for m in mods if m not in layer_of]
    edges = {m: {n for n in imports(files) if n in mods and n != m} for m, files in mods.items()}
    for m in sorted(edges):
        for n in sorted(edges[m]):
            if m in layer_of and n in layer_of and layer_of[n] > layer_of[m]:
                faults.append(f"{src}: `{m}` (layer {layer_of[m] + 1}) imports `{n}` (layer {layer_of[n] + 1})")
    for c in cycles(edges):
        faults.append(f"{src}: import cycle among {', '.join(c)}")
    return faults


def main():
    faults = []
    for src, layers in LAYERS.items():
        if os.path.isdir(src):
            faults += check(src, layers)
    for f in faults:
        print(f)
    if not faults:
        print(f"layers hold in {', '.join(LAYERS)}")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
