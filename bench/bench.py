#!/usr/bin/env python3
"""Helpers of bench/bench.sh: corpus, manifests and peer inputs, timed rounds, report.

Subcommands (all paths absolute; bench.sh passes them):
  corpus WORK NAME COUNT MINKB MAXKB        make WORK/corpus/NAME once (idempotent)
  inputs WORK NAME BASEURL                  manifest + curl/aria2/wget2 lists for NAME
  rounds WORK NAME ROUNDS J IMGWARM OUT     time the tools, alternating round by round
  cachedfill WORK COUNT BASEURL CACHEDIR    write COUNT cache files with SDWebImage names
  bigmanifest PATH COUNT BASEURL            a manifest of COUNT distinct lines
  delayserver ROOT PORT DELAY_MS            HTTP/1.1 file server answering each request DELAY_MS late
  latency WORK NAME COUNT J ROUNDS IMGWARM OUT BASEURL
                                            the latency profile: request rate of each tool vs J / delay
"""
import asyncio
import hashlib
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import time
import zlib

# ---------------------------------------------------------------- corpus

# (format, width, height, extra convert args) -- sizes chosen so that the
# files land in the thumbnail (5-20 KB) or large (50-300 KB) ranges; bases
# outside the range are dropped after encoding.
PHOTO = ["-attenuate", "0.4", "+noise", "Gaussian"]
BASES = {
    "thumbs": (
        [("jpg", w, h, PHOTO + ["-quality", q]) for (w, h) in
         [(180, 180), (240, 160), (200, 200), (256, 192), (280, 210), (300, 225), (320, 240), (360, 270)]
         for q in ("70", "82")]
        + [("png", w, h, ["-blur", "0x2", "-depth", "8"]) for (w, h) in
           [(64, 64), (80, 60), (96, 72), (100, 100), (120, 90), (128, 96)]]
        + [("gif", w, h, ["-colors", c]) for (w, h) in [(100, 100), (120, 90), (140, 140), (160, 120)]
           for c in ("64", "128")]
    ),
    "large": (
        [("jpg", w, h, PHOTO + ["-quality", q]) for (w, h) in
         [(640, 480), (800, 600), (960, 720), (1024, 768), (1200, 900), (1400, 1050)]
         for q in ("72", "85")]
        + [("jpg", w, h, PHOTO + ["-quality", "80", "-interlace", "Plane"]) for (w, h) in [(640, 480), (1024, 768)]]
        + [("png", w, h, ["-blur", "0x2", "-depth", "8"]) for (w, h) in
           [(320, 240), (400, 300), (480, 360), (560, 420)]]
        + [("gif", w, h, ["-colors", c]) for (w, h) in [(400, 300), (480, 360), (560, 420), (640, 480)]
           for c in ("128", "256")]
    ),
}


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def mark(fmt, data, tag):
    """A distinct, still valid image: the tag goes into a comment of the format."""
    tag = tag.encode()
    if fmt == "jpg":  # COM segment right after SOI
        assert data[:2] == b"\xff\xd8"
        return data[:2] + b"\xff\xfe" + struct.pack(">H", len(tag) + 2) + tag + data[2:]
    if fmt == "png":  # tEXt chunk before IEND (the last 12 bytes)
        assert data[-8:-4] == b"IEND"
        return data[:-12] + png_chunk(b"tEXt", b"Comment\x00" + tag) + data[-12:]
    if fmt == "gif":  # comment extension before the trailer
        assert data[-1:] == b";"
        return data[:-1] + b"\x21\xfe" + bytes([len(tag)]) + tag + b"\x00" + b";"
    raise ValueError(fmt)


def cmd_corpus(work, name, count, minkb, maxkb):
    count, minkb, maxkb = int(count), int(minkb), int(maxkb)
    root = os.path.join(work, "corpus", name)
    stamp = os.path.join(work, "corpus", f".{name}.done")
    if os.path.exists(stamp) and open(stamp).read().strip() == str(count):
        print(f"corpus {name}: {count} files (kept)", flush=True)
        return
    shutil.rmtree(root, ignore_errors=True)
    bdir = os.path.join(work, "bases", name)
    os.makedirs(bdir, exist_ok=True)
    t0 = time.monotonic()
    bases = []
    procs = []
    for i, (fmt, w, h, extra) in enumerate(BASES[name]):
        path = os.path.join(bdir, f"b{i:02d}_{w}x{h}.{fmt}")
        if not os.path.exists(path):
            procs.append(subprocess.Popen(
                ["convert", "-seed", str(i + 1), "-size", f"{w}x{h}", "plasma:fractal", *extra, path]))
        bases.append((fmt, path))
        if len(procs) >= (os.cpu_count() or 2):
            for p in procs:
                p.wait()
            procs = []
    for p in procs:
        p.wait()
    kept = []
    for fmt, path in bases:
        data = open(path, "rb").read()
        if minkb * 1000 <= len(data) <= maxkb * 1000:
            kept.append((fmt, data))
        else:
            print(f"  base {os.path.basename(path)}: {len(data) // 1000} KB outside {minkb}-{maxkb} KB, dropped")
    if len(kept) < 6:
        sys.exit(f"bench: only {len(kept)} usable base images for {name}")
    rnd = random.Random(42)
    total = 0
    for n in range(count):
        fmt, data = kept[rnd.randrange(len(kept))]
        sub = os.path.join(root, f"{n // 1000:03d}")
        if n % 1000 == 0:
            os.makedirs(sub, exist_ok=True)
        body = mark(fmt, data, f"imgwarm-bench {name} {n}")
        with open(os.path.join(sub, f"{name[0]}{n:06d}.{fmt}"), "wb") as f:
            f.write(body)
        total += len(body)
    open(stamp, "w").write(str(count))
    fmts = {}
    for fmt, _ in kept:
        fmts[fmt] = fmts.get(fmt, 0) + 1
    print(f"corpus {name}: {count} files, {total / 1e6:.1f} MB, {len(kept)} bases {fmts}, "
          f"{time.monotonic() - t0:.1f}s", flush=True)


def corpus_files(work, name):
    root = os.path.join(work, "corpus", name)
    out = []
    for sub in sorted(os.listdir(root)):
        for f in sorted(os.listdir(os.path.join(root, sub))):
            out.append(f"{sub}/{f}")
    return out


def cmd_inputs(work, name, baseurl):
    files = corpus_files(work, name)
    d = os.path.join(work, "inputs")
    os.makedirs(d, exist_ok=True)
    urls = [f"{baseurl}/{name}/{rel}" for rel in files]
    with open(os.path.join(d, f"{name}.manifest"), "w") as f:
        f.writelines(u + "\n" for u in urls)
    with open(os.path.join(d, f"{name}.curl"), "w") as f:  # url/output pairs; the folder is --output-dir
        for u, rel in zip(urls, files):
            f.write(f'url = "{u}"\noutput = "{os.path.basename(rel)}"\n')
    with open(os.path.join(d, f"{name}.curlnull"), "w") as f:
        for u in urls:
            f.write(f'url = "{u}"\noutput = "/dev/null"\n')
    with open(os.path.join(d, f"{name}.aria2"), "w") as f:
        for u, rel in zip(urls, files):
            f.write(f"{u}\n  out={os.path.basename(rel)}\n")
    with open(os.path.join(d, f"{name}.list"), "w") as f:
        f.writelines(u + "\n" for u in urls)
    print(f"inputs {name}: {len(urls)} URLs", flush=True)


# ---------------------------------------------------------------- timing

def filesystem_type(path):
    """The type of the filesystem holding `path` (the longest mount point
    that is a prefix of it, from /proc/mounts); "" when unknown."""
    path = os.path.realpath(path)
    best, kind = "", ""
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                if len(fields) < 3:
                    continue
                mnt = fields[1].replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) > len(best):
                    best, kind = mnt, fields[2]
    except OSError:
        pass
    return kind


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def count_files(d):
    n = 0
    size = 0
    for root, dirs, files in os.walk(d):
        dirs[:] = [x for x in dirs if not x.startswith(".")]  # imgwarm's .imgwarm state
        for f in files:
            if not f.startswith("."):
                n += 1
                size += os.lstat(os.path.join(root, f)).st_size
    return n, size


def nginx_cpu_seconds():
    """user+sys CPU seconds of every nginx process so far (the server shares
    the 2 cores with the tool under test, so its CPU is part of the budget)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        if comm != "nginx":
            continue
        fields = st[st.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def run_timed(argvs):
    """Runs the commands one after another; returns (wall s, user+sys CPU s
    of the commands, last exit status, last stderr)."""
    wall = cpu = 0.0
    rc, err = 0, b""
    for argv in argvs:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall += time.monotonic() - t0
        cpu += ru.ru_utime + ru.ru_stime
        rc = os.waitstatus_to_exitcode(status)
        p.returncode = rc
        if rc != 0:
            break
    return wall, cpu, rc, err


def cmd_rounds(work, name, rounds, j, imgwarm, outfile):
    rounds, j = int(rounds), int(j)
    cores = os.cpu_count() or 1
    inp = os.path.join(work, "inputs")
    out = os.environ.get("BENCH_TARGET") or os.path.join(work, "out")
    src = os.path.join(work, "corpus", name)
    expected = len(corpus_files(work, name))
    _, corpus_bytes = count_files(src)
    slug = {"imgwarm": "imgwarm", "imgwarm -n": "imgwarm-nv", "curl": "curl", "aria2c": "aria2c", "wget2": "wget2",
            "curl+verify": "curlverify", "curl>null": None, "cp -r": "cp"}

    def tools_for(r):
        """argv lists run in sequence and the folder to count, for round r.
        Every run writes into a folder of its own that nothing deleted
        recently: on this disk (ext4 mounted with discard, no journal) files
        created just after a mass delete cost several times more kernel time
        (ext4 skips recently freed inodes, the host re-backs trimmed blocks),
        which would punish whichever tool runs after a cleanup."""
        d = {t: (f"{out}/{name}-r{r}-{s}" if s else None) for t, s in slug.items()}
        curl_files = ["curl", "--parallel", "--parallel-max", str(j), "-s", "-S", "--fail",
                      "--create-dirs", "--output-dir", d["curl"], "-K", f"{inp}/{name}.curl"]
        curl_verify = ["curl", "--parallel", "--parallel-max", str(j), "-s", "-S", "--fail",
                       "--create-dirs", "--output-dir", d["curl+verify"], "-K", f"{inp}/{name}.curl"]
        return {
            "imgwarm": ([[imgwarm, "warm", f"{inp}/{name}.manifest", "-j", str(j), "--cache", d["imgwarm"],
                          "--progress", "none", "-q"]], d["imgwarm"]),
            # imgwarm without decoding: its own cost apart from validation.
            "imgwarm -n": ([[imgwarm, "warm", f"{inp}/{name}.manifest", "-j", str(j), "--cache", d["imgwarm -n"],
                             "--progress", "none", "-q", "--no-validate"]], d["imgwarm -n"]),
            "curl": ([curl_files], d["curl"]),
            "aria2c": ([["aria2c", "-i", f"{inp}/{name}.aria2", "-j", str(j), "-x1", "-d", d["aria2c"],
                         "--auto-file-renaming=false", "--allow-overwrite=true", "--console-log-level=warn",
                         "--summary-interval=0", "--download-result=hide", "--file-allocation=none",
                         "--check-certificate=false", "--max-tries=1"]], d["aria2c"]),
            "wget2": ([["wget2", "-i", f"{inp}/{name}.list", "--max-threads", str(j), "-P", d["wget2"], "-nd",
                        "--no-robots", "-q"]], d["wget2"]),
            # The same work as imgwarm with the peers: fetch with curl, then
            # decode every file (imgwarm's own verifier on all cores: the
            # fastest validator on hand, so this flatters the pair).
            "curl+verify": ([curl_verify, [imgwarm, "cache", "verify", "--cache", d["curl+verify"]]],
                            d["curl+verify"]),
            "curl>null": ([["curl", "--parallel", "--parallel-max", str(j), "-s", "-S", "--fail", "-K",
                            f"{inp}/{name}.curlnull"]], None),
            "cp -r": ([["cp", "-r", src, d["cp -r"]]], d["cp -r"]),
        }

    order = list(slug)
    dropped = None
    times = {t: [] for t in order}
    cpus = {t: [] for t in order}
    server = {t: [] for t in order}
    log = open(outfile, "a")

    def say(s):
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    say(f"\n=== corpus {name}: {expected} files, {corpus_bytes / 1e6:.1f} MB, -j {j}, {rounds} rounds, {cores} cores ===")
    # With the corpus and the targets both on tmpfs, dropping the page cache
    # evicts nothing but the tools' own binaries, and each run would then
    # time reading its program from disk: 0.10-0.12 s for imgwarm's 115 MB
    # static binary (59 major faults), 0.03-0.04 s for curl. BENCH_DROP:
    # auto (drop unless both are on tmpfs), yes, no.
    drop_mode = os.environ.get("BENCH_DROP", "auto")
    out_on_tmpfs = filesystem_type(out) == "tmpfs"  # every run's folder is under `out`
    if drop_mode == "auto":
        want_drop = not (out_on_tmpfs and filesystem_type(src) == "tmpfs")
    else:
        want_drop = drop_mode == "yes"
    for r in range(1, rounds + 1):
        # rotate the order each round so no tool always runs first or after the same one
        rot = order[(r - 1) % len(order):] + order[:(r - 1) % len(order)]
        tools = tools_for(r)
        for t in rot:
            argvs, target = tools[t]
            if target and t != "cp -r":
                os.makedirs(target, exist_ok=True)
            ok = drop_caches() if want_drop else False
            dropped = ok if dropped is None else (dropped and ok)
            n0 = nginx_cpu_seconds()
            dt, cpu, rc, err = run_timed(argvs)
            ncpu = nginx_cpu_seconds() - n0
            note = ""
            if target:
                n, _ = count_files(target)
                if n != expected:
                    note = f"  ({n}/{expected} files!)"
            if rc != 0:
                note += f"  exit {rc}: {err.decode(errors='replace').strip()[-300:]}"
            # On tmpfs a run's files are memory: 3 rounds x 8 tools x the
            # large corpus is 15 GB, and the reclaim that forces slowed every
            # later run several times over. tmpfs has no ext4 free-inode
            # effect (see above), so there they go at once.
            if target and out_on_tmpfs:
                shutil.rmtree(target, ignore_errors=True)
            times[t].append(dt)
            cpus[t].append(cpu)
            server[t].append(ncpu)
            say(f"round {r} {t:12s} {dt:8.3f} s   cpu {cpu:6.2f} s + nginx {ncpu:5.2f} s{note}")
        base = times["imgwarm"][-1]
        say(f"round {r} ratios imgwarm/tool: " + "  ".join(
            f"{t}={base / times[t][-1]:.2f}" for t in order if t != "imgwarm"))
    # per-round ratio of imgwarm to the faster of curl and wget2 (the "faster peer")
    ratios = {t: [times["imgwarm"][i] / times[t][i] for i in range(rounds)] for t in order if t != "imgwarm"}
    ratios["faster(curl,wget2)"] = [times["imgwarm"][i] / min(times["curl"][i], times["wget2"][i])
                                    for i in range(rounds)]
    say(f"drop_caches before each run: {'yes' if dropped else ('no (not permitted; page cache warm)' if want_drop else 'no (corpus and targets on tmpfs, BENCH_DROP=' + drop_mode + ')')}")
    say("cpu = user+sys of the tool; floor = (cpu + nginx cpu) / cores: the wall time no schedule can beat")
    say(f"{'tool':20s} {'median s':>9s} {'MB/s':>7s} {'files/s':>8s} {'cpu s':>6s} {'floor s':>7s}"
        "  imgwarm/tool per round -> median")
    for t in order:
        med = statistics.median(times[t])
        cpu = statistics.median(cpus[t])
        floor = statistics.median([(c + n) / cores for c, n in zip(cpus[t], server[t])])
        rs = ratios.get(t)
        rtxt = "" if rs is None else " ".join(f"{x:.2f}" for x in rs) + f" -> {statistics.median(rs):.2f}"
        say(f"{t:20s} {med:9.3f} {corpus_bytes / 1e6 / med:7.1f} {expected / med:8.0f} {cpu:6.2f} {floor:7.2f}  {rtxt}")
    rs = ratios["faster(curl,wget2)"]
    say(f"{'faster(curl,wget2)':20s} {'':9s} {'':7s} {'':8s} {'':6s} {'':7s}  " + " ".join(f"{x:.2f}" for x in rs)
        + f" -> {statistics.median(rs):.2f}")
    # imgwarm's own cost apart from decoding, against the same peers.
    if "imgwarm -n" in times:
        nv = [times["imgwarm -n"][i] / min(times["curl"][i], times["wget2"][i]) for i in range(rounds)]
        nc = [cpus["imgwarm -n"][i] / cpus["curl"][i] for i in range(rounds)]
        say(f"{'-n/faster(curl,wget2)':20s} {'':9s} {'':7s} {'':8s} {'':6s} {'':7s}  " + " ".join(f"{x:.2f}" for x in nv)
            + f" -> {statistics.median(nv):.2f}")
        say(f"{'-n cpu / curl cpu':20s} {'':9s} {'':7s} {'':8s} {'':6s} {'':7s}  " + " ".join(f"{x:.2f}" for x in nc)
            + f" -> {statistics.median(nc):.2f}")
        ratios["no-validate/faster(curl,wget2)"] = nv
        ratios["no-validate cpu/curl cpu"] = nc
    summary = {"corpus": name, "files": expected, "bytes": corpus_bytes, "j": j, "rounds": rounds, "cores": cores,
               "times": times, "cpu": cpus, "nginx_cpu": server,
               "median_ratio": {t: statistics.median(v) for t, v in ratios.items()},
               "drop_caches": bool(dropped)}
    with open(os.path.join(os.path.dirname(outfile), f"rounds-{name}.json"), "w") as f:
        json.dump(summary, f, indent=1)


# ---------------------------------------------------------------- cached re-run, big manifest

def cmd_cachedfill(work, count, baseurl, cachedir):
    """COUNT cache files named as SDWebImage names them: md5(URL) + path extension.
    Content: one small valid JPEG (a cached entry is never read back)."""
    count = int(count)
    os.makedirs(cachedir, exist_ok=True)
    manifest = os.path.join(work, "inputs", f"cached{count}.manifest")
    os.makedirs(os.path.dirname(manifest), exist_ok=True)
    body = None
    for fn in sorted(os.listdir(os.path.join(work, "bases", "thumbs"))):
        if fn.endswith(".jpg"):
            body = open(os.path.join(work, "bases", "thumbs", fn), "rb").read()
            break
    have = len([f for f in os.listdir(cachedir) if not f.startswith(".")])
    with open(manifest, "w") as m:
        for n in range(count):
            url = f"{baseurl}/thumbs/{n % 1000:03d}/t{n:06d}.jpg?v={n}"
            m.write(url + "\n")
            if have != count:
                with open(os.path.join(cachedir, hashlib.md5(url.encode()).hexdigest() + ".jpg"), "wb") as f:
                    f.write(body)
    print(manifest)


def cmd_bigmanifest(path, count, baseurl):
    count = int(count)
    if os.path.exists(path) and sum(1 for _ in open(path)) == count:
        return
    with open(path, "w") as f:
        for n in range(count):
            f.write(f"{baseurl}/images/{n // 1000:04d}/photo-{n:07d}.jpg?w=320&sig={n * 2654435761 % 4294967296:08x}\n")


# ---------------------------------------------------------------- latency profile

def cmd_delayserver(root, port, delay_ms):
    """The slow origin of the latency profile: nginx (TLS, HTTP/2) proxies to
    it over keep-alive HTTP/1.1, and it answers every request DELAY_MS after
    reading it, as a far-away server would. Files come from ROOT."""
    root = os.path.realpath(root)
    delay = int(delay_ms) / 1000
    types = {".jpg": b"image/jpeg", ".png": b"image/png", ".gif": b"image/gif"}

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, target = head.split(b"\r\n", 1)[0].split(b" ")[:2]
                await asyncio.sleep(delay)
                rel = target.split(b"?", 1)[0].decode(errors="replace").lstrip("/")
                path = os.path.realpath(os.path.join(root, rel))
                body, status, ctype = b"not found\n", b"404 Not Found", b"text/plain"
                if path.startswith(root + os.sep) and os.path.isfile(path):
                    with open(path, "rb") as f:
                        body = f.read()
                    status, ctype = b"200 OK", types.get(os.path.splitext(path)[1], b"application/octet-stream")
                writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: " + ctype
                             + b"\r\nContent-Length: %d\r\n\r\n" % len(body))
                if method != b"HEAD":
                    writer.write(body)
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", int(port), backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def cmd_latency(work, name, count, j, rounds, imgwarm, outfile, baseurl):
    """imgwarm, curl --parallel and wget2 at -j J, and imgwarm at its defaults,
    over TLS + HTTP/2 to an origin that answers each request 40 ms late: the
    achieved request rate against the bound J / 40 ms (no schedule with J
    requests in flight can do better)."""
    count, j, rounds = int(count), int(j), int(rounds)
    delay = float(os.environ.get("BENCH_DELAY_MS", "40")) / 1000
    files = corpus_files(work, name)[:count]
    inp = os.path.join(work, "inputs")
    out = os.environ.get("BENCH_TARGET") or os.path.join(work, "out")
    urls = [f"{baseurl}/{name}/{rel}" for rel in files]
    os.makedirs(inp, exist_ok=True)
    with open(os.path.join(inp, "latency.manifest"), "w") as f:
        f.writelines(u + "\n" for u in urls)
    with open(os.path.join(inp, "latency.curl"), "w") as f:
        for u, rel in zip(urls, files):
            f.write(f'url = "{u}"\noutput = "{os.path.basename(rel)}"\n')
    defaults_j = 16  # imgwarm warm's default --concurrency (docs/cli-contract.md)

    def tools_for(r):
        d = {t: f"{out}/latency-r{r}-{t}" for t in ("imgwarm", "imgwarm-default", "curl", "wget2")}
        return {
            f"imgwarm -j {j}": ([imgwarm, "warm", f"{inp}/latency.manifest", "-j", str(j), "--cache", d["imgwarm"],
                                 "--insecure", "--progress", "none", "-q"], j, d["imgwarm"]),
            "imgwarm (defaults)": ([imgwarm, "warm", f"{inp}/latency.manifest", "--cache", d["imgwarm-default"],
                                    "--insecure", "--progress", "none", "-q"], defaults_j, d["imgwarm-default"]),
            f"curl -j {j}": (["curl", "--parallel", "--parallel-max", str(j), "--http2", "-k", "-s", "-S", "--fail",
                              "--create-dirs", "--output-dir", d["curl"], "-K", f"{inp}/latency.curl"], j, d["curl"]),
            f"wget2 -j {j}": (["wget2", "-i", f"{inp}/latency.manifest", "--max-threads", str(j), "--http2",
                               "--no-check-certificate", "-P", d["wget2"], "-nd", "--no-robots", "-q"], j, d["wget2"]),
        }

    log = open(outfile, "a")

    def say(s):
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    say(f"\n=== latency profile: {len(urls)} {name} over TLS + HTTP/2, origin {delay * 1000:.0f} ms per request, "
        f"{rounds} rounds ===")
    rates, cpus = {}, {}
    for r in range(1, rounds + 1):
        tools = tools_for(r)
        order = list(tools)
        rot = order[(r - 1) % len(order):] + order[:(r - 1) % len(order)]
        for t in rot:
            argv, jj, target = tools[t]
            os.makedirs(target, exist_ok=True)
            dt, cpu, rc, err = run_timed([argv])
            n, _ = count_files(target)
            note = "" if n == len(urls) else f"  ({n}/{len(urls)} files!)"
            if rc != 0:
                note += f"  exit {rc}: {err.decode(errors='replace').strip()[-300:]}"
            rate = len(urls) / dt
            bound = jj / delay
            rates.setdefault(t, []).append(rate)
            cpus.setdefault(t, []).append(cpu)
            say(f"round {r} {t:20s} {dt:7.3f} s  {rate:7.0f} req/s = {rate / bound * 100:5.1f}% of {bound:.0f}"
                f"  cpu {cpu:5.2f} s{note}")
    say(f"{'tool':20s} {'median req/s':>12s} {'bound':>7s} {'of bound':>8s} {'cpu s':>6s}")
    for t, (argv, jj, _) in tools_for(0).items():
        med = statistics.median(rates[t])
        bound = jj / delay
        say(f"{t:20s} {med:12.0f} {bound:7.0f} {med / bound * 100:7.1f}% {statistics.median(cpus[t]):6.2f}")


if __name__ == "__main__":
    cmds = {"corpus": cmd_corpus, "inputs": cmd_inputs, "rounds": cmd_rounds,
            "cachedfill": cmd_cachedfill, "bigmanifest": cmd_bigmanifest,
            "delayserver": cmd_delayserver, "latency": cmd_latency}
    cmds[sys.argv[1]](*sys.argv[2:])
