"""One serving worker (SPEC §10.2–§10.5): its queue, its running requests,
its pending events, its start loop, its §10.6 view and its §10.5 totals.

The clock itself (§10.3 steps 1 and 4) is in replay.py, shared with §11.4:
a worker is told "apply your due work at `now`", "this request joins your
queue" and "run your start loop at `now`".
"""
from collections import deque
from dataclasses import dataclass

from . import caches
from .caches import REFUSE, START, WAIT, make_cache

PREFILL_END, FINISH = 0, 1   # §10.3 step 2: prefill ends before finishes


@dataclass
class Record:
    """§10.5's members for one request, in §10.5's order."""
    matched_length: int = 0
    cache_node: int = 0
    arrival_us: int = 0
    start_us: int = 0
    prefill_end_us: int = 0
    finish_us: int = 0
    wait_us: int = 0
    refused: bool = False
    waited_for_room: bool = False


class Worker:
    def __init__(self, settings):
        self.settings = settings
        self.cache = make_cache(settings)
        self.queue = deque()          # FIFO of waiting requests
        self.running = []             # started, not finished
        self.events = []              # (time, kind, request)
        self.prefilled = set()        # indices of running requests past prefill end
        self.records = {}             # request index -> Record
        self.requests = []            # the requests routed here, in order
        self.peak_pinned = 0
        self.peak_running = 0
        self.peak_queued = 0

    # ---- §10.3 -----------------------------------------------------------
    def next_event_time(self):
        return min((e[0] for e in self.events), default=None)

    def has_event_at(self, now):
        return any(e[0] == now for e in self.events)

    def apply_due(self, now):
        """§10.3 step 2 (events only): every prefill end at `now`, then every
        finish at `now`, each kind in request order. True if any applied."""
        due = sorted((e for e in self.events if e[0] == now),
                     key=lambda e: (e[1], e[2].index))
        self.events = [e for e in self.events if e[0] != now]
        for _, kind, req in due:
            if kind == PREFILL_END:
                if req.n > 0:            # an empty request changes no cache
                    self.cache.prefill_end(req)
                    self._audit()
                self.prefilled.add(req.index)
            else:
                if req.n > 0:
                    self.cache.finish(req)
                    self._audit()
                self.running.remove(req)
                self.prefilled.discard(req.index)
        return bool(due)

    def arrive(self, req):
        """§10.3 step 2 (arrival): the request joins the tail of the queue."""
        self.requests.append(req)
        self.records[req.index] = Record(arrival_us=req.arrival)
        self.queue.append(req)
        self.peak_queued = max(self.peak_queued, len(self.queue))  # §10.5

    def start_loop(self, now):
        """§10.3 step 3."""
        while self.queue and len(self.running) < self.settings.max_running:
            req = self.queue[0]
            record = self.records[req.index]
            if req.n == 0:
                outcome = (START, 0, 0)  # §10.4: an empty request starts
            else:
                outcome = self.cache.attempt(req)
                self._audit()
            if outcome[0] == WAIT:
                record.waited_for_room = True
                break                     # no skipping
            self.queue.popleft()
            record.start_us = now
            record.wait_us = now - req.arrival
            if outcome[0] == REFUSE:      # answered (0, node 0) at now
                record.refused = True
                record.prefill_end_us = record.finish_us = now
                continue
            _, m, node = outcome
            record.matched_length, record.cache_node = m, node
            req.matched = m
            # §10.2: both times fixed at the start.
            s = self.settings
            e = now + s.overhead_us + s.prefill_us_per_token * (req.n - m)
            f = e + s.decode_us_per_token * req.output
            record.prefill_end_us, record.finish_us = e, f
            self.events.append((e, PREFILL_END, req))
            self.events.append((f, FINISH, req))
            self.running.append(req)
            self.peak_running = max(self.peak_running, len(self.running))
            self.peak_pinned = max(self.peak_pinned, self.cache.pinned())

    def _audit(self):
        if caches.AUDIT:
            self.cache.audit()

    # ---- §10.6: the view a router reads -----------------------------------
    def view(self):
        return View(self)

    # ---- §10.5 ------------------------------------------------------------
    def totals(self):
        return totals_of([self.records[r.index] for r in self.requests],
                         [r.n for r in self.requests],
                         self.cache.evicted_pages(), self.peak_pinned,
                         self.peak_running, self.peak_queued)


class View:
    """§10.6 / §11.2: read-only figures of one worker at a routing instant."""

    def __init__(self, worker):
        self._worker = worker
        self.running = len(worker.running)
        self.queued = len(worker.queue)
        self.load = self.running + self.queued
        self.pinned = worker.cache.pinned()
        self.unprefilled_tokens = sum(
            r.n - r.matched for r in worker.running
            if r.index not in worker.prefilled)
        self.cached_pages = worker.cache.cached_pages()

    def peek_match(self, tokens):
        if not tokens:
            return (0, 0)
        return self._worker.cache.peek_match(list(tokens))


def nearest_rank(sorted_values, q):
    """§10.5: the ⌈q·R/100⌉-th smallest of R values (0 for none)."""
    if not sorted_values:
        return 0
    rank = -(-q * len(sorted_values) // 100)
    return sorted_values[max(rank, 1) - 1]


def quotient(numerator, denominator):
    """§10.5: the double nearest to the exact quotient (Python's int / int
    is correctly rounded)."""
    return numerator / denominator


def totals_of(records, lengths, evicted, peak_pinned, peak_running,
              peak_queued):
    """§10.5's `totals` over `records` (with their prompt lengths)."""
    request_tokens = sum(lengths)
    matched = sum(r.matched_length for r in records if not r.refused)
    waits = sorted(r.wait_us for r in records)
    return {
        "requests": len(records),
        "request_tokens": request_tokens,
        "matched_tokens": matched,
        "hit_ratio": quotient(matched, request_tokens) if request_tokens else 0.0,
        "refused": sum(1 for r in records if r.refused),
        "waited_for_room": sum(1 for r in records if r.waited_for_room),
        "evicted_pages": evicted,
        "peak_pinned": peak_pinned,
        "peak_running": peak_running,
        "peak_queued": peak_queued,
        "mean_wait_us": quotient(sum(waits), len(waits)) if waits else 0.0,
        "p50_wait_us": nearest_rank(waits, 50),
        "p99_wait_us": nearest_rank(waits, 99),
        "makespan_us": (max(r.finish_us for r in records)
                        - min(r.arrival_us for r in records)) if records else 0,
    }
