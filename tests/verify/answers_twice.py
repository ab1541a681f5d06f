#!/usr/bin/python3
"""Wrong on purpose: prints every answer twice (a debug print left in), so
with --lines one input gets two answer lines and the next input's answer is
out of step. kvprefix verify: not-json."""
import prefix_cache


def write_twice(answer):
    write_once(answer)
    write_once(answer)


write_once = prefix_cache.write_answer
prefix_cache.write_answer = write_twice

if __name__ == "__main__":
    prefix_cache.main()
