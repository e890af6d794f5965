#!/usr/bin/env bash
# imgwarm's verdicts against independent decoders, file by file: runs
# `imgwarm cache verify --json` over a copy of the images, and every
# reference decoder installed here that reads the file's format:
#   Pillow (pip), pngcheck and libpng's pngfix, giflib's gif2rgb, djpeg,
#   dwebp (anim_dump for animations), avifdec, djxl, heif-convert/heif-dec,
#   ImageMagick, libtiff's tiffinfo -D
# and prints every file where imgwarm's verdict (good / broken) differs
# from the majority of the reference decoders, with each tool's verdict and
# imgwarm's reason. Then, per folder and format, files and agreement.
# (scripts/decode-verdicts.sh is another check: imgwarm's verdicts before
# and after a change, not against other decoders.)
#
#   scripts/verdicts-diff.sh [-v] DIR...     (a folder per suite)
#     -v   also list files where the reference decoders disagree among
#          themselves while imgwarm sides with their majority
#   IMGWARM=path/to/imgwarm (default: .build/debug/imgwarm, built if missing)
#   MAGICK=convert command of ImageMagick (default: magick, else convert)
# Exit status 0 when there is no disagreement, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi
[ $# -ge 1 ] || { echo "usage: scripts/verdicts-diff.sh [-v] DIR..." >&2; exit 2; }
imgwarm="${IMGWARM:-.build/debug/imgwarm}"
[ -x "$imgwarm" ] || swift build --product imgwarm >&2
magick="${MAGICK:-$(command -v magick || command -v convert || true)}"
work="$(mktemp -d "${TMPDIR:-/tmp}/verdicts-diff.XXXXXX")"
trap 'rm -rf "$work"' EXIT

python3 - "$imgwarm" "$magick" "$work" "$verbose" "$@" <<'PY'
import concurrent.futures, json, os, shutil, subprocess, sys, tempfile
imgwarm, magick, work, verbose, dirs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]

def fmt(b):
    """The format by signature, for choosing the reference decoders."""
    if b[:8] == b"\x89PNG\r\n\x1a\n": return "png"
    if b[:1] == b"\x89": return "png"          # SDWebImage: PNG by the first byte
    if b[:3] == b"GIF": return "gif"
    if b[:2] == b"\xff\x0a" or b[:12] == b"\0\0\0\x0cJXL \r\n\x87\n": return "jxl"
    if b[:2] == b"\xff\xd8": return "jpeg"
    if b[:4] == b"RIFF" and b[8:12] == b"WEBP": return "webp"
    if b[:4] in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"): return "tiff"
    if b[:2] == b"BM": return "bmp"
    if b[:4] == b"\0\0\1\0": return "ico"
    if b[4:8] == b"ftyp":
        brands = b[8:12] + b[16:min(len(b), 64)]
        if b"avif" in brands or b"avis" in brands: return "avif"
        return "heif"
    return "other"

def run(cmd, **kw):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, **kw)
        return p.returncode, (p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()
    except subprocess.TimeoutExpired:
        return 124, ["timeout"]

def pillow(path):
    code = ("import sys\nfrom PIL import Image, ImageSequence\n"
            "try:\n import pillow_heif; pillow_heif.register_heif_opener()\nexcept Exception: pass\n"
            "im = Image.open(sys.argv[1])\nfor f in ImageSequence.Iterator(im): f.load()\n")
    r, out = run([sys.executable, "-c", code, path])
    return r == 0, (out[-1] if out else "")

def tool(name, cmd, ok=lambda r, out: r == 0):
    def check(path, tmp):
        r, out = run([c.replace("{in}", path).replace("{tmp}", tmp) for c in cmd])
        return ok(r, out), (out[-1] if out else f"exit {r}")
    check.__name__ = name
    return check

have = lambda exe: shutil.which(exe) is not None
tools = {}
def add(formats, name, exe, check):
    if exe is None or have(exe):
        for f in formats: tools.setdefault(f, []).append((name, check))
try:
    import PIL  # noqa
    add(["png", "gif", "jpeg", "webp", "tiff", "bmp", "ico", "avif"], "pillow", None, lambda p, t: pillow(p))
except ImportError:
    pass
add(["png"], "pngcheck", "pngcheck", tool("pngcheck", ["pngcheck", "-q", "{in}"]))
# pngfix: below 16 the file reads (with corrections); a CRC (2) or length
# (4) error or truncation (8) is still a broken file to an app.
add(["png"], "pngfix", "pngfix", tool("pngfix", ["pngfix", "-q", "{in}"], lambda r, out: r in (0, 1)))
add(["gif"], "gif2rgb", "gif2rgb", tool("gif2rgb", ["gif2rgb", "-o", "{tmp}/out", "{in}"]))
# djpeg exits 2 on a warning (a truncated or damaged scan).
add(["jpeg"], "djpeg", "djpeg", tool("djpeg", ["djpeg", "-outfile", "/dev/null", "{in}"]))
def webp(path, tmp):
    with open(path, "rb") as f: head = f.read(64)
    animated = head[12:16] == b"VP8X" and head[20] & 2
    if animated and have("anim_dump"):
        r, out = run(["anim_dump", "-folder", tmp, path])
    else:
        r, out = run(["dwebp", path, "-o", "/dev/null"])
    return r == 0, (out[-1] if out else f"exit {r}")
add(["webp"], "dwebp", "dwebp", webp)
add(["avif"], "avifdec", "avifdec", tool("avifdec", ["avifdec", "{in}", "{tmp}/out.png"]))
# djxl decodes, then encodes a PNG: an encoder's refusal (lib/extras/enc:
# "Alpha bit depth does not match image bit depth", "Encode failed") comes
# after a successful decode and is no verdict on the file.
def djxl_ok(r, out):
    if r == 0: return True
    failures = [l for l in out if "JXL_FAILURE" in l or "JXL_RETURN_IF_ERROR" in l]
    return bool(out) and out[-1] == "Encode failed" and all("/extras/enc/" in l for l in failures)
add(["jxl"], "djxl", "djxl", tool("djxl", ["djxl", "{in}", "{tmp}/out.png"], djxl_ok))
if have("heif-dec"):
    add(["heif"], "heif-dec", "heif-dec", tool("heif-dec", ["heif-dec", "{in}", "{tmp}/out.png"]))
else:
    add(["heif"], "heif-convert", "heif-convert", tool("heif-convert", ["heif-convert", "{in}", "{tmp}/out.png"]))
if magick:
    # Only the formats this ImageMagick has a coder for (`-list format`).
    listed = subprocess.run([magick, "-list", "format"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    coders = {l.split()[0].rstrip("*+").upper() for l in listed.splitlines() if l.strip() and l[:1] == " "}
    names = {"png": "PNG", "gif": "GIF", "jpeg": "JPEG", "webp": "WEBP", "tiff": "TIFF", "bmp": "BMP",
             "ico": "ICO", "avif": "AVIF", "heif": "HEIC", "jxl": "JXL"}
    add([f for f, c in names.items() if c in coders], "imagemagick", None,
        tool("imagemagick", [magick, "-regard-warnings", "{in}", "null:"]))
# tiffinfo -D reads every strip; libtiff's errors go to stderr.
add(["tiff"], "tiffinfo", "tiffinfo",
    tool("tiffinfo", ["tiffinfo", "-D", "{in}"], lambda r, out: r == 0 and not any("Error" in l or "error" in l for l in out)))

files = []
for d in dirs:
    for root, _, names in os.walk(d):
        for n in sorted(names):
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                files.append((d, p))

# imgwarm: one `cache verify` over a flat copy (its walk reads a cache folder).
cache = os.path.join(work, "cache")
os.makedirs(cache)
for i, (_, p) in enumerate(files):
    shutil.copyfile(p, os.path.join(cache, f"f{i:06d}"))
r = subprocess.run([imgwarm, "cache", "verify", "--json", "--layout", "sdwebimage", "--cache", cache],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
report = json.loads(r.stdout)
broken = {os.path.basename(e["path"]): e["reason"] for e in report["broken"]}
unchecked = {os.path.basename(e["path"]): e["reason"] for e in report.get("unchecked", [])}
unknown = {os.path.basename(e["path"]) for e in report.get("unknown", [])}

def is_apng(path):
    with open(path, "rb") as f: b = f.read()
    i = 8
    while i + 8 <= len(b):
        n, t = int.from_bytes(b[i:i + 4], "big"), b[i + 4:i + 8]
        if t == b"IDAT": return False
        if t == b"acTL": return True
        i += 12 + n
    return False

def judge(i, suite, path):
    with open(path, "rb") as f: head = f.read(64)
    kind = fmt(head)
    name = f"f{i:06d}"
    if name in unchecked: mine = (None, unchecked[name])
    elif name in broken: mine = (False, broken[name])
    else: mine = (True, "unknown format, kept" if name in unknown else "")
    tmp = tempfile.mkdtemp(dir=work)
    refs = []
    # pngcheck, pngfix and ImageMagick 6 read an APNG's default image only:
    # on an APNG (an acTL before IDAT) only APNG-aware decoders vote.
    apng = kind == "png" and is_apng(path)
    for tname, check in tools.get(kind, []):
        if apng and tname in ("pngcheck", "pngfix", "imagemagick"): continue
        good, why = check(path, tmp)
        refs.append((tname, good, why))
    shutil.rmtree(tmp, ignore_errors=True)
    return suite, path, kind, mine, refs

stats, lines, splits = {}, [], []
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for suite, path, kind, mine, refs in pool.map(lambda a: judge(*a), [(i, s, p) for i, (s, p) in enumerate(files)]):
        key = (os.path.basename(os.path.normpath(suite)), kind)
        s = stats.setdefault(key, [0, 0, 0])
        s[0] += 1
        if not refs or mine[0] is None:
            continue  # no reference here, or no decoder for imgwarm: not compared
        s[1] += 1
        goods = sum(1 for _, g, _ in refs if g)
        majority = goods * 2 > len(refs) if goods * 2 != len(refs) else mine[0]  # a tie: no majority against imgwarm
        verdict = lambda g: "good" if g else "broken"
        detail = "; ".join(f"{t}={verdict(g)}" + ("" if g else f" ({w[:90]})") for t, g, w in refs)
        text = f"{path} [{kind}]\n  imgwarm={verdict(mine[0])}" + (f" ({mine[1]})" if mine[1] else "") + f"\n  {detail}"
        if mine[0] == majority:
            s[2] += 1
            if verbose and 0 < goods < len(refs): splits.append(text)
        else:
            lines.append(text)
for t in lines: print("DISAGREE " + t)
for t in splits: print("split    " + t)
print(f"\n{'suite':<28} {'format':<7} {'files':>6} {'compared':>9} {'agree':>6}")
for (suite, kind), (n, compared, agree) in sorted(stats.items()):
    pct = f"{100 * agree / compared:.1f}%" if compared else "-"
    print(f"{suite:<28} {kind:<7} {n:>6} {compared:>9} {agree:>6} {pct:>7}")
print("tools: " + ", ".join(sorted({t for v in tools.values() for t, _ in v})))
sys.exit(1 if lines else 0)
PY
