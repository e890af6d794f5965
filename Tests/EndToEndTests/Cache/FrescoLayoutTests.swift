import Crypto
import Foundation
import Testing
import TestSupport

/// `--layout fresco` end to end: warms from loopback servers (http, and
/// https through nginx), then the clean-room reader
/// (`Tests/AndroidReader/FrescoRead.java`, Java's own String.hashCode,
/// SHA-1 and Base64) finds every entry at its path, and prune's evictions
/// follow the reader's mtime order.
@Suite(.serialized) struct FrescoLayoutEndToEndTests {
    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    static func setMtime(_ path: String, _ seconds: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path)
    }

    @Test func warmHitPruneAndReadBack() throws {
        let reader = try FrescoReader.needed()
        let f = try WarmFixture()
        let urls = f.servePNGs(30)
        let run = try f.warm([f.writeManifest(urls), "--layout", "fresco"])
        #expect(run.status == 0, "\(run.stderr)")
        var expected: [String: [UInt8]] = [:]
        for url in urls { expected[url] = f.served[String(url.dropFirst(f.server.baseURL.count))] }
        var reading = try reader.read(f.cache, urls: urls)
        for (url, bytes) in expected {
            let entry = reading.entries[url]
            #expect(entry?.length == bytes.count && entry?.sha256 == Self.sha256(bytes), "\(url): \(reading.output)")
        }
        #expect(reading.order.count == 30)
        // Shard folders are integers (Fresco <= 3.6, React Native's), and
        // `cache path` names the reader's path.
        let path = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", "fresco", urls[0]])
        #expect(path.stdout == f.cache + "/" + (reading.entries[urls[0]]?.path ?? "?") + "\n", "\(path.stdout) \(path.stderr)")
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--layout", "fresco"])
        #expect(verify.status == 0 && verify.stdout.contains("checked 30 files: 0 broken"), "\(verify.stdout) \(verify.stderr)")

        // Dates: every file a day old, the first five five days old, one
        // three hours in the future. A hit renews the mtime (Fresco's touch).
        let now = Date().timeIntervalSince1970
        for (i, url) in urls.enumerated() {
            let file = f.cache + "/" + (reading.entries[url]?.path ?? "")
            try Self.setMtime(file, i < 5 ? now - 5 * 86_400 : i == 29 ? now + 3 * 3600 : now - 86_400 + Double(i))
        }
        let hit = try f.warm([f.writeManifest([urls[1]], name: "hit.txt"), "--layout", "fresco"])
        #expect(hit.status == 0)
        let touched = try FileManager.default.attributesOfItem(atPath: f.cache + "/" + (reading.entries[urls[1]]?.path ?? ""))[.modificationDate] as? Date
        #expect((touched?.timeIntervalSince1970 ?? 0) > now - 60)
        reading = try reader.read(f.cache, urls: urls)
        #expect(reading.order.first == reading.entries[urls[29]]?.path, "the future mtime goes first")

        // Prune to half: what goes is the head of the reader's order.
        let total = expected.values.reduce(0) { $0 + $1.count }
        let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "fresco", "--max-size", "\(total / 2)", "--json"])
        #expect(prune.status == 0, "\(prune.stdout) \(prune.stderr)")
        let after = try reader.read(f.cache, urls: urls)
        let removed = reading.order.filter { !after.order.contains($0) }
        #expect(!removed.isEmpty && Array(reading.order.prefix(removed.count)) == removed, "\(prune.stdout)")
        #expect(!removed.contains(reading.entries[urls[1]]?.path ?? ""))
        let kept = after.order.compactMap { p in expected.first { reading.entries[$0.key]?.path == p }?.value.count }.reduce(0, +)
        #expect(kept <= total / 2 * 9 / 10 + 1000 && kept > 0)
    }

    /// `DefaultDiskStorage.getShardFileInfo`: a `.cnt` file outside its own
    /// shard folder is no entry to Fresco (not counted toward the size, not
    /// evicted): prune neither counts nor removes it.
    @Test func aResourceFileInAnotherShardIsNoEntry() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(4)
        #expect(try f.warm([f.writeManifest(urls), "--layout", "fresco"]).status == 0)
        let version = f.cache + "/v2.ols100.1"
        let shards = try FileManager.default.contentsOfDirectory(atPath: version).sorted()
        let first = try #require(shards.first)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: version + "/" + first).first)
        let other = (0..<100).map(String.init).first { !shards.contains($0) }!
        try FileManager.default.createDirectory(atPath: version + "/" + other, withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: version + "/" + first + "/" + name, toPath: version + "/" + other + "/" + name)
        let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "fresco", "--max-size", "1", "--json"])
        #expect(prune.status == 0, "\(prune.stdout) \(prune.stderr)")
        #expect(prune.stdout.contains("\"kept_files\": 0") && prune.stdout.contains("\"removed_files\": 3"), "\(prune.stdout)")
        #expect(FileManager.default.fileExists(atPath: version + "/" + other + "/" + name))
    }

    @Test func frescoVersionNamesShardsAndIsDetected() throws {
        let reader = try FrescoReader.needed()
        let f = try WarmFixture()
        let urls = f.servePNGs(6)
        #expect(try f.warm([f.writeManifest(Array(urls[0..<3])), "--layout", "fresco", "--fresco-version", "3.7.0"]).status == 0)
        // The next run reads the style from the folder.
        #expect(try f.warm([f.writeManifest(Array(urls[3...]), name: "b.txt"), "--layout", "fresco"]).status == 0)
        let reading = try reader.read(f.cache, decimalShards: true, urls: urls)
        for url in urls { #expect((reading.entries[url]?.length ?? -1) > 0, "\(reading.output)") }
        #expect(reading.order.allSatisfy { $0.split(separator: "/")[1].hasSuffix(".0") })
        let bad = try f.warm([f.writeManifest(urls, name: "c.txt"), "--layout", "glide", "--fresco-version", "3.7"])
        #expect(bad.status == 2)
    }

    @Test func warmOverHTTPS() throws {
        let reader = try FrescoReader.needed()
        guard TestTLSServer.isAvailable else {
            try prerequisiteMissing("nginx with http_v2_module and openssl are needed for the https warm")
        }
        let server = try TestTLSServer.start()
        defer { server.shutdown() }
        var expected: [String: [UInt8]] = [:]
        for i in 0..<4 {
            let bytes = TinyPNG.make(width: 3 + i, height: 5, seed: 300 + i)
            try server.setFile("/f\(i).png", bytes: bytes)
            expected[server.url("/f\(i).png")] = bytes
        }
        let dir = makeTempDirectory("imgwarm-fresco-tls")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/m.txt"
        try (expected.keys.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let run = try BinaryRunner.run(["warm", manifest, "--layout", "fresco", "--cache", dir + "/image_cache", "--insecure", "--progress", "none"])
        #expect(run.status == 0, "\(run.stderr)")
        let reading = try reader.read(dir + "/image_cache", urls: Array(expected.keys))
        for (url, bytes) in expected { #expect(reading.entries[url]?.sha256 == Self.sha256(bytes), "\(reading.output)") }
    }
}
