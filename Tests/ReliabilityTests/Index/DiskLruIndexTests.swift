import Foundation
import Testing
import TestSupport

// Names read from a DiskLruCache journal are data, never paths; a journal
// another user may have planted is not acted on. Every test drives the real
// binary against a journal written by hand, with a victim folder beside the
// cache whose files (and their mtimes) must not change.
//
// The key rule `[a-z0-9_-]{1,120}` is the libraries' own: OkHttp
// (square/okhttp, okhttp/src/commonJvmAndroid/kotlin/okhttp3/internal/cache/DiskLruCache.kt:
// `LEGAL_KEY_PATTERN`, `validateKey`), Coil 3 (coil-kt/coil,
// coil-core/src/commonMain/kotlin/coil3/disk/DiskLruCache.kt: `LEGAL_KEY_PATTERN`,
// `validateKey`), Coil 2 (coil-kt/coil at 2.7.0,
// coil-base/src/main/java/coil/disk/DiskLruCache.kt: the same two), and
// Glide's copy of the Android class (bumptech/glide,
// third_party/disklrucache/src/main/java/com/bumptech/glide/disklrucache/DiskLruCache.java),
// which states the rule in its class comment ("Each key must match the
// regex [a-z0-9_-]{1,120}") but has no `validateKey`. None of them checks a
// key read from the journal (`readJournalLine`).

/// A cache folder for one DiskLruCache layout with one good entry, and a
/// victim folder beside it.
struct HostileJournalFixture {
    let dir: String
    let layout: String
    var cache: String { dir + "/cache" }
    var victim: String { dir + "/victim" }
    static let goodKey = "0123456789abcdef"
    static let victimNames = ["rel.0", "rel.1", "abs.0", "abs.1", "id_rsa", "id_rsa.0"]

    /// (app version, value count) of the layout's journal: Glide's
    /// `DiskLruCacheWrapper` (1, 1), Coil 3's `RealDiskCache` (3, 2), Coil 2's (1, 2).
    var header: (appVersion: Int, valueCount: Int) {
        switch layout {
        case "glide": return (1, 1)
        case "coil": return (3, 2)
        default: return (1, 2)
        }
    }

    init(layout: String) {
        self.layout = layout
        dir = makeTempDirectory("imgwarm-journal")
        chmod(dir, 0o755)
        let fm = FileManager.default
        try! fm.createDirectory(atPath: dir + "/cache", withIntermediateDirectories: true)
        try! fm.createDirectory(atPath: dir + "/victim", withIntermediateDirectories: true)
        for name in Self.victimNames {
            _ = fm.createFile(atPath: dir + "/victim/" + name, contents: Data("victim \(name)\n".utf8))
            FileTimes.set(dir + "/victim/" + name, atime: 1_000_000_000, mtime: 1_000_000_000)
        }
        for i in 0..<header.valueCount {
            _ = fm.createFile(atPath: cache + "/\(Self.goodKey).\(i)", contents: Data(repeating: UInt8(i), count: 100))
        }
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: dir) }

    var headerText: String { "libcore.io.DiskLruCache\n1\n\(header.appVersion)\n\(header.valueCount)\n\n" }
    var lengths: String { Array(repeating: "1000", count: header.valueCount).joined(separator: " ") }

    /// The journal: the header, the good entry (line 6), then `line` (line 7).
    func writeJournal(_ line: String) {
        let text = headerText + "CLEAN \(Self.goodKey) " + Array(repeating: "100", count: header.valueCount).joined(separator: " ")
            + "\n" + line + "\n"
        _ = FileManager.default.createFile(atPath: cache + "/journal", contents: Data(text.utf8))
    }

    /// Every file under `path` (`.imgwarm` left out: a refused warm may
    /// have made imgwarm's own folder) with its bytes and mtime.
    static func snapshot(_ path: String) -> [String: String] {
        var out: [String: String] = [:]
        let fm = FileManager.default
        guard let walk = fm.enumerator(atPath: path) else { return out }
        for case let rel as String in walk {
            if rel == ".imgwarm" || rel.hasPrefix(".imgwarm/") { continue }
            let full = path + "/" + rel
            var st = stat()
            guard lstat(full, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            let bytes = fm.contents(atPath: full) ?? Data()
            out[rel] = "\(bytes.base64EncodedString()) mtime \(FileTimes.of(full).mtime) uid \(st.st_uid)"
        }
        return out
    }

    func chownAll(to uid: uid_t) {
        for path in [dir, cache, victim] { chown(path, uid, uid) }
        for folder in [cache, victim] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] { chown(folder + "/" + name, uid, uid) }
        }
    }
}

/// Runs imgwarm as this user, or (`uid`) as that user under setpriv (root
/// needed; else the test fails under CI and is skipped elsewhere).
func runImgwarm(_ args: [String], as uid: uid_t?) throws -> (status: Int32, output: String) {
    guard let uid else {
        let r = try BinaryRunner.run(args)
        return (r.status, r.stdout + r.stderr)
    }
    let setpriv = try neededTool("setpriv", for: "running imgwarm as another user")
    if geteuid() != 0 { try prerequisiteMissing("running imgwarm as uid \(uid) needs root: the test did not run") }
    return try #require(runTool(setpriv, ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", BinaryRunner.executable] + args))
}

/// The three commands that meet a refused index: `cache prune`, `cache
/// verify --delete` and `warm` (a manifest whose one URL is never fetched:
/// the index is read before any download).
func refusingCommands(layout: String, cache: String, dir: String) -> [[String]] {
    let manifest = dir + "/manifest.txt"
    if !FileManager.default.fileExists(atPath: manifest) {
        _ = FileManager.default.createFile(atPath: manifest, contents: Data("http://127.0.0.1:9/a.png\n".utf8))
        chmod(manifest, 0o644)
    }
    var prune = ["cache", "prune", "--layout", layout, "--cache", cache]
    prune += layout == "flutter" ? ["--max-age", "0s"] : ["--max-size", "1"]
    return [prune,
            ["cache", "verify", "--delete", "--layout", layout, "--cache", cache],
            ["warm", manifest, "--layout", layout, "--cache", cache, "--progress", "none", "--retries", "0"]]
}

@Suite struct JournalKeysAreData {
    /// `../`, absolute and NUL keys in CLEAN, DIRTY, REMOVE and READ lines,
    /// for glide, coil and coil2, run as root and as uid 65534 (who owns
    /// the cache and the victim, so the kernel would let it delete them):
    /// exit 3, one line naming the journal and line 7, nothing changed in
    /// the cache or the victim folder.
    @Test(arguments: ["glide", "coil", "coil2"], [false, true])
    func hostileKeysAreRefusedAndNothingChanges(layout: String, asNobody: Bool) throws {
        let f = HostileJournalFixture(layout: layout)
        defer { f.cleanup() }
        let keys = ["../victim/rel", f.victim + "/abs", f.victim + "/id_rsa\u{0}"]
        var lines: [(line: String, verb: String)] = []
        for key in keys {
            lines.append(("CLEAN \(key) \(f.lengths)", "CLEAN"))
            lines.append(("DIRTY \(key)", "DIRTY"))
            lines.append(("REMOVE \(key)", "REMOVE"))
            lines.append(("READ \(key)", "READ"))
        }
        let uid: uid_t? = asNobody ? 65534 : nil
        for (line, verb) in lines {
            f.writeJournal(line)
            if asNobody { f.chownAll(to: 65534) }
            let victimBefore = HostileJournalFixture.snapshot(f.victim)
            let cacheBefore = HostileJournalFixture.snapshot(f.cache)
            #expect(victimBefore.count == HostileJournalFixture.victimNames.count)
            // Every command for the DIRTY lines (the journal rebuild at
            // open deleted their files); prune and verify for the others.
            let commands = refusingCommands(layout: layout, cache: f.cache, dir: f.dir)
            for args in verb == "DIRTY" ? commands : Array(commands.prefix(2)) {
                let r = try runImgwarm(args, as: uid)
                let what = "\(layout) \(args[0]) \(args[1]) \(line.debugDescription) as \(asNobody ? "65534" : "root")"
                #expect(r.status == 3, "\(what): \(r.output)")
                #expect(r.output.contains("imgwarm: \(f.cache)/journal: line 7: the key is not a DiskLruCache key ([a-z0-9_-]{1,120})"),
                        "\(what): \(r.output)")
                #expect(r.output.split(separator: "\n").count == 1, "\(what): \(r.output)")
                #expect(HostileJournalFixture.snapshot(f.victim) == victimBefore, "\(what)")
                #expect(HostileJournalFixture.snapshot(f.cache) == cacheBefore, "\(what)")
            }
        }
    }

    /// Lengths that overflow 64 bits, alone or summed: refused (exit 3,
    /// the line named), never a crash.
    @Test(arguments: ["glide", "coil"])
    func overflowingLengthsAreRefused(layout: String) throws {
        let f = HostileJournalFixture(layout: layout)
        defer { f.cleanup() }
        let max = "9223372036854775807"
        let n = f.header.valueCount
        let zeros = String(repeating: "0 ", count: n - 1)
        let cases: [(String, Int, String)] = [
            // With the good entry's 100 bytes the first line passes
            // Int64.max already (line 7); the second alone would (line 8).
            ("CLEAN k \(zeros)\(max)\nCLEAN j \(zeros)\(max)",
             7, "the entries' lengths add up to more than"),
            ("CLEAN k \(zeros)9223372036854775000\nCLEAN j \(zeros)9223372036854775000", 8, "the entries' lengths add up to more than"),
            ("CLEAN k 9223372036854775808" + String(repeating: " 0", count: n - 1), 7, "a length that is not a number"),
            ("CLEAN k -1" + String(repeating: " 0", count: n - 1), 7, "a length that is not a number"),
            ("CLEAN k 1", n == 1 ? 0 : 7, "1 length where an entry has 2"),
            ("CLEAN k 1 2 3", 7, "3 lengths where an entry has \(n)"),
            ("PURGE k", 7, "not a journal line"),
            ("REMOVE k extra", 7, "not a journal line"),
        ]
        for (line, lineNumber, reason) in cases where lineNumber > 0 {
            f.writeJournal(line)
            let before = HostileJournalFixture.snapshot(f.cache)
            for args in refusingCommands(layout: layout, cache: f.cache, dir: f.dir) {
                let r = try runImgwarm(args, as: nil)
                #expect(r.status == 3, "\(args[1]) \(line.debugDescription): \(r.output)")
                #expect(r.output.contains("\(f.cache)/journal: line \(lineNumber): \(reason)"), "\(line.debugDescription): \(r.output)")
                #expect(HostileJournalFixture.snapshot(f.cache) == before)
            }
        }
        if layout == "coil" {
            // Two lengths of one entry whose sum overflows.
            f.writeJournal("CLEAN k \(max) 1")
            let r = try runImgwarm(refusingCommands(layout: layout, cache: f.cache, dir: f.dir)[0], as: nil)
            #expect(r.status == 3)
            #expect(r.output.contains("line 7: the lengths add up to more than 9223372036854775807"), "\(r.output)")
        }
    }

    /// A well-formed journal with the same large length twice for one key
    /// is an entry replaced, not an overflow: prune removes it (exit 0).
    @Test func oneKeyCleanedTwiceWithTheLargestLengthIsPruned() throws {
        let f = HostileJournalFixture(layout: "glide")
        defer { f.cleanup() }
        _ = FileManager.default.createFile(atPath: f.cache + "/k.0", contents: Data([1]))
        f.writeJournal("CLEAN k 9223372036854775000\nCLEAN k 9223372036854775000")
        let r = try runImgwarm(["cache", "prune", "--layout", "glide", "--max-size", "1", "--cache", f.cache], as: nil)
        #expect(r.status == 0, "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: f.cache + "/k.0"))
        #expect(HostileJournalFixture.snapshot(f.victim).count == HostileJournalFixture.victimNames.count)
    }
}

@Suite struct JournalsOfOtherUsers {
    /// Root runs; uid 65534 planted the index file. `folderMode`/`group`:
    /// the cache folder's. Refused: exit 3, one line naming the file and
    /// uid 65534; the journal and the entry untouched.
    static func refusal(_ name: String, folderMode: mode_t, group: gid_t, layout: String = "glide") throws -> [(status: Int32, output: String)] {
        if geteuid() != 0 { try prerequisiteMissing("planting a journal as another user needs root: the test did not run") }
        let f = HostileJournalFixture(layout: layout)
        defer { f.cleanup() }
        f.writeJournal("READ \(HostileJournalFixture.goodKey)")
        if name != "journal" {
            _ = FileManager.default.createFile(atPath: f.cache + "/" + name, contents: Data((f.headerText).utf8))
        }
        #expect(chown(f.cache + "/" + name, 65534, 65534) == 0)
        #expect(chown(f.cache, 0, group) == 0)
        #expect(chmod(f.cache, folderMode) == 0)
        let before = HostileJournalFixture.snapshot(f.cache)
        var out: [(Int32, String)] = []
        for args in refusingCommands(layout: layout, cache: f.cache, dir: f.dir) {
            let r = try runImgwarm(args, as: nil)
            out.append(r)
            if r.status == 3 {
                #expect(HostileJournalFixture.snapshot(f.cache) == before, "\(args[1]): \(r.output)")
            }
        }
        return out
    }

    @Test(arguments: ["journal", "journal.bkp", "journal.tmp"], [mode_t(0o1777), mode_t(0o777)])
    func aNeighboursIndexInAWorldWritableFolderIsRefused(name: String, mode: mode_t) throws {
        for (status, output) in try Self.refusal(name, folderMode: mode, group: 0) {
            #expect(status == 3, "\(output)")
            #expect(output.hasPrefix("imgwarm: "), "\(output)")
            #expect(output.contains("/cache/\(name): owned by uid 65534, not by this user (uid 0), in a folder every user may write"),
                    "\(output)")
            #expect(output.split(separator: "\n").count == 1, "\(output)")
        }
    }

    /// A 2775 team folder of group 0: uid 65534 is no member, refused.
    /// Of group 65534 (uid 65534's primary group): accepted, the journal
    /// read (its keys checked) and acted on.
    @Test func aTeamFolderTrustsTheMembersOfItsGroupOnly() throws {
        for (status, output) in try Self.refusal("journal", folderMode: 0o2775, group: 0, layout: "coil") {
            #expect(status == 3, "\(output)")
            #expect(output.contains("/cache/journal: owned by uid 65534, not by this user (uid 0), in a setgid team folder (mode 2775)"),
                    "\(output)")
        }
        // A group-writable folder that is no setgid team folder: refused.
        for (status, output) in try Self.refusal("journal", folderMode: 0o775, group: 65534) {
            #expect(status == 3, "\(output)")
            #expect(output.contains("in a group-writable folder that is no setgid team folder (mode 0775)"), "\(output)")
        }
        let accepted = try Self.refusal("journal", folderMode: 0o2775, group: 65534)
        #expect(accepted[0].status == 0, "\(accepted[0].output)")
        #expect(!accepted.contains { $0.status == 3 }, "\(accepted.map(\.output))")
    }

    /// A neighbour who may write the cache folder links `journal` to a
    /// journal of root's elsewhere (a world-writable one: what
    /// `fs.protected_hardlinks=1` lets them link; any without it): the file
    /// is root's, but `cache prune`, `cache verify --delete` and `warm`
    /// exit 3 naming the second name, and the file outside is unchanged (a
    /// warm appended its DIRTY and CLEAN lines to it). In a folder only
    /// root may write, the link is root's own doing and is used.
    @Test(arguments: [mode_t(0o1777), 0o0777, 0o2775])
    func aJournalLinkedToAFileOutsideIsRefused(mode: mode_t) throws {
        if geteuid() != 0 { try prerequisiteMissing("a folder of root's with a journal linked into it needs root: the test did not run") }
        let f = HostileJournalFixture(layout: "glide")
        defer { f.cleanup() }
        let outside = f.victim + "/journal"
        let text = f.headerText + "CLEAN \(HostileJournalFixture.goodKey) 100\n"
        _ = FileManager.default.createFile(atPath: outside, contents: Data(text.utf8))
        chmod(outside, 0o666)
        #expect(link(outside, f.cache + "/journal") == 0)
        #expect(chown(f.cache, 0, 65534) == 0)
        #expect(chmod(f.cache, mode) == 0)
        let before = HostileJournalFixture.snapshot(f.cache)
        for args in refusingCommands(layout: "glide", cache: f.cache, dir: f.dir) {
            let r = try runImgwarm(args, as: nil)
            #expect(r.status == 3, "\(args[0]): \(r.output)")
            #expect(r.output.contains("\(f.cache)/journal: has 2 names (a hard link"), "\(r.output)")
            #expect(r.output.split(separator: "\n").count == 1, "\(r.output)")
            #expect(String(decoding: FileManager.default.contents(atPath: outside) ?? Data(), as: UTF8.self) == text)
            #expect(HostileJournalFixture.snapshot(f.cache) == before)
        }
        #expect(chmod(f.cache, 0o755) == 0)
        let used = try runImgwarm(["cache", "prune", "--layout", "glide", "--cache", f.cache, "--max-size", "1000"], as: nil)
        #expect(used.status == 0, "\(used.output)")
    }

    /// uid 65534 runs in a 1777 folder where root's journal lies: refused.
    @Test func rootsJournalIsRefusedToAUserInAStickyFolder() throws {
        let f = HostileJournalFixture(layout: "coil2")
        defer { f.cleanup() }
        f.writeJournal("READ \(HostileJournalFixture.goodKey)")
        f.chownAll(to: 65534)
        chown(f.cache + "/journal", 0, 0)
        chown(f.cache, 0, 0)
        chmod(f.cache, 0o1777)
        let before = HostileJournalFixture.snapshot(f.cache)
        for args in refusingCommands(layout: "coil2", cache: f.cache, dir: f.dir) {
            let r = try runImgwarm(args, as: 65534)
            #expect(r.status == 3, "\(r.output)")
            #expect(r.output.contains("\(f.cache)/journal: owned by uid 0, not by this user (uid 65534), in a folder every user may write (mode 1777)"),
                    "\(r.output)")
            #expect(HostileJournalFixture.snapshot(f.cache) == before)
        }
    }
}

/// The journal is read in 64 KiB pieces, line by line, as OkHttp reads it
/// (square/okhttp,
/// okhttp/src/commonJvmAndroid/kotlin/okhttp3/internal/cache/DiskLruCache.kt,
/// `readJournal`: `readJournalLine(readUtf8LineStrict())` until
/// EOFException, one `lruEntries` entry per key): memory follows the live
/// entries, never the file's size.
@Suite(.serialized) struct JournalsReadInPieces {
    /// ~200 MB of READ lines for one key: `cache stats` reads all of it
    /// (the entry is counted) in a peak RSS far below the file's size (the
    /// whole-file read peaked at 3.32 GiB on a 1 GiB journal, 1.34 GiB on this one).
    @Test func aJournalOfMillionsOfReadLinesCostsOneEntry() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let f = HostileJournalFixture(layout: "glide")
        defer { f.cleanup() }
        let key = HostileJournalFixture.goodKey
        let fd = open(f.cache + "/journal", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        let head = Array((f.headerText + "CLEAN \(key) 100\n").utf8)
        let block = Array(String(repeating: "READ \(key)\n", count: 1 << 14).utf8)
        #expect(write(fd, head, head.count) == head.count)
        var size = head.count
        while size < 200_000_000 {
            #expect(write(fd, block, block.count) == block.count)
            size += block.count
        }
        close(fd)
        let run = try MeasuredRun.run(["cache", "stats", "--layout", "glide", "--cache", f.cache], gnuTime: time)
        #expect(run.status == 0, "\(run.stderr.prefix(300))")
        #expect(run.stdout.contains("files:      1"), "\(run.stdout)")
        #expect(run.peakRSS > 0 && run.peakRSS < 100 << 20, "peak RSS \(run.peakRSS) bytes for a \(size)-byte journal")
    }

    /// A line longer than 64 KiB is no journal line (the longest the
    /// libraries write for these layouts is 166 bytes): exit 3, one line naming the journal
    /// and the line, nothing changed.
    @Test(arguments: ["glide", "coil"])
    func aLineLongerThanAnyJournalLineIsRefused(layout: String) throws {
        let f = HostileJournalFixture(layout: layout)
        defer { f.cleanup() }
        f.writeJournal("READ " + String(repeating: "a", count: 100_000))
        let before = HostileJournalFixture.snapshot(f.cache)
        for args in refusingCommands(layout: layout, cache: f.cache, dir: f.dir) + [["cache", "stats", "--layout", layout, "--cache", f.cache]] {
            let r = try runImgwarm(args, as: nil)
            #expect(r.status == 3, "\(args[1]): \(r.output)")
            #expect(r.output.contains("imgwarm: \(f.cache)/journal: line 7: a line of more than 65536 bytes"), "\(args[1]): \(r.output)")
            #expect(r.output.split(separator: "\n").count == 1, "\(args[1]): \(r.output)")
            #expect(HostileJournalFixture.snapshot(f.cache) == before)
        }
    }
}
