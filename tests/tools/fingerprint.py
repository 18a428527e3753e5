#!/usr/bin/env python3
# Independent check of a run manifest's schema_fingerprint, written from the definition
# in docs/perflog.md only (not from the C code): prints OK or the two values, exit 0/1.
import hashlib, sys
import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    manifest = yaml.safe_load(f)
text = "".join("%s\t%s\t%s\t%s\n" % (c["name"], c["type"], c["unit"], c["parent"] or "")
               for c in manifest["columns"])
want = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
if manifest["schema_fingerprint"] == want:
    print("OK", want)
    sys.exit(0)
print("MISMATCH manifest", manifest["schema_fingerprint"], "recomputed", want)
sys.exit(1)
