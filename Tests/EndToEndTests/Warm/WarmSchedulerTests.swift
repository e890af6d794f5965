import Foundation
import Testing
import TestSupport

/// The scheduler against the loopback server (HTTP/1.1 only; it adds
/// latency with /slow and throttles with /throttle): the caps and rates it
/// promises, measured on the server's side. Rates and caps, never
/// wall-clock speed.
@Suite("Warm scheduler", .serialized)
struct WarmSchedulerTests {
    /// `n` distinct PNGs of about `side` x `side` x 3 bytes behind `route`.
    private func serve(_ f: WarmFixture, _ n: Int, route: String, side: Int = 6) -> [String] {
        (0..<n).map { i in
            let path = "/img/\(i).png"
            f.server.setFile(path, bytes: TinyPNG.make(width: side, height: side, seed: i), contentType: "image/png")
            return f.server.url(route + path)
        }
    }

    /// An HTTP/1.1-only origin 50 ms away: at the defaults (-j auto) never
    /// more than 6 connections to it, and the cap is used; a lower
    /// --host-connections holds too.
    @Test func http1OriginKeepsThePoliteConnectionCap() throws {
        let f = try WarmFixture()
        let urls = serve(f, 120, route: "/slow/50")
        let r = try f.warm([f.writeManifest(urls), "--report", f.dir + "/r.json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.cacheFiles().count == 120)
        #expect(f.server.maxOpenConnections <= 6, "connections \(f.server.maxOpenConnections)")
        #expect(f.server.maxConcurrentRequests >= 4, "requests at once \(f.server.maxConcurrentRequests)")
        let g = try WarmFixture()
        let more = serve(g, 40, route: "/slow/20")
        let r2 = try g.warm([g.writeManifest(more), "--host-connections", "2"])
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(g.server.maxOpenConnections <= 2, "connections \(g.server.maxOpenConnections)")
        #expect(g.server.maxConcurrentRequests == 2)
    }

    /// `--rate 50/s` over 3 s: the server sees 50 requests a second within
    /// 5% (the burst of a tenth of a second included); the per-host form
    /// wins over the general one.
    @Test func requestRateHoldsWithinFivePercent() throws {
        for (args, rate) in [(["--rate", "50/s"], 50.0), (["--rate", "200/s", "--rate", "127.0.0.1=40/s"], 40.0)] {
            let f = try WarmFixture()
            let n = Int(rate * 3)
            let urls = serve(f, n, route: "")
            let r = try f.warm([f.writeManifest(urls)] + args)
            #expect(r.status == 0, "\(r.stderr)")
            let times = f.server.requestTimes()
            try #require(times.count == n)
            let measured = Double(n - 1) / (times.last! - times.first!)
            #expect(abs(measured / rate - 1) <= 0.05, "\(args): \(measured) requests/s")
        }
    }

    /// `--rate HOST=` counts the host each request goes to: entries on
    /// `localhost` that redirect to `127.0.0.1` reach it at 1 a second
    /// (the bucket's burst is one request). The wait for the token is not the server's time: with
    /// `--timeout 2` the last hop, waiting about 5 s, still succeeds.
    @Test func requestRateCountsTheHostARedirectGoesTo() throws {
        let f = try WarmFixture()
        let n = 6
        let urls = serve(f, n, route: "").map { target in
            "http://localhost:\(f.server.port)/redirect-to?url="
                + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        }
        let r = try f.warm([f.writeManifest(urls), "--rate", "127.0.0.1=1/s", "--timeout", "2", "--retries", "0"])
        #expect(r.status == 0, "\(r.stderr)")
        let log = f.server.requestLog()
        let times = f.server.requestTimes()
        try #require(log.count == times.count)
        let hops = zip(log, times).filter { $0.0.hasPrefix("/img/") }.map(\.1)
        let redirects = zip(log, times).filter { $0.0.hasPrefix("/redirect-to") }.map(\.1)
        try #require(hops.count == n && redirects.count == n, "\(log)")
        // n requests at 1/s with a burst of one: the last at least n - 1
        // seconds after the first (a little clock slack).
        #expect(hops.last! - hops.first! >= Double(n - 1) * 0.98, "\(hops)")
    }

    /// A 429 to a redirect hop cuts the rate of the host that answered it:
    /// entries on one server (`localhost`) redirect to another
    /// (`127.0.0.1`, another port) that allows 10 requests a second and
    /// answers 429 above it. The report and `-v` charge the 429s and the
    /// rate cut to the second host, whose later hops take their tokens at
    /// the cut rate, and leave the entries' host unthrottled.
    @Test func aThrottledRedirectHopCutsTheRateOfTheHostThatAnswered() throws {
        let f = try WarmFixture()
        let target = try TestHTTPServer.start()
        defer { target.shutdown() }
        let n = 30
        let urls = (0..<n).map { i -> String in
            let path = "/img/\(i).png"
            target.setFile(path, bytes: TinyPNG.make(width: 6, height: 6, seed: i), contentType: "image/png")
            return "http://localhost:\(f.server.port)/redirect-to?url="
                + target.url("/throttle/10" + path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        }
        let report = f.dir + "/r.json"
        let r = try f.warm([f.writeManifest(urls), "--retries", "8", "--report", report, "-v"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.cacheFiles().count == n)
        #expect(target.throttledCount > 0)
        let entryHost = "http://localhost:\(f.server.port)", hopHost = "http://127.0.0.1:\(target.port)"
        #expect(r.stderr.contains("\(hopHost): 429/503, rate"), "\(r.stderr)")
        #expect(!r.stderr.contains("\(entryHost): 429/503"), "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as! [String: Any]
        let hosts = try #require(json["hosts"] as? [[String: Any]])
        let entry = try #require(hosts.first { $0["host"] as? String == entryHost }, "\(hosts)")
        let hop = try #require(hosts.first { $0["host"] as? String == hopHost }, "\(hosts)")
        #expect(entry["throttled_responses"] as? Int == 0, "\(entry)")
        #expect(entry["rate_cuts"] as? Int == 0, "\(entry)")
        #expect(entry["throttled_rate"] is NSNull, "\(entry)")
        #expect(hop["throttled_responses"] as? Int == target.throttledCount, "\(hop)")
        #expect((hop["rate_cuts"] as? Int ?? 0) >= 1, "\(hop)")
        let rate = try #require(hop["throttled_rate"] as? Double, "\(hop)")
        #expect(rate <= 12, "\(hop)")
    }

    /// `--limit-rate 500k` (500 KiB, as curl reads it): 2.4 MB in about
    /// 4.7 s, the bytes a second of the whole run within 5%.
    @Test func bandwidthCapHoldsWithinFivePercent() throws {
        let f = try WarmFixture()
        let urls = serve(f, 48, route: "", side: 128)
        let report = f.dir + "/r.json"
        let r = try f.warm([f.writeManifest(urls), "--limit-rate", "500k/s", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        let totals = try f.report(report).totals
        let bytes = try #require(totals["bytes_downloaded"] as? Double ?? (totals["bytes_downloaded"] as? Int).map(Double.init))
        let seconds = try #require(totals["seconds"] as? Double)
        #expect(bytes > 2_300_000)
        let rate = bytes / seconds
        #expect(abs(rate / 512_000 - 1) <= 0.05, "\(rate) bytes/s over \(seconds) s")
    }

    /// An origin that allows 100 requests a second and answers 429 above
    /// it: every entry ends downloaded, after the first second the 429s are
    /// few, the rate the run settles at is at or below the origin's, and the
    /// summary and report say the host was throttled and to what.
    @Test func throttlingOriginLowersTheHostRate() throws {
        let f = try WarmFixture()
        let urls = serve(f, 400, route: "/throttle/100")
        let report = f.dir + "/r.json"
        let metrics = f.dir + "/m.prom"
        let r = try f.warm([f.writeManifest(urls), "--report", report, "--metrics", metrics, "--retries", "5", "-v"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.cacheFiles().count == 400)
        let times = f.server.requestTimes()
        let log = f.server.requestLog()
        #expect(times.count == log.count)
        // After the first 2 seconds: fewer than 1% of the requests get 429.
        let start = times.first ?? 0
        let late = times.filter { $0 - start > 2 }.count
        let late429 = f.server.throttleTimes().filter { $0 - start > 2 }.count
        #expect(late >= 100, "\(late) requests after 2 s")
        #expect(Double(late429) < 0.01 * Double(late), "429s after 2 s: \(late429) of \(late)")
        #expect(r.stdout.contains("throttled: http://127.0.0.1:\(f.server.port): "), "\(r.stdout)")
        #expect(r.stderr.contains("429/503, rate"), "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as! [String: Any]
        let hosts = try #require(json["hosts"] as? [[String: Any]])
        #expect(hosts.count == 1)
        let rate = try #require(hosts[0]["throttled_rate"] as? Double)
        #expect(rate <= 110 && rate >= 50, "settled at \(rate)/s")
        #expect((hosts[0]["throttled_responses"] as? Int ?? 0) == f.server.throttledCount)
        // The metrics carry the same per-host figures.
        let prom = try String(contentsOfFile: metrics, encoding: .utf8)
        let hostLabel = "host=\"http://127.0.0.1:\(f.server.port)\""
        let line = prom.split(separator: "\n").first { $0.hasPrefix("imgwarm_host_throttled_responses{") }
        #expect(line.map { $0.hasSuffix(hostLabel + "} \(f.server.throttledCount)") } == true, "\(prom)")
        #expect(prom.contains("imgwarm_host_rate_limit{"), "\(prom)")
    }

    /// The plan's order (LIFO here) reaches the server unchanged through
    /// -j auto, rate parking and unparking (one transfer at a time).
    @Test func orderHoldsUnderRateLimits() throws {
        let f = try WarmFixture()
        let urls = serve(f, 30, route: "")
        let r = try f.warm([f.writeManifest(urls), "--order", "lifo", "--download-threads", "1", "--host-connections", "1",
                            "--rate", "100/s"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.server.requestLog() == (0..<30).reversed().map { "/img/\($0).png" })
    }

    /// Bad values are usage errors that name the flag.
    @Test func badLimitValuesAreUsageErrors() throws {
        let f = try WarmFixture()
        let m = f.writeManifest(serve(f, 1, route: ""))
        for (args, text) in [(["-j", "many"], "-j"), (["--rate", "fast"], "--rate"),
                             (["--limit-rate", "0"], "--limit-rate"), (["--host-connections", "0"], "--host-connections"),
                             (["--max-concurrency", "0"], "--max-concurrency")] {
            let r = try f.warm([m] + args)
            #expect(r.status == 2, "\(args): \(r.stderr)")
            #expect(r.stderr.contains(text), "\(args): \(r.stderr)")
        }
    }
}
