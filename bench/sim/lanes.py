#!/usr/bin/env python3
"""A model of lanes creates racing, to choose a lanes design before building it.

Not a measurement: a discrete-event model of N clients creating back to back
on a lanes store through a store one round trip away (RTT), with the
engine's CPU a call as `bench --mode engine` measured it on DynamoDB Local
(2026-11-26). Each create: a first read (every head, or the mark, a floor
item and S sampled heads), the store of the chosen head's pet, `current`,
`swap`; a race lost reads the round back and tries another lane; a lane past
the ceiling (the fewest rounds known + AHEAD) is a stale choice: every head
is read again (the sampled design raises its floor item then). It prints
creates/s with no CPU cap, calls and engine ms a create, for widths 32 and
64 and AHEAD 3 and 7 (the id bound is width x (AHEAD + 1) - 1).

    python3 bench/sim/lanes.py

Checked against the real bench at width 32, AHEAD 3, full reads (the
release): 8.7 calls a create modelled against 10.8-11.3 measured (the model
has no backoff waits), 7.3 engine ms against 7.7-8.1.
"""
import heapq, random

RTT = 0.045
# engine cost model (ms): call base + per item
def cost_get(n): return 0.45+0.035*n
C_CUR=0.55; C_SET=0.4; C_SWAP=1.5; C_T=0.4
def run(design, W, AHEAD, clients=64, seconds=30, seed=1, S=4):
    rng=random.Random(seed)
    rounds=[0]*W; ver=[0]*W
    T={'floor':0}
    st=dict(calls=0,creates=0,full=0,lost=0,stale=0,cpu=0.0,twrites=0)
    def choose_two(snap, pool_lanes, ceiling, tried=None):
        pool=[k for k in pool_lanes if k!=tried and snap[k]<=ceiling]
        if not pool: return None
        a,b=rng.choice(pool),rng.choice(pool); return b if snap[b]<snap[a] else a
    def client(i):
        while True:
            if design=='full':
                yield RTT; st['calls']+=1; st['cpu']+=cost_get(W+1); snap=dict(enumerate(rounds)); known=list(range(W))
                ceiling=min(snap.values())+AHEAD
            else:
                yield RTT; st['calls']+=1; st['cpu']+=cost_get(2+S)
                known=rng.sample(range(W),S); snap={k:rounds[k] for k in known}; ceiling=T['floor']+AHEAD
            lane=choose_two(snap,known,ceiling)
            tried=None
            while True:
                if lane is None:
                    # full read, raise floor
                    yield RTT; st['calls']+=1; st['cpu']+=cost_get(W); st['full']+=1
                    snap=dict(enumerate(rounds)); known=list(range(W)); m=min(snap.values())
                    if design!='full' and m>T['floor']:
                        yield RTT; st['calls']+=1; st['cpu']+=C_T; T['floor']=m; st['twrites']+=1
                    ceiling=(min(snap.values()) if design=='full' else T['floor'])+AHEAD
                    lane=choose_two(snap,known,ceiling,tried)
                    if lane is None: lane=rng.randrange(W)
                yield RTT; st['calls']+=1; st['cpu']+=C_SET
                yield RTT/2; st['calls']+=1; st['cpu']+=C_CUR; r=rounds[lane]; v=ver[lane]; yield RTT/2
                if r>ceiling:
                    st['stale']+=1; snap[lane]=r; tried=lane
                    if design=='full': lane=None
                    else: lane=choose_two(snap,known,ceiling,lane)
                    continue
                if r!=snap.get(lane,-1):
                    yield RTT; st['calls']+=1; st['cpu']+=C_SET
                yield RTT/2; st['calls']+=1; st['cpu']+=C_SWAP
                if ver[lane]==v:
                    rounds[lane]+=1; ver[lane]+=1; yield RTT/2; st['creates']+=1; break
                yield RTT/2; st['lost']+=1
                yield RTT; st['calls']+=1; st['cpu']+=cost_get(2); snap[lane]=rounds[lane]; tried=lane
                lane=choose_two(snap,known,ceiling,lane)
    gens=[client(i) for i in range(clients)]
    ev=[]
    for i in range(clients): heapq.heappush(ev,(rng.random()*0.1,i))
    while ev:
        t,i=heapq.heappop(ev)
        if t>seconds: break
        d=next(gens[i]); heapq.heappush(ev,(t+d*(0.9+0.2*rng.random()),i))
    c=st['creates']
    return "creates/s %.0f calls/create %.2f engine ms/create %.2f full/create %.2f lost %.2f stale %.2f Twrites/create %.3f spread %d"%(c/seconds, st['calls']/c, st['cpu']/c, st['full']/c, st['lost']/c, st['stale']/c, st['twrites']/c, max(rounds)-min(rounds))
for W, AHEAD in [(32, 3), (32, 7), (64, 3), (64, 7)]:
    print(f"width {W}, AHEAD {AHEAD}: id bound {W * (AHEAD + 1) - 1}")
    print("  full reads   ", run("full", W, AHEAD))
    for S in [2, 4]:
        print(f"  sampled S={S}  ", run("sampled", W, AHEAD, S=S))
