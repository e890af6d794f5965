import Foundation
import Testing
import TestSupport

/// docs/cli-contract.md: "Two `warm` runs and a `prune` may run at once on one cache:
/// no crash, no partial file, no lost state."
@Suite(.serialized) struct ConcurrencyTests {
    /// `cache prune` when this build has it (it lands from another branch),
    /// else `cache clear` (entries only), the other command that removes
    /// entries under running warms.
    static func removerArguments(cache: String) throws -> [String] {
        let help = try BinaryRunner.run(["cache", "--help"])
        if help.stdout.contains("prune") {
            // A small size forces a trim of most of the cache each time.
            return ["cache", "prune", "--max-size", "40k", "--cache", cache]
        }
        return ["cache", "clear", "--cache", cache]
    }

    /// Runs that start together on a new cache all create the state
    /// database at once. (They raced in GRDB's migrator: the loser failed
    /// with "UNIQUE constraint failed: grdb_migrations.identifier", exit 3.)
    @Test func warmsStartingTogetherOnANewCacheAllSucceed() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(3))
        var failures: [String] = []
        for round in 0..<10 {
            let cache = f.dir + "/fresh-\(round)"
            try FileManager.default.createDirectory(atPath: cache + "/.imgwarm", withIntermediateDirectories: true)
            let runs = try (0..<6).map { _ in
                try BinaryRunner.start(["warm", manifest, "--cache", cache, "--progress", "none"])
            }
            for r in runs.map({ $0.wait(timeout: 60) }) where r.status != 0 || r.signalled {
                failures.append("round \(round): exit \(r.status): \(r.stderr)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of 60 runs failed: \(failures.prefix(3))")
    }

    @Test func twoWarmsAndARemoverAtOnceKeepFilesWholeAndTheStateIntact() throws {
        let f = try WarmFixture()
        var urls: [String] = []
        var bodies: [[UInt8]] = []
        for i in 0..<200 {
            let bytes = TinyPNG.make(width: 10 + i % 40, height: 10 + i % 30, seed: 70_000 + i)
            let path = "/img/\(i).png"
            f.server.setFile(path, bytes: bytes, contentType: "image/png")
            // Some slow ones keep both runs busy while the remover runs.
            urls.append(i % 5 == 0 ? f.server.url("/slow/60\(path)") : f.server.url(path))
            bodies.append(bytes)
        }
        let expected = Dictionary(uniqueKeysWithValues: zip(try cacheNames(f, urls), bodies))
        // Permanent failures, some in both manifests: they must all end in
        // the failed-URL list however the two runs' commits interleave.
        let missingA = (0..<10).map { f.server.url("/missing/a\($0).png") }
        let missingB = (0..<10).map { f.server.url("/missing/b\($0).png") }
        let missingShared = (0..<10).map { f.server.url("/missing/s\($0).png") }
        // Overlapping manifests: 60..<140 in both.
        let manifestA = f.writeManifest(Array(urls[0..<140]) + missingA + missingShared, name: "a.txt")
        let manifestB = f.writeManifest(Array(urls[60..<200]).reversed() + missingShared + missingB, name: "b.txt")
        let remover = try Self.removerArguments(cache: f.cache)
        // The cache folder exists from the start, as on a machine that runs
        // these from cron (`cache prune` refuses a folder that does not
        // exist, which is not what this test is about).
        try FileManager.default.createDirectory(atPath: f.cache, withIntermediateDirectories: true)
        let usesPrune = remover[1] == "prune"
        print("concurrency: concurrent remover is `imgwarm \(remover[0]) \(remover[1])`\(usesPrune ? "" : " (no `cache prune` in this build)")")

        for round in 0..<5 {
            let reportA = f.dir + "/a-\(round).json", reportB = f.dir + "/b-\(round).json"
            let common = ["--cache", f.cache, "-j", "8", "--progress", "none", "--max-failures", "100"]
            let a = try BinaryRunner.start(["warm", manifestA, "--report", reportA] + common)
            let b = try BinaryRunner.start(["warm", manifestB, "--report", reportB] + common)
            // The remover runs several times while both warms write.
            var removerRuns = 0
            while a.process.isRunning || b.process.isRunning {
                let r = try BinaryRunner.run(remover, timeout: 60)
                #expect(r.status == 0 && !r.signalled, "round \(round): \(remover) ended \(r.status): \(r.stderr)")
                removerRuns += 1
                if removerRuns >= 20 { break }
                usleep(30_000)
            }
            let ra = a.wait(timeout: 120), rb = b.wait(timeout: 120)
            for (name, r) in [("A", ra), ("B", rb)] {
                #expect(!r.signalled, "round \(round): warm \(name) crashed: \(r.stderr)")
                #expect(r.status == 0, "round \(round): warm \(name) ended \(r.status): \(r.stderr)")
                #expect(!r.stderr.contains("cannot record state"), "round \(round): \(r.stderr)")
            }
            #expect(removerRuns >= 1)
            let audit = auditCache(f.cache, expected: expected)
            #expect(audit.problems.isEmpty, "round \(round): \(audit.problems.prefix(5))")
            #expect(tempFiles(f.cache).isEmpty, "round \(round): \(tempFiles(f.cache))")
            // Every entry ended as it should: images downloaded or cached
            // (never failed), the missing ones failed or blocked.
            for report in [reportA, reportB] {
                for e in try f.report(report).entries {
                    let url = e["url"] as? String ?? ""
                    let outcome = e["outcome"] as? String ?? ""
                    if url.contains("/missing/") {
                        #expect(outcome == "failed" || outcome == "blocked", "round \(round): \(url) \(outcome)")
                    } else {
                        #expect(outcome == "downloaded" || outcome == "cached", "round \(round): \(url) \(outcome) \(e["reason"] ?? "")")
                    }
                }
            }
        }

        // No lost state: the failed-URL list holds exactly the missing URLs.
        let failed = try BinaryRunner.run(["cache", "failed", "--json", "--cache", f.cache])
        #expect(failed.status == 0, "\(failed.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(Set(rows.compactMap { $0["url"] as? String }) == Set(missingA + missingB + missingShared))
        let stats = try BinaryRunner.run(["cache", "stats", "--json", "--cache", f.cache])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("\"failed_urls\" : 30"), "\(stats.stdout)")
        #expect(sqliteIntegrity(f.cache + "/.imgwarm/state.sqlite") == "ok")
        // And the cache can be completed afterwards.
        let again = try f.warm([manifestA, manifestB, "--max-failures", "100"])
        #expect(again.status == 0, "\(again.stderr)")
        let audit = auditCache(f.cache, expected: expected)
        #expect(audit.problems.isEmpty)
        #expect(audit.whole == urls.count)
    }
}
