import Foundation
import ImgWarmKit
import Testing
import TestSupport

/// `--layout okhttp` killed at random moments: two warms on one folder,
/// SIGKILLed (half of the rounds with slow writes, so the kill often lands
/// inside a store), then a prune to a random size. After every round OkHttp
/// 3.13's own `Cache` (in an OkHttpClient, origin unused: FORCE_CACHE)
/// answers every URL either from the cache with the served body byte for
/// byte, or with its 504 miss; never a wrong or partial body, never a
/// journal it finds corrupt.
@Suite(.serialized) struct OkHttpCrashSafetyTests {
    @Test func killedConcurrentWarmsLeaveACacheOkHttpServes() throws {
        guard let reader = OkHttpCacheReader.shared else {
            try prerequisiteMissing("javac/java, libokhttp-java or libokio-java not found: reading with OkHttp's Cache did not run")
        }
        let f = try WarmFixture()
        let (urls, bodies) = AndroidCrashSafetyTests.fixture(f)
        let shas = try AndroidCrashSafetyTests.digests(bodies)
        var expected: [String: String] = [:]
        for (url, sha) in zip(urls, shas) { expected[url] = sha }
        let manifests = [f.writeManifest(Array(urls[0..<60]), name: "a.txt"), f.writeManifest(Array(urls[30...]), name: "b.txt")]
        var rng = SeededRandom(seed: 0x0C_4177)
        var killed = 0, served = 0
        func read(_ round: Int) throws -> Int {
            let copy = makeTempDirectory("imgwarm-okhttp-crash")
            defer { try? FileManager.default.removeItem(atPath: copy) }
            try FileManager.default.copyItem(atPath: f.cache, toPath: copy + "/c")
            let reading = try reader.read(copy + "/c", force: true, urls: urls)
            #expect(reading.status == 0 && !reading.output.contains("corrupt"), "round \(round): \(reading.output)")
            var hits = 0
            for url in urls {
                guard let answer = reading.answers[url] else {
                    Issue.record("round \(round): no answer for \(url)")
                    continue
                }
                if answer.status == 504 { continue }  // FORCE_CACHE's miss
                #expect(answer.status == 200 && answer.source == "cache" && answer.sha256 == expected[url],
                        "round \(round): \(url) answered \(answer)")
                hits += 1
            }
            #expect(reading.urls.count == hits, "round \(round): urls() lists \(reading.urls.count), \(hits) served")
            return hits
        }
        for round in 0..<10 {
            let delay = 80_000 + Int(rng.next() % 900_001)
            killed += try AndroidCrashSafetyTests.killedRound(f, manifests: manifests, layout: "okhttp", delay: delay, slow: round % 2 == 1)
            guard FileManager.default.fileExists(atPath: f.cache + "/journal") else { continue }
            served += try read(round)
            let limit = 20_000 + Int(rng.next() % 200_000)
            let prune = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "okhttp", "--max-size", "\(limit)"])
            #expect(prune.status == 0, "round \(round): \(prune.stdout) \(prune.stderr)")
        }
        for m in manifests {
            let r = try BinaryRunner.run(["warm", m, "--cache", f.cache, "--layout", "okhttp", "--progress", "none"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try read(99) == urls.count)
        print("okhttp crash safety: \(killed) runs killed in 10 rounds, \(served) entries served by OkHttp's Cache")
        #expect(killed >= 12)
    }
}
