"""xsa's Python modules, shared by the scripts, the tests and the notebook (docs/development.md, "Scripts").

  results     the one way Python reads the tool's outputs: xsa-inspect's JSON, results.json files, log.jsonl
  user_input  a file or folder a user names read, or one line and exit 2; outputs written the same way
  figures     every figure, one module per family (needs matplotlib; the others need the standard library only)

A script finds the package from its own folder, one below scripts/, with the same line everywhere:

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
    from xsapy import results, user_input

Importing xsapy imports none of its modules: each is imported by name.
"""
