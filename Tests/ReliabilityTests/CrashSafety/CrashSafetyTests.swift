import Foundation
import Testing
import TestSupport

/// docs/cli-contract.md: "A run killed at any moment (SIGKILL) leaves no
/// partial or corrupt file under a cache name; the next run cleans up its
/// temp files and carries on."
@Suite(.serialized) struct CrashSafetyTests {
    @Test func fiftySIGKILLsAtRandomMomentsLeaveNoPartialFileAndTheLastRunCompletes() throws {
        let f = try WarmFixture()
        var rng = SeededRandom(seed: 0x1AB_5EED)
        // A mix: every third image is large (~120 KB, so writes take a
        // while) and served slowly (200-800 ms, so kills land mid-transfer
        // and mid-validation); the rest are tiny and immediate.
        var urls: [String] = []
        var bodies: [[UInt8]] = []
        for i in 0..<150 {
            let large = i % 3 == 0
            let bytes = large ? TinyPNG.make(width: 200, height: 200, seed: 50_000 + i)
                              : TinyPNG.make(width: 5 + i % 11, height: 4 + i % 5, seed: 50_000 + i)
            let path = "/img/\(i).png"
            f.server.setFile(path, bytes: bytes, contentType: "image/png")
            urls.append(large ? f.server.url("/slow/\(200 + (i * 37) % 600)\(path)") : f.server.url(path))
            bodies.append(bytes)
        }
        let expected = Dictionary(uniqueKeysWithValues: zip(try cacheNames(f, urls), bodies))
        #expect(expected.count == urls.count)
        let manifest = f.writeManifest(urls)

        var killedRuns = 0, finishedBeforeKill = 0, killsDuringTransfers = 0
        var killsWithTempFiles = 0, tempFilesLeft = 0, partialTempFiles = 0, filesChecked = 0
        for run in 0..<50 {
            // Remove about a third of the entries (seeded) so that every run
            // has downloads and writes in flight when the kill comes.
            for name in f.cacheFiles() where rng.next() % 3 == 0 {
                unlink(f.cache + "/" + name)
            }
            let delay = 50_000 + Int(rng.next() % 1_450_001)  // 50 ms ... 1.5 s
            // Every other run writes slowly (fault injection: 2 ms per 4 KiB,
            // ~60 ms per large image), so that many kills land while a temp
            // file is half written: the case the temp + rename protocol is for.
            let slow = run % 2 == 1
            let running = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "-j", "8", "--progress", "none"],
                                                 environment: slow ? ["IMGWARM_TEST_SLOW_WRITES": "2000"] : [:])
            usleep(useconds_t(delay))
            if f.server.openRequests > 0 { killsDuringTransfers += 1 }
            running.signal(SIGKILL)
            let r = running.wait(timeout: 60)
            if r.signalled {
                killedRuns += 1
            } else {
                // The run was quicker than the kill: it must have succeeded.
                finishedBeforeKill += 1
                #expect(r.status == 0, "run \(run) (delay \(delay) µs) ended \(r.status) before the kill: \(r.stderr)")
            }
            // A temp file left behind means the kill landed between the
            // temp file's creation and its rename: the case atomicity is for.
            let temps = tempFiles(f.cache)
            if !temps.isEmpty { killsWithTempFiles += 1 }
            tempFilesLeft += temps.count
            // Partial temp files are what the next run must clean.
            for t in temps {
                let size = (try? FileManager.default.attributesOfItem(atPath: f.cache + "/.imgwarm/tmp/" + t)[.size] as? Int) ?? 0
                if !expected.values.contains(where: { $0.count == size }) { partialTempFiles += 1 }
            }
            let audit = auditCache(f.cache, expected: expected)
            filesChecked += audit.whole
            #expect(audit.problems.isEmpty, "run \(run), kill after \(delay) µs: \(audit.problems.prefix(5))")
        }

        // The last run, not killed, finishes the set and cleans the temp
        // files of the killed ones.
        let final = try f.warm([manifest, "-j", "8"])
        #expect(final.status == 0, "\(final.stderr)")
        let audit = auditCache(f.cache, expected: expected)
        #expect(audit.problems.isEmpty, "\(audit.problems.prefix(5))")
        #expect(audit.whole == urls.count)
        #expect(tempFiles(f.cache).isEmpty, "\(tempFiles(f.cache))")
        // The state store survived 50 kills.
        let failed = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(failed.status == 0, "\(failed.stderr)")
        #expect(failed.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !failed.stdout.contains("http"))
        #expect(sqliteIntegrity(f.cache + "/.imgwarm/state.sqlite") == "ok")
        print("crash safety: \(killedRuns) runs killed (\(killsDuringTransfers) with requests in flight, \(killsWithTempFiles) with temp files left = mid-write, \(tempFilesLeft) temp files in all, \(partialTempFiles) of them partial), \(finishedBeforeKill) finished before the kill, \(filesChecked) cache files checked byte for byte")
        // Most kills must actually interrupt work, or the test proves nothing.
        #expect(killedRuns >= 35)
        #expect(killsDuringTransfers >= 20)
        // And the slow-write runs really were cut mid-write several times.
        #expect(killsWithTempFiles >= 5)
        #expect(partialTempFiles >= 5)
    }
}
