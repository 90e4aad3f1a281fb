#!/usr/bin/env python3
"""List the species of the field guide as JSON.

The arguments arrive as a JSON object on stdin; an optional "habitat" keeps
only the species seen there, and an optional "mentions" only the species whose
account (species/<slug>.md) contains that word, ignoring case. The guide is read from GUIDE_DIR if set, else
/data/guide (where the deployment mounts it read-only), else the data folder
shipped beside this script in the agent package.
"""
import json
import os
import re
import sys


def load_species():
    """Return (guide folder, species records), or (None, None)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for guide in (os.environ.get("GUIDE_DIR"), "/data/guide", os.path.join(here, "..", "data")):
        if not guide:
            continue
        path = os.path.join(guide, "species.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return guide, json.load(f)["species"]
    return None, None


def account_mentions(guide, slug, word):
    """Whether species/<slug>.md has a word starting with `word`, any case."""
    path = os.path.join(guide, "species", os.path.basename(slug) + ".md")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return False
    return re.search(r"\b" + re.escape(word), text, re.IGNORECASE) is not None


def main() -> int:
    raw = sys.stdin.read().strip()
    try:
        args = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        print(json.dumps({"error": f"arguments are not JSON: {exc}"}))
        return 1
    if not isinstance(args, dict):
        print(json.dumps({"error": "arguments must be a JSON object"}))
        return 1
    guide, species = load_species()
    if species is None:
        print(json.dumps({"error": "species.json not found in GUIDE_DIR, /data/guide or the package"}))
        return 1
    habitat = args.get("habitat")
    if habitat:
        species = [s for s in species if habitat.lower() in (h.lower() for h in s["habitats"])]
    mentions = args.get("mentions")
    if mentions is not None and not isinstance(mentions, str):
        print(json.dumps({"error": "mentions must be a string"}))
        return 1
    if mentions and mentions.strip():
        species = [s for s in species if account_mentions(guide, s["slug"], mentions.strip())]
    out = [
        {
            "slug": s["slug"],
            "common_name": s["common_name"],
            "scientific_name": s["scientific_name"],
            "habitats": s["habitats"],
            "status": s["status"],
        }
        for s in species
    ]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
