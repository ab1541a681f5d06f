#!/usr/bin/python3
"""Wrong on purpose: a hit does not refresh recency; only the nodes a request
creates get its stamp, so a hot system prompt ages out under LRU.
kvprefix verify --format requests: wrong-answer."""
import replay_cache


class NoTouchOnHitCache(replay_cache.ReplayCache):
    def touch(self, path, created):
        for node in created:  # the bug: the matched nodes keep their stamp
            self.stamp[node] = self.request


if __name__ == "__main__":
    replay_cache.main(NoTouchOnHitCache)
