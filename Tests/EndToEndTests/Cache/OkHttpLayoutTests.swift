import Crypto
import Foundation
import Testing
import TestSupport

/// `--layout okhttp` end to end: the real binary warms from loopback
/// servers (http, and https through nginx), then OkHttp's own HTTP cache
/// (Debian's libokhttp-java 3.13, `Tests/AndroidReader/OkHttpCacheRead.java`)
/// answers every request with the origin stopped.
@Suite(.serialized) struct OkHttpLayoutEndToEndTests {
    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }
    static func md5(_ text: String) -> String { Insecure.MD5.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined() }

    static func reader() throws -> OkHttpCacheReader {
        if let reader = OkHttpCacheReader.shared { return reader }
        try prerequisiteMissing("javac/java, libokhttp-java or libokio-java not found: reading with OkHttp's Cache did not run")
    }

    /// A copy: OkHttp's open rewrites the journal and its reads add lines.
    static func read(_ cache: String, force: Bool, urls: [String]) throws -> OkHttpCacheReader.Reading {
        let copy = makeTempDirectory("imgwarm-okhttp-read") + "/c"
        defer { try? FileManager.default.removeItem(atPath: (copy as NSString).deletingLastPathComponent) }
        try FileManager.default.copyItem(atPath: cache, toPath: copy)
        return try reader().read(copy, force: force, urls: urls)
    }

    static func expectServed(_ reading: OkHttpCacheReader.Reading, _ expected: [String: [UInt8]], source: String = "cache",
                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reading.status == 0, "\(reading.output)", sourceLocation: sourceLocation)
        for (url, bytes) in expected {
            let answer = reading.answers[url]
            #expect(answer == .init(status: 200, length: bytes.count, sha256: sha256(bytes), source: source),
                    "\(url): \(String(describing: answer))\n\(reading.output)", sourceLocation: sourceLocation)
        }
        #expect(Set(reading.urls) == Set(expected.keys), "\(reading.output)", sourceLocation: sourceLocation)
        #expect(reading.reopenedCount == expected.count, "\(reading.output)", sourceLocation: sourceLocation)
    }

    /// A query OkHttp keeps as written (`[1]`, `%zz`) but imgwarm requests
    /// re-encoded, and a percent-encoded host: OkHttp's Cache answers the
    /// URL as the app wrote it.
    @Test func urlsWrittenAsTheAppWritesThemAreServed() throws {
        _ = try Self.reader()
        let f = try WarmFixture()
        let png = TinyPNG.make(width: 7, height: 7, seed: 92)
        f.server.setFile("/q.png", bytes: png, contentType: "image/png")
        let query = f.server.url("/q.png") + "?x=[1]&a=%zz"
        let host = f.server.url("/q.png").replacingOccurrences(of: "127.0.0.1", with: "127.0.0.%31") + "?h"
        let run = try f.warm([f.writeManifest([query, host]), "--layout", "okhttp"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: f.cache + "/\(Self.md5(query)).1"))
        let meta = try String(contentsOfFile: f.cache + "/\(Self.md5(query)).0", encoding: .utf8)
        #expect(meta.hasPrefix(query + "\nGET\n"), "\(meta)")
        let path = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", "okhttp", query])
        #expect(path.stdout == f.cache + "/\(Self.md5(query)).1\n", "\(path.stdout) \(path.stderr)")
        f.server.shutdown()
        let reading = try Self.read(f.cache, force: true, urls: [query, host])
        let answer = OkHttpCacheReader.Answer(status: 200, length: png.count, sha256: Self.sha256(png), source: "cache")
        #expect(reading.status == 0 && reading.answers[query] == answer && reading.answers[host] == answer, "\(reading.output)")
        // The cache's own listing names each URL as HttpUrl prints it: the host decoded.
        let decodedHost = f.server.url("/q.png") + "?h"
        #expect(Set(reading.urls) == [query, decodedHost], "\(reading.output)")
        #expect(FileManager.default.fileExists(atPath: f.cache + "/\(Self.md5(decodedHost)).1"))
    }

    @Test func warmOverHTTPIsServedByOkHttpsCache() throws {
        _ = try Self.reader()
        let f = try WarmFixture()
        var urls = f.servePNGs(12, etag: true)
        // Vary: Accept-Encoding is recorded as OkHttp's request had it.
        let varying = TinyPNG.make(width: 9, height: 9, seed: 90)
        f.server.setFile("/vary.png", bytes: varying, contentType: "image/png", vary: "Accept-Encoding")
        // gzip on the wire: the decoded bytes are stored, without Content-Encoding.
        let zipped = f.served["/img/3.png"]!
        urls.append(f.server.url("/vary.png"))
        urls.append(f.server.url("/gzip/img/3.png"))
        let noStore = TinyPNG.make(width: 5, height: 5, seed: 91)
        f.server.setFile("/nostore.png", bytes: noStore, contentType: "image/png", cacheControl: "no-store")
        f.server.setFile("/varyall.png", bytes: noStore, contentType: "image/png", vary: "*")
        let refused = [f.server.url("/nostore.png"), f.server.url("/varyall.png")]
        let manifest = f.writeManifest(urls + refused)
        let report = f.dir + "/r.json"
        let run = try f.warm([manifest, "--layout", "okhttp", "--report", report])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("no-store") && run.stderr.contains("Vary: *"), "\(run.stderr)")
        var expected: [String: [UInt8]] = [:]
        for url in urls.prefix(12) { expected[url] = f.served[String(url.dropFirst(f.server.baseURL.count))] }
        expected[f.server.url("/vary.png")] = varying
        expected[f.server.url("/gzip/img/3.png")] = zipped

        let journal = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        #expect(journal.hasPrefix("libcore.io.DiskLruCache\n1\n201105\n2\n\n"))
        #expect(journal.split(separator: "\n").filter { $0.hasPrefix("CLEAN ") }.count == 14)
        let varyMeta = try String(contentsOfFile: f.cache + "/\(Self.md5(f.server.url("/vary.png"))).0", encoding: .utf8)
        #expect(varyMeta.contains("\nGET\n1\nAccept-Encoding: gzip\nHTTP/1.1 200 \n"), "\(varyMeta)")
        let gzipMeta = try String(contentsOfFile: f.cache + "/\(Self.md5(f.server.url("/gzip/img/3.png"))).0", encoding: .utf8)
        #expect(!gzipMeta.lowercased().contains("content-encoding") && gzipMeta.contains("Content-Length: \(zipped.count)\n"), "\(gzipMeta)")
        let mode = try FileManager.default.attributesOfItem(atPath: f.cache + "/\(Self.md5(urls[0])).0")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        for url in refused { #expect(!FileManager.default.fileExists(atPath: f.cache + "/\(Self.md5(url)).1")) }

        // A second run: hits, each a READ line.
        #expect(try f.warm([f.writeManifest(urls, name: "again.txt"), "--layout", "okhttp"]).status == 0)
        let afterHits = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        #expect(afterHits.split(separator: "\n").filter { $0.hasPrefix("READ ") }.count == 14)

        f.server.shutdown()
        Self.expectServed(try Self.read(f.cache, force: true, urls: Array(expected.keys) + refused), expected)

        // `cache path`, stats and verify see the bodies.
        let path = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", "okhttp", urls[0]])
        #expect(path.stdout == f.cache + "/\(Self.md5(urls[0])).1\n", "\(path.stdout) \(path.stderr)")
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--layout", "okhttp"])
        #expect(verify.status == 0 && verify.stdout.contains("checked 14 files: 0 broken"), "\(verify.stdout) \(verify.stderr)")

        // Prune to about half, least recently used first (journal order).
        let recent = Array(urls[0..<4])
        let limit = expected.values.reduce(0) { $0 + $1.count + 300 } / 2
        let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "okhttp", "--max-size", "\(limit)"])
        #expect(prune.status == 0, "\(prune.stdout) \(prune.stderr)")
        let pruned = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        let removed = Set(pruned.split(separator: "\n").filter { $0.hasPrefix("REMOVE ") }.map { String($0.dropFirst(7)) })
        #expect(removed.count >= 3, "\(prune.stdout)")
        // The hits were in manifest order: the first ones are the least recent.
        #expect(removed.contains(Self.md5(recent[0])))
        let kept = expected.filter { !removed.contains(Self.md5($0.key)) }
        Self.expectServed(try Self.read(f.cache, force: true, urls: Array(expected.keys)).withOnly(kept.keys), kept)
    }

    /// `--expiration`: a plain request (no FORCE_CACHE) is served from the
    /// cache without network.
    @Test func expirationMakesPlainRequestsHit() throws {
        _ = try Self.reader()
        let f = try WarmFixture()
        let urls = f.servePNGs(5)
        let run = try f.warm([f.writeManifest(urls), "--layout", "okhttp", "--expiration", "30d"])
        #expect(run.status == 0, "\(run.stderr)")
        let meta = try String(contentsOfFile: f.cache + "/\(Self.md5(urls[0])).0", encoding: .utf8)
        #expect(meta.contains("Cache-Control: max-age=2592000\n"))
        f.server.shutdown()
        var expected: [String: [UInt8]] = [:]
        for url in urls { expected[url] = f.served[String(url.dropFirst(f.server.baseURL.count))] }
        Self.expectServed(try Self.read(f.cache, force: false, urls: urls), expected)
    }

    /// https through nginx: the handshake block makes the entry usable
    /// (CacheStrategy drops an https entry without one).
    @Test func warmOverHTTPSCarriesTheHandshake() throws {
        _ = try Self.reader()
        guard TestTLSServer.isAvailable else {
            try prerequisiteMissing("nginx with http_v2_module and openssl are needed for the https warm")
        }
        let server = try TestTLSServer.start()
        defer { server.shutdown() }
        var expected: [String: [UInt8]] = [:]
        for i in 0..<4 {
            let bytes = TinyPNG.make(width: 3 + i, height: 4, seed: 200 + i)
            try server.setFile("/t\(i).png", bytes: bytes)
            expected[server.url("/t\(i).png")] = bytes
        }
        let dir = makeTempDirectory("imgwarm-okhttp-tls")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/m.txt"
        try (expected.keys.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let run = try BinaryRunner.run(["warm", manifest, "--layout", "okhttp", "--cache", dir + "/c", "--insecure",
                                        "--expiration", "1d", "--progress", "none"])
        #expect(run.status == 0, "\(run.stderr)")
        let meta = try String(contentsOfFile: dir + "/c/\(Self.md5(server.url("/t0.png"))).0", encoding: .utf8)
        let lines = meta.split(separator: "\n", omittingEmptySubsequences: false)
        // ... OkHttp-Received-Millis, "", cipher, 1 peer cert, its base64, 0 local, TLS version, "".
        #expect(lines.count >= 8)
        let tail = Array(lines.suffix(7))
        #expect(tail[0] == "" && tail[1].hasPrefix("TLS_") && tail[2] == "1" && tail[4] == "0", "\(meta)")
        #expect(tail[5] == "TLSv1.3" || tail[5] == "TLSv1.2", "\(meta)")
        #expect(Data(base64Encoded: String(tail[3])) != nil)
        server.shutdown()
        Self.expectServed(try Self.read(dir + "/c", force: true, urls: Array(expected.keys)), expected)
        Self.expectServed(try Self.read(dir + "/c", force: false, urls: Array(expected.keys)), expected)
    }

    @Test func keysOtherThanTheURLAreRefused() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(1)
        let strip = try f.warm([f.writeManifest(urls), "--layout", "okhttp", "--key-strip-query"])
        #expect(strip.status == 2 && strip.stderr.contains("--key-strip-query has no meaning under --layout okhttp"), "\(strip.stderr)")
        let keyed = try f.warm([f.writeManifest([urls[0] + " key=abc"], name: "k.txt"), "--layout", "okhttp"])
        #expect(keyed.stderr.contains("key= has no meaning under --layout okhttp"), "\(keyed.stderr)")
        let creds = try f.warm([f.writeManifest([urls[0].replacingOccurrences(of: "http://", with: "http://u:p@")], name: "c.txt"),
                                "--layout", "okhttp"])
        #expect(creds.stderr.contains("user:password@"), "\(creds.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.cache + "/\(Self.md5(urls[0])).1"))
    }
}

extension OkHttpCacheReader.Reading {
    /// The answers for `urls` only (a pruned entry answers 504).
    func withOnly<S: Sequence>(_ urls: S) -> Self where S.Element == String {
        var copy = self
        let keep = Set(urls)
        copy.answers = answers.filter { keep.contains($0.key) }
        return copy
    }
}
