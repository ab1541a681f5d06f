#!/usr/bin/python3
"""Wrong on purpose: a new node takes the ID of an evicted one (a free list,
as a slab allocator keeps), so a router holding the old ID would find
another prefix under it. kvprefix verify --format requests: wrong-answer."""
import replay_cache


class ReusesIdCache(replay_cache.ReplayCache):
    def __init__(self, *args):
        super().__init__(*args)
        self.free = []

    def new_id(self):
        if self.free:
            return self.free.pop()  # the bug: IDs are given twice
        return super().new_id()

    def remove(self, node):
        super().remove(node)
        self.free.append(node)


if __name__ == "__main__":
    replay_cache.main(ReusesIdCache)
