#!/usr/bin/env python3
"""The tests that failed, from the xUnit file `swift test --xunit-output` wrote for Swift
Testing (RESULTS-swift-testing.xml):

    failed-tests.py RESULTS.xml              a --filter pattern selecting each failed test
                                             (whole functions: every case of a parameterised one)
    failed-tests.py --names RESULTS.xml      their IDs, one per line
    failed-tests.py --passed RESULTS.xml AGAIN.xml
                                             exits 0 only if AGAIN.xml ran each of them, and
                                             none failed there

Exits 1 when RESULTS.xml is missing or names no failed test (the run ended some other way,
a crash for one).
"""

import re
import sys
import xml.etree.ElementTree as ET


def cases(path: str) -> dict[str, bool]:
    """Each test function's ID, and whether any of its cases failed."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    found: dict[str, bool] = {}
    for case in root.iter("testcase"):
        test_id = f"{case.get('classname')}/{case.get('name')}"
        bad = any(child.tag in ("failure", "error") for child in case)
        found[test_id] = found.get(test_id, False) or bad
    return found


def main() -> int:
    args = sys.argv[1:]
    mode = args.pop(0) if args and args[0].startswith("--") else "--pattern"
    if (mode, len(args)) not in (("--pattern", 1), ("--names", 1), ("--passed", 2)):
        print(__doc__, file=sys.stderr)
        return 2
    failed = [i for i, bad in cases(args[0]).items() if bad]
    if not failed:
        return 1
    if mode == "--passed":
        again = cases(args[1])
        return 0 if all(again.get(i) is False for i in failed) else 1
    if mode == "--names":
        print("\n".join(failed))
    else:
        # A test's ID goes on with its file and line: "Module.Suite/function(labels:)/File.swift:12:6".
        print("^(" + "|".join(re.escape(i) for i in failed) + ")/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
