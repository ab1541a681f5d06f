#!/usr/bin/python3
"""Wrong on purpose: right answers, but a request holding token 3 kills the
process (SIGKILL, as the kernel's OOM killer would), so a long-lived cache
(--lines) dies on that one input. kvprefix verify: crash (signal 9), shrunk
to one request [3]; with --protocol lines the inputs after it get a new
process."""
import os
import signal

import prefix_cache


class DiesOnTokenTrie(prefix_cache.PrefixTrie):
    def match(self, request):
        if 3 in request:  # the bug: this input kills the process
            os.kill(os.getpid(), signal.SIGKILL)
        return super().match(request)


if __name__ == "__main__":
    prefix_cache.main(DiesOnTokenTrie)
