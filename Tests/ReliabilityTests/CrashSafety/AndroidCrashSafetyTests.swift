import Foundation
import ImgWarmKit
import Testing
import TestSupport

/// Two warms on one Glide/Coil/flutter folder, both killed with
/// SIGKILL at a random moment (half of the rounds with slow writes, so the
/// kill often lands inside an entry's store), then a prune to a random size;
/// after every round the folder must open in a reader nobody here wrote and
/// hold only whole, right entries: OkHttp's DiskLruCache for the journals
/// (a journal it finds corrupt makes it delete the folder, and the test
/// sees that), Python's sqlite3 for flutter's database.
@Suite(.serialized) struct AndroidCrashSafetyTests {
    /// layout, app version, value count (DiskLruCacheWrapper.java:23-24,
    /// Coil 3 RealDiskCache.kt:23-24).
    static let journals: [(String, Int, Int)] = [("glide", 1, 1), ("coil", 3, 2)]

    /// SHA-256 of each body, by sha256sum (no Crypto in this target).
    static func digests(_ bodies: [[UInt8]]) throws -> [String] {
        let dir = makeTempDirectory("imgwarm-bodies")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files: [String] = []
        for (i, body) in bodies.enumerated() {
            let file = dir + "/\(i)"
            FileManager.default.createFile(atPath: file, contents: Data(body))
            files.append(file)
        }
        let tool = try neededTool("sha256sum", for: "digesting the served bodies")
        let out = try #require(runTool(tool, files))
        return out.output.split(separator: "\n").map { String($0.prefix(64)) }
    }

    static func fixture(_ f: WarmFixture) -> (urls: [String], bodies: [[UInt8]]) {
        var urls: [String] = [], bodies: [[UInt8]] = []
        for i in 0..<90 {
            let large = i % 3 == 0
            let bytes = large ? TinyPNG.make(width: 160, height: 160, seed: 70_000 + i)
                              : TinyPNG.make(width: 5 + i % 11, height: 4 + i % 5, seed: 70_000 + i)
            let path = "/img/\(i).png"
            f.server.setFile(path, bytes: bytes, contentType: "image/png", etag: "\"e\(i)\"")
            urls.append(large ? f.server.url("/slow/\(100 + (i * 37) % 400)\(path)") : f.server.url(path))
            bodies.append(bytes)
        }
        return (urls, bodies)
    }

    /// One round: two runs started on the folder, both killed after `delay`.
    static func killedRound(_ f: WarmFixture, manifests: [String], layout: String, delay: Int, slow: Bool) throws -> Int {
        let runs = try manifests.map {
            try BinaryRunner.start(["warm", $0, "--cache", f.cache, "--layout", layout, "-j", "6", "--progress", "none"],
                                   environment: slow ? ["IMGWARM_TEST_SLOW_WRITES": "1500"] : [:])
        }
        usleep(useconds_t(delay))
        var killed = 0
        for run in runs {
            run.signal(SIGKILL)
            let r = run.wait(timeout: 60)
            if r.signalled { killed += 1 } else { #expect(r.status == 0, "ended \(r.status) before the kill: \(r.stderr)") }
        }
        return killed
    }

    @Test(.needs(DiskLruReader.shared != nil, "needs javac, java, libokhttp-java, libokio-java: reading with OkHttp\'s DiskLruCache did not run"),
          arguments: [0, 1])
    func killedConcurrentWarmsLeaveAJournalOkHttpOpens(_ which: Int) throws {
        let (layout, appVersion, valueCount) = Self.journals[which]
        let reader = try #require(DiskLruReader.shared)
        let f = try WarmFixture()
        let (urls, bodies) = Self.fixture(f)
        let shas = try Self.digests(bodies)
        // OkHttp's key -> the body's SHA-256.
        var expected: [String: String] = [:]
        for (url, sha) in zip(urls, shas) { expected[GlideLayout.diskKey(url)] = sha }
        let manifests = [f.writeManifest(Array(urls[0..<60]), name: "a.txt"), f.writeManifest(Array(urls[30...]), name: "b.txt")]
        var rng = SeededRandom(seed: 0x600D_1E + UInt64(which))
        var killed = 0, entriesSeen = 0, dirtyLinesLeft = 0
        for round in 0..<14 {
            let delay = 80_000 + Int(rng.next() % 900_001)
            killed += try Self.killedRound(f, manifests: manifests, layout: layout, delay: delay, slow: round % 2 == 1)
            let journal = (try? String(contentsOfFile: f.cache + "/journal", encoding: .utf8)) ?? ""
            let dirty = journal.split(separator: "\n").filter { $0.hasPrefix("DIRTY ") }.count
            let clean = journal.split(separator: "\n").filter { $0.hasPrefix("CLEAN ") }.count
            dirtyLinesLeft += max(0, dirty - clean)
            // Killed before either run made the folder: nothing to read.
            guard FileManager.default.fileExists(atPath: f.cache + "/journal") else { continue }
            let reading = try Self.readCopy(f.cache, reader, appVersion, valueCount)
            #expect(reading.status == 0 && !reading.stderr.contains("corrupt"), "round \(round): \(reading.stderr)")
            for (key, values) in reading.entries {
                entriesSeen += 1
                #expect(values.count == valueCount)
                #expect(values.last?.sha256 == expected[key], "round \(round), delay \(delay): \(key) is not the served body")
                for v in values { #expect(v.journalLength == v.length, "round \(round): \(key) length differs from its CLEAN line") }
            }
            // A prune to a random size between rounds, not killed.
            let limit = 20_000 + Int(rng.next() % 200_000)
            let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", layout, "--max-size", "\(limit)"])
            #expect(prune.status == 0, "round \(round): \(prune.stdout) \(prune.stderr)")
        }
        // A last pair of runs, not killed, completes the set.
        for m in manifests {
            let r = try BinaryRunner.run(["warm", m, "--cache", f.cache, "--layout", layout, "--progress", "none"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let final = try Self.readCopy(f.cache, reader, appVersion, valueCount)
        #expect(final.entries.count == urls.count, "\(final.stderr)")
        #expect(final.entries.allSatisfy { expected[$0.key] == $0.value.last?.sha256 })
        let tmp = (try? FileManager.default.contentsOfDirectory(atPath: f.cache + "/.imgwarm/tmp")) ?? []
        #expect(tmp.isEmpty, "\(tmp)")
        print("\(layout) crash safety: \(killed) runs killed in 14 rounds, \(dirtyLinesLeft) DIRTY lines without CLEAN left by kills, \(entriesSeen) entries read back by OkHttp")
        #expect(killed >= 18)
    }

    static func readCopy(_ cache: String, _ reader: DiskLruReader, _ appVersion: Int, _ valueCount: Int) throws -> DiskLruReader.Reading {
        let copy = makeTempDirectory("imgwarm-okhttp-copy")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: cache, toPath: copy + "/c")
        return try reader.read(copy + "/c", appVersion: appVersion, valueCount: valueCount)
    }

    @Test(.needsTools("python3", for: "reading the database with Python's sqlite3"))
    func killedConcurrentWarmsLeaveAFlutterDatabaseWithWholeFiles() throws {
        let f = try WarmFixture()
        let (urls, bodies) = Self.fixture(f)
        let shas = try Self.digests(bodies)
        let expected = Dictionary(uniqueKeysWithValues: zip(urls, shas))
        let manifests = [f.writeManifest(Array(urls[0..<60]), name: "a.txt"), f.writeManifest(Array(urls[30...]), name: "b.txt")]
        var rng = SeededRandom(seed: 0xF1A7)
        var killed = 0, rowsChecked = 0
        let check = """
            import hashlib, os, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("PRAGMA integrity_check").fetchone()[0])
            for key, rel, length in db.execute("SELECT key, relativePath, length FROM cacheObject"):
                p = os.path.join(sys.argv[2], rel)
                if os.path.exists(p):
                    data = open(p, "rb").read()
                    print(key, hashlib.sha256(data).hexdigest(), len(data) == length)
                else:
                    print(key, "missing", True)
            """
        // About a third of the rows and their files go before each round
        // (as the app's cleanup would), so that every run has stores to do.
        let thin = """
            import os, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            for _id, rel in db.execute("SELECT _id, relativePath FROM cacheObject WHERE abs(random()) % 3 = 0").fetchall():
                db.execute("DELETE FROM cacheObject WHERE _id = ?", (_id,))
                p = os.path.join(sys.argv[2], rel)
                if os.path.exists(p): os.unlink(p)
            db.commit()
            """
        // At least 12 rounds, and more (up to 36) until 14 runs were killed
        // mid-run: a fast machine finishes some runs before their kill.
        for round in 0..<36 {
            if round >= 12 && killed >= 14 { break }
            if FileManager.default.fileExists(atPath: f.cache + "/libCachedImageData.db") {
                _ = runPython(thin, [f.cache + "/libCachedImageData.db", f.cache + "/libCachedImageData"])
            }
            let delay = 80_000 + Int(rng.next() % 900_001)
            killed += try Self.killedRound(f, manifests: manifests, layout: "flutter", delay: delay, slow: round % 2 == 1)
            guard FileManager.default.fileExists(atPath: f.cache + "/libCachedImageData.db") else { continue }
            let out = try #require(runPython(check, [f.cache + "/libCachedImageData.db", f.cache + "/libCachedImageData"]))
            let lines = out.output.split(separator: "\n").map(String.init)
            #expect(lines.first == "ok", "round \(round): \(out.output)")
            for line in lines.dropFirst() {
                let parts = line.split(separator: " ").map(String.init)
                rowsChecked += 1
                // A row whose file is missing is a miss to flutter
                // (`_fileExists`), which drops the row; never a wrong file.
                #expect(parts[1] == "missing" || parts[1] == expected[parts[0]], "round \(round): \(line)")
                #expect(parts.last == "True", "round \(round): length differs: \(line)")
            }
        }
        for m in manifests {
            let r = try BinaryRunner.run(["warm", m, "--cache", f.cache, "--layout", "flutter", "--progress", "none"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let out = try #require(runPython(check, [f.cache + "/libCachedImageData.db", f.cache + "/libCachedImageData"]))
        let lines = out.output.split(separator: "\n").dropFirst()
        #expect(lines.count == urls.count)
        #expect(lines.allSatisfy { $0.split(separator: " ").count == 3 && !$0.contains("missing") && $0.hasSuffix("True") })
        // Files no row names (a run killed between its rename and its
        // commit) are what prune removes; after it, files == rows.
        let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "flutter", "--dry-run"])
        #expect(prune.status == 0)
        _ = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "flutter"])
        let files = try FileManager.default.contentsOfDirectory(atPath: f.cache + "/libCachedImageData")
        #expect(files.count == urls.count)
        print("flutter crash safety: \(killed) runs killed, \(rowsChecked) rows checked, orphan files before prune: \(prune.stdout.split(separator: "\n").filter { $0.contains("no database row") }.count)")
        #expect(killed >= 14)
    }
}
