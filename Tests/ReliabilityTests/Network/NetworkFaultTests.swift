import Foundation
import Testing
import TestSupport

/// docs/cli-contract.md, `warm`: every entry ends in the right outcome and error
/// class; transient failures are retried (honouring Retry-After) and never
/// enter the failed-URL list, permanent ones do.
@Suite(.serialized) struct NetworkFaultTests {
    struct Expect {
        var outcome: String
        var error: String?
        var status: Int?
        var attempts: Int?
        /// Permanent failures enter the failed-URL list.
        var listed = false
    }

    @Test func tenThousandGoodURLsAmongFaultyOnesAllEndRight() throws {
        let f = try WarmFixture()
        let goodCount = 10_000
        var expected: [String: Expect] = [:]
        var served: [String: [UInt8]] = [:]  // URL → bytes of the good ones
        var lines: [String] = []
        for i in 0..<goodCount {
            let path = "/ok/\(i).png"
            let bytes = TinyPNG.make(width: 1 + i % 6, height: 1 + (i / 6) % 6, seed: 200_000 + i)
            f.server.setFile(path, bytes: bytes, contentType: "image/png")
            let url = f.server.url(path)
            served[url] = bytes
            // Attempts not pinned: on a loaded CI machine one of 10,000 may
            // need its retry; the outcome is what must hold.
            expected[url] = Expect(outcome: "downloaded", error: nil, status: 200, attempts: nil)
            lines.append(url)
        }
        func add(_ path: String, _ e: Expect) {
            let url = f.server.url(path)
            expected[url] = e
            // Spread the faulty entries through the manifest.
            lines.insert(url, at: (lines.count * 7919 + path.count * 131) % lines.count)
        }
        for i in 0..<12 {
            let image = TinyPNG.make(seed: 300_000 + i)
            f.server.setFile("/img/r\(i).png", bytes: image, contentType: "image/png")
            // Past --timeout 2, on every attempt.
            add("/slow/8000/img/r\(i).png?\(i)", Expect(outcome: "failed", error: "timeout", attempts: 2))
            add("/reset?\(i)", Expect(outcome: "failed", error: "network", attempts: 2))
            add("/truncate?\(i)", Expect(outcome: "failed", error: "network", attempts: 2))
            add("/empty-reply?\(i)", Expect(outcome: "failed", error: "network", attempts: 2))
            add("/status/\([500, 502, 503, 504][i % 4])?\(i)", Expect(outcome: "failed", error: "http-status", status: [500, 502, 503, 504][i % 4], attempts: 2))
            // 429 with Retry-After once, then the image: waits and succeeds.
            add("/too-many/1/1/img/r\(i).png", Expect(outcome: "downloaded", status: 200, attempts: 2))
            // 429 every time: a transient failure after the last retry.
            add("/too-many/1/9/img/r\(i).png", Expect(outcome: "failed", error: "http-status", status: 429, attempts: 2))
            add("/flaky/1/img/r\(i).png", Expect(outcome: "downloaded", status: 200, attempts: 2))
            add("/status/404?\(i)", Expect(outcome: "failed", error: "http-status", status: 404, attempts: 1, listed: true))
            add("/status/410?\(i)", Expect(outcome: "failed", error: "http-status", status: 410, attempts: 1, listed: true))
            add("/html?\(i)", Expect(outcome: "failed", error: "bad-image", status: 200, attempts: 1, listed: true))
            // A local limit (--max-bytes), not the image's fault: never remembered (BlockRule).
            add("/huge/3000000?\(i)", Expect(outcome: "failed", error: "too-large", attempts: 1, listed: false))
            add("/huge-length/3000000?\(i)", Expect(outcome: "failed", error: "too-large", attempts: 1, listed: false))
            served[f.server.url("/too-many/1/1/img/r\(i).png")] = image
            served[f.server.url("/flaky/1/img/r\(i).png")] = image
        }
        let manifest = f.writeManifest(lines)
        let report = f.dir + "/report.json", junit = f.dir + "/junit.xml"
        let started = Date()
        let r = try BinaryRunner.run(["warm", manifest, "--cache", f.cache, "-j", "32", "--timeout", "2", "--connect-timeout", "2",
                                      "--retries", "1", "--max-bytes", "1MiB", "--progress", "none",
                                      "--report", report, "--junit", junit], timeout: 240)
        let seconds = Date().timeIntervalSince(started)
        #expect(!r.signalled, "\(r.stderr.suffix(2000))")
        #expect(r.status == 1, "\(r.stderr.suffix(2000))")

        let (entries, totals) = try f.report(report)
        #expect(entries.count == lines.count)
        var seen = Set<String>()
        var mismatches: [String] = []
        for e in entries {
            let url = e["url"] as? String ?? "?"
            seen.insert(url)
            guard let want = expected[url] else { mismatches.append("unexpected entry \(url)"); continue }
            let got = (e["outcome"] as? String, e["error"] as? String, e["status"] as? Int, e["attempts"] as? Int)
            if got.0 != want.outcome || got.1 != want.error
                || (want.status != nil && got.2 != want.status) || (want.attempts != nil && got.3 != want.attempts) {
                mismatches.append("\(url): got \(got), expected \(want) (\(e["reason"] ?? ""))")
                continue
            }
            if want.outcome == "downloaded" {
                // Stored byte for byte where the report says.
                let file = e["file"] as? String ?? ""
                if FileManager.default.contents(atPath: file).map([UInt8].init) != served[url] {
                    mismatches.append("\(url): file \(file) differs from the served image")
                }
            } else if !(e["file"] is NSNull) {
                mismatches.append("\(url): a failed entry has a file")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) wrong: \(mismatches.prefix(10))")
        #expect(seen == Set(expected.keys))
        let downloads = expected.values.filter { $0.outcome == "downloaded" }.count
        #expect(totals["downloaded"] as? Int == downloads)
        #expect(totals["failed"] as? Int == expected.count - downloads)
        #expect(f.cacheFiles().count == downloads)
        #expect(tempFiles(f.cache).isEmpty)

        // Retry-After was honoured: the second attempt came a second later.
        for e in entries where (e["url"] as? String ?? "").contains("/too-many/1/1/") {
            #expect((e["ms"] as? Int ?? 0) >= 900, "\(e)")
        }
        // Permanent failures, and only those, are in the failed-URL list.
        let failed = try BinaryRunner.run(["cache", "failed", "--json", "--cache", f.cache])
        let rows = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(Set(rows.compactMap { $0["url"] as? String }) == Set(expected.filter { $0.value.listed }.keys))
        // The JUnit file has one case per entry.
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.components(separatedBy: "<testcase").count - 1 == lines.count)
        print("network faults: \(lines.count) entries (\(goodCount) good) in \(String(format: "%.1f", seconds)) s")
    }
}
