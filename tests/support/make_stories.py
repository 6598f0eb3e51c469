#!/usr/bin/env python3
"""A deterministic corpus of small stories, for tests that need text but must not need TinyStories.

The stories come from a small grammar (characters, places, things, a problem, a few lines of dialogue, an
ending), drawn with a SplitMix64 generator of our own, so the bytes depend on nothing but the arguments: the
same on every machine and Python version. The format is TinyStories' (each story followed by a line
<|endoftext|>) and the folder looks like ../shared/tinystories:

  OUT/train/stories.txt  OUT/val/stories.txt  OUT/MANIFEST.json  (path, bytes, stories, sha256 per file)

`--single-files` writes OUT/TinyStories-train.txt and OUT/TinyStories-valid.txt instead (the names of the
official files, for the download tests). The defaults (1,000 train, 60 val stories, ~0.7 MB) are enough for
sentencepiece to train a 512-piece vocabulary and for a few dozen training steps.

Usage: make_stories.py --out DIR [--train-stories N] [--val-stories N] [--seed S] [--single-files]
"""
import argparse
import hashlib
import json
import os
import sys

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n  # the bias (n / 2^64) is irrelevant here

    def pick(self, items):
        return items[self.below(len(items))]

    def chance(self, percent):
        return self.below(100) < percent


GIRLS = ["Lily", "Mia", "Anna", "Zoe", "Ella", "Lucy", "Sara", "Emma", "Rose", "Amy", "Kate", "Nora", "Ivy", "Ruby"]
BOYS = ["Tom", "Ben", "Sam", "Max", "Leo", "Jack", "Tim", "Noah", "Finn", "Jake", "Luke", "Oscar", "Theo", "Ned"]
ANIMALS = ["cat", "dog", "bird", "bunny", "bear", "duck", "frog", "fox", "mouse", "owl", "puppy", "turtle", "horse"]
PLACES = ["park", "forest", "garden", "beach", "kitchen", "school", "farm", "river", "market", "hill", "lake",
          "playground", "zoo", "library", "backyard"]
THINGS = ["ball", "kite", "box", "toy car", "stone", "book", "hat", "cake", "flower", "boat", "doll", "drum",
          "shell", "key", "balloon", "blanket", "cookie", "crayon", "train", "robot"]
COLOURS = ["red", "blue", "green", "yellow", "shiny", "big", "little", "soft", "old", "new", "pink", "purple"]
FEELINGS_GOOD = ["happy", "proud", "excited", "glad", "calm", "brave"]
FEELINGS_BAD = ["sad", "scared", "worried", "tired", "angry", "lonely"]
ADULTS = ["mom", "dad", "grandma", "grandpa", "teacher", "aunt"]
WEATHER = ["the sun was warm", "it was a windy day", "the sky was grey", "it was very cold", "the birds sang"]
ACTIVITIES = ["play tag", "build a tower", "dig in the sand", "draw pictures", "sing a song", "look for bugs",
              "jump in the puddles", "read a story", "have a picnic", "race to the tree"]


def character(rng):
    if rng.chance(25):
        animal = rng.pick(ANIMALS)
        name = rng.pick(GIRLS + BOYS)
        return {"intro": "a " + rng.pick(COLOURS) + " " + animal + " named " + name, "name": name,
                "they": "it", "their": "its", "them": "it", "kind": animal}
    if rng.chance(50):
        return {"intro": "a little girl named ", "name": rng.pick(GIRLS), "they": "she", "their": "her",
                "them": "her", "kind": "girl"}
    return {"intro": "a little boy named ", "name": rng.pick(BOYS), "they": "he", "their": "his", "them": "him",
            "kind": "boy"}


def cap(s):
    return s[0].upper() + s[1:]


def story(rng):
    hero = character(rng)
    friend = character(rng)
    while friend["name"] == hero["name"]:
        friend = character(rng)
    intro = hero["intro"] if hero["kind"] not in ("girl", "boy") else hero["intro"] + hero["name"]
    place, thing, colour = rng.pick(PLACES), rng.pick(THINGS), rng.pick(COLOURS)
    adult = rng.pick(ADULTS)
    h, f = hero["name"], friend["name"]
    they, their, them = hero["they"], hero["their"], hero["them"]
    lines = []
    opening = rng.below(3)
    if opening == 0:
        lines.append("Once upon a time, there was " + intro + ".")
    elif opening == 1:
        lines.append("One day, " + h + " went to the " + place + " with " + their + " " + adult + ".")
    else:
        lines.append(cap(rng.pick(WEATHER)) + ". " + h + " wanted to go to the " + place + ".")
    lines.append(cap(they) + " loved " + their + " " + colour + " " + thing + " very much.")
    if rng.chance(60):
        lines.append("Every day, " + they + " liked to " + rng.pick(ACTIVITIES) + " with " + f + ".")
    problem = rng.below(4)
    bad = rng.pick(FEELINGS_BAD)
    if problem == 0:
        lines.append("But one day, " + h + " lost the " + thing + " at the " + place + ". " + cap(they) + " felt "
                     + bad + ".")
        lines.append('"Where is my ' + thing + '?" ' + h + " asked. " + f + ' said, "I will help you look for it."')
        lines.append("They looked under the trees and behind the rocks. At last, " + f + " found the " + thing
                     + " near the " + rng.pick(PLACES) + ".")
    elif problem == 1:
        lines.append("Then " + f + " wanted the " + thing + " too. " + h + " did not want to share, and " + they
                     + " felt " + bad + ".")
        lines.append('"Sharing is kind," said ' + their + " " + adult + '. "You can play with it together."')
        lines.append(h + " gave the " + thing + " to " + f + ", and they took turns.")
    elif problem == 2:
        lines.append("Suddenly, " + rng.pick(["it started to rain", "a big wind came", "a loud noise came",
                                             "the lights went out"]) + ". " + h + " was " + bad + ".")
        lines.append('"Do not be afraid," said ' + f + '. "I am here with you."')
        lines.append("They held hands and waited until it was over.")
    else:
        lines.append(h + " saw a " + rng.pick(COLOURS) + " " + rng.pick(ANIMALS) + " that was stuck in a tree.")
        lines.append('"We have to help it!" ' + h + " said to " + f + ". They got a ladder from the "
                     + rng.pick(ADULTS) + ".")
        lines.append("Slowly, " + they + " climbed up and brought the little animal down.")
    good = rng.pick(FEELINGS_GOOD)
    ending = rng.below(3)
    if ending == 0:
        lines.append("In the end, " + h + " and " + f + " were very " + good + ". They went home together.")
    elif ending == 1:
        lines.append("From that day on, " + h + " always remembered to be kind. " + cap(they) + " felt " + good
                     + ".")
    else:
        lines.append(h + " smiled and hugged " + f + '. "Thank you," ' + they + ' said. "You are my best friend."')
    if rng.chance(40):
        lines.append("The " + rng.pick(THINGS) + " was " + rng.pick(COLOURS) + ", and the day was " + good + ".")
    # Paragraphs like TinyStories': sometimes one block, sometimes a blank line between parts.
    text = ""
    for i, line in enumerate(lines):
        if i == 0:
            text = line
        elif rng.chance(30):
            text += "\n\n" + line
        else:
            text += " " + line
    return text


def corpus(rng, count):
    return "".join(story(rng) + "\n<|endoftext|>\n" for _ in range(count))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = text.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--train-stories", type=int, default=1000)
    parser.add_argument("--val-stories", type=int, default=60)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--single-files", action="store_true")
    args = parser.parse_args()
    for name in ("train_stories", "val_stories"):
        value = getattr(args, name)
        if not 1 <= value <= 1_000_000:
            sys.exit("make_stories: error: --%s %d is out of range [1, 1000000]" % (name.replace("_", "-"), value))
    # Train and val come from different streams of the same seed, so neither changes when the other's count does.
    train = corpus(SplitMix64(args.seed * 2 + 1), args.train_stories)
    val = corpus(SplitMix64(args.seed * 2 + 2), args.val_stories)
    if args.single_files:
        paths = {"TinyStories-train.txt": train, "TinyStories-valid.txt": val}
    else:
        paths = {"train/stories.txt": train, "val/stories.txt": val}
    files = []
    for rel, text in paths.items():
        entry = {"path": rel, **write(os.path.join(args.out, rel), text), "stories": text.count("\n<|endoftext|>\n")}
        files.append(entry)
    manifest = {"dataset": "xsa test stories (tests/support/make_stories.py, seed %d)" % args.seed,
                "format": "UTF-8 text, each story followed by a line <|endoftext|>", "files": files}
    with open(os.path.join(args.out, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print("make_stories: " + ", ".join("%s %d stories %d bytes" % (e["path"], e["stories"], e["bytes"])
                                        for e in files))


if __name__ == "__main__":
    main()
