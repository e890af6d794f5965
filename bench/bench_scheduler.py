#!/usr/bin/env python3
"""The scheduler's targets, driven by bench/bench.sh --scheduler.

Subcommands (paths absolute):
  latency WORK COUNT ROUNDS IMGWARM OUT BASEURL DELAY_MS JS
      imgwarm at its defaults, at each fixed -j of JS ("64 128 256") and curl
      --parallel at each of them, over TLS + HTTP/2 to an origin DELAY_MS
      away; medians of alternated rounds, the ratios defaults/best fixed -j and
      defaults/curl at that -j, CPU seconds per 1,000 requests.
  loopback WORK COUNT ROUNDS IMGWARM OUT BASEURL
      thumbnails from nginx on loopback: defaults vs -j 16, alternated.
  throttle WORK COUNT IMGWARM OUT BASEURL ACCESSLOG LIMIT
      an origin that answers 429 above LIMIT requests/s (nginx limit_req):
      the 2xx rate after the first 2 s, the share of 429s after 2 s, entries done.
  h1conns WORK COUNT IMGWARM OUT BASEURL PORT
      an HTTP/1.1-only origin: the most established connections to PORT
      (`ss`, sampled every 10 ms) at the defaults and at the old -j 16.
  rate WORK COUNT IMGWARM OUT BASEURL ACCESSLOG RATE
      `--rate RATE/s`: the request rate nginx logged.
  limitrate WORK COUNT IMGWARM OUT BASEURL BYTES
      `--limit-rate BYTES`: bytes a second of the run (its JSON report).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import corpus_files, count_files, run_timed  # noqa: E402

out_log = None


def say(s):
    print(s, flush=True)
    if out_log:
        out_log.write(s + "\n")
        out_log.flush()


def open_log(outfile):
    global out_log
    out_log = open(outfile, "a")


def manifest(work, name, count, baseurl, tag):
    files = corpus_files(work, name)[:int(count)]
    inp = os.path.join(work, "inputs")
    os.makedirs(inp, exist_ok=True)
    path = os.path.join(inp, f"sched-{tag}.manifest")
    urls = [f"{baseurl}/{name}/{rel}" for rel in files]
    with open(path, "w") as f:
        f.writelines(u + "\n" for u in urls)
    return path, urls, files


def target(tag):
    base = os.environ.get("BENCH_TARGET") or "/dev/shm/imgwarm-bench-sched"
    d = os.path.join(base, tag)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    return d


def imgwarm_argv(imgwarm, man, cache, extra):
    return [imgwarm, "warm", man, "--cache", cache, "--insecure", "--progress", "none", "-q"] + extra


def rounds_of(tools, rounds, count):
    """Runs each tool once per round in a rotated order; returns
    {tool: (median wall, median cpu, [rates])}."""
    walls, cpus = {}, {}
    names = list(tools)
    for r in range(1, rounds + 1):
        k = (r - 1) % len(names)
        for t in names[k:] + names[:k]:
            argv_for, tgt = tools[t]
            d = target(tgt)
            dt, cpu, rc, err = run_timed([argv_for(d)])
            n, _ = count_files(d)
            note = "" if n == count else f"  ({n}/{count} files!)"
            if rc != 0:
                note += f"  exit {rc}: {err.decode(errors='replace').strip()[-200:]}"
            walls.setdefault(t, []).append(dt)
            cpus.setdefault(t, []).append(cpu)
            say(f"round {r} {t:24s} {dt:7.3f} s  {count / dt:7.0f} req/s  cpu {cpu:5.2f} s{note}")
            shutil.rmtree(d, ignore_errors=True)
    return {t: (statistics.median(walls[t]), statistics.median(cpus[t]), [count / w for w in walls[t]]) for t in names}


def cmd_latency(work, count, rounds, imgwarm, outfile, baseurl, delay_ms, js):
    open_log(outfile)
    count, rounds = int(count), int(rounds)
    js = [int(j) for j in js.split()]
    man, urls, files = manifest(work, "thumbs", count, baseurl, "latency")
    curlcfg = man + ".curl"
    with open(curlcfg, "w") as f:
        for u, rel in zip(urls, files):
            f.write(f'url = "{u}"\noutput = "{os.path.basename(rel)}"\n')
    tools = {"imgwarm (defaults)": (lambda d: imgwarm_argv(imgwarm, man, d, []), "lat-default")}
    for j in js:
        tools[f"imgwarm -j {j}"] = ((lambda j: lambda d: imgwarm_argv(imgwarm, man, d, ["-j", str(j)]))(j), f"lat-j{j}")
    for j in js:
        tools[f"curl --parallel -j {j}"] = ((lambda j: lambda d: [
            "curl", "--parallel", "--parallel-max", str(j), "--http2", "-k", "-s", "-S", "--fail",
            "--create-dirs", "--output-dir", d, "-K", curlcfg])(j), f"lat-curl{j}")
    say(f"\n=== latency profile: {count} thumbnails over TLS + HTTP/2, origin {delay_ms} ms, {rounds} rounds ===")
    res = rounds_of(tools, rounds, count)
    say(f"{'tool':24s} {'median req/s':>12s} {'cpu s':>6s} {'cpu ms/req':>10s}")
    for t, (w, c, _) in res.items():
        say(f"{t:24s} {count / w:12.0f} {c:6.2f} {c / count * 1000:10.3f}")
    best = max(js, key=lambda j: count / res[f"imgwarm -j {j}"][0])
    d_rate = count / res["imgwarm (defaults)"][0]
    b_rate = count / res[f"imgwarm -j {best}"][0]
    c_rate = count / res[f"curl --parallel -j {best}"][0]
    say(f"best fixed -j: {best}; defaults / imgwarm -j {best}: {d_rate / b_rate * 100:.1f}% (target >= 85%); "
        f"defaults / curl --parallel -j {best}: {d_rate / c_rate * 100:.1f}% (target >= 85%)")
    say(f"CPU per request: defaults {res['imgwarm (defaults)'][1] / count * 1000:.3f} ms, "
        f"-j {js[-1]} {res[f'imgwarm -j {js[-1]}'][1] / count * 1000:.3f} ms")


def cmd_loopback(work, count, rounds, imgwarm, outfile, baseurl):
    open_log(outfile)
    count, rounds = int(count), int(rounds)
    man, _, _ = manifest(work, "thumbs", count, baseurl, "loopback")
    tools = {"imgwarm (defaults)": (lambda d: imgwarm_argv(imgwarm, man, d, []), "lb-default"),
             "imgwarm -j 16": (lambda d: imgwarm_argv(imgwarm, man, d, ["-j", "16"]), "lb-j16")}
    say(f"\n=== loopback: {count} thumbnails over plain HTTP/1.1 from nginx, {rounds} rounds ===")
    res = rounds_of(tools, rounds, count)
    d, j = res["imgwarm (defaults)"], res["imgwarm -j 16"]
    say(f"median wall: defaults {d[0]:.3f} s, -j 16 {j[0]:.3f} s, ratio defaults/-j16 {d[0] / j[0]:.3f} (target <= 1); "
        f"cpu {d[1]:.2f} vs {j[1]:.2f} s")


def access_lines(path, since):
    """(msec, status, bytes) of nginx access-log lines at or after `since`."""
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and float(p[0]) >= since:
                rows.append((float(p[0]), int(p[1]), int(p[2])))
    return rows


def run_once(argv):
    t0 = time.time()
    dt, cpu, rc, err = run_timed([argv])
    return t0, dt, cpu, rc, err


def cmd_throttle(work, count, imgwarm, outfile, baseurl, accesslog, limit):
    open_log(outfile)
    count, limit = int(count), int(limit)
    man, _, _ = manifest(work, "thumbs", count, baseurl, "throttle")
    say(f"\n=== 429 origin: nginx limit_req {limit} r/s (burst {limit // 10}, 429 + Retry-After: 1 above it), "
        f"{count} thumbnails over TLS + HTTP/2 ===")
    for label, extra in [("defaults", []), ("-j 16", ["-j", "16"])]:
        d = target("throttle")
        rep = os.path.join(d, ".report.json")
        t0, dt, cpu, rc, err = run_once(imgwarm_argv(imgwarm, man, d, extra + ["--report", rep, "--retries", "5"]))
        time.sleep(0.2)
        rows = access_lines(accesslog, t0)
        start = rows[0][0] if rows else t0
        late = [r for r in rows if r[0] - start > 2]
        late429 = sum(1 for r in late if r[1] == 429)
        ok_late = sum(1 for r in late if r[1] == 200)
        span = (late[-1][0] - late[0][0]) if len(late) > 1 else 0
        n, _ = count_files(d)
        with open(rep) as f:
            hosts = json.load(f).get("hosts", [])
        h = hosts[0] if hosts else {}
        say(f"{label:9s}: {dt:6.2f} s, exit {rc}, {n}/{count} stored; "
            f"requests {len(rows)}, 429 {sum(1 for r in rows if r[1] == 429)}; after 2 s: {len(late)} requests, "
            f"{late429} 429 = {late429 / max(1, len(late)) * 100:.2f}% (target < 1%), "
            f"2xx rate {ok_late / span if span else 0:.0f}/s (origin allows {limit}); "
            f"report: throttled_rate {h.get('throttled_rate')}, rate_cuts {h.get('rate_cuts')}; cpu {cpu:.2f} s")
        shutil.rmtree(d, ignore_errors=True)


def cmd_h1conns(work, count, imgwarm, outfile, baseurl, port):
    open_log(outfile)
    count = int(count)
    man, _, _ = manifest(work, "thumbs", count, baseurl, "h1")
    say(f"\n=== HTTP/1.1-only origin (40 ms, plain http, no h2c): most connections open at once (ss, every 10 ms) ===")
    for label, extra in [("defaults", []), ("-j 16 --host-connections 16 (the old defaults)", ["-j", "16", "--host-connections", "16"])]:
        d = target("h1")
        peak = [0]
        stop = threading.Event()

        def poll():
            while not stop.is_set():
                # imgwarm's own sockets only (-p): nginx keeps upstream
                # connections to the same origin port open.
                o = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{port} )"],
                                   capture_output=True, text=True).stdout
                peak[0] = max(peak[0], len([l for l in o.splitlines() if '(("imgwarm' in l]))
                time.sleep(0.01)

        th = threading.Thread(target=poll)
        th.start()
        _, dt, cpu, rc, _ = run_once(imgwarm_argv(imgwarm, man, d, extra))
        stop.set()
        th.join()
        n, _ = count_files(d)
        say(f"{label}: {dt:.2f} s, exit {rc}, {n}/{count} stored, most connections at once: {peak[0]} (cap 6)")
        shutil.rmtree(d, ignore_errors=True)


def cmd_rate(work, count, imgwarm, outfile, baseurl, accesslog, rate):
    open_log(outfile)
    count, rate = int(count), float(rate)
    man, _, _ = manifest(work, "thumbs", count, baseurl, "rate")
    d = target("rate")
    t0, dt, cpu, rc, _ = run_once(imgwarm_argv(imgwarm, man, d, ["--rate", f"{rate:g}/s"]))
    time.sleep(0.2)
    rows = access_lines(accesslog, t0)
    span = rows[-1][0] - rows[0][0] if len(rows) > 1 else 0
    measured = (len(rows) - 1) / span if span else 0
    say(f"\n=== --rate {rate:g}/s: {len(rows)} requests over {span:.2f} s (nginx access log): {measured:.2f}/s = "
        f"{(measured / rate - 1) * 100:+.2f}% (target within 5%); exit {rc}, cpu {cpu:.2f} s ===")
    shutil.rmtree(d, ignore_errors=True)


def cmd_limitrate(work, count, imgwarm, outfile, baseurl, limit):
    open_log(outfile)
    count = int(count)
    man, _, _ = manifest(work, "large", count, baseurl, "limitrate")
    d = target("limitrate")
    rep = os.path.join(d, ".report.json")
    _, dt, cpu, rc, _ = run_once(imgwarm_argv(imgwarm, man, d, ["--limit-rate", limit, "--report", rep]))
    with open(rep) as f:
        totals = json.load(f)["totals"]
    b, s = totals["bytes_downloaded"], totals["seconds"]
    # Units as curl reads --limit-rate (and imgwarm with it): 1k = 1024.
    num = limit.rstrip("/s")
    scale = {"k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30}.get(num[-1:], 1)
    want = float(num[:-1] if scale > 1 else num) * scale
    say(f"\n=== --limit-rate {limit}: {b:,} bytes in {s:.2f} s (the run's own clock) = {b / s:,.0f} B/s = "
        f"{(b / s / want - 1) * 100:+.2f}% (target within 5%); wall {dt:.2f} s, exit {rc}, cpu {cpu:.2f} s ===")
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    cmds = {"latency": cmd_latency, "loopback": cmd_loopback, "throttle": cmd_throttle, "h1conns": cmd_h1conns,
            "rate": cmd_rate, "limitrate": cmd_limitrate}
    cmds[sys.argv[1]](*sys.argv[2:])
