import Crypto
import Foundation
import Testing
import TestSupport

/// `--layout glide|coil|coil2|flutter` end to end: the real
/// binary warms from the loopback server, then the folder is opened by
/// readers nobody here wrote: OkHttp's DiskLruCache (Debian's
/// libokhttp-java) for the journals, Python's sqlite3 for flutter's
/// database.
@Suite(.serialized) struct AndroidLayoutEndToEndTests {
    struct DiskLru: Sendable, CustomStringConvertible {
        var layout: String
        var appVersion: Int
        var valueCount: Int
        var description: String { layout }
        var imageValue: Int { valueCount - 1 }
    }

    /// DiskLruCacheWrapper.java:23-24; Coil 3 RealDiskCache.kt:23-24; 2.7.0 RealDiskCache.kt:22-23.
    static let diskLruLayouts = [DiskLru(layout: "glide", appVersion: 1, valueCount: 1),
                                 DiskLru(layout: "coil", appVersion: 3, valueCount: 2),
                                 DiskLru(layout: "coil2", appVersion: 1, valueCount: 2)]

    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    /// OkHttp's reading of a copy of `cache` (opening changes a folder: it
    /// may rebuild the journal and drops dead edits).
    static func readWithOkHttp(_ cache: String, _ lib: DiskLru) throws -> DiskLruReader.Reading {
        let reader = try #require(DiskLruReader.shared, "javac, java, libokhttp-java and libokio-java are needed")
        let copy = makeTempDirectory("imgwarm-okhttp-copy") + "/c"
        defer { try? FileManager.default.removeItem(atPath: (copy as NSString).deletingLastPathComponent) }
        try FileManager.default.copyItem(atPath: cache, toPath: copy)
        return try reader.read(copy, appVersion: lib.appVersion, valueCount: lib.valueCount)
    }

    /// Every served image is in OkHttp's reading byte for byte, and nothing else is.
    static func expectReadsBack(_ reading: DiskLruReader.Reading, _ lib: DiskLru, expected: [String: [UInt8]],
                                sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reading.status == 0, "\(reading.stderr)", sourceLocation: sourceLocation)
        #expect(!reading.stderr.contains("corrupt"), "\(reading.stderr)", sourceLocation: sourceLocation)
        #expect(Set(reading.entries.keys) == Set(expected.keys), sourceLocation: sourceLocation)
        for (key, bytes) in expected {
            guard let values = reading.entries[key], values.count == lib.valueCount else {
                Issue.record("\(lib): \(key) not read back", sourceLocation: sourceLocation)
                continue
            }
            let image = values[lib.imageValue]
            #expect(image.length == bytes.count && image.journalLength == bytes.count, sourceLocation: sourceLocation)
            #expect(image.sha256 == sha256(bytes), "\(lib): \(key) differs", sourceLocation: sourceLocation)
            for value in values { #expect(value.journalLength == value.length, sourceLocation: sourceLocation) }
        }
    }

    static var javaAvailable: Bool { DiskLruReader.shared != nil }

    @Test(.needs(javaAvailable, "needs javac, java, libokhttp-java, libokio-java: reading with OkHttp\'s DiskLruCache did not run"),
          arguments: diskLruLayouts)
    func warmHitPruneVerifyAndReadBackWithOkHttp(_ lib: DiskLru) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(40, etag: true)
        let manifest = f.writeManifest(urls)
        let first = try f.warm([manifest, "--layout", lib.layout])
        #expect(first.status == 0, "\(first.stderr)")
        var expected: [String: [UInt8]] = [:]
        for url in urls { expected[Self.sha256(Array(url.utf8))] = f.served[String(url.dropFirst(f.server.baseURL.count))] }
        #expect(expected.count == 40)

        // The journal: the header, then DIRTY and CLEAN per entry.
        let journal = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        let lines = journal.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.prefix(5) == ["libcore.io.DiskLruCache", "1", "\(lib.appVersion)"[...], "\(lib.valueCount)"[...], ""])
        #expect(lines.filter { $0.hasPrefix("DIRTY ") }.count == 40)
        #expect(lines.filter { $0.hasPrefix("CLEAN ") }.count == 40)
        Self.expectReadsBack(try Self.readWithOkHttp(f.cache, lib), lib, expected: expected)

        // The metadata: Coil 3 writes CacheNetworkResponse's record, Coil 2 nothing.
        let key0 = Self.sha256(Array(urls[0].utf8))
        if lib.layout == "coil" {
            let meta = try String(contentsOfFile: f.cache + "/\(key0).0", encoding: .utf8)
            #expect(meta.hasPrefix("200\n"))
            #expect(meta.contains("\ncontent-type:image/png\n"))
            #expect(meta.contains("\netag:\"v0\"\n"))
        } else if lib.layout == "coil2" {
            #expect((try FileManager.default.attributesOfItem(atPath: f.cache + "/\(key0).0")[.size] as? Int) == 0)
        }

        // `cache path` names the image value.
        let path = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", lib.layout, urls[0]])
        #expect(path.status == 0 && path.stdout == f.cache + "/\(key0).\(lib.imageValue)\n", "\(path.stdout) \(path.stderr)")

        // A second run: every entry a hit, each a READ line as Coil's and
        // Glide's `get` writes.
        let report = f.dir + "/r.json"
        let second = try f.warm([manifest, "--layout", lib.layout, "--report", report])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try f.report(report).entries.allSatisfy { ($0["outcome"] as? String) == "cached" })
        let afterHits = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        #expect(afterHits.split(separator: "\n").filter { $0.hasPrefix("READ ") }.count == 40)
        #expect(f.server.requestCount(path: "/img/0.png") == 1)

        // stats and verify see the 40 images only (not the journal, not
        // Coil's metadata).
        let stats = try BinaryRunner.run(["cache", "stats", "--cache", f.cache, "--layout", lib.layout, "--json"])
        let statsJSON = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(statsJSON?["files"] as? Int == 40, "\(stats.stdout) \(stats.stderr)")
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--layout", lib.layout])
        #expect(verify.status == 0 && verify.stdout.contains("checked 40 files: 0 broken"), "\(verify.stdout) \(verify.stderr)")

        // Prune to about half: least recently used first. Read urls[0..<10]
        // again so they are the most recent; they must survive.
        let recent = f.writeManifest(Array(urls[0..<10]), name: "recent.txt")
        #expect(try f.warm([recent, "--layout", lib.layout]).status == 0)
        let total = expected.values.reduce(0) { $0 + $1.count }
            + (lib.layout == "coil" ? urls.reduce(0) { acc, url in
                acc + ((try? FileManager.default.attributesOfItem(atPath: f.cache + "/\(Self.sha256(Array(url.utf8))).0")[.size] as? Int) ?? 0)
            } : 0)
        let limit = total / 2
        let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", lib.layout, "--max-size", "\(limit)"])
        #expect(prune.status == 0, "\(prune.stdout) \(prune.stderr)")
        let pruned = try String(contentsOfFile: f.cache + "/journal", encoding: .utf8)
        let removed = pruned.split(separator: "\n").filter { $0.hasPrefix("REMOVE ") }.map { String($0.dropFirst(7)) }
        #expect(removed.count >= 15 && removed.count <= 25, "\(prune.stdout)")
        for url in urls[0..<10] { #expect(!removed.contains(Self.sha256(Array(url.utf8)))) }
        let kept = expected.filter { !removed.contains($0.key) }
        let reading = try Self.readWithOkHttp(f.cache, lib)
        Self.expectReadsBack(reading, lib, expected: kept)
        let keptSize = reading.entries.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.length } }
        #expect(keptSize <= limit)
        for key in removed { #expect(!FileManager.default.fileExists(atPath: f.cache + "/\(key).\(lib.imageValue)")) }
        #expect(try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--layout", lib.layout]).status == 0)
    }

    /// A folder holding another version's journal is refused (exit 3),
    /// not overwritten: Glide and Coil would delete it whole.
    @Test func aJournalOfAnotherAppVersionIsAnErrorAndKept() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let manifest = f.writeManifest(urls)
        #expect(try f.warm([manifest, "--layout", "coil2"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: f.cache + "/journal"))
        let r = try f.warm([manifest, "--layout", "coil"])
        #expect(r.status == 3, "\(r.stderr)")
        // The folder holds Coil 2's cache: the journal is not opened as Coil 3's.
        #expect(r.stderr.contains("\(f.cache): holds a coil2 cache") && r.stderr.contains("not coil;"), "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.cache + "/journal")) == before)
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--layout", "glide"])
        #expect(verify.status == 3, "\(verify.stderr)")
    }

    /// What a kill between an entry's DIRTY and CLEAN lines leaves: OkHttp
    /// drops that entry (`processJournal` deletes its files) and reads the
    /// rest; the next warm fetches it again and publishes it.
    @Test(.needs(javaAvailable, "needs javac, java, libokhttp-java, libokio-java: reading with OkHttp\'s DiskLruCache did not run"))
    func aDirtyLineWithoutCleanIsAMissThatTheNextWarmRepairs() throws {
        let lib = Self.diskLruLayouts[1]
        let f = try WarmFixture()
        let urls = f.servePNGs(5)
        let manifest = f.writeManifest(urls)
        #expect(try f.warm([manifest, "--layout", lib.layout]).status == 0)
        let key0 = Self.sha256(Array(urls[0].utf8))
        let handle = try #require(FileHandle(forWritingAtPath: f.cache + "/journal"))
        handle.seekToEndOfFile()
        handle.write(Data("DIRTY \(key0)\n".utf8))
        handle.closeFile()
        var expected: [String: [UInt8]] = [:]
        for url in urls { expected[Self.sha256(Array(url.utf8))] = f.served[String(url.dropFirst(f.server.baseURL.count))] }
        Self.expectReadsBack(try Self.readWithOkHttp(f.cache, lib), lib, expected: expected.filter { $0.key != key0 })
        let report = f.dir + "/r.json"
        #expect(try f.warm([manifest, "--layout", lib.layout, "--report", report]).status == 0)
        let outcomes = try f.report(report).entries.map { $0["outcome"] as? String }
        #expect(outcomes == ["downloaded", "cached", "cached", "cached", "cached"])
        Self.expectReadsBack(try Self.readWithOkHttp(f.cache, lib), lib, expected: expected)
    }

    /// Two warms at once on one folder, overlapping, with slow writes:
    /// OkHttp opens the result and reads every entry.
    @Test(.needs(javaAvailable, "needs javac, java, libokhttp-java, libokio-java: reading with OkHttp\'s DiskLruCache did not run"),
          arguments: [diskLruLayouts[0], diskLruLayouts[1]])
    func twoConcurrentWarmsLeaveAJournalOkHttpReads(_ lib: DiskLru) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(120)
        let a = f.writeManifest(Array(urls[0..<80]), name: "a.txt")
        let b = f.writeManifest(Array(urls[40..<120]), name: "b.txt")
        let env = ["IMGWARM_TEST_SLOW_WRITES": "300"]
        let one = try BinaryRunner.start(["warm", a, "--cache", f.cache, "--layout", lib.layout, "--progress", "none"], environment: env)
        let two = try BinaryRunner.start(["warm", b, "--cache", f.cache, "--layout", lib.layout, "--progress", "none"], environment: env)
        let r1 = one.wait(timeout: 120), r2 = two.wait(timeout: 120)
        #expect(r1.status == 0 && r2.status == 0, "\(r1.stderr) \(r2.stderr)")
        var expected: [String: [UInt8]] = [:]
        for url in urls { expected[Self.sha256(Array(url.utf8))] = f.served[String(url.dropFirst(f.server.baseURL.count))] }
        Self.expectReadsBack(try Self.readWithOkHttp(f.cache, lib), lib, expected: expected)
    }

    /// flutter: the database as Python's sqlite3 reads it, every row's file.
    @Test(.needsTools("python3", for: "reading the database with Python's sqlite3"))
    func flutterDatabaseRowsAndFiles() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(30, etag: true)
        let manifest = f.writeManifest(urls + ["\(f.server.url("/img/0.png?c=1")) key=custom-key-0"])
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        let r = try f.warm([manifest, "--layout", "flutter"])
        #expect(r.status == 0, "\(r.stderr)")
        let ended = Int64(Date().timeIntervalSince1970 * 1000)
        let rows = try Self.flutterRows(f.cache)
        #expect(rows.count == 31)
        let byKey = Dictionary(uniqueKeysWithValues: rows.map { ($0.key, $0) })
        for (i, url) in urls.enumerated() {
            let row = try #require(byKey[url], "no row for \(url)")
            #expect(row.url == url)
            #expect(row.relativePath.wholeMatch(of: try Regex("[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\\.png")) != nil,
                    "\(row.relativePath)")
            #expect(row.eTag == "\"v\(i)\"")
            // No Cache-Control from this server: 7 days (file_service.dart:88-89).
            #expect(row.touched >= started && row.touched <= ended)
            #expect(row.validTill - row.touched >= 7 * 86_400_000 - 5_000 && row.validTill - row.touched <= 7 * 86_400_000 + 5_000)
            let bytes = try #require(FileManager.default.contents(atPath: f.cache + "/libCachedImageData/" + row.relativePath))
            #expect([UInt8](bytes) == f.served["/img/\(i).png"])
            #expect(row.length == bytes.count)
        }
        #expect(byKey["custom-key-0"]?.url == f.server.url("/img/0.png?c=1"))
        let path = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", "flutter", urls[3]])
        #expect(path.stdout == f.cache + "/libCachedImageData/" + byKey[urls[3]]!.relativePath + "\n", "\(path.stdout) \(path.stderr)")
        // The database is as sqflite's openDatabase(version: 3) leaves it.
        let schema = try #require(runPython("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("PRAGMA user_version").fetchone()[0])
            print(",".join(r[1] for r in db.execute("PRAGMA table_info(cacheObject)")))
            print(db.execute("PRAGMA integrity_check").fetchone()[0])
            """, [f.cache + "/libCachedImageData.db"]))
        #expect(schema.output == "3\n_id,url,key,relativePath,eTag,validTill,touched,length\nok\n", "\(schema.output)")

        // A second run: hits renew `touched` (cache_store.dart:110-115).
        usleep(20_000)
        let again = try f.warm([manifest, "--layout", "flutter"])
        #expect(again.status == 0)
        let renewed = try Self.flutterRows(f.cache)
        for row in renewed where row.key == urls[5] { #expect(row.touched > byKey[urls[5]]!.touched) }
        #expect(Set(renewed.map(\.relativePath)) == Set(rows.map(\.relativePath)))

        // Prune: rows touched more than a day ago beyond --max-objects go;
        // rows touched within the day stay whatever the count
        // (`getObjectsOverCapacity`, cache_object_provider.dart:147-160).
        let dayAgo = Int64(Date().timeIntervalSince1970 * 1000) - 2 * 86_400_000
        _ = runPython("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("UPDATE cacheObject SET touched = ? - _id * 1000 WHERE _id <= 20", (int(sys.argv[2]),))
            db.commit()
            """, [f.cache + "/libCachedImageData.db", String(dayAgo)])
        let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "flutter", "--max-objects", "5"])
        #expect(prune.status == 0, "\(prune.stdout) \(prune.stderr)")
        let left = try Self.flutterRows(f.cache)
        // 20 old rows: the 5 most recently touched of them stay, plus the 11 recent ones.
        #expect(left.count == 16, "\(prune.stdout)")
        #expect(Set(left.map(\.id)).isSuperset(of: Set(1...5)))
        let files = try FileManager.default.contentsOfDirectory(atPath: f.cache + "/libCachedImageData")
        #expect(Set(files) == Set(left.map(\.relativePath)))
        let tooOld = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "flutter", "--max-age", "1d"])
        #expect(tooOld.status == 0)
        #expect(try Self.flutterRows(f.cache).count == 11)
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--layout", "flutter"])
        #expect(verify.status == 0 && verify.stdout.contains("checked 11 files"), "\(verify.stdout)")
    }

    /// flutter keeps the URL in its database (the key is the URL): a URL
    /// with userinfo is refused unless `key=` gives the app's key, and then
    /// the `url` column holds the URL without its userinfo. A signed URL's
    /// token stays (the app looks the row up by it).
    @Test(.needsTools("python3", for: "reading the database with Python's sqlite3"))
    func flutterRefusesUserinfoUnlessKeyed() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let port = f.server.port
        let manifest = f.writeManifest([
            "http://alice:PW-SECRET-1@127.0.0.1:\(port)/img/0.png",
            "http://bob:PW-SECRET-2@127.0.0.1:\(port)/img/1.png key=app-key-1",
            urls[2] + "?X-Amz-Signature=SIGNED",
        ])
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--layout", "flutter", "--report", report])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("give the app's key with key="), "\(r.stderr)")
        let rows = try f.report(report).entries
        #expect(rows[0]["outcome"] as? String == "failed" && rows[0]["error"] as? String == "invalid-url", "\(rows[0])")
        #expect(rows[1]["outcome"] as? String == "downloaded" && rows[2]["outcome"] as? String == "downloaded", "\(rows)")
        #expect(f.server.requestCount(path: "/img/0.png") == 0)
        let db = try Self.flutterRows(f.cache)
        #expect(db.count == 2)
        let keyed = try #require(db.first { $0.key == "app-key-1" })
        #expect(keyed.url == "http://127.0.0.1:\(port)/img/1.png", "\(keyed.url)")
        #expect(db.contains { $0.key == urls[2] + "?X-Amz-Signature=SIGNED" && $0.url == $0.key })
        let bytes = try Data(contentsOf: URL(fileURLWithPath: f.cache + "/libCachedImageData.db"))
        #expect(bytes.range(of: Data("PW-SECRET".utf8)) == nil)
        // Not a failure of the URL: it is not on the failed-URL list.
        let failed = try BinaryRunner.run(["cache", "failed", "--cache", f.cache, "--layout", "flutter"])
        #expect(!failed.stdout.contains("img/0.png"), "\(failed.stdout)")
    }

    struct FlutterRow: Sendable {
        var id: Int
        var url: String
        var key: String
        var relativePath: String
        var eTag: String?
        var validTill: Int64
        var touched: Int64
        var length: Int
    }

    static func flutterRows(_ cache: String) throws -> [FlutterRow] {
        let out = try #require(runPython("""
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            rows = db.execute("SELECT _id, url, key, relativePath, eTag, validTill, touched, length FROM cacheObject").fetchall()
            print(json.dumps(rows))
            """, [cache + "/libCachedImageData.db"]))
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(out.output.utf8)) as? [[Any]], "\(out.output)")
        return rows.map { r in
            FlutterRow(id: r[0] as! Int, url: r[1] as! String, key: r[2] as! String, relativePath: r[3] as! String,
                       eTag: r[4] as? String, validTill: Int64(r[5] as! Int), touched: Int64(r[6] as! Int), length: r[7] as! Int)
        }
    }
}
