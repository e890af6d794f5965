import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// The options that make `warm` drivable from CI and cron.
@Suite(.serialized) struct WarmCITests {
    @Test func junitParsesBackWithOneCasePerEntryAndFailuresCarryTheReason() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let m1 = f.writeManifest([urls[0], urls[1], f.server.url("/status/404")], name: "one.txt")
        let m2 = f.writeManifest([urls[2], f.server.url("/html"), "gopher://x/y"], name: "two.txt")
        let junit = f.dir + "/junit.xml"
        let r = try f.warm([m1, m2, "--junit", junit])
        #expect(r.status == 1)
        let doc = try XMLDocument(contentsOf: URL(fileURLWithPath: junit), options: [])
        let root = try #require(doc.rootElement())
        #expect(root.name == "testsuites")
        #expect(root.attribute(forName: "tests")?.stringValue == "6")
        #expect(root.attribute(forName: "failures")?.stringValue == "3")
        let suites = root.elements(forName: "testsuite")
        #expect(suites.map { $0.attribute(forName: "name")?.stringValue } == [m1, m2])
        let cases = suites.flatMap { $0.elements(forName: "testcase") }
        #expect(cases.count == 6)
        let failures = cases.compactMap { $0.elements(forName: "failure").first }
        #expect(failures.map { $0.attribute(forName: "type")?.stringValue } == ["http-status", "bad-image", "invalid-url"])
        #expect(failures[0].attribute(forName: "message")?.stringValue?.contains("HTTP 404") == true)
        #expect(failures[1].stringValue?.contains("reason:") == true)
    }

    /// A blocked entry is missing from the cache: the second run of a
    /// manifest with a 404 fails too, and JUnit says when it failed and how
    /// to fetch it. `--retry-from` fetches the failed entries again.
    @Test func blockedEntriesFailTheSecondRunAndJUnit() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let manifest = f.writeManifest(urls + [f.server.url("/status/404")])
        let junit = f.dir + "/junit.xml", report = f.dir + "/r.json"
        #expect(try f.warm([manifest, "--report", report]).status == 1)
        let second = try f.warm([manifest, "--junit", junit])
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stdout.contains("1 blocked (failed before: --retry-failed fetches them)"), "\(second.stdout)")
        #expect(f.server.requestCount(path: "/status/404") == 1)
        let doc = try XMLDocument(contentsOf: URL(fileURLWithPath: junit), options: [])
        let root = try #require(doc.rootElement())
        #expect(root.attribute(forName: "failures")?.stringValue == "1")
        #expect(root.attribute(forName: "skipped")?.stringValue == "0")
        let failure = try #require(root.elements(forName: "testsuite").flatMap { $0.elements(forName: "testcase") }
            .compactMap { $0.elements(forName: "failure").first }.first)
        #expect(failure.attribute(forName: "type")?.stringValue == "blocked")
        let message = failure.attribute(forName: "message")?.stringValue ?? ""
        #expect(message.contains("failed at 20") && message.contains("http-status (HTTP 404)") && message.contains("--retry-failed"), "\(message)")
        #expect(failure.stringValue?.contains("reason: HTTP 404") == true, "\(failure.stringValue ?? "")")

        // --retry-from implies --retry-failed: the entry is requested again.
        let retried = try f.warm(["--retry-from", report])
        #expect(retried.status == 1, "\(retried.stderr)")
        #expect(f.server.requestCount(path: "/status/404") == 2)
    }

    /// curl's habits: a URL as an argument, -j8, -H, -A, --retry,
    /// durations with units.
    @Test func urlArgumentsAndCurlShortOptions() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let r = try f.warm([urls[0], urls[1], "-j8", "-H", "X-Team: imaging", "-A", "warmer/1", "--retry", "1",
                            "--timeout", "5s", "--connect-timeout", "1min"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.cacheFiles().count == 2)
        let headers = f.server.lastRequestHeaders(path: "/img/1.png")
        #expect(headers?["x-team"] == "imaging" && headers?["user-agent"] == "warmer/1", "\(headers ?? [:])")
        // -j0 is still checked after the split.
        let refused = try f.warm(["-j0", urls[0]])
        #expect(refused.status == 2 && refused.stderr.contains("--concurrency"), "\(refused.stderr)")
    }

    /// Units that would mislead on a deleting command are refused with the
    /// spelling to use.
    @Test func ambiguousDurationsAreRefused() throws {
        let f = try WarmFixture()
        for value in ["1M", "1mo", "1y"] {
            let r = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--max-age", value])
            #expect(r.status == 2, "\(value): \(r.stderr)")
            #expect(r.stderr.contains("1min") && r.stderr.contains("30d"), "\(value): \(r.stderr)")
        }
        let r = try f.warm([f.server.url("/img/0.png"), "--timeout", "1M"])
        #expect(r.status == 2 && r.stderr.contains("30d"), "\(r.stderr)")
    }

    /// Output files are checked before the first request: exit 2, and the
    /// server sees nothing.
    @Test func unwritableOutputPathsFailBeforeAnyRequest() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2))
        for args in [["--report", f.dir + "/nodir/r.json"], ["--junit", f.dir], ["--metrics", f.dir + "/missing/m.prom"],
                     ["--report", f.dir + "/"]] {
            let r = try f.warm([manifest] + args)
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains(args[0]) && r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
        #expect(f.server.totalRequests == 0)
        #expect(f.cacheFiles().isEmpty)
    }

    @Test func metricsAreValidPrometheusTextAndCountOutcomes() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(4)
        let manifest = f.writeManifest(urls + [f.server.url("/status/404")])
        let metrics = f.dir + "/imgwarm.prom"
        #expect(try f.warm([manifest, "--metrics", metrics]).status == 1)
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        var samples: [String: Double] = [:]
        var typed = Set<String>()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 4 && ["gauge", "counter"].contains(String(parts[3])))
                typed.insert(String(parts[2]))
                continue
            }
            if line.hasPrefix("#") { continue }
            // name{labels} value — every sample belongs to a declared family.
            let space = try #require(line.lastIndex(of: " "))
            let series = String(line[..<space])
            let name = String(series.prefix { $0 != "{" })
            #expect(typed.contains(name), "\(name)")
            #expect(name.allSatisfy { $0.isLetter || $0 == "_" })
            samples[series.replacingOccurrences(of: "cache=\"\(f.cache)\",", with: "").replacingOccurrences(of: "{cache=\"\(f.cache)\"}", with: "")] = Double(line[line.index(after: space)...])
        }
        #expect(samples["imgwarm_entries{outcome=\"downloaded\"}"] == 4)
        #expect(samples["imgwarm_entries{outcome=\"failed\"}"] == 1)
        #expect(samples["imgwarm_errors{class=\"http-status\"}"] == 1)
        #expect((samples["imgwarm_downloaded_bytes"] ?? 0) > 0)
        // A failed run keeps no success timestamp it never had...
        #expect(samples["imgwarm_last_success_timestamp_seconds"] == nil)
        // ...and a successful one sets it; a later failure carries it over.
        #expect(try f.warm([manifest, "--metrics", metrics, "--max-failures", "1"]).status == 0)
        let ok = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(ok.contains("imgwarm_last_success_timestamp_seconds{"))
        #expect(try f.warm([manifest, "--metrics", metrics, "--retry-failed"]).status == 1)
        #expect(try String(contentsOfFile: metrics, encoding: .utf8).contains("imgwarm_last_success_timestamp_seconds{"))
    }

    /// The reference checker of the text format agrees: `promtool check
    /// metrics` (scripts/setup.sh installs it).
    @Test(.needsTools("promtool", for: "promtool check metrics"))
    func metricsPassPromtoolCheck() throws {
        let promtool = try neededTool("promtool", for: "promtool check metrics")
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2) + [f.server.url("/status/404")])
        let metrics = f.dir + "/imgwarm.prom"
        #expect(try f.warm([manifest, "--metrics", metrics]).status == 1)
        let check = Process()
        check.executableURL = URL(fileURLWithPath: promtool)
        check.arguments = ["check", "metrics"]
        check.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: metrics))
        let out = Pipe()
        check.standardOutput = out
        check.standardError = out
        try check.run()
        check.waitUntilExit()
        let said = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(check.terminationStatus == 0 && said.isEmpty, "promtool: \(said)")
    }

    @Test func dryRunMakesNoRequestAndLeavesNoTrace() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(5)
        let manifest = f.writeManifest(urls)
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--dry-run", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("5 to download"))
        #expect(f.server.totalRequests == 0)
        #expect(!FileManager.default.fileExists(atPath: f.cache))
        let entries = try f.report(report).entries
        #expect(entries.allSatisfy { $0["outcome"] as? String == "would-download" })

        // After a real run, a dry run reports them cached.
        #expect(try f.warm([manifest]).status == 0)
        let r2 = try f.warm([manifest, "--dry-run"])
        #expect(r2.stdout.contains("5 cached"))
        #expect(f.server.totalRequests == 5)
    }

    @Test func threeShardsCoverTheManifestExactlyOnce() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(90)
        let manifest = f.writeManifest(urls)
        var counts: [Int] = []
        for k in 1...3 {
            let report = f.dir + "/shard\(k).json"
            #expect(try f.warm([manifest, "--shard", "\(k)/3", "--report", report]).status == 0)
            counts.append(try f.report(report).entries.count)
        }
        #expect(counts.reduce(0, +) == 90)
        #expect(counts.allSatisfy { $0 >= 15 })
        #expect(f.server.totalRequests == 90)
        #expect(f.cacheFiles().count == 90)
        for path in f.served.keys { #expect(f.server.requestCount(path: path) == 1) }
        // --shards takes K from JOB_COMPLETION_INDEX (0-based).
        let r = try f.warm([manifest, "--shards", "3", "--dry-run"], environment: ["JOB_COMPLETION_INDEX": "1"])
        #expect(r.stdout.contains("\(counts[1]) entries"))
        let bad = try f.warm([manifest, "--shards", "3"], environment: ["JOB_COMPLETION_INDEX": "3"])
        #expect(bad.status == 2)
    }

    @Test func budgetStopsFetchingHighestPriorityFirst() throws {
        let f = try WarmFixture()
        var lines: [String] = []
        for i in 0..<10 {
            let bytes = TinyPNG.make(width: 60, height: 60, seed: i)  // ~10.9 KB each → 12 KiB allocated
            f.server.setFile("/b/\(i).png", bytes: bytes, contentType: "image/png")
            lines.append(f.server.url("/b/\(i).png") + (i >= 7 ? " priority=high" : ""))
        }
        let manifest = f.writeManifest(lines)
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--budget", "40KiB", "-j", "1", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        let entries = try f.report(report).entries
        let downloaded = entries.filter { $0["outcome"] as? String == "downloaded" }.map { $0["url"] as! String }
        #expect(downloaded.count == 3)
        #expect(Set(downloaded) == Set((7..<10).map { f.server.url("/b/\($0).png") }))
        #expect(entries.filter { $0["error"] as? String == "budget" }.count == 7)
        let stats = try BinaryRunner.run(["cache", "stats", "--json", "--cache", f.cache])
        let json = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as! [String: Any]
        #expect((json["allocated_bytes"] as! Int) <= 40 * 1024)
    }

    @Test func retryFromRefetchesOnlyTheFailures() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(5)
        let manifest = f.writeManifest(urls + [f.server.url("/flaky/1/img/0.png"), f.server.url("/status/500")])
        let report = f.dir + "/r.json"
        let first = try f.warm([manifest, "--retries", "0", "--report", report])
        #expect(first.status == 1)
        #expect(try f.report(report).totals["failed"] as? Int == 2)
        let before = f.server.totalRequests
        let report2 = f.dir + "/r2.json"
        let second = try f.warm(["--retry-from", report, "--retries", "0", "--report", report2])
        #expect(second.status == 1)  // /status/500 still fails
        #expect(f.server.totalRequests == before + 2)
        let entries = try f.report(report2).entries
        #expect(entries.count == 2)
        #expect(entries.map { $0["outcome"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["downloaded", "failed"])
    }

    @Test func keyStripQueryStoresUnderTheQuerylessKey() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(1)
        let manifest = f.writeManifest([urls[0] + "?sig=abc&exp=1"])
        #expect(try f.warm([manifest, "--key-strip-query"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: try f.cachePath(urls[0])))
        #expect(!FileManager.default.fileExists(atPath: try f.cachePath(urls[0] + "?sig=abc&exp=1")))
    }
}
