#!/usr/bin/python3
"""replay_cache.py for a cache that implements less: the policies lru and
fifo only. A document of another policy it refuses with verify's refusal
answer, {"refused": "..."} (verify/README.md), which verify skips and
counts; every other document it answers right. With --lines, one document
per line, as replay_cache.py.
"""

import prefix_cache
import replay_cache


def answer(document):
    policy = document.get("policy", "lru")
    if policy not in ("lru", "fifo"):
        return {"refused": f"replay_refuses_lfu.py implements the policies "
                           f"lru and fifo only, not {policy}"}
    return replay_cache.replay(document)


if __name__ == "__main__":
    prefix_cache.serve(answer)
