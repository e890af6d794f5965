#!/usr/bin/env python3
"""Helpers of scripts/test-package.sh: what a warm should have written, and
the command lines inside the examples (GitHub Actions, Kubernetes, cron,
systemd), read the way their runners read them.

  test_package.py check-warm MANIFEST SERVED_DIR CACHE_DIR REPORT [--shard-reports R...]
  test_package.py k8s-args FILE INDEX          args of the Job's container, NUL-separated
  test_package.py k8s-completions FILE
  test_package.py gha-step FILE NAME SHARD     the run: script of a step, matrix expanded
  test_package.py gha-env FILE                 the job's env, NAME=VALUE NUL-separated
  test_package.py crontab FILE                 the commands, NUL-separated
  test_package.py systemd FILE KEY             the values of KEY in [Service], NUL-separated
  test_package.py good-manifest MANIFEST SERVED_DIR   the entries that should be cached, as JSON lines
  test_package.py split LINE                   a command line split as systemd does (no specifiers), NUL-separated
"""
import hashlib
import json
import os
import re
import shlex
import sys
import urllib.parse

# Fixtures in examples/images that are broken on purpose (their names say so);
# any URL whose file is absent from the served folder is a 404.
BROKEN = {"broken-truncated.jpg", "not-an-image.jpg"}


def sd_file_name(key):
    """SDWebImage's cache file name for a key: SDWebImage 5.21.5,
    SDWebImage/Core/SDDiskCache.m, SDDiskCacheFileNameForKey: MD5 of the
    key's UTF-8 bytes in lowercase hex, then "." and the path extension of the
    URL's (percent-decoded) path, NUL and ':' removed, dropped when longer than
    255 - 32 - 1 characters."""
    digest = hashlib.md5(key.encode("utf-8")).hexdigest()
    parsed = urllib.parse.urlsplit(key)
    path = urllib.parse.unquote(parsed.path) if parsed.scheme else key
    last = path.rstrip("/").rsplit("/", 1)[-1]
    ext = ""
    if "." in last and not last.endswith(".") and last.rfind(".") > 0:
        ext = last.rsplit(".", 1)[1]
    ext = ext.replace("\0", "").replace(":", "")
    if len(ext) > 255 - 32 - 1:
        ext = ""
    return digest + ("." + ext if ext else "")


# The examples of the cache contract (docs/cache-formats.md, computed from the
# rules of SDDiskCacheFileNameForKey): the function above must reproduce them.
for _key, _name in [
    ("https://example.com/images/photo.jpg", "b46ca04023feeac3addabe8e574e2211.jpg"),
    ("https://example.com/images/photo.png?size=large&v=2", "04eb028ad94f7f979d0b79784d86e8e6.png"),
    ("https://example.com/avatar/12345", "aef7184dae84372263ed9aa2e8a91439"),
    ("https://example.com/images/PHOTO.JPG", "9d8e97da97cd4d36364aad594e287706.JPG"),
]:
    assert sd_file_name(_key) == _name, (_key, sd_file_name(_key))


def manifest_entries(path):
    """(url, key) for each entry: a URL with optional fields, or a JSON object."""
    out = []
    for raw in open(path, encoding="utf-8-sig"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            obj = json.loads(line)
            out.append((obj["url"], obj.get("key", obj["url"])))
        else:
            fields = line.split()
            key = next((f[4:] for f in fields[1:] if f.startswith("key=")), fields[0])
            out.append((fields[0], key))
    return out


def fail(msg):
    print(f"test-package: {msg}", file=sys.stderr)
    sys.exit(1)


def check_warm(manifest, served, cache, reports):
    """Every good entry is in CACHE_DIR under SDWebImage's name with the
    served bytes; no broken or missing one is; the reports agree and no key
    was downloaded twice across them (shards)."""
    entries = {}
    for url, key in manifest_entries(manifest):
        rel = urllib.parse.unquote(urllib.parse.urlsplit(url).path).lstrip("/")
        source = os.path.join(served, rel)
        good = os.path.isfile(source) and os.path.basename(rel) not in BROKEN
        entries[key] = (url, source, good)
    if not entries:
        fail(f"{manifest}: no entries")
    names = set(os.listdir(cache))
    for key, (url, source, good) in entries.items():
        name = sd_file_name(key)
        if good:
            if name not in names:
                fail(f"{url}: {name} missing from {cache} (has {sorted(names)})")
            with open(os.path.join(cache, name), "rb") as f, open(source, "rb") as g:
                if f.read() != g.read():
                    fail(f"{url}: {cache}/{name} differs from the served file")
        else:
            digest = name.split(".")[0]
            stray = [n for n in names if n.startswith(digest)]
            if stray:
                fail(f"{url}: broken entry cached as {stray}")
    if not reports:
        print(f"test-package: {sum(v[2] for v in entries.values())} files under SDWebImage's names, byte-identical")
        return
    downloaded, failed = [], []
    for r in reports:
        data = json.load(open(r))
        for e in data["entries"]:
            if e["outcome"] == "downloaded":
                downloaded.append(e["key"])
                if e["file"] is None or os.path.basename(e["file"]) != sd_file_name(e["key"]):
                    fail(f"{r}: {e['key']} reported as {e['file']}, expected {sd_file_name(e['key'])}")
            elif e["outcome"] == "failed":
                failed.append(e["key"])
    good_keys = sorted(k for k, v in entries.items() if v[2])
    bad_keys = sorted(k for k, v in entries.items() if not v[2])
    if sorted(downloaded) != good_keys:
        fail(f"downloaded per the reports: {sorted(downloaded)}; expected each of {good_keys} once")
    if sorted(failed) != bad_keys:
        fail(f"failed per the reports: {sorted(failed)}; expected {bad_keys}")
    print(f"test-package: {len(good_keys)} files under SDWebImage's names, byte-identical; "
          f"{len(bad_keys)} broken entries failed and not cached")


def k8s_container(path):
    import yaml
    job = yaml.safe_load(open(path))
    if job.get("kind") != "Job" or job["spec"].get("completionMode") != "Indexed":
        fail(f"{path}: not an Indexed Job")
    return job, job["spec"]["template"]["spec"]["containers"][0]


def k8s_args(path, index):
    """The container's args with $(VAR) expanded as Kubernetes does, for the
    variables the pod has: JOB_COMPLETION_INDEX (set by the Job controller)
    and the container's env values."""
    _, c = k8s_container(path)
    env = {e["name"]: e.get("value", "") for e in c.get("env", [])}
    env["JOB_COMPLETION_INDEX"] = str(index)
    expand = lambda s: re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), s)
    return [expand(a) for a in (c.get("command") or []) + c.get("args", [])]


def gha_job(path):
    import yaml
    wf = yaml.safe_load(open(path))
    jobs = wf["jobs"]
    if len(jobs) != 1:
        fail(f"{path}: expected one job")
    return next(iter(jobs.values()))


def gha_step(path, name, shard):
    job = gha_job(path)
    step = next((s for s in job["steps"] if s.get("name") == name), None)
    if step is None or "run" not in step:
        fail(f"{path}: no step named {name!r} with a run: script")
    script = step["run"].replace("${{ matrix.shard }}", shard)
    if "${{" in script:
        fail(f"{path}: step {name!r} uses an expression this test does not expand: {script}")
    return script


def crontab_commands(path):
    out = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"^[A-Za-z_]+=", line):
            continue
        out.append(line.split(None, 5)[5])
    return out


def systemd_values(path, key):
    """Values of KEY in [Service], backslash continuations joined."""
    text = re.sub(r"\\\n\s*", " ", open(path).read())
    section, out = None, []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and line.startswith(key + "="):
            out.append(line[len(key) + 1:])
    return out


def main(argv):
    cmd = argv[1]
    if cmd == "check-warm":
        manifest, served, cache = argv[2:5]
        check_warm(manifest, served, cache, argv[5:])
        return
    if cmd == "k8s-args":
        items = k8s_args(argv[2], int(argv[3]))
    elif cmd == "k8s-completions":
        print(k8s_container(argv[2])[0]["spec"]["completions"])
        return
    elif cmd == "gha-step":
        items = [gha_step(argv[2], argv[3], argv[4])]
    elif cmd == "gha-env":
        items = [f"{k}={v}" for k, v in gha_job(argv[2]).get("env", {}).items()]
    elif cmd == "good-manifest":
        good = []
        for url, key in manifest_entries(argv[2]):
            rel = urllib.parse.unquote(urllib.parse.urlsplit(url).path).lstrip("/")
            if os.path.isfile(os.path.join(argv[3], rel)) and os.path.basename(rel) not in BROKEN:
                good.append(json.dumps({"url": url, "key": key}))
        sys.stdout.write("".join(g + "\n" for g in good))
        return
    elif cmd == "split":
        items = shlex.split(argv[2])
    elif cmd == "crontab":
        items = crontab_commands(argv[2])
    elif cmd == "systemd":
        items = systemd_values(argv[2], argv[3])
    else:
        fail(f"unknown command {cmd}")
    sys.stdout.write("".join(i + "\0" for i in items))


if __name__ == "__main__":
    main(sys.argv)
