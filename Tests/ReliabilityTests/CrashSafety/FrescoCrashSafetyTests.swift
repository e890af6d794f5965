import Foundation
import ImgWarmKit
import Testing
import TestSupport

/// `--layout fresco` killed at random moments: two warms on one folder,
/// SIGKILLed (half of the rounds with slow writes), then a prune to a
/// random size. After every round the clean-room reader finds each entry
/// at its path either whole (the served body byte for byte) or absent,
/// never partial, and nothing but entries in the version folder.
@Suite(.serialized) struct FrescoCrashSafetyTests {
    @Test func killedConcurrentWarmsLeaveWholeEntries() throws {
        let reader = try FrescoReader.needed()
        let f = try WarmFixture()
        let (urls, bodies) = AndroidCrashSafetyTests.fixture(f)
        let shas = try AndroidCrashSafetyTests.digests(bodies)
        var expected: [String: String] = [:]
        for (url, sha) in zip(urls, shas) { expected[url] = sha }
        let manifests = [f.writeManifest(Array(urls[0..<60]), name: "a.txt"), f.writeManifest(Array(urls[30...]), name: "b.txt")]
        var rng = SeededRandom(seed: 0xF2E5C0)
        var killed = 0, seen = 0
        func check(_ round: Int) throws -> Int {
            let reading = try reader.read(f.cache, urls: urls)
            var present = 0
            for url in urls {
                guard let entry = reading.entries[url] else {
                    Issue.record("round \(round): no line for \(url)")
                    continue
                }
                if entry.length < 0 { continue }
                #expect(entry.sha256 == expected[url], "round \(round): \(entry.path) is not the served body")
                present += 1
            }
            #expect(reading.order.count == present, "round \(round): files other than entries: \(reading.output)")
            return present
        }
        for round in 0..<10 {
            let delay = 80_000 + Int(rng.next() % 900_001)
            killed += try AndroidCrashSafetyTests.killedRound(f, manifests: manifests, layout: "fresco", delay: delay, slow: round % 2 == 1)
            guard FileManager.default.fileExists(atPath: f.cache + "/v2.ols100.1") else { continue }
            seen += try check(round)
            let limit = 20_000 + Int(rng.next() % 200_000)
            let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "fresco", "--max-size", "\(limit)"])
            #expect(prune.status == 0, "round \(round): \(prune.stdout) \(prune.stderr)")
        }
        for m in manifests {
            let r = try BinaryRunner.run(["warm", m, "--cache", f.cache, "--layout", "fresco", "--progress", "none"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try check(99) == urls.count)
        print("fresco crash safety: \(killed) runs killed in 10 rounds, \(seen) whole entries found by the reader")
        #expect(killed >= 12)
    }
}
