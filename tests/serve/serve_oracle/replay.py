"""The clock over N workers (SPEC §10.3, §11.4) and the answers (§10.5,
§11.8). One worker with no router is §10; §11.4 with N = 1 runs the same
steps (each pass has due work, so the one worker always runs its start
loop, as §10.3 says).
"""
import json

from .document import read_document
from .routers import make_router
from .worker import Record, Worker, totals_of


def run(settings, requests, workers, router):
    """§11.4 (§10.3 when workers = 1): runs the replay; returns the Worker
    objects and the chosen worker of each request."""
    pool = [Worker(settings) for _ in range(workers)]
    chosen = [None] * len(requests)
    next_arrival = 0   # arrivals are non-decreasing: request order
    while True:
        # Step 1: now = the smallest pending event or unhandled arrival.
        times = [w.next_event_time() for w in pool]
        if next_arrival < len(requests):
            times.append(requests[next_arrival].arrival)
        times = [t for t in times if t is not None]
        if not times:
            break
        now = min(times)
        while True:
            # Step 2: every worker's prefill ends then finishes at now ...
            due = [w.apply_due(now) for w in pool]
            # ... then each arrival at now, in request order, routed.
            while (next_arrival < len(requests)
                   and requests[next_arrival].arrival == now):
                req = requests[next_arrival]
                views = [w.view() for w in pool]
                target = router.choose(req.index, req.tokens, now, views)
                assert 0 <= target < workers
                chosen[req.index] = target
                pool[target].arrive(req)
                due[target] = True
                next_arrival += 1
            # Step 3: start loops of the workers with due work, in order.
            for w, worker in enumerate(pool):
                if due[w]:
                    worker.start_loop(now)
            # Step 4: events due at now from step 3 (zero durations)?
            if not any(worker.has_event_at(now) for worker in pool):
                break
    return pool, chosen


def record_dict(record):
    return dict(vars(record))  # dataclass fields in §10.5's order


def replay(document, unit="token"):
    """The answer to a §10/§11 document as a dict (doubles as floats). A
    document with neither `workers` nor `router` gets §10.5's answer, with
    either §11.8's."""
    settings, requests, routing = read_document(document)
    if routing is None:
        pool, _ = run(settings, requests, 1, make_router(
            {"name": "round-robin"}, 1, settings, unit))
        worker = pool[0]
        return {"requests": [record_dict(worker.records[r.index])
                             for r in requests],
                "totals": worker.totals()}
    workers, router_object = routing
    router = make_router(router_object, workers, settings, unit)
    pool, chosen = run(settings, requests, workers, router)
    answers = []
    for req in requests:
        entry = record_dict(pool[chosen[req.index]].records[req.index])
        entry["worker"] = chosen[req.index]
        answers.append(entry)
    per_worker = [w.totals() for w in pool]
    # §11.8 totals: sums, largest peaks, waits and makespan over all.
    everything = totals_of(
        [pool[chosen[r.index]].records[r.index] for r in requests],
        [r.n for r in requests],
        sum(t["evicted_pages"] for t in per_worker),
        max(t["peak_pinned"] for t in per_worker),
        max(t["peak_running"] for t in per_worker),
        max(t["peak_queued"] for t in per_worker))
    everything["workers"] = workers
    everything["router"] = router_object["name"]
    for member, figures in (
            ("imbalance_requests", [t["requests"] for t in per_worker]),
            ("imbalance_tokens", [t["request_tokens"] for t in per_worker]),
            ("imbalance_uncached", [t["request_tokens"] - t["matched_tokens"]
                                    for t in per_worker])):
        total = sum(figures)
        # max_w / mean_w = max × N / Σ, 1.0 when Σ = 0
        everything[member] = (max(figures) * workers / total) if total else 1.0
    return {"requests": answers, "totals": everything, "per_worker": per_worker}


def answer_text(answer):
    """§10.5's bytes: compact JSON, one trailing newline. Python's float repr
    is the shortest text that reads back, in exponent form from 1e16 up and
    below 1e-4, with ".0" on integral values: exactly §10.5's doubles."""
    return json.dumps(answer, separators=(",", ":")) + "\n"


def replay_text(document, unit="token"):
    return answer_text(replay(document, unit))


__all__ = ["replay", "replay_text", "answer_text", "run", "Record"]
