import Crypto
import Foundation
import Testing
import TestSupport

/// The app finds, keeps and ages exactly what imgwarm wrote, end
/// to end: the real binary against the loopback server.
@Suite(.serialized) struct FidelityTests {
    static func md5(_ s: String) -> String {
        Insecure.MD5.hash(data: Array(s.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func times(_ path: String) -> (atime: Int, mtime: Int) { FileTimes.of(path) }
    static func setTimes(_ path: String, atime: Int, mtime: Int) { FileTimes.set(path, atime: atime, mtime: mtime) }

    /// Pasted URLs with non-ASCII, `|` and `^` are requested and stored as
    /// an app linked on iOS 17+ has them: `URL(string:)`'s percent-encoding
    /// (swift-foundation `URLParser.swift`), file = md5(encoded URL) + the
    /// extension (`SDDiskCacheFileNameForKey`). A cached hit renews the
    /// access time only; `cache stats` and `cache verify` leave it.
    @Test func pastedURLsLandUnderTheAppsKeyAndAccessTimesAgeAsInTheApp() throws {
        let f = try WarmFixture()
        // Served at the encoded paths: what the app (and imgwarm) request.
        let cases: [(text: String, path: String, ext: String)] = [
            ("/фото.jpg", "/%D1%84%D0%BE%D1%82%D0%BE.jpg", "jpg"),
            ("/a|b.jpg", "/a%7Cb.jpg", "jpg"),
            ("/x^y.png", "/x%5Ey.png", "png"),
        ]
        var bytes: [[UInt8]] = []
        for (i, c) in cases.enumerated() {
            let png = TinyPNG.make(width: 5 + i, height: 4, seed: 700 + i)
            f.server.setFile(c.path, bytes: png, contentType: "image/png")
            bytes.append(png)
        }
        let manifest = f.writeManifest(cases.map { f.server.url($0.text) })
        let report = f.dir + "/r.json"
        let first = try f.warm([manifest, "--report", report, "-v"])
        #expect(first.status == 0, "\(first.stderr)")
        var paths: [String] = []
        for (i, c) in cases.enumerated() {
            #expect(f.server.requestCount(path: c.path) == 1, "\(c.path)")
            let key = f.server.url(c.path)
            let path = f.cache + "/" + Self.md5(key) + "." + c.ext
            #expect(FileManager.default.contents(atPath: path).map([UInt8].init) == bytes[i], "\(c.text)")
            paths.append(path)
            // `cache path` keys a pasted URL the same way.
            #expect(try f.cachePath(f.server.url(c.text)) == path)
        }
        #expect(f.cacheFiles().count == cases.count)
        let entries = try f.report(report).entries
        #expect(entries.map { $0["reencoded"] as? Bool } == [true, true, true])
        #expect(entries.map { $0["url"] as? String } == cases.map { f.server.url($0.path) })
        #expect(first.stdout.contains("re-encoded from \(manifest):1") || first.stderr.contains("re-encoded from \(manifest):1"),
                "\(first.stdout)")

        // Old access times (older than mtime: a plain read would renew them
        // even under relatime).
        let now = Int(Date().timeIntervalSince1970)
        let old = (atime: now - 40 * 86_400, mtime: now - 35 * 86_400)
        for p in paths { Self.setTimes(p, atime: old.atime, mtime: old.mtime) }
        let second = try f.warm([manifest, "--report", report])
        #expect(second.status == 0)
        #expect(try f.report(report).totals["cached"] as? Int == cases.count)
        for p in paths {
            let t = Self.times(p)
            #expect(t.atime >= now, "\(p): the hit did not renew the access time")
            #expect(t.mtime == old.mtime, "\(p): the hit changed the modification time")
        }

        for p in paths { Self.setTimes(p, atime: old.atime, mtime: old.mtime) }
        let stats = try BinaryRunner.run(["cache", "stats", "--json", "--cache", f.cache])
        #expect(stats.status == 0, "\(stats.stderr)")
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let dry = try f.warm([manifest, "--dry-run"])
        #expect(dry.status == 0)
        for p in paths { #expect(Self.times(p) == old, "\(p): stats/verify/dry run changed a time") }

        // A prune by access date now keeps what the nightly warm renewed.
        _ = try f.warm([manifest])
        let prune = try BinaryRunner.run(["cache", "prune", "--max-age", "30d", "--cache", f.cache])
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(f.cacheFiles().count == cases.count)
    }

    /// A 304 under `--refresh` renews the access time only.
    @Test func notModifiedRenewsTheAccessTimeOnly() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(1, etag: true)
        let manifest = f.writeManifest(urls)
        #expect(try f.warm([manifest]).status == 0)
        let path = try f.cachePath(urls[0])
        let now = Int(Date().timeIntervalSince1970)
        Self.setTimes(path, atime: now - 40 * 86_400, mtime: now - 35 * 86_400)
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--refresh", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try f.report(report).entries.first?["outcome"] as? String == "revalidated")
        let t = Self.times(path)
        #expect(t.atime >= now)
        #expect(t.mtime == now - 35 * 86_400)
    }

    /// Reports mask credentials; `--retry-from` cannot fetch such an entry
    /// as the first run did (nor key it the same), so it refuses it by name.
    @Test func retryFromRefusesEntriesWhoseCredentialsWereRemoved() throws {
        let f = try WarmFixture()
        let secretURL = f.server.url("/missing.png").replacingOccurrences(of: "http://", with: "http://alice:s3cret@")
        let manifest = f.writeManifest([secretURL])
        let report = f.dir + "/r.json"
        let first = try f.warm([manifest, "--report", report])
        #expect(first.status == 1)
        let text = try String(contentsOfFile: report, encoding: .utf8)
        #expect(!text.contains("s3cret") && !text.contains("alice"))
        #expect(text.contains("http://***@127.0.0.1"))
        let retry = try f.warm(["--retry-from", report, "--retry-failed"])
        // A line that cannot be run is a failed entry (exit 1), as a
        // malformed manifest line is.
        #expect(retry.status == 1, "\(retry.stderr)")
        #expect(retry.stderr.contains("\(report):1: the report has this URL without its credentials"), "\(retry.stderr)")
        #expect(f.server.requestCount(path: "/missing.png") == 1)
        #expect(f.cacheFiles().isEmpty)
    }
}
