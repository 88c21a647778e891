"""Names of the files kbert keeps beside a destination, short enough for any destination.

A write to `NAME` uses siblings named after it (`.NAME.tmp-PID-XXXXXXXX`, `.NAME.old-...`,
`.NAME.lock`). A destination name may itself be up to `NAME_MAX` (255) bytes long, so a
sibling built from it could not be created ("File name too long", naming the sibling).
`sibling_stem` keeps a long name's first bytes and adds a digest of the whole, so every
sibling fits and different long names still get different siblings.
"""

import hashlib

# The bytes left for the stem: NAME_MAX minus the longest decoration (".", ".tmp-", a
# process id, "-" and 8 hex digits), with room to spare.
MAX_STEM_BYTES = 255 - 40
_DIGEST_CHARS = 8


def sibling_stem(name):
    """`name`, or for a name longer than `MAX_STEM_BYTES` bytes its head plus a digest."""
    encoded = name.encode("utf-8", "surrogateescape")
    if len(encoded) <= MAX_STEM_BYTES:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:_DIGEST_CHARS]
    head = encoded[: MAX_STEM_BYTES - _DIGEST_CHARS - 1].decode("utf-8", "ignore")
    return f"{head}~{digest}"
