import Foundation
import ImgWarmKit
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `--layout kingfisher|nuke` end to end: the real binary warms from the
/// loopback server, and the folder is checked the way the app would read it
/// (names from the library's hash, computed here by coreutils; dates; hits;
/// expiry), then maintained with the layout's own rules.
@Suite(.serialized) struct LayoutTests {
    static func digest(_ tool: String, _ key: String) throws -> String {
        try #require(coreutilsDigest(tool, of: key), "\(tool) (coreutils) is needed to check names independently")
    }

    static func fileStat(_ path: String) throws -> stat {
        var st = stat()
        try #require(lstat(path, &st) == 0, "\(path) must exist")
        return st
    }

    static func nowSeconds() -> Int { Int(Date().timeIntervalSince1970) }

    func run(_ args: [String], _ f: WarmFixture, environment: [String: String] = [:]) throws -> BinaryRunner.Result {
        try BinaryRunner.run(args + ["--cache", f.cache], environment: environment)
    }

    /// Kingfisher 8 (`DiskStorage.Backend.cacheFileName(forKey:)`: SHA-256 of
    /// the key; `store(value:forKey:expiration:)`: modification date = the
    /// deadline, ceil(now + 7 days); `value(forKey:...)`: a file at or past
    /// its deadline is a miss).
    @Test func kingfisherWarmNamesDatesHitsAndExpiredRefetch() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let manifest = f.writeManifest(urls)
        let report = f.dir + "/r.json"
        let before = Self.nowSeconds()
        let first = try f.warm([manifest, "--layout", "kingfisher", "--report", report])
        let after = Self.nowSeconds() + 1
        #expect(first.status == 0, "\(first.stderr)")

        let names = try urls.map { try Self.digest("sha256sum", $0) }
        #expect(f.cacheFiles() == names.sorted())
        let entries = try f.report(report).entries
        for (i, url) in urls.enumerated() {
            let path = f.cache + "/" + names[i]
            #expect(FileManager.default.contents(atPath: path).map([UInt8].init) == f.served["/img/\(i).png"])
            #expect(entries[i]["file"] as? String == path)
            let st = try Self.fileStat(path)
            // The deadline, whole seconds: 7 days after the store, rounded up.
            #expect(st.st_mtim.tv_nsec == 0)
            #expect(st.st_mtim.tv_sec >= before + 604_800 && st.st_mtim.tv_sec <= after + 604_800, "\(url)")
            // Kingfisher's "last access" is the creation date: on Linux the
            // birth time the kernel gave the file when it was stored.
            if let born = CacheExpireType.creation.date(ofFileAt: path) {
                #expect(born / 1_000_000_000 >= before - 1 && born / 1_000_000_000 <= after)
            }
        }
        let paths = try BinaryRunner.run(["cache", "path", "--layout", "kingfisher", "--cache", f.cache] + urls)
        #expect(paths.status == 0)
        #expect(paths.stdout == names.map { f.cache + "/" + $0 + "\n" }.joined())

        // Second run: all hits, no request. A hit extends the deadline as
        // Kingfisher's read does (`FileMeta.extendExpiration`): a file one
        // hour from its deadline gets a full week again.
        var soon = [timespec(tv_sec: Self.nowSeconds(), tv_nsec: 0), timespec(tv_sec: Self.nowSeconds() + 3600, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, f.cache + "/" + names[2], &soon, 0) == 0)
        let secondStart = Self.nowSeconds()
        let second = try f.warm([manifest, "--layout", "kingfisher", "--report", report])
        #expect(second.status == 0)
        #expect(f.server.totalRequests == 3)
        #expect(try f.report(report).totals["cached"] as? Int == 3)
        #expect(try Self.fileStat(f.cache + "/" + names[2]).st_mtim.tv_sec >= secondStart + 604_800)

        // One file past its deadline (the app would fetch it again), one at
        // exactly now-ish in the past: both are fetched again, as the app would.
        var times = [timespec(tv_sec: Self.nowSeconds(), tv_nsec: 0), timespec(tv_sec: Self.nowSeconds() - 60, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, f.cache + "/" + names[1], &times, 0) == 0)
        let gone = try BinaryRunner.run(["cache", "path", "--layout", "kingfisher", "--cache", f.cache, urls[1]])
        #expect(gone.status == 1)
        let third = try f.warm([manifest, "--layout", "kingfisher", "--report", report])
        #expect(third.status == 0)
        #expect(f.server.requestCount(path: "/img/1.png") == 2)
        #expect(f.server.totalRequests == 4)
        let outcomes = try f.report(report).entries.map { $0["outcome"] as? String }
        #expect(outcomes == ["cached", "downloaded", "cached"])
        #expect(try Self.fileStat(f.cache + "/" + names[1]).st_mtim.tv_sec >= before + 604_800)
    }

    /// `--expiration`: Kingfisher's `StorageExpiration` (`.seconds`, `.never`
    /// = `Date.distantFuture`), taken also from IMGWARM_LAYOUT.
    @Test func kingfisherExpirationOption() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let before = Self.nowSeconds()
        let hour = try f.warm([f.writeManifest([urls[0]], name: "a.txt"), "--expiration", "1h"],
                              environment: ["IMGWARM_LAYOUT": "kingfisher"])
        #expect(hour.status == 0, "\(hour.stderr)")
        let mtime = try Self.fileStat(f.cache + "/" + (try Self.digest("sha256sum", urls[0]))).st_mtim.tv_sec
        #expect(mtime >= before + 3600 && mtime <= Self.nowSeconds() + 3601)

        let never = try f.warm([f.writeManifest([urls[1]], name: "b.txt"), "--layout", "kingfisher", "--expiration", "never"])
        #expect(never.status == 0, "\(never.stderr)")
        let far = try Self.fileStat(f.cache + "/" + (try Self.digest("sha256sum", urls[1]))).st_mtim.tv_sec
        // 4001-01-01, or the filesystem's last date where it stops earlier
        // (ext4: 2446-05-10); either way centuries ahead.
        #expect(far == KingfisherLayout.distantFuture || far >= 15_032_385_535)

        // Meaningless elsewhere, or not a duration: usage errors (in a
        // folder of no layout yet: this one is detected as Kingfisher's).
        let fresh = f.dir + "/fresh"
        for args in [["--expiration", "1h"], ["--layout", "nuke", "--expiration", "1h"],
                     ["--layout", "kingfisher", "--expiration", "0"], ["--layout", "kingfisher", "--expiration", "soon"]] {
            let bad = try BinaryRunner.run(["warm", f.writeManifest([urls[0]], name: "c.txt"), "--cache", fresh, "--progress", "none"] + args)
            #expect(bad.status == 2, "\(args): \(bad.stderr)")
        }
        // Without --layout, the folder's recorded layout is used.
        let detected = try f.warm([f.writeManifest([urls[0]], name: "c.txt"), "--expiration", "1h"])
        #expect(detected.status == 0, "\(detected.stderr)")
        let badEnv = try f.warm([f.writeManifest([urls[0]], name: "c.txt")], environment: ["IMGWARM_LAYOUT": "picasso"])
        #expect(badEnv.status == 2)
        #expect(badEnv.stderr.contains("IMGWARM_LAYOUT=picasso"))
    }

    /// Kingfisher's clean-up on the warmed folder: expired by deadline, then
    /// the size rule; SDWebImage's options are refused.
    @Test func kingfisherPrune() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        #expect(try f.warm([f.writeManifest(urls), "--layout", "kingfisher"]).status == 0)
        let names = try urls.map { try Self.digest("sha256sum", $0) }
        var times = [timespec(tv_sec: Self.nowSeconds(), tv_nsec: 0), timespec(tv_sec: Self.nowSeconds() - 1, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, f.cache + "/" + names[0], &times, 0) == 0)

        let dry = try run(["cache", "prune", "--layout", "kingfisher", "--dry-run", "--json"], f)
        #expect(dry.status == 0, "\(dry.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any]
        #expect(json?["layout"] as? String == "kingfisher")
        #expect(json?["expire_type"] as? String == "modification")
        #expect(json?["trim_date"] as? String == "creation")
        #expect(json?["size_measure"] as? String == "logical")
        #expect((json?["files"] as? [[String: Any]])?.map { $0["path"] as? String } == [names[0]])

        let pruned = try run(["cache", "prune", "--layout", "kingfisher"], f)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(f.cacheFiles() == [names[1], names[2]].sorted())
        // Limit of one byte: everything goes (at or above the limit, down to half).
        #expect(try run(["cache", "prune", "--layout", "kingfisher", "--max-size", "1"], f).status == 0)
        #expect(f.cacheFiles().isEmpty)

        for args in [["--expire-type", "access"], ["--max-age", "1d"], ["--max-size", "1M", "--trim-ratio", "0.5"]] {
            let bad = try run(["cache", "prune", "--layout", "kingfisher"] + args, f)
            #expect(bad.status == 2, "\(args)")
            #expect(bad.stderr.contains("kingfisher"), "\(bad.stderr)")
            #expect(bad.stderr.split(separator: "\n").count == 1)
        }
    }

    /// Nuke 12 (`DataCache.filename(for:)`: SHA-1 of the key, flat, no
    /// extension): warm, hits, stats, verify, prune by access date, clear.
    @Test func nukeWarmAndMaintenance() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(4)
        let manifest = f.writeManifest(urls)
        let before = Self.nowSeconds()
        let first = try f.warm([manifest, "--layout", "nuke"])
        let after = Self.nowSeconds() + 1
        #expect(first.status == 0, "\(first.stderr)")
        let names = try urls.map { try Self.digest("sha1sum", $0) }
        #expect(f.cacheFiles() == names.sorted())
        for (i, name) in names.enumerated() {
            #expect(FileManager.default.contents(atPath: f.cache + "/" + name).map([UInt8].init) == f.served["/img/\(i).png"])
            // A plain write, as Nuke's `Data.write`: both dates are the store time.
            let st = try Self.fileStat(f.cache + "/" + name)
            #expect(st.st_mtim.tv_sec >= before && st.st_mtim.tv_sec <= after)
            #expect(st.st_atim.tv_sec >= before && st.st_atim.tv_sec <= after)
        }
        let paths = try BinaryRunner.run(["cache", "path", "--layout", "nuke", "--cache", f.cache] + urls)
        #expect(paths.stdout == names.map { f.cache + "/" + $0 + "\n" }.joined())
        let second = try f.warm([manifest, "--layout", "nuke"])
        #expect(second.status == 0 && second.stdout.contains("4 cached"))
        #expect(f.server.totalRequests == 4)

        // Nuke's own sweep date and a sub-folder: not entries of a flat cache.
        FileManager.default.createFile(atPath: f.cache + "/.data-cache-info", contents: Data("{}".utf8))
        try FileManager.default.createDirectory(atPath: f.cache + "/sub", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: f.cache + "/sub/other", contents: Data("x".utf8))

        let stats = try run(["cache", "stats", "--layout", "nuke", "--json"], f)
        #expect(stats.stdout.contains("\"files\" : 4"), "\(stats.stdout)")
        let verify = try run(["cache", "verify", "--layout", "nuke"], f)
        #expect(verify.status == 0, "\(verify.stdout)")

        // Access dates n0 oldest … n3 newest; one allocated block each on
        // the test filesystems, so a limit of 3 blocks - 1 keeps two files
        // (target floor(0.7 x limit) < 3 blocks).
        let block = Int(try Self.fileStat(f.cache + "/" + names[0]).st_blocks) * 512
        for (i, name) in names.enumerated() {
            var times = [timespec(tv_sec: 1_700_000_000 + i * 3600, tv_nsec: 0), timespec(tv_sec: 1_800_000_000 - i, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, f.cache + "/" + name, &times, 0) == 0)
            #expect(Int(try Self.fileStat(f.cache + "/" + name).st_blocks) * 512 == block)
        }
        let pruned = try run(["cache", "prune", "--layout", "nuke", "--max-size", String(3 * block - 1)], f)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(f.cacheFiles() == [names[2], names[3]].sorted() + ["sub"])
        #expect(FileManager.default.fileExists(atPath: f.cache + "/sub/other"))
        #expect(FileManager.default.fileExists(atPath: f.cache + "/.data-cache-info"))
        let bad = try run(["cache", "prune", "--layout", "nuke", "--expire-type", "access"], f)
        #expect(bad.status == 2)

        let cleared = try run(["cache", "clear", "--layout", "nuke"], f)
        #expect(cleared.status == 0)
        #expect(f.cacheFiles() == ["sub"])
        #expect(FileManager.default.fileExists(atPath: f.cache + "/.data-cache-info"))
    }

    /// Without `--cache`, each layout warms its library's default folder
    /// under XDG_CACHE_HOME.
    @Test func defaultFolderPerLayout() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(1)
        let manifest = f.writeManifest(urls)
        let xdg = f.dir + "/xdg"
        for (layout, folder, tool) in [("kingfisher", "com.onevcat.Kingfisher.ImageCache.default", "sha256sum"),
                                       ("nuke", "com.github.kean.Nuke.DataCache", "sha1sum")] {
            let r = try BinaryRunner.run(["warm", manifest, "--layout", layout, "--progress", "none"],
                                         environment: ["XDG_CACHE_HOME": xdg, "IMGWARM_CACHE": ""])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(FileManager.default.fileExists(atPath: "\(xdg)/\(folder)/\(try Self.digest(tool, urls[0]))"))
            let path = try BinaryRunner.run(["cache", "path", urls[0]],
                                            environment: ["XDG_CACHE_HOME": xdg, "IMGWARM_CACHE": "", "IMGWARM_LAYOUT": layout])
            #expect(path.status == 0)
            #expect(path.stdout.hasPrefix("\(xdg)/\(folder)/"))
        }
    }
}
