"""A plain-Python prefix trie: the baseline kvprefix is measured against.

It is the seed's hinted solution, written the way a Python user would:
"a dictionary can map a token to a child node ID; list length can supply the
next sequential node ID; list slicing extracts the unmatched suffix". Node ID
i's children are the dict ``children[i]`` (token -> child node ID), so it is
a list of dicts rather than nested dicts, which is the fastest plain-Python
form. The tests use it as a second, independent oracle for the module.
"""


def find_prefix_matches(cached_sequences, requests):
    """Same contract as kvprefix.find_prefix_matches (SPEC section 2)."""
    children = [{}]
    for sequence in cached_sequences:
        node = 0
        for token in sequence:
            child = children[node].get(token)
            if child is None:
                child = len(children)
                children[node][token] = child
                children.append({})
            node = child
    matches = []
    for request in requests:
        node = 0
        length = 0
        for token in request:
            child = children[node].get(token)
            if child is None:
                break
            node = child
            length += 1
        matches.append({"matched_length": length, "cache_node": node,
                        "uncached_suffix": list(request[length:])})
    return {"matches": matches}
