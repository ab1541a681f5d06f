"""A Mooncake trace (SPEC §7) as a §10 document (§10.1): block mode (a
token is a hash id, output in whole blocks ⌈output_length / 512⌉) or token
mode (§7's expansion, output in tokens); arrivals_us = timestamp × 1000.
Replay it with replay(document, unit="block") in block mode, so that the
routers' unit defaults are §11.1's block ones."""
import json

from .routers import splitmix64

BLOCK = 512


def expand(line, vocab):
    """§7 token mode: block h expands to splitmix64(h·512 + j) mod V."""
    hash_ids = line["hash_ids"]
    tokens = []
    for i, h in enumerate(hash_ids):
        count = (line["input_length"] - BLOCK * (len(hash_ids) - 1)
                 if i == len(hash_ids) - 1 else BLOCK)
        tokens.extend(splitmix64(h * BLOCK + j) % vocab for j in range(count))
    return tokens


def trace_document(path, mode="block", limit=None, vocab=128256, **members):
    """The §10 document of the first `limit` lines of the trace at `path`,
    with any other members (max_running=64, workers=4, ...) added."""
    requests, arrivals, outputs = [], [], []
    with open(path) as lines:
        for number, text in enumerate(lines):
            if limit is not None and number >= limit:
                break
            line = json.loads(text)
            arrivals.append(line["timestamp"] * 1000)
            if mode == "block":
                requests.append(list(line["hash_ids"]))
                outputs.append(-(-line["output_length"] // BLOCK))
            else:
                requests.append(expand(line, vocab))
                outputs.append(line["output_length"])
    document = {"requests": requests, "arrivals_us": arrivals,
                "output_lengths": outputs}
    document.update(members)
    return document
