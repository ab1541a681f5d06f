#!/usr/bin/python3
"""Wrong on purpose: a hit does not refresh recency; only the nodes a request
creates get its stamp, so a hot system prompt ages out under LRU.
kvprefix verify --format requests: wrong-answer."""
import replay_cache


class NoTouchOnHitCache(replay_cache.ReplayCache):
    def touch(self, path, created):
        # the bug: the matched nodes keep their stamp (and count)
        for node in created:
            self.stamp[node] = self.request
            self.count[node] = 1


if __name__ == "__main__":
    replay_cache.main(NoTouchOnHitCache)
