import Foundation
import Testing
import TestSupport

// Imgwarm touches nothing outside the
// cache folder it was given, whatever a neighbour who may write in or
// around that folder plants or swaps, and says what happened. Every test
// drives the real binary; the victims are files outside the cache that a
// path-following implementation would delete or overwrite (each of these
// tests failed against the path-based code before this change).

/// A folder outside the cache with files a neighbour would like removed or
/// overwritten, and the same names one level down (`b/`), where a
/// following walk of `cache/a/b` would land.
struct Victim {
    let dir: String
    static let names = ["id_rsa", "notes.txt", "4194305-1.tmp", "0123456789abcdef0123456789abcdef.png"]

    init(in parent: String, entryNames: [String] = []) {
        dir = parent + "/victim"
        let fm = FileManager.default
        try! fm.createDirectory(atPath: dir + "/b", withIntermediateDirectories: true)
        for name in Self.names + entryNames {
            fm.createFile(atPath: dir + "/" + name, contents: Data("victim \(name)\n".utf8))
            fm.createFile(atPath: dir + "/b/" + name, contents: Data("victim b/\(name)\n".utf8))
        }
    }

    /// Every file under the folder and its bytes.
    func snapshot() -> [String: Data] {
        var out: [String: Data] = [:]
        let fm = FileManager.default
        for case let rel as String in fm.enumerator(atPath: dir)! {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                out[rel] = fm.contents(atPath: dir + "/" + rel)
            }
        }
        return out
    }
}

func isSymlink(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
}

func isRegularFile(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
}

func owner(_ path: String) -> uid_t? {
    var st = stat()
    return lstat(path, &st) == 0 ? st.st_uid : nil
}

/// Point 1: `.imgwarm` or `.imgwarm/tmp` is a symbolic link to another
/// folder. Every command that would use it refuses with one line naming
/// the link, exit 3, and deletes nothing: not the victim's files, not the
/// cache's own entries.
@Suite struct PlantedStateFolderLinks {
    struct Case: CustomStringConvertible, Sendable {
        var link: String       // ".imgwarm" or ".imgwarm/tmp"
        var command: [String]  // after `imgwarm`; "warm" gets a manifest
        var description: String { "\(link) -> victim, \(command.joined(separator: " "))" }
    }

    static let commands: [[String]] = [
        ["warm"], ["cache", "verify"], ["cache", "verify", "--delete"], ["cache", "clear"], ["cache", "clear", "--all"],
        ["cache", "prune", "--max-size", "1"], ["cache", "prune", "--max-age", "1s"], ["cache", "stats"],
        ["cache", "failed", "--clear"],
    ]
    static let cases = [".imgwarm", ".imgwarm/tmp"].flatMap { link in commands.map { Case(link: link, command: $0) } }

    @Test(arguments: cases) func refusedWithNothingDeleted(_ c: Case) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let manifest = f.writeManifest(urls)
        // A cache with entries (one broken, so verify --delete has work),
        // made by a real warm, then the link planted.
        #expect(try f.warm([manifest]).status == 0)
        FileManager.default.createFile(atPath: f.cache + "/ffffffffffffffffffffffffffffffff.png", contents: Data("not an image".utf8))
        let entriesBefore = f.cacheFiles()
        let victim = Victim(in: f.dir)
        let before = victim.snapshot()
        let linkPath = f.cache + "/" + c.link
        try FileManager.default.removeItem(atPath: linkPath)
        try FileManager.default.createSymbolicLink(atPath: linkPath, withDestinationPath: victim.dir)
        let args = c.command == ["warm"] ? ["warm", manifest, "--progress", "none"] : c.command
        let r = try BinaryRunner.run(args + ["--cache", f.cache])
        #expect(r.status == 3, "\(c): \(r.stdout) \(r.stderr)")
        #expect(r.stderr == "imgwarm: \(linkPath): is a symbolic link; imgwarm does not follow one here (name the folder it points to)\n",
                "\(c)")
        #expect(victim.snapshot() == before, "\(c): the victim folder changed")
        #expect(f.cacheFiles() == entriesBefore, "\(c): cache entries were removed")
        #expect(isSymlink(linkPath), "\(c): the link itself was touched")
    }

    /// `.imgwarm` (or its tmp folder) of another user, or writable by
    /// others: someone else could swap names in it between two calls, so
    /// it is refused the same way.
    @Test(arguments: [".imgwarm", ".imgwarm/tmp"]) func foreignOrSharedStateFolderIsRefused(_ folder: String) throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2))
        #expect(try f.warm([manifest]).status == 0)
        let path = f.cache + "/" + folder
        for mode: mode_t in [0o777, 0o775, 0o1777] {
            #expect(chmod(path, mode) == 0)
            for args in [["warm", manifest, "--progress", "none"], ["cache", "prune", "--max-size", "1"], ["cache", "clear", "--all"]] {
                let r = try BinaryRunner.run(args + ["--cache", f.cache])
                #expect(r.status == 3, "\(args) \(String(mode, radix: 8)): \(r.stderr)")
                #expect(r.stderr.hasPrefix("imgwarm: \(path): writable by others (mode \(String(format: "%04o", mode)))"), "\(r.stderr)")
            }
            #expect(f.cacheFiles().count == 2, "entries removed under a refused command")
        }
        #expect(chmod(path, 0o755) == 0)
        // Another user's: planting it needs root (uid 65534's then).
        if geteuid() != 0 { try prerequisiteMissing("giving a folder to another user needs root: the owner case did not run") }
        let stranger: uid_t = 65534
        #expect(chown(path, stranger, stranger) == 0)
        let r = try f.warm([manifest])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("imgwarm: \(path): owned by uid \(stranger), not by this user"), "\(r.stderr)")
        #expect(!r.stderr.dropLast().contains("\n"))
        #expect(chown(path, 0, 0) == 0)
        #expect(try f.warm([manifest]).status == 0)
    }

    /// The cache folder itself named through a link (its last component):
    /// not followed by the commands that write or delete.
    @Test func cacheFolderThatIsALinkIsRefused() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        let victim = Victim(in: f.dir)
        let before = victim.snapshot()
        try FileManager.default.createSymbolicLink(atPath: f.cache, withDestinationPath: victim.dir)
        for args in [["warm", manifest, "--progress", "none"], ["cache", "clear"], ["cache", "prune", "--max-size", "1"],
                     ["cache", "verify", "--delete"]] {
            let r = try BinaryRunner.run(args + ["--cache", f.cache])
            #expect(r.status == 3, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("\(f.cache): is a symbolic link"), "\(args): \(r.stderr)")
        }
        #expect(victim.snapshot() == before)
        #expect(!FileManager.default.fileExists(atPath: victim.dir + "/.imgwarm"))
    }
}

/// Point 2: a neighbour swaps a sub-folder of the cache for a link to a
/// victim folder, over and over, while `verify --delete`, `clear` and
/// `prune` delete in it. Whatever the timing, no file outside the cache is
/// ever removed. The swapping runs on its own thread, as fast as it can.
@Suite(.serialized) struct RacedFolderSwaps {
    /// `cache/a/b/<names>`: the walk opens `a`, then `b`; a path-based
    /// delete of `cache/a/b/x` follows `a` when it is a link.
    static let fileNames = (0..<100).map { String(format: "%032x.png", $0 + 1) }

    /// Moves `cache/a` aside and puts a link to the victim at its name,
    /// then back, in a loop on its own thread until stopped.
    final class Swapper: @unchecked Sendable {
        private let lock = NSLock()
        private var running = true
        private var count = 0
        private var worker: Thread?

        init(cache: String, victim: String) {
            let a = cache + "/a", aside = cache + "/a.aside"
            let thread = Thread { [self] in
                while true {
                    // A link most of the time, the folder now and then:
                    // a walk enters the real folder, and what it does
                    // next meets the link.
                    if rename(a, aside) == 0 {
                        symlink(victim, a)
                        usleep(400)
                        unlink(a)
                        rename(aside, a)
                    }
                    usleep(150)
                    lock.lock()
                    count += 1
                    let go = running
                    lock.unlock()
                    if !go { break }
                }
            }
            worker = thread
            thread.start()
        }

        /// Stops the loop (the folder is back at its name) and returns how
        /// many swaps it made.
        func stop() -> Int {
            lock.lock()
            running = false
            lock.unlock()
            while !(worker?.isFinished ?? true) { usleep(1000) }
            lock.lock()
            defer { lock.unlock() }
            return count
        }
    }

    enum Command: String, CaseIterable, Sendable { case verifyDelete, clear, prune }

    @Test(arguments: Command.allCases) func nothingOutsideTheCacheIsEverRemoved(_ command: Command) throws {
        let dir = makeTempDirectory("imgwarm-swap")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/cache"
        let victim = Victim(in: dir, entryNames: Self.fileNames)
        // As old as the cache's files: a following prune would find them due.
        for name in Victim.names + Self.fileNames {
            for p in [victim.dir + "/" + name, victim.dir + "/b/" + name] {
                FileTimes.set(p, atime: Int(time(nil)) - 7 * 86_400, mtime: Int(time(nil)) - 7 * 86_400)
            }
        }
        let before = victim.snapshot()
        let rounds = 20
        var swapsSeen = 0
        var removedSomewhere = 0
        for round in 0..<rounds {
            let fm = FileManager.default
            try? fm.removeItem(atPath: cache)
            try fm.createDirectory(atPath: cache + "/a/b", withIntermediateDirectories: true)
            for name in Self.fileNames {
                // Broken for verify; old for prune (--max-age 1d, mtime and
                // atime a week back).
                let p = cache + "/a/b/" + name
                fm.createFile(atPath: p, contents: Data("not an image \(round)".utf8))
                FileTimes.set(p, atime: Int(time(nil)) - 7 * 86_400, mtime: Int(time(nil)) - 7 * 86_400)
            }
            let swapper = Swapper(cache: cache, victim: victim.dir)
            let args: [String]
            switch command {
            case .verifyDelete: args = ["cache", "verify", "--delete"]
            case .clear: args = ["cache", "clear"]
            // By modification date: reading the victim (its snapshot)
            // renews access dates, which would hide a following prune.
            case .prune: args = ["cache", "prune", "--max-age", "1d", "--expire-type", "modification"]
            }
            let r = try BinaryRunner.run(args + ["--cache", cache])
            swapsSeen += swapper.stop()
            // Exit 0, 1 (verify found broken files) or 3 (prune refused to
            // delete in a replaced folder): never a crash.
            #expect([0, 1, 3].contains(r.status), "round \(round): \(r.status) \(r.stderr)")
            #expect(!r.signalled)
            let after = victim.snapshot()
            #expect(after == before, "round \(round) \(command): victim files removed or changed: \(Set(before.keys).subtracting(after.keys).sorted().prefix(5))")
            if after != before { break }
            removedSomewhere += Self.fileNames.filter { !fm.fileExists(atPath: cache + "/a/b/" + $0) }.count
        }
        #expect(swapsSeen > rounds * 10, "the swapper hardly ran (\(swapsSeen) swaps)")
        // The command did its work in the cache in at least some rounds.
        #expect(removedSomewhere > 0)
    }
}

/// Point 3: reports, JUnit and metrics are written through a temp file
/// beside the target. The old name `<target>.tmp-<pid>` was predictable for
/// imgwarm as pid 1 (a container); a link planted there made the run
/// overwrite the link's target. Run here as pid 1 in a new pid namespace,
/// with a link at every name the old scheme used.
@Suite struct ReportTempNames {
    @Test func linksAtPredictableTempNamesAreNeverFollowed() throws {
        let unshare = try neededTool("unshare", for: "running imgwarm as pid 1")
        if geteuid() != 0 { try prerequisiteMissing("a pid namespace needs root here: the pid-1 temp-name test did not run") }
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(3))
        let out = f.dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let victim = Victim(in: f.dir)
        let before = victim.snapshot()
        let targets = ["report.json", "junit.xml", "metrics.prom"]
        // Every pid-only name, for pid 1 and the first pids a namespace hands out.
        for target in targets {
            for pid in 1...4 {
                try FileManager.default.createSymbolicLink(atPath: "\(out)/\(target).tmp-\(pid)",
                                                           withDestinationPath: victim.dir + "/id_rsa")
            }
        }
        let run = try #require(runTool(unshare, ["--pid", "--fork", "--mount-proc", BinaryRunner.executable, "warm", manifest,
                                                 "--cache", f.cache, "--progress", "none",
                                                 "--report", out + "/report.json", "--junit", out + "/junit.xml",
                                                 "--metrics", out + "/metrics.prom"]))
        #expect(run.status == 0, "\(run.output)")
        #expect(victim.snapshot() == before, "a victim file was overwritten through a planted link")
        let report = try f.report(out + "/report.json")
        #expect(report.entries.count == 3)
        #expect(try String(contentsOfFile: out + "/junit.xml", encoding: .utf8).contains("<testsuite"))
        #expect(try String(contentsOfFile: out + "/metrics.prom", encoding: .utf8).contains("imgwarm_"))
        for target in targets {
            #expect(isRegularFile(out + "/" + target))
            for pid in 1...4 { #expect(isSymlink("\(out)/\(target).tmp-\(pid)")) }
        }
        // No temp file of ours is left behind.
        let left = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
    }

    /// A link at the target itself is replaced by the report (rename(2)
    /// replaces the link), never written through.
    @Test func aLinkAtTheTargetIsReplacedNotWrittenThrough() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        let victim = Victim(in: f.dir)
        let before = victim.snapshot()
        let report = f.dir + "/report.json"
        try FileManager.default.createSymbolicLink(atPath: report, withDestinationPath: victim.dir + "/notes.txt")
        #expect(try f.warm([manifest, "--report", report]).status == 0)
        #expect(victim.snapshot() == before)
        #expect(isRegularFile(report))
    }
}

/// Point 11: what is at an entry's name is the entry only when it is a
/// regular file imgwarm may trust; and what a run calls `downloaded` is the
/// bytes it wrote, whatever a neighbour puts at the name meanwhile.
@Suite struct EntryNamesThatAreNotTrusted {
    /// A neighbour writes the entry's name while the download is under
    /// way (the server holds the response 1.5 s). The run replaces it:
    /// the report's `downloaded` is true of the bytes at the name, and the
    /// next run's `cached` too. Both store paths: a cache empty at the start
    /// (unnamed file + link) and one that held entries (temp + rename).
    @Test(arguments: [false, true]) func aFilePlantedDuringTheDownloadIsReplaced(_ cacheHeldEntries: Bool) throws {
        let f = try WarmFixture()
        let png = TinyPNG.make(width: 30, height: 20, seed: 7)
        f.server.setFile("/img/slow.png", bytes: png, contentType: "image/png")
        let url = f.server.url("/slow/1500/img/slow.png")
        let manifest = f.writeManifest([url])
        if cacheHeldEntries {
            let other = f.writeManifest(f.servePNGs(1), name: "other.txt")
            #expect(try f.warm([other]).status == 0)
        }
        let entry = try f.cachePath(url)
        let planted = Data("<html>not the image</html>\n".utf8)
        #expect(planted.count == 27)
        let warm = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "--progress", "none", "--report", f.dir + "/r.json"])
        // Once the request is at the server, the neighbour plants the name.
        #expect(f.server.waitFor(timeout: 10) { $0.requestCount(path: "/slow/1500/img/slow.png") > 0 })
        usleep(200_000)
        #expect(FileManager.default.createFile(atPath: entry, contents: planted))
        let r = warm.wait(timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        let row = try f.report(f.dir + "/r.json").entries[0]
        #expect(row["outcome"] as? String == "downloaded")
        #expect(FileManager.default.contents(atPath: entry).map([UInt8].init) == png, "the name holds bytes imgwarm did not write")
        let again = try f.warm([manifest, "--report", f.dir + "/r2.json"])
        #expect(again.status == 0)
        #expect(try f.report(f.dir + "/r2.json").entries[0]["outcome"] as? String == "cached")
    }

    /// A symbolic link at an entry's name (to an image elsewhere, which a
    /// path-following lookup counted as `cached`): `verify` flags it and
    /// `--delete` removes the link only; `warm` downloads and replaces it.
    /// A FIFO the same; a folder at the name fails the entry with a reason.
    @Test func linksFifosAndFoldersAtEntryNames() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(4)
        let manifest = f.writeManifest(urls)
        let names = try f.cachePaths(urls)
        // A cache that holds entries, so lookups run per file.
        try FileManager.default.createDirectory(atPath: f.cache, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: f.cache + "/00000000000000000000000000000000.png", contents: Data(TinyPNG.make(seed: 99)))
        let victim = Victim(in: f.dir)
        let victimImage = victim.dir + "/image.png"
        FileManager.default.createFile(atPath: victimImage, contents: Data(TinyPNG.make(seed: 1)))
        let before = victim.snapshot()
        try FileManager.default.createSymbolicLink(atPath: names[0], withDestinationPath: victimImage)
        #expect(mkfifo(names[1], 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: names[2], withDestinationPath: victim.dir + "/missing")

        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("\(names[0]): symbolic link, not a regular file (never followed)"), "\(verify.stdout)")
        #expect(verify.stdout.contains("\(names[1]): FIFO, not a regular file (never followed)"), "\(verify.stdout)")
        #expect(verify.stdout.contains("\(names[2]): symbolic link, not a regular file"), "\(verify.stdout)")

        let warm = try f.warm([manifest, "--report", f.dir + "/r.json"])
        #expect(warm.status == 0, "\(warm.stderr)")
        let outcomes = try f.report(f.dir + "/r.json").entries.map { $0["outcome"] as? String }
        #expect(outcomes == ["downloaded", "downloaded", "downloaded", "downloaded"], "a link or FIFO counted as cached")
        for (i, name) in names.prefix(3).enumerated() {
            #expect(isRegularFile(name))
            #expect(FileManager.default.contents(atPath: name).map([UInt8].init) == f.served["/img/\(i).png"])
        }
        #expect(victim.snapshot() == before)

        // verify --delete removes a link, never what it points to.
        try FileManager.default.removeItem(atPath: names[3])
        try FileManager.default.createSymbolicLink(atPath: names[3], withDestinationPath: victimImage)
        let delete = try BinaryRunner.run(["cache", "verify", "--delete", "--cache", f.cache])
        #expect(delete.status == 1)
        #expect(!isSymlink(names[3]) && !FileManager.default.fileExists(atPath: names[3]))
        #expect(victim.snapshot() == before)

        // A folder at an entry's name is not replaced: the entry fails, saying why.
        try FileManager.default.createDirectory(atPath: names[3] + "/", withIntermediateDirectories: false)
        let blocked = try f.warm([manifest, "--report", f.dir + "/r3.json"])
        #expect(blocked.status == 1)
        #expect(blocked.stderr.contains("\(names[3]): a folder is at the entry's name; imgwarm does not replace it"), "\(blocked.stderr)")
    }

    /// In a cache folder others may write, a file at an entry's name that
    /// another user owns is not `cached` (anyone could have put it there):
    /// it is downloaded and replaced. In a folder only its owner writes,
    /// such a file (put there by root, say) still counts.
    @Test(arguments: [mode_t(0o777), 0o1777, 0o775, 0o755]) func unownedFilesInASharedCache(_ mode: mode_t) throws {
        let setpriv = try neededTool("setpriv", for: "planting a file as another user")
        if geteuid() != 0 { try prerequisiteMissing("planting a file as another user needs root: the shared-cache test did not run") }
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let manifest = f.writeManifest(urls)
        #expect(try f.warm([manifest]).status == 0)
        let names = try f.cachePaths(urls)
        #expect(chmod(f.cache, mode) == 0)
        try FileManager.default.removeItem(atPath: names[0])
        // The neighbour's file: a valid image, just not imgwarm's.
        let theirs = f.dir + "/theirs.png"
        FileManager.default.createFile(atPath: theirs, contents: Data(TinyPNG.make(seed: 1234)))
        chmod(theirs, 0o644)
        chmod(f.dir, 0o755)
        let plant = try #require(runTool(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", "cp", theirs, names[0]]))
        if mode & 0o002 == 0 {
            // Not world-writable: the stranger cannot write here; root puts
            // a stranger's file there instead.
            #expect(plant.status != 0)
            try FileManager.default.copyItem(atPath: theirs, toPath: names[0])
            #expect(chown(names[0], 65534, 65534) == 0)
        } else {
            #expect(plant.status == 0, "\(plant.output)")
        }
        #expect(owner(names[0]) == 65534)
        let r = try f.warm([manifest, "--report", f.dir + "/r.json"])
        #expect(r.status == 0, "\(r.stderr)")
        let outcome = try f.report(f.dir + "/r.json").entries[0]["outcome"] as? String
        if mode & 0o022 != 0 {
            #expect(outcome == "downloaded", "mode \(String(mode, radix: 8))")
            #expect(owner(names[0]) == geteuid())
            #expect(FileManager.default.contents(atPath: names[0]).map([UInt8].init) == f.served["/img/0.png"])
        } else {
            #expect(outcome == "cached", "mode \(String(mode, radix: 8))")
        }
    }
}

/// Not root, in a sticky world-writable cache folder (mode 1777, as /tmp):
/// another user's file at an entry's name is not `cached`, and the kernel
/// lets only its owner or root replace it, so the entry fails with that
/// reason; the other entries are stored.
@Suite struct StickySharedCacheAsAUser {
    @Test func anotherUsersFileFailsTheEntryWithItsReason() throws {
        let setpriv = try neededTool("setpriv", for: "running imgwarm as another user")
        if geteuid() != 0 { try prerequisiteMissing("running imgwarm as uid 65534 needs root: the sticky-folder test did not run") }
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let manifest = f.writeManifest(urls)
        chmod(f.dir, 0o755)
        chmod(manifest, 0o644)
        try FileManager.default.createDirectory(atPath: f.cache, withIntermediateDirectories: true)
        #expect(chmod(f.cache, 0o1777) == 0)
        let names = try f.cachePaths(urls)
        // Root's file (a valid image, not the served one) at the first name.
        FileManager.default.createFile(atPath: names[0], contents: Data(TinyPNG.make(seed: 4321)))
        let report = f.dir + "/out/r.json"
        try FileManager.default.createDirectory(atPath: f.dir + "/out", withIntermediateDirectories: true)
        #expect(chown(f.dir + "/out", 65534, 65534) == 0)
        let r = try #require(runTool(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", BinaryRunner.executable,
                                               "warm", manifest, "--cache", f.cache, "--progress", "none", "--report", report]))
        #expect(r.status == 1, "\(r.output)")
        #expect(r.output.contains("\(names[0]): another user's file (uid 0) is at the entry's name in a sticky folder; "
            + "only its owner or root may replace it"), "\(r.output)")
        let outcomes = try f.report(report).entries.map { $0["outcome"] as? String }
        #expect(outcomes == ["failed", "downloaded", "downloaded"])
        #expect(owner(names[0]) == 0)
        #expect(owner(names[1]) == 65534 && owner(f.cache + "/.imgwarm") == 65534)
    }
}

/// Point 12: messages that say what happened.
@Suite struct MessagesThatSayWhatHappened {
    @Test func pruneToOneByteWithNothingPinnedIsNotBlamedOnPins() throws {
        let f = try WarmFixture()
        #expect(try f.warm([f.writeManifest(f.servePNGs(5))]).status == 0)
        let r = try BinaryRunner.run(["cache", "prune", "--max-size", "1", "--cache", f.cache])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("pinned"), "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(f.cacheFiles().isEmpty)
        #expect(r.stdout.hasPrefix("removed 5 files"), "\(r.stdout)")
    }

    @Test func pruneBelowWhatPinsHoldSaysSo() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(5))
        #expect(try f.warm([manifest]).status == 0)
        let r = try BinaryRunner.run(["cache", "prune", "--max-size", "1", "--keep", manifest, "--cache", f.cache])
        #expect(r.status == 0)
        #expect(r.stderr.contains(": 5 pinned files ("), "\(r.stderr)")
    }

    /// `clear --all` that cannot remove `.imgwarm` (a folder in it that
    /// the user may not change) says so and exits 3; the entries are gone.
    @Test func clearAllThatCannotRemoveTheStateFolderFails() throws {
        let f = try WarmFixture()
        #expect(try f.warm([f.writeManifest(f.servePNGs(2))]).status == 0)
        let stuck = f.cache + "/.imgwarm/tmp/stuck"
        try FileManager.default.createDirectory(atPath: stuck, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: stuck + "/f", contents: Data([1]))
        #expect(chmod(stuck, 0o555) == 0)
        defer { chmod(stuck, 0o755) }
        let r = try runBoundByPermissions(["cache", "clear", "--all", "--cache", f.cache],
                                          why: "clear --all against a folder it may not change")
        #expect(r.status == 3, "\(r.output)")
        #expect(r.output.contains("removed 2 files"), "\(r.output)")
        #expect(r.output.contains("imgwarm: \(stuck)/f: cannot remove: Permission denied"), "\(r.output)")
        #expect(f.cacheFiles().isEmpty)
        chmod(stuck, 0o755)
        let again = try BinaryRunner.run(["cache", "clear", "--all", "--cache", f.cache])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.cache + "/.imgwarm"))
    }
}

/// Runs the binary so that permission bits bind it: as root, under setpriv
/// with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped from its bounding
/// set (as EndToEndTests/CacheFolderErrors does). Stdout and stderr
/// together. Without setpriv the test is skipped (failed under CI).
func runBoundByPermissions(_ args: [String], why: String) throws -> (status: Int32, output: String) {
    if geteuid() == 0 {
        let setpriv = try neededTool("setpriv", for: why)
        let run = try #require(runTool(setpriv, ["--bounding-set=-dac_override,-dac_read_search", "--",
                                                 BinaryRunner.executable] + args))
        return (run.status, run.output)
    }
    let run = try BinaryRunner.run(args)
    return (run.status, run.stdout + run.stderr)
}

/// The same guarantees for the layouts with an index: a DiskLruCache journal (Glide, Coil) and
/// flutter_cache_manager's database. Their journal, database and value
/// files are named relative to the cache folder's descriptor without
/// following a link; what is at a value's name counts only under the
/// iOS layouts' rule (a regular file; in a shared folder, one of this user);
/// stores replace whatever is at the name.
@Suite(.serialized) struct IndexLayoutEntryNames {
    struct Layout: Sendable, CustomStringConvertible {
        var name: String
        /// Value files per entry (DiskLruCacheWrapper.java:23-24, Glide 1;
        /// Coil 3 RealDiskCache.kt:23-24, 2); 0: flutter, one file per row.
        var valueCount: Int
        /// The file the app never follows a link at: `journal`, or
        /// flutter's database (sqflite opens `libCachedImageData.db`,
        /// flutter_cache_manager cache_object_provider.dart).
        var indexFile: String
        var description: String { name }
    }
    static let layouts = [Layout(name: "glide", valueCount: 1, indexFile: "journal"),
                          Layout(name: "coil", valueCount: 2, indexFile: "journal"),
                          Layout(name: "flutter", valueCount: 0, indexFile: "libCachedImageData.db")]

    static func cachePaths(_ f: WarmFixture, _ layout: Layout, _ urls: [String]) throws -> [String] {
        let r = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", layout.name, "--"] + urls)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// Every value file of the entry whose image file is `imagePath`
    /// (`<key>.0`, `<key>.1`; flutter: the one file).
    static func valueFiles(_ imagePath: String, _ layout: Layout) -> [String] {
        guard layout.valueCount > 0 else { return [imagePath] }
        let key = String(imagePath.dropLast(2))
        return (0..<layout.valueCount).map { "\(key).\($0)" }
    }

    /// A link planted at an entry's value files (to an image outside, which
    /// a following lookup counted as `cached`) is no entry: the next warm
    /// downloads it and the name holds a regular file with the served bytes;
    /// the image outside is untouched.
    @Test(arguments: layouts) func aLinkAtAnEntryNameIsNotCachedAndIsReplaced(_ layout: Layout) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let manifest = f.writeManifest(urls)
        let first = try f.warm([manifest, "--layout", layout.name])
        #expect(first.status == 0, "\(first.stderr)")
        let victim = Victim(in: f.dir)
        let victimImage = victim.dir + "/image.png"
        FileManager.default.createFile(atPath: victimImage, contents: Data(TinyPNG.make(seed: 1)))
        let before = victim.snapshot()
        let image = try #require(Self.cachePaths(f, layout, [urls[0]]).first)
        #expect(isRegularFile(image), "\(image)")
        for file in Self.valueFiles(image, layout) {
            try FileManager.default.removeItem(atPath: file)
            try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: victimImage)
        }
        let again = try f.warm([manifest, "--layout", layout.name, "--report", f.dir + "/r.json"])
        #expect(again.status == 0, "\(again.stderr)")
        let outcomes = try f.report(f.dir + "/r.json").entries.map { $0["outcome"] as? String }
        #expect(outcomes == ["downloaded", "cached", "cached"], "a link at an entry's name counted as cached")
        let stored = try #require(Self.cachePaths(f, layout, [urls[0]]).first)
        for file in Self.valueFiles(stored, layout) { #expect(isRegularFile(file), "\(file)") }
        #expect(FileManager.default.contents(atPath: stored).map([UInt8].init) == f.served["/img/0.png"])
        if layout.valueCount == 0 {
            // flutter: the new file has a new name; the link is removed (never what it points to).
            #expect(stored != image && !isSymlink(image) && !FileManager.default.fileExists(atPath: image))
        }
        #expect(victim.snapshot() == before)
        let third = try f.warm([manifest, "--layout", layout.name, "--report", f.dir + "/r2.json"])
        #expect(third.status == 0)
        #expect(try f.report(f.dir + "/r2.json").entries.map { $0["outcome"] as? String } == ["cached", "cached", "cached"])
    }

    /// A link at `journal` (or at flutter's database): one line naming it,
    /// exit 3, and the file it points to is neither read into the cache nor
    /// appended to; no entry is written. For warm, prune and stats.
    @Test(arguments: layouts) func aLinkAtTheIndexIsRefused(_ layout: Layout) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let manifest = f.writeManifest(urls)
        try FileManager.default.createDirectory(atPath: f.cache, withIntermediateDirectories: true)
        let victim = Victim(in: f.dir)
        let before = victim.snapshot()
        let target = victim.dir + "/notes.txt"
        try FileManager.default.createSymbolicLink(atPath: f.cache + "/" + layout.indexFile, withDestinationPath: target)
        let line = "\(f.cache)/\(layout.indexFile): is a symbolic link; imgwarm does not follow one here"
        let warm = try f.warm([manifest, "--layout", layout.name])
        #expect(warm.status == 3, "\(warm.stderr)")
        #expect(warm.stderr.contains(line), "\(warm.stderr)")
        #expect(warm.stderr.split(separator: "\n").count == 1, "\(warm.stderr)")
        for command in [["prune", "--max-objects", "1"], ["stats"]] {
            var args = ["cache"] + command.prefix(1) + ["--cache", f.cache, "--layout", layout.name] + command.dropFirst(1)
            if layout.name != "flutter" && command[0] == "prune" { args = ["cache", "prune", "--cache", f.cache, "--layout", layout.name, "--max-size", "1"] }
            let r = try BinaryRunner.run(args)
            #expect(r.status == 3, "\(args): \(r.stderr)")
            #expect(r.stderr.contains(line), "\(args): \(r.stderr)")
        }
        #expect(isSymlink(f.cache + "/" + layout.indexFile))
        #expect(f.cacheFiles().filter { $0 != layout.indexFile && $0 != "libCachedImageData" }.isEmpty, "\(f.cacheFiles())")
        #expect(victim.snapshot() == before)
    }

    /// A neighbour writes an entry's value files while its download is
    /// under way (the server holds the response 1.5 s): the run replaces
    /// them, and the next run finds the entry `cached`. (flutter picks a
    /// new unguessable file name at each store: nothing can be planted
    /// there before it exists.)
    @Test(arguments: layouts.filter { $0.valueCount > 0 }, [false, true])
    func aFilePlantedDuringTheDownloadIsReplaced(_ layout: Layout, _ cacheHeldEntries: Bool) throws {
        let f = try WarmFixture()
        let png = TinyPNG.make(width: 30, height: 20, seed: 7)
        f.server.setFile("/img/slow.png", bytes: png, contentType: "image/png")
        let url = f.server.url("/slow/1500/img/slow.png")
        let manifest = f.writeManifest([url])
        if cacheHeldEntries {
            let other = f.writeManifest(f.servePNGs(1), name: "other.txt")
            #expect(try f.warm([other, "--layout", layout.name]).status == 0)
        }
        let image = try #require(Self.cachePaths(f, layout, [url]).first)
        let planted = Data("<html>not the image</html>\n".utf8)
        let warm = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "--layout", layout.name, "--progress", "none",
                                           "--report", f.dir + "/r.json"])
        #expect(f.server.waitFor(timeout: 10) { $0.requestCount(path: "/slow/1500/img/slow.png") > 0 })
        usleep(200_000)
        for file in Self.valueFiles(image, layout) {
            #expect(FileManager.default.createFile(atPath: file, contents: planted))
        }
        let r = warm.wait(timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try f.report(f.dir + "/r.json").entries[0]["outcome"] as? String == "downloaded")
        #expect(FileManager.default.contents(atPath: image).map([UInt8].init) == png, "the name holds bytes imgwarm did not write")
        for file in Self.valueFiles(image, layout) {
            #expect(FileManager.default.contents(atPath: file) != planted, "\(file) kept the planted bytes")
        }
        // The journal's CLEAN line gives the lengths of the files now there.
        let journal = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        let key = (image as NSString).lastPathComponent.dropLast(2)
        let clean = try #require(journal.split(separator: "\n").last { $0.hasPrefix("CLEAN \(key) ") })
        let lengths = clean.split(separator: " ").dropFirst(2).map { Int($0) }
        let sizes = Self.valueFiles(image, layout).map { FileManager.default.contents(atPath: $0)?.count }
        #expect(lengths == sizes, "\(clean)")
        let again = try f.warm([manifest, "--layout", layout.name, "--report", f.dir + "/r2.json"])
        #expect(again.status == 0)
        #expect(try f.report(f.dir + "/r2.json").entries[0]["outcome"] as? String == "cached")
    }
}
