#!/usr/bin/python3
"""Wrong on purpose: looks at request[0] before checking the request is
empty, so an empty request raises IndexError. kvprefix verify: crash."""
import prefix_cache


class CrashOnEmptyTrie(prefix_cache.PrefixTrie):
    def match(self, request):
        if request[0] not in self.children[0]:  # the bug: IndexError on []
            return 0, 0
        return super().match(request)


if __name__ == "__main__":
    prefix_cache.main(CrashOnEmptyTrie)
