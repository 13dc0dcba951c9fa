"""The shared table of cases (sdk/cases/*.json) that the TypeScript, Python and PHP libraries all run."""

import json
import os

CASES_DIR = os.environ.get("CHAINGATE_SDK_CASES") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cases")


def load(name):
    with open(os.path.join(CASES_DIR, name + ".json"), encoding="utf-8") as f:
        return json.load(f)
