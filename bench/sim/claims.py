#!/usr/bin/env python3
"""A model of lanes creates' latency where the store is far away: rate and tail.

Not a measurement: a discrete-event model of N clients creating back to back
through a store one round trip (RTT) away, each create following the claim
loop of `src/catalogue/lanes/create.rs` call by call:

- a first `get-many` of the mark and every head; the lane in turn when the
  rounds say creates came one at a time, else the fewer-rounds of two drawn;
- the store of the head's pet (`set-many`), `current`, the store again if
  the head moved since it was read, `swap`;
- a swap lost costs the host's own read of the key (Spin re-reads after a
  failed `swap`, spin-platform-facts.md) and the round read back
  (`owner_of`), then another lane; a lane past the ceiling (the fewest
  rounds + AHEAD) reads every head again; from the 4th try, the retry
  policy's jittered waits (8 ms doubling to 1,024, 10 s in all).

A call's read or write lands at its midpoint. It prints creates/s, p50 and
p99 (s), races lost a create and how many creates lost 0, 1, 2, 3+ races,
for 4 and 64 clients, per design:

    python3 bench/sim/claims.py                 # RTT 0.2 s
    python3 bench/sim/claims.py --rtt 0.03

Designs: the release (32 lanes); 64 lanes; each with the lane after a race
lost chosen on every head read back with the round (`fresh`: the read
back's `get-many` also reads the heads, one call either way), and with the
lane drawn at random among those under the ceiling (`uniform`).
Checked against the real bench at 200 ms (BENCHMARKS.md, "At 200 ms a
call"): the release 7.1x and p99 8.2 s modelled, 6.0-7.0x and 6.9-10.8 s
measured; 64 lanes 9.6x and 5.4 s, 8.4-8.7x and 4.9-5.9 s; 64 lanes fresh
10.2x and 4.4 s, 9.0-9.4x and 4.3-4.5 s.
"""
import argparse
import heapq
import random


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run(width=32, ahead=3, clients=64, rtt=0.2, seconds=120, seed=1,
        choice="two", in_turn=True, fresh=False, quick=4):
    rng = random.Random(seed)
    rounds, version = [0] * width, [0] * width
    latencies, losses_of = [], [0] * 4

    def draw(snap, tried):
        fewest = min(snap)
        pool = [k for k in range(width) if k != tried and snap[k] <= fewest + ahead]
        if choice == "uniform":
            return rng.choice(pool)
        a, b = rng.choice(pool), rng.choice(pool)
        return b if snap[b] < snap[a] else a

    def first(snap):
        fewest = min(snap)
        descending = all(snap[i] >= snap[i + 1] for i in range(width - 1))
        if in_turn and descending and snap[0] - fewest <= 1:
            return snap.index(fewest)
        return draw(snap, None)

    def create():
        yield rtt / 2  # the first get-many: the mark and every head
        snap = list(rounds)
        yield rtt / 2
        lane, tries, retry, waited, lost = first(snap), 0, 0, 0.0, 0
        while True:
            tries += 1
            ceiling = min(snap) + ahead
            stored = None
            if snap[lane] <= ceiling:
                yield rtt  # the head's pet stored
                stored = snap[lane]
            outcome = None
            while outcome is None:
                yield rtt / 2  # current
                r, v = rounds[lane], version[lane]
                yield rtt / 2
                if r > ceiling:
                    outcome = "ceiling"
                    break
                if r != stored:
                    yield rtt  # the head moved: its new pet stored
                stored = r
                yield rtt / 2  # swap
                if version[lane] == v:
                    rounds[lane] += 1
                    version[lane] += 1
                    yield rtt / 2
                    outcome = "won"
                    break
                yield rtt / 2 + rtt  # the host's read after a failed swap
                yield rtt / 2  # the round read back (owner_of)
                snap[lane] = rounds[lane]
                if fresh:
                    snap = list(rounds)
                yield rtt / 2
                lost += 1
                outcome = "lost"
            if outcome == "won":
                break
            if tries >= quick:
                retry += 1
                wait = rng.randint(0, min(1024, 8 * 2 ** (retry - 1))) / 1000
                if waited + wait > 10:
                    break
                waited += wait
                yield wait
            if outcome == "ceiling":
                yield rtt / 2  # every head read again
                snap = list(rounds)
                yield rtt / 2
            lane = draw(snap, lane)
        losses_of[min(lost, 3)] += 1

    def client():
        while True:
            yield "begin"
            yield from create()
            yield "end"

    warm = 10.0
    events, gens, began = [], [client() for _ in range(clients)], [0.0] * clients
    for i in range(clients):
        heapq.heappush(events, (rng.random() * rtt, i))
    while events:
        t, i = heapq.heappop(events)
        if t > warm + seconds:
            break
        step = next(gens[i])
        if step == "begin":
            began[i] = t
            step = 0.0
        elif step == "end":
            if began[i] > warm:
                latencies.append(t - began[i])
            step = 0.0
        heapq.heappush(events, (t + step * (0.97 + 0.06 * rng.random()), i))
    n = len(latencies)
    share = [round(k / sum(losses_of), 3) for k in losses_of]
    return n / seconds, percentile(latencies, 0.5), percentile(latencies, 0.99), share


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rtt", type=float, default=0.2)
    p.add_argument("--seconds", type=float, default=120)
    o = p.parse_args()
    designs = [
        ("the release: 32 lanes", dict(width=32)),
        ("64 lanes", dict(width=64)),
        ("64 lanes, fresh", dict(width=64, fresh=True)),
        ("64 lanes, fresh, uniform", dict(width=64, fresh=True, choice="uniform")),
        ("128 lanes, fresh (a new format)", dict(width=128, fresh=True)),
    ]
    print(f"RTT {o.rtt} s, {o.seconds:.0f} s modelled a load")
    print("| design | 4 clients: creates/s, p99 | 64 clients: creates/s, p50, p99 | 64 ÷ 4 | creates losing 0, 1, 2, 3+ races at 64 |")
    print("|---|---|---|---:|---|")
    for name, kw in designs:
        r4 = run(clients=4, rtt=o.rtt, seconds=o.seconds, **kw)
        r64 = run(clients=64, rtt=o.rtt, seconds=o.seconds, **kw)
        print(f"| {name} | {r4[0]:.1f}, {r4[2]:.2f} s | {r64[0]:.1f}, {r64[1]:.2f} s, {r64[2]:.2f} s "
              f"| {r64[0] / r4[0]:.1f}x | {', '.join(f'{s:.1%}' for s in r64[3])} |")


if __name__ == "__main__":
    main()
