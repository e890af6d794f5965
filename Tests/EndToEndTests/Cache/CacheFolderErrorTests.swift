import Foundation
import Testing
import TestSupport

/// Every `cache` subcommand against a --cache that is no usable folder:
/// missing, a file, or a folder the process cannot list. A missing folder
/// fails the commands that change the cache or vouch for it (exit 3, the
/// contract's "the cache cannot be used", as `prune` had it already) and
/// is the empty cache for the ones that only show it (stats, path,
/// failed); a file or an unreadable folder fails them all. Nothing is
/// created either way.
@Suite struct CacheFolderErrors {
    struct Case: CustomStringConvertible {
        var args: [String]
        /// Exit status with a missing folder (3: an error naming it).
        var missing: Int32
        var description: String { args.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(args: ["verify"], missing: 3),
        Case(args: ["verify", "--delete", "--json"], missing: 3),
        Case(args: ["prune", "--max-age", "1d"], missing: 3),
        Case(args: ["clear"], missing: 3),
        Case(args: ["clear", "--all"], missing: 3),
        Case(args: ["failed", "--clear"], missing: 3),
        Case(args: ["stats"], missing: 0),
        Case(args: ["stats", "--json"], missing: 0),
        Case(args: ["failed"], missing: 0),
        // Exit 1: the entry is not there (the name it would get is printed).
        Case(args: ["path", "https://127.0.0.1/a.jpg"], missing: 1),
    ]

    /// One line on stderr, `imgwarm: PATH: reason`.
    static func expectOneLineError(_ r: (status: Int32, stderr: String), path: String, reason: String, _ c: Case) {
        #expect(r.status == 3, "\(c): \(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines == ["imgwarm: \(path): \(reason)"], "\(c)")
    }

    @Test(arguments: cases) func missingFolder(_ c: Case) throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/no/such/cache"
        let r = try BinaryRunner.run(["cache"] + c.args + ["--cache", cache])
        if c.missing == 3 {
            Self.expectOneLineError((r.status, r.stderr), path: cache, reason: "cache folder does not exist", c)
            #expect(r.stdout.isEmpty, "\(c): \(r.stdout)")
        } else {
            #expect(r.status == c.missing, "\(c): \(r.stderr)")
            // `cache failed` (as text) says that the list is empty, on stderr.
            let said = c.args == ["failed"] ? "imgwarm: the failed-URL list of \(cache) is empty: no URL is blocked\n" : ""
            #expect(r.stderr == said, "\(c): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/no"), "\(c) created the folder")
    }

    @Test func missingFolderShowsAsEmpty() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/cache"
        let stats = try BinaryRunner.run(["cache", "stats", "--json", "--cache", cache])
        let json = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(json?["directory"] as? String == cache)
        #expect(json?["files"] as? Int == 0)
        let failed = try BinaryRunner.run(["cache", "failed", "--json", "--cache", cache])
        #expect(failed.stdout == "[]\n")
        let path = try BinaryRunner.run(["cache", "path", "https://example.com/images/photo.jpg", "--cache", cache])
        #expect(path.stdout == cache + "/b46ca04023feeac3addabe8e574e2211.jpg\n")
    }

    @Test(arguments: cases) func fileInsteadOfAFolder(_ c: Case) throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/cache"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("not a folder".utf8)))
        let r = try BinaryRunner.run(["cache"] + c.args + ["--cache", file])
        Self.expectOneLineError((r.status, r.stderr), path: file, reason: "not a directory", c)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a folder")
    }

    /// A folder without read permission. Root reads any folder, so as root
    /// the binary runs under setpriv with the two capabilities that bypass
    /// permission checks (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) dropped
    /// from its bounding set: it is still uid 0, and the folder's mode 000
    /// then refuses it as it refuses any user.
    @Test(arguments: cases) func unreadableFolder(_ c: Case) throws {
        let folder = try FolderWithOneEntry(mode: 0)
        defer { folder.remove() }
        let r = try runBoundByPermissions(["cache"] + c.args + ["--cache", folder.cache],
                                          why: "the unreadable-folder check as root")
        Self.expectOneLineError((r.status, r.output), path: folder.cache, reason: "cannot open cache folder: Permission denied", c)
        chmod(folder.cache, 0o755)
        #expect(FileManager.default.fileExists(atPath: folder.entry), "\(c) removed an entry it could not see")
    }
}

/// A cache folder in a temp folder, holding one entry (SDWebImage's name
/// of https://example.com/images/photo.jpg, as DiskCacheTests cites), with
/// the permission bits `mode`.
struct FolderWithOneEntry {
    let dir = makeTempDirectory()
    var cache: String { dir + "/cache" }
    var entry: String { cache + "/b46ca04023feeac3addabe8e574e2211.jpg" }

    init(mode: mode_t) throws {
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: entry, contents: Data([0xFF, 0xD8, 0xFF])))
        #expect(chmod(cache, mode) == 0)
    }

    func remove() {
        chmod(cache, 0o755)
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// Runs the binary so that permission bits bind it. Root passes any
/// folder, so as root it runs under setpriv with the two capabilities that
/// bypass permission checks (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) dropped
/// from its bounding set. Its stdout and stderr together (an error must be
/// all there is). Without setpriv the test is skipped (failed under CI).
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

/// `cache path` only looks names up: a folder it may search but not list
/// (mode 0111) still answers, as before the folder check existed; a
/// command that lists (stats) refuses it.
@Suite struct CachePathOnASearchOnlyFolder {
    @Test func pathAnswersStatsRefuses() throws {
        let folder = try FolderWithOneEntry(mode: 0o111)
        defer { folder.remove() }
        let url = "https://example.com/images/photo.jpg"
        let path = try runBoundByPermissions(["cache", "path", url, "--cache", folder.cache],
                                             why: "the search-only folder check as root")
        #expect(path.status == 0, "\(path.output)")
        #expect(path.output.contains(folder.entry), "\(path.output)")
        let stats = try runBoundByPermissions(["cache", "stats", "--cache", folder.cache], why: "the same")
        #expect(stats.status == 3, "\(stats.output)")
        #expect(stats.output.contains("cannot open cache folder: Permission denied"), "\(stats.output)")
    }
}
