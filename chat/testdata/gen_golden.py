#!/usr/bin/env python3
"""Regenerates chat/testdata/golden/*.txt: the reference renderings of
cases.json, made by Python's Jinja2 set up exactly as Hugging Face
transformers sets it up for apply_chat_template (chat_template_utils.py):
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
loopcontrols extension, a tojson filter over json.dumps(ensure_ascii=False),
raise_exception and strftime_now globals, and tools=None / documents=None
passed to render. A case whose template raises gets golden/<name>.err holding
the message.

Run from chat/testdata:  python3 gen_golden.py   (Jinja2 3.1.6 made the files here)
"""
import datetime
import json
import os

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def render(template, case):
    now = datetime.datetime.fromisoformat(case.get("now", "2024-07-26T12:00:00"))

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    kwargs = dict(case.get("vars", {}))
    kwargs.setdefault("tools", None)
    kwargs.setdefault("documents", None)
    return env.from_string(template).render(
        messages=case["messages"],
        add_generation_prompt=case.get("add_generation_prompt", False),
        bos_token=case.get("bos", ""),
        eos_token=case.get("eos", ""),
        **kwargs,
    )


FEATURE_MESSAGES = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": " A "},
    {"role": "user", "content": "Q"},
]


def features():
    """golden/features.json: each snippet of features.json rendered with
    FEATURE_MESSAGES, as {"src", "out"} or {"src", "err"}."""
    snippets = json.load(open("features.json", encoding="utf-8"))
    out = []
    for key in ("snippets", "known_deviations"):
        for src in snippets[key]:
            case = {"messages": FEATURE_MESSAGES}
            try:
                out.append({"src": src, "out": render(src, case), "known_deviation": key != "snippets"})
            except Exception as e:  # any failure: the Go side must fail too
                out.append({"src": src, "err": type(e).__name__ + ": " + str(e), "known_deviation": key != "snippets"})
    with open(os.path.join("golden", "features.json"), "w", encoding="utf-8", newline="") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    features()
    cases = json.load(open("cases.json", encoding="utf-8"))
    convs = cases["conversations"]
    for case in cases["cases"]:
        case = dict(case)
        case["messages"] = convs[case["conversation"]]
        template = open(os.path.join("templates", case["template"]), encoding="utf-8").read()
        base = os.path.join("golden", case["name"])
        for ext in (".txt", ".err"):
            if os.path.exists(base + ext):
                os.remove(base + ext)
        try:
            out = render(template, case)
            with open(base + ".txt", "w", encoding="utf-8", newline="") as f:
                f.write(out)
        except jinja2.exceptions.TemplateError as e:
            with open(base + ".err", "w", encoding="utf-8", newline="") as f:
                f.write(str(e))


if __name__ == "__main__":
    main()
