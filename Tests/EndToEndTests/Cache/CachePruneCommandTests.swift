import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway cache folder whose files get chosen access times.
private final class PruneFolder {
    let directory: String
    static let day: Int64 = 86_400 * 1_000_000_000

    init() throws {
        directory = FileManager.default.temporaryDirectory.path + "/imgwarm-prune-cli-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ relative: String) -> String { directory + "/" + relative }

    /// 4096 bytes at `relative` (folders made) with these access and
    /// modification times, nanoseconds since 1970 (the mtime a fixed date
    /// in 2027: a prune by access date must not go by it).
    func file(_ relative: String, atime: Int64, mtime: Int64 = 1_800_000_000 * 1_000_000_000) throws {
        let p = path(relative)
        try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: p, contents: Data(repeating: 0x5A, count: 4096)))
        func spec(_ ns: Int64) -> timespec { timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000)) }
        var times = [spec(atime), spec(mtime)]
        #expect(utimensat(AT_FDCWD, p, &times, AT_SYMLINK_NOFOLLOW) == 0)
    }

    /// Allocated bytes of a file (what prune sums).
    func allocated(_ relative: String) -> Int64 {
        var st = stat()
        guard lstat(path(relative), &st) == 0 else { return -1 }
        return Int64(st.st_blocks) * 512
    }

    /// Every file under the folder, hidden ones included, relative and sorted.
    func remaining() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var out: [String] = []
        while let item = enumerator?.nextObject() as? String {
            var st = stat()
            if lstat(path(item), &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR { out.append(item) }
        }
        return out.sorted()
    }
}

/// `imgwarm cache prune` as a user runs it: the binary TestSupport's
/// BinaryRunner finds.
@Suite struct CachePruneCommandTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    func imgwarm(_ arguments: [String]) throws -> Run {
        let r = try BinaryRunner.run(arguments)
        return Run(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    @Test func dryRunJSONThenRealRun() throws {
        let f = try PruneFolder()
        let realNow = Int64(Date().timeIntervalSince1970 * 1e9)
        let day = PruneFolder.day
        try f.file("expired.jpg", atime: realNow - 40 * day)
        try f.file("older.jpg", atime: realNow - 5 * day)
        try f.file("newer.jpg", atime: realNow - 4 * day)
        try f.file("newest.jpg", atime: realNow - 1 * day)
        try f.file("kept-by-pin.jpg", atime: realNow - 50 * day)
        try f.file(".imgwarm/tmp/1-1.tmp", atime: realNow - 50 * day)
        let a = f.allocated("older.jpg")
        let manifest = f.path(".imgwarm/keep.txt")
        try "https://cdn.example.com/x.jpg key=pin\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let pinName = CacheFileName(key: "pin").sdName
        try f.file(pinName, atime: realNow - 50 * day)

        // 1 pinned + 3 others after expiry = 4A > 3.5A: trim to below 3.5A takes older.jpg.
        let args = ["cache", "prune", "--cache", f.directory, "--max-age", "30d", "--max-size", "\(4 * a - a / 2)",
                    "--trim-ratio", "1", "--keep", manifest]
        let dry = try imgwarm(args + ["--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(object["dry_run"] as? Bool == true)
        #expect(object["expired"] as? Int == 2 && object["trimmed"] as? Int == 1)
        #expect(object["removed_files"] as? Int == 3 && object["kept_files"] as? Int == 3)
        #expect(object["pinned_files"] as? Int == 1)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(Set(files.prefix(2).map { $0["path"] as? String }) == ["expired.jpg", "kept-by-pin.jpg"])
        #expect(files.prefix(2).allSatisfy { $0["reason"] as? String == "expired" && $0["rank"] == nil })
        #expect(files.last?["path"] as? String == "older.jpg" && files.last?["reason"] as? String == "trimmed")
        #expect(files.last?["rank"] as? Int == 1)
        #expect(f.remaining().count == 8, "a dry run removes nothing")

        let run = try imgwarm(args)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("removed 3 files"))
        // The run held the shared cache lock (.imgwarm/lock) while it pruned.
        #expect(f.remaining() == [".imgwarm/keep.txt", ".imgwarm/lock", ".imgwarm/tmp/1-1.tmp", "newer.jpg", "newest.jpg", pinName].sorted())
    }

    /// A neighbour's file name with ESC, BEL and a newline (a forged line)
    /// reaches the dry-run listing escaped, as every other output does.
    @Test func dryRunListingEscapesFileNames() throws {
        let f = try PruneFolder()
        let realNow = Int64(Date().timeIntervalSince1970 * 1e9)
        try f.file("e\u{1B}]0;PWNED\u{07}\nforged.png", atime: realNow - 40 * PruneFolder.day)
        let dry = try imgwarm(["cache", "prune", "--cache", f.directory, "--max-age", "1d", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(!dry.stdout.contains("\u{1B}") && !dry.stdout.contains("\u{07}"), "\(dry.stdout)")
        #expect(!dry.stdout.contains("\nforged.png"), "a file name must not start a line of its own")
        #expect(dry.stdout.contains("expired  e\\x1B]0;PWNED\\x07 forged.png"), "\(dry.stdout)")
    }

    @Test func exitStatuses() throws {
        let f = try PruneFolder()
        let noLimit = try imgwarm(["cache", "prune", "--cache", f.directory])
        #expect(noLimit.status == 2)
        #expect(noLimit.stderr == "imgwarm: give --max-age, --max-size or both\n")
        #expect(try imgwarm(["cache", "prune", "--cache", f.directory, "--max-age", "7x"]).status == 2)
        #expect(try imgwarm(["cache", "prune", "--cache", f.directory, "--max-size", "1G", "--trim-ratio", "0"]).status == 2)
        #expect(try imgwarm(["cache", "prune", "--cache", f.directory, "--max-age", "1d", "--expire-type", "birth"]).status == 2)
        let badKeep = try imgwarm(["cache", "prune", "--cache", f.directory, "--max-age", "1d", "--keep", f.path("none.txt")])
        #expect(badKeep.status == 2 && badKeep.stderr.contains("none.txt"))
        let missing = try imgwarm(["cache", "prune", "--cache", f.path("missing"), "--max-age", "1d"])
        #expect(missing.status == 3)
        #expect(missing.stderr == "imgwarm: \(f.path("missing")): cache folder does not exist\n")
        let empty = try imgwarm(["cache", "prune", "--cache", f.directory, "--max-age", "1d"])
        #expect(empty.status == 0 && empty.stdout == "removed 0 files (0 B: 0 expired, 0 trimmed), kept 0 files (0 B)\n")
    }
}
