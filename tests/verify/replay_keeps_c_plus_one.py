#!/usr/bin/python3
"""Wrong on purpose: an off-by-one at exactly the capacity; the cache keeps
C + 1 nodes. kvprefix verify --format requests: wrong-answer."""
import replay_cache


class KeepsCPlusOneCache(replay_cache.ReplayCache):
    def over_capacity(self):
        # the bug: > C + 1 instead of > C
        return self.capacity is not None and len(self.stamp) > self.capacity + 1


if __name__ == "__main__":
    replay_cache.main(KeepsCPlusOneCache)
