#!/usr/bin/python3
"""Wrong on purpose: a match that stops at a missing token counts that token
too (an off-by-one at the end of a match). kvprefix verify: wrong-answer."""
import prefix_cache


class OffByOneTrie(prefix_cache.PrefixTrie):
    def match(self, request):
        length, node = super().match(request)
        if length < len(request):
            length += 1  # the bug: the first missing token counted as matched
        return length, node


if __name__ == "__main__":
    prefix_cache.main(OffByOneTrie)
