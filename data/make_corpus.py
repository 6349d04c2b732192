#!/usr/bin/env python3
"""Writes data/corpus.txt: the default training text of mixprec's tiny GPT.

The text is generated here (so it is the project's own and free to
redistribute): sentences from a small grammar about number formats, lab
work and everyday things, with varied words and numbers. It is large enough
(about 1.2 MB) that a 4-layer character model cannot memorise it in 1,000
steps of 16 x 128 characters; what it can learn is spelling and grammar.
Deterministic: the same script always writes the same bytes.
Usage: python3 data/make_corpus.py > data/corpus.txt
"""
import random

rng = random.Random(20261130)

subjects = ["the student", "our instructor", "a careful reader", "the lab group", "my friend",
            "the new engineer", "every learner", "the reviewer", "a curious child", "the old teacher",
            "the gardener", "a baker", "the night nurse", "the ship's cook", "a tired runner"]
verbs = ["rounds", "checks", "writes down", "compares", "measures", "explains", "doubts",
         "repeats", "draws", "counts", "tests", "sorts", "remembers", "forgets", "prints"]
objects = ["the small gradient", "a long column of numbers", "the bit pattern", "the loss curve",
           "every weight", "the residual stream", "a table of formats", "the spacing near one",
           "the largest finite value", "a list of apples", "the morning bread", "the river map",
           "a bowl of soup", "the red kite", "an unfinished letter"]
places = ["in the lab", "at the kitchen table", "before lunch", "after the long meeting",
          "by the window", "on the train home", "late at night", "in a quiet corner",
          "under the old oak", "near the harbour"]
adverbs = ["slowly", "twice", "again", "with great care", "without a word", "quickly",
           "in silence", "by hand", "for fun", "once more"]
precision = {"fp32": 24, "fp16": 11, "bf16": 8, "tf32": 11, "fp8-e4m3": 4, "fp8-e5m2": 3}
facts = [
    "the format {f} keeps {b} significant bits.",
    "near {x} the spacing of bf16 is {s}, so an update smaller than {h} is lost.",
    "the sum of {a} and {c} is {ac}.",
    "{a} times {c} makes {axc}.",
    "one half of {e} is {eh}.",
    "a value of {x} needs an exponent of {ex}.",
]
connectors = ["and then", "but", "so", "while", "because", "although"]

def number():
    return rng.choice([str(rng.randint(0, 999)), str(rng.randint(1000, 99999)),
                       "%.2f" % rng.uniform(0, 100), "%.4f" % rng.uniform(0, 1)])

def fact():
    x = rng.choice([600, 700, 1000, 1500, 3000, 5000, 20000])
    spacing = 2 ** (x.bit_length() - 8)
    a, c, e = rng.randint(1, 99), rng.randint(1, 99), 2 * rng.randint(1, 500)
    f = rng.choice(sorted(precision))
    return rng.choice(facts).format(f=f, b=precision[f], x=x,
                                   s=spacing, h=spacing // 2, a=a, c=c, ac=a + c, axc=a * c,
                                   e=e, eh=e // 2, ex=x.bit_length() - 1)

def clause():
    return "%s %s %s %s" % (rng.choice(subjects), rng.choice(verbs), rng.choice(objects),
                           rng.choice(places + adverbs))

def sentence():
    r = rng.random()
    if r < 0.25:
        s = fact()
    elif r < 0.55:
        s = clause() + "."
    elif r < 0.8:
        s = "%s, %s %s." % (clause(), rng.choice(connectors), clause())
    else:
        s = "%s %s %s numbers: %s, %s and %s." % (rng.choice(subjects), rng.choice(verbs),
                                                  rng.choice(["three", "some", "the last", "a few"]),
                                                  number(), number(), number())
    return s[0].upper() + s[1:]

out = []
size = 0
while size < 1_200_000:
    para = " ".join(sentence() for _ in range(rng.randint(3, 7)))
    out.append(para)
    size += len(para) + 1
print("\n".join(out))
