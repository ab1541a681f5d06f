#!/usr/bin/python3
"""A correct, plain-Python implementation of the kvprefix contract.

Reads one SPEC §4 document ({"cached_sequences": [...], "requests": [...]},
optionally "cached_namespaces" and "namespaces", SPEC §8.1) from standard input and prints the SPEC §5 answer ({"matches": [...]},
compact, one trailing newline). With --lines it stays running: one document
per line in, one answer line each out (`kvprefix verify --protocol lines`).
`kvprefix verify --cmd` must pass it; the
deliberately wrong implementations beside it subclass PrefixTrie and change
one method each, so each carries exactly one bug.
"""
import json
import sys


class PrefixTrie:
    """A token trie: node IDs 0 (root), 1, 2, ... in creation order."""

    def __init__(self):
        self.children = [{}]  # children[node] maps a token to a child ID

    def new_node(self):
        self.children.append({})
        return len(self.children) - 1

    def insert(self, sequence):
        node = 0
        for token in sequence:
            child = self.children[node].get(token)
            if child is None:
                child = self.new_node()
                self.children[node][token] = child
            node = child

    def match(self, request):
        """Returns (matched_length, cache_node)."""
        node = 0
        for length, token in enumerate(request):
            child = self.children[node].get(token)
            if child is None:
                return length, node
            node = child
        return len(request), node


def match_entry(request, length, node):
    """One match of SPEC §5's answer."""
    return {"matched_length": length, "cache_node": node,
            "uncached_suffix": request[length:]}


def fold_namespaces(sequences, namespaces, symbols):
    """SPEC §8.1: each sequence's first token replaced by a number of its own
    for (namespace, token) from `symbols` (shared by a whole document), so
    equal tokens of two namespaces never share a node; absent namespaces
    are all ""."""
    namespaces = namespaces or [""] * len(sequences)
    return [[symbols.setdefault((name, sequence[0]), len(symbols))] +
            sequence[1:] if sequence else sequence
            for sequence, name in zip(sequences, namespaces)]


def keyed(document, members, fold):
    """The sequences of `members` as the trie takes them: folded with their
    namespaces (member "namespaces" or "cached_namespaces") when the document
    has any, else as they are."""
    lists = [document[member] for member in members]
    if not any(name in document for name in ("namespaces", "cached_namespaces")):
        return lists
    symbols = {}
    namespaces = {"requests": "namespaces", "cached_sequences": "cached_namespaces"}
    return [fold(sequences, document.get(namespaces[member]), symbols)
            for sequences, member in zip(lists, members)]


def find_prefix_matches(document, trie_class=PrefixTrie, fold=fold_namespaces):
    """The batch job (SPEC §2) on a parsed SPEC §4 document."""
    trie = trie_class()
    cached, keys = keyed(document, ("cached_sequences", "requests"), fold)
    for sequence in cached:
        trie.insert(sequence)
    return {"matches": [match_entry(request, *trie.match(key))
                        for request, key in zip(document["requests"], keys)]}


def write_answer(answer):
    """SPEC §5's bytes: compact, one trailing newline."""
    sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")


def serve(answer):
    """Prints answer(document) for the document on standard input, or with
    --lines for each line of it, flushed at once (JSON Lines)."""
    if sys.argv[1:] == ["--lines"]:
        for line in sys.stdin:
            write_answer(answer(json.loads(line)))
            sys.stdout.flush()
    else:
        write_answer(answer(json.load(sys.stdin)))


def main(trie_class=PrefixTrie, fold=fold_namespaces):
    serve(lambda document: find_prefix_matches(document, trie_class, fold))


if __name__ == "__main__":
    main()
