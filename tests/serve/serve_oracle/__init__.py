"""A plain Python implementation of SPEC §10 (serving replay on one worker)
and §11 (routing over N workers), written to be read against the text: the
oracle the C++ serving replay (issues 42 and 43, not built yet) will be
tested against. See tests/serve/README.md.

    from serve_oracle import replay, replay_text
    replay({"requests": [[1, 2], [1, 2]], "max_running": 2})  # a dict
"""
from .replay import answer_text, replay, replay_text  # noqa: F401
