import Foundation
import Testing
import TestSupport

@Suite(.serialized) struct WarmTests {
    @Test func warmsHundredsOfImagesByteForByteThenMakesNoRequest() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(300)
        let manifest = f.writeManifest(urls)
        let report = f.dir + "/report.json"
        let first = try f.warm([manifest, "-j", "8", "--report", report])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(f.server.totalRequests == 300)
        let paths = try f.cachePaths(urls)
        #expect(paths.count == urls.count)
        for (i, url) in urls.enumerated() {
            let path = paths[i]
            #expect(path.hasSuffix(".png"))
            let data = FileManager.default.contents(atPath: path)
            #expect(data.map([UInt8].init) == f.served["/img/\(i).png"], "\(url)")
        }
        #expect(f.cacheFiles().count == 300)
        let (entries, totals) = try f.report(report)
        #expect(entries.count == 300)
        #expect(totals["downloaded"] as? Int == 300)
        #expect(totals["entries"] as? Int == 300)
        #expect(totals["bytes"] as? Int == f.served.values.map(\.count).reduce(0, +))
        let e0 = entries[0]
        #expect(e0["outcome"] as? String == "downloaded")
        #expect(e0["format"] as? String == "png")
        #expect(e0["width"] as? Int == 4)
        #expect(e0["height"] as? Int == 3)
        #expect(e0["status"] as? Int == 200)
        #expect(e0["attempts"] as? Int == 1)
        #expect(e0["file"] as? String == (try f.cachePath(urls[0])))

        let second = try f.warm([manifest, "--report", report])
        #expect(second.status == 0)
        #expect(f.server.totalRequests == 300)  // zero new requests
        #expect(try f.report(report).totals["cached"] as? Int == 300)
        #expect(second.stdout.contains("300 cached"))
    }

    @Test func brokenImageFailsIsBlockedNextRunAndRetriedOnRequest() throws {
        let f = try WarmFixture()
        let good = f.servePNGs(3)
        var broken = TinyPNG.make(seed: 99)
        broken.removeLast(20)  // truncated: IEND and part of IDAT missing
        f.server.setFile("/broken.png", bytes: broken, contentType: "image/png")
        let html = Array("<!doctype html><html><body>gone</body></html>".utf8)
        f.server.setFile("/page.jpg", bytes: html, contentType: "image/jpeg")
        let manifest = f.writeManifest(good + [f.server.url("/broken.png"), f.server.url("/page.jpg")])
        let report = f.dir + "/r.json"

        let first = try f.warm([manifest, "--report", report])
        #expect(first.status == 1)
        #expect(first.stderr.contains(f.server.url("/broken.png")))
        let entries = try f.report(report).entries
        let failed = entries.filter { $0["outcome"] as? String == "failed" }
        #expect(failed.count == 2)
        #expect(failed.allSatisfy { $0["error"] as? String == "bad-image" })
        #expect(failed.allSatisfy { $0["file"] is NSNull })
        #expect(f.cacheFiles().count == 3)  // nothing of the broken ones stored

        let second = try f.warm([manifest, "--report", report])
        #expect(second.status == 1)  // blocked entries are missing from the cache
        #expect(second.stdout.contains("2 blocked (failed before: --retry-failed fetches them)"), "\(second.stdout)")
        #expect(f.server.requestCount(path: "/broken.png") == 1)
        let blocked = try f.report(report).entries.filter { $0["outcome"] as? String == "blocked" }
        #expect(blocked.count == 2)

        let failedList = try BinaryRunner.run(["cache", "stats", "--json", "--cache", f.cache])
        #expect(failedList.stdout.contains("\"failed_urls\" : 2"))
        // `cache failed` lists both with their class and reason.
        let listed = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(listed.status == 0)
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.contains { $0.contains("bad-image 200 \(f.server.url("/broken.png")): corrupt PNG") || $0.contains("bad-image 200 \(f.server.url("/broken.png")): truncated PNG") })
        #expect(lines.contains { $0.contains(f.server.url("/page.jpg")) && $0.contains("not an image") })
        let json = try BinaryRunner.run(["cache", "failed", "--json", "--cache", f.cache])
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [[String: Any]]
        #expect(Set(rows.map { $0["url"] as! String }) == [f.server.url("/broken.png"), f.server.url("/page.jpg")])
        #expect(rows.allSatisfy { $0["error"] as? String == "bad-image" && $0["status"] as? Int == 200 })

        // Fixed on the server, fetched again with --retry-failed.
        f.server.setFile("/broken.png", bytes: TinyPNG.make(seed: 99), contentType: "image/png")
        let third = try f.warm([manifest, "--retry-failed", "--max-failures", "1", "--report", report])
        #expect(third.status == 0)
        #expect(f.server.requestCount(path: "/broken.png") == 2)
        #expect(f.cacheFiles().count == 4)
        // The success removed it from the failed list; the HTML page stays.
        let stats = try BinaryRunner.run(["cache", "stats", "--json", "--cache", f.cache])
        #expect(stats.stdout.contains("\"failed_urls\" : 1"))
    }

    @Test func refreshRevalidatesWith304AndKeepsFiles() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(10, etag: true)
        let manifest = f.writeManifest(urls)
        #expect(try f.warm([manifest]).status == 0)
        let path = try f.cachePath(urls[0])
        // Age the file so the renewal is visible.
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        utimensat(AT_FDCWD, path, &times, 0)
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--refresh", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.server.totalRequests == 20)
        let totals = try f.report(report).totals
        #expect(totals["revalidated"] as? Int == 10)
        // A 304 renews the access time only: SDWebImage leaves the file
        // itself untouched then.
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_atim.tv_sec > 1_000_000_000)
        #expect(st.st_mtim.tv_sec == 1_000_000)
        #expect(FileManager.default.contents(atPath: path).map([UInt8].init) == f.served["/img/0.png"])

        // A changed image (new ETag) answers 200 and replaces the file.
        let replacement = TinyPNG.make(width: 9, height: 9, seed: 1234)
        f.server.setFile("/img/0.png", bytes: replacement, contentType: "image/png", etag: "\"v-new\"")
        let r2 = try f.warm([manifest, "--refresh", "--report", report])
        #expect(r2.status == 0)
        #expect(try f.report(report).totals["downloaded"] as? Int == 1)
        #expect(FileManager.default.contents(atPath: path).map([UInt8].init) == replacement)
    }

    @Test func killMinus9LeavesNoPartialFileAndTheNextRunFinishes() throws {
        let f = try WarmFixture()
        // Slow, large-ish bodies so the kill lands mid-transfer.
        var urls: [String] = []
        for i in 0..<40 {
            let bytes = TinyPNG.make(width: 200, height: 100 + i, seed: i)
            f.server.setFile("/big/\(i).png", bytes: bytes, contentType: "image/png")
            f.served["/big/\(i).png"] = bytes
            urls.append(f.server.url("/slow/150/big/\(i).png"))
        }
        let manifest = f.writeManifest(urls)
        let running = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "-j", "4", "--progress", "none"])
        usleep(900_000)
        running.signal(SIGKILL)
        let killed = running.wait(timeout: 30)
        #expect(killed.signalled)
        let partial = f.cacheFiles()
        #expect(partial.count < 40)
        // Every file under a cache name is whole.
        for (i, url) in urls.enumerated() {
            let path = try f.cachePath(url)
            if let data = FileManager.default.contents(atPath: path) {
                #expect([UInt8](data) == f.served["/big/\(i).png"])
            }
        }
        let again = try f.warm([manifest, "-j", "8"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(f.cacheFiles().count == 40)
        for (i, url) in urls.enumerated() {
            #expect(FileManager.default.contents(atPath: try f.cachePath(url)).map([UInt8].init) == f.served["/big/\(i).png"])
        }
        // The killed run's temp files were cleaned.
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: f.cache + "/.imgwarm/tmp")) ?? []).isEmpty)
    }

    @Test func sigintStopsCleanlyWritesTheReportAndExitsNonZero() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(30).map { $0.replacingOccurrences(of: "/img/", with: "/slow/300/img/") }
        let manifest = f.writeManifest(urls)
        let report = f.dir + "/r.json"
        let running = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "-j", "2", "--progress", "none", "--report", report])
        usleep(800_000)
        running.signal(SIGINT)
        let r = running.wait(timeout: 30)
        #expect(r.status == 130)
        #expect(r.stderr.contains("interrupted"))
        let (entries, totals) = try f.report(report)
        #expect(entries.count == 30)
        #expect((totals["skipped"] as? Int ?? 0) > 0)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: f.cache + "/.imgwarm/tmp")) ?? []).isEmpty)
    }

    @Test func badManifestLinesAreReportedWithFileAndLineAndTheRestRuns() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let manifest = f.writeManifest([
            "# comment", urls[0], "ftp://example.com/a.png", "https://user:hunter2@127.0.0.1:1/x.png priority=urgent", urls[1],
        ])
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--report", report])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(manifest):3: unsupported scheme 'ftp'"))
        #expect(r.stderr.contains("\(manifest):4: priority must be"))
        #expect(!r.stderr.contains("hunter2"))
        #expect(f.cacheFiles().count == 2)
        let (entries, totals) = try f.report(report)
        #expect(entries.count == 4)
        #expect(totals["failed"] as? Int == 2)
        #expect(entries.map { $0["source"] as? String } == ["\(manifest):2", "\(manifest):3", "\(manifest):4", "\(manifest):5"])
        let reportText = try String(contentsOfFile: report, encoding: .utf8)
        #expect(!reportText.contains("hunter2"))
        // With the failures allowed, the run succeeds.
        #expect(try f.warm([manifest, "--max-failures", "2"]).status == 0)
    }

    @Test func stdinManifestAndJSONLinesAndDuplicates() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(3)
        let input = """
        {"url": "\(urls[0])", "priority": "low"}
        \(urls[1]) key=my-custom-key
        \(urls[0]) priority=high
        \(urls[2])

        """
        let report = f.dir + "/r.json"
        let r = try BinaryRunner.run(["warm", "-", "--cache", f.cache, "--progress", "none", "--report", report], stdin: input)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.server.requestCount(path: "/img/0.png") == 1)
        let entries = try f.report(report).entries
        #expect(entries.map { $0["outcome"] as? String } == ["duplicate", "downloaded", "downloaded", "downloaded"])
        #expect(entries[0]["source"] as? String == "<stdin>:1")
        #expect(FileManager.default.fileExists(atPath: try f.cachePath("my-custom-key")))
    }

    @Test func httpErrorsAreClassified() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest([
            f.server.url("/status/404"), f.server.url("/status/503"), f.server.url("/huge/5000000"), f.server.url("/html"),
        ])
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--report", report, "--retries", "1", "--max-bytes", "1MiB"])
        #expect(r.status == 1)
        let byURL = Dictionary(uniqueKeysWithValues: try f.report(report).entries.map { ($0["url"] as! String, $0) })
        #expect(byURL[f.server.url("/status/404")]?["error"] as? String == "http-status")
        #expect(byURL[f.server.url("/status/404")]?["status"] as? Int == 404)
        #expect(byURL[f.server.url("/status/503")]?["error"] as? String == "http-status")
        #expect(byURL[f.server.url("/status/503")]?["attempts"] as? Int == 2)
        #expect(byURL[f.server.url("/huge/5000000")]?["error"] as? String == "too-large")
        #expect(byURL[f.server.url("/html")]?["error"] as? String == "bad-image")
        #expect(f.cacheFiles().isEmpty)
        // The 503 is transient: not blocked next time; the 404 is.
        let again = try f.warm([manifest, "--report", report, "--retries", "0", "--max-bytes", "1MiB"])
        #expect(again.status == 1)
        let next = Dictionary(uniqueKeysWithValues: try f.report(report).entries.map { ($0["url"] as! String, $0) })
        #expect(next[f.server.url("/status/404")]?["outcome"] as? String == "blocked")
        #expect(next[f.server.url("/status/503")]?["outcome"] as? String == "failed")
        // A local limit (--max-bytes) is not the URL's fault: fetched again.
        #expect(next[f.server.url("/huge/5000000")]?["outcome"] as? String == "failed")
        #expect(next[f.server.url("/html")]?["outcome"] as? String == "blocked")
    }

    @Test func clearAllIsRefusedWhileAWarmRuns() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(6).map { $0.replacingOccurrences(of: "/img/", with: "/slow/400/img/") }
        let manifest = f.writeManifest(urls)
        let running = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "-j", "1", "--progress", "none"])
        usleep(700_000)
        let clear = try BinaryRunner.run(["cache", "clear", "--all", "--cache", f.cache])
        #expect(clear.status == 3)
        #expect(clear.stderr.contains("in use by another imgwarm run"))
        let warm = running.wait(timeout: 60)
        #expect(warm.status == 0)
        #expect(f.cacheFiles().count == 6)
        #expect(try BinaryRunner.run(["cache", "clear", "--all", "--cache", f.cache]).status == 0)
        #expect(f.cacheFiles().isEmpty)
    }

    /// A run refused the lock closes the lock file once. Closed twice, the
    /// second close could take a descriptor another thread had just opened
    /// (a test in the same process once failed with EBADF on its folder).
    @Test(arguments: [(LOCK_SH, ["cache", "clear", "--all"]), (LOCK_EX, ["warm"])])
    func aRefusedLockClosesItsFileOnce(_ held: Int32, _ command: [String]) throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        #expect(try f.warm([manifest]).status == 0)
        let lock = open(f.cache + "/.imgwarm/lock", O_RDWR | O_CLOEXEC)
        #expect(lock >= 0)
        defer { close(lock) }
        #expect(flock(lock, held | LOCK_NB) == 0)
        let args = command + (command == ["warm"] ? [manifest] : []) + ["--cache", f.cache]
        let traced = try BinaryRunner.runTracingDescriptors(args)
        #expect(traced.status == 3, "\(traced.output)")
        #expect(traced.output.contains(held == LOCK_SH ? "in use by another imgwarm run" : "locked by `imgwarm cache clear --all`"))
        #expect(traced.badDescriptorCalls.isEmpty, "\(traced.badDescriptorCalls)")
    }

    /// Every layout through every command, on the paths where descriptors
    /// change hands: bodies spilled to unnamed files (a Content-Length past
    /// 1 MiB, chunked, gzip) and mapped, redirects, a 404, a timeout, a
    /// reset, bodies that are no image, an invalid URL, three reports
    /// written; then --refresh, --dry-run, --retry-from and each `cache`
    /// command. strace lists every call on a descriptor that failed with
    /// EBADF (closed twice, or used after its close): none may.
    @Test(arguments: ["sdwebimage", "kingfisher", "nuke", "glide", "coil", "coil2", "flutter", "okhttp", "fresco"])
    func everyCommandClosesEachDescriptorOnce(_ layout: String) throws {
        let f = try WarmFixture()
        let pngs = f.servePNGs(3)
        f.server.setFile("/big.png", bytes: TinyPNG.make(width: 720, height: 720, seed: 9), contentType: "image/png")
        let others = ["/gzip/img/1.png", "/redirect/2/img/2.png", "/big.png", "/gzip/big.png", "/huge-length/1500000",
                      "/huge/1500000", "/status/404", "/slow/3000/img/0.png", "/html", "/reset"].map(f.server.url)
        let manifest = f.writeManifest(pngs + others + ["not-a-url"])
        let cache = ["--cache", f.cache, "--layout", layout]
        let quick = ["--progress", "none", "--timeout", "1", "--retries", "0"]
        let report = f.dir + "/report.json"
        let prune = layout == "flutter" ? ["--max-age", "1s"] : ["--max-size", "1"]
        let first = try BinaryRunner.runTracingDescriptors(["warm", manifest, "--report", report, "--junit", f.dir + "/junit.xml",
                                                            "--metrics", f.dir + "/metrics.prom"] + cache + quick)
        #expect(first.status == 1, "\(first.output)")
        #expect(first.badDescriptorCalls.isEmpty, "warm: \(first.badDescriptorCalls)")
        // The large bodies went through their files (not through memory).
        let json = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        #expect(!json.contains("\"spilled\": 0,") && json.contains("\"spilled\": "), "\(json.prefix(2000))")
        let runs: [[String]] = [
            ["warm", manifest, "--refresh"] + cache + quick,
            ["warm", manifest, "--dry-run"] + cache + quick,
            ["warm", "--retry-from", report] + cache + quick,
            ["cache", "stats"] + cache,
            ["cache", "verify", "--delete"] + cache,
            ["cache", "failed"] + cache,
            ["cache", "path"] + cache + ["--", pngs[0]],
            ["cache", "prune", "--dry-run"] + cache + prune,
            ["cache", "prune"] + cache + prune,
            ["cache", "clear", "--all"] + cache,
        ]
        for args in runs {
            let run = try BinaryRunner.runTracingDescriptors(args)
            #expect(run.status <= 1, "\(args.joined(separator: " ")): \(run.output)")
            #expect(run.badDescriptorCalls.isEmpty, "\(args.joined(separator: " ")): \(run.badDescriptorCalls)")
        }
    }

    /// The refusals, each through the commands that meet it: a refused
    /// run closes what it opened before the refusal once (the class of
    /// `aRefusedLockClosesItsFileOnce`).
    @Test(arguments: ["missing folder", "symbolic link", "state writable by others", "bad journal", "bad database", "report path"])
    func everyRefusalClosesEachDescriptorOnce(_ refusal: String) throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2) + [f.server.url("/huge-length/1500000")])
        let layout = refusal == "bad journal" ? "glide" : refusal == "bad database" ? "flutter" : "sdwebimage"
        var cache = f.cache
        if refusal != "missing folder" {
            #expect(try BinaryRunner.run(["warm", manifest, "--cache", cache, "--layout", layout, "--progress", "none"]).status == 1)
        }
        switch refusal {
        case "missing folder": cache = f.dir + "/missing/cache"
        case "symbolic link":
            cache = f.dir + "/link"
            #expect(symlink(f.cache, cache) == 0)
        case "state writable by others": #expect(chmod(f.cache + "/.imgwarm", 0o777) == 0)
        case "bad journal": #expect(FileManager.default.createFile(atPath: f.cache + "/journal", contents: Data("not\na journal\n".utf8)))
        case "bad database":
            #expect(FileManager.default.createFile(atPath: f.cache + "/libCachedImageData.db", contents: Data(repeating: 0x41, count: 4096)))
        default: break
        }
        let options = ["--cache", cache, "--layout", layout]
        let prune = layout == "glide" ? ["--max-size", "1"] : ["--max-age", "1d"]
        // (arguments, exit status): 2 a usage error, 3 an unusable cache.
        var runs: [([String], Int32)] = [(["cache", "prune"] + options + prune, 3), (["cache", "verify", "--delete"] + options, 3)]
        switch refusal {
        case "missing folder": runs += [(["cache", "clear", "--all"] + options, 3)]
        case "report path":
            runs = [(["warm", manifest, "--report", f.dir + "/missing/report.json"] + options, 2),
                    (["warm", manifest, "--junit", f.dir] + options, 2)]
        case "bad journal", "bad database":
            // (`cache clear --all` is how a user starts over: it goes on.)
            runs += [(["warm", manifest, "--progress", "none"] + options, 3), (["cache", "stats"] + options, 3),
                     (["cache", "path"] + options + ["--", "https://example.com/a.png"], 3)]
        default:
            runs += [(["warm", manifest, "--progress", "none"] + options, 3), (["cache", "clear", "--all"] + options, 3)]
        }
        for (args, status) in runs {
            let run = try BinaryRunner.runTracingDescriptors(args)
            #expect(run.status == status, "\(args.joined(separator: " ")): \(run.output)")
            #expect(run.badDescriptorCalls.isEmpty, "\(args.joined(separator: " ")): \(run.badDescriptorCalls)")
        }
    }

    @Test func requestHeadersUserAgentAndPerHostLimit() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(12).map { $0.replacingOccurrences(of: "/img/", with: "/slow/100/img/") }
        let manifest = f.writeManifest(urls)
        let r = try f.warm([manifest, "-j", "8", "--per-host", "2", "--header", "X-Team: imaging", "--header",
                            "Authorization: Bearer SECRET-TOKEN", "--user-agent", "MyApp/2.0 (warmer)", "-v"])
        #expect(r.status == 0, "\(r.stderr)")
        // 127.0.0.1 is one host: never more than 2 at once despite -j 8.
        #expect(f.server.maxConcurrentRequests <= 2)
        let headers = try #require(f.server.lastRequestHeaders(path: "/slow/100/img/0.png"))
        #expect(headers["x-team"] == "imaging")
        #expect(headers["authorization"] == "Bearer SECRET-TOKEN")
        #expect(headers["user-agent"] == "MyApp/2.0 (warmer)")
        #expect(headers["accept"] == "image/*,*/*;q=0.8")
        #expect(!(r.stdout + r.stderr).contains("SECRET-TOKEN"))
        // -v prints every entry.
        #expect(r.stderr.components(separatedBy: "downloaded http://").count - 1 == 12)
    }

    /// `--download-threads`: two threads at -j 4 --per-host 2 store every
    /// file and keep the per-host limit for the whole run (shares 1 + 1);
    /// 0 is refused as a usage error.
    @Test func downloadThreadsKeepThePerHostLimit() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(24).map { $0.replacingOccurrences(of: "/img/", with: "/slow/100/img/") }
        let r = try f.warm([f.writeManifest(urls), "-j", "4", "--per-host", "2", "--download-threads", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.cacheFiles().count == 24)
        #expect(f.server.totalRequests == 24)
        #expect(f.server.maxConcurrentRequests <= 2)
        let zero = try f.warm([f.writeManifest(urls), "--download-threads", "0"])
        #expect(zero.status == 2)
        #expect(zero.stderr.contains("--download-threads must be at least 1"), "\(zero.stderr)")
    }

    /// WarmPlan alone owns the order: the engine starts entries as they
    /// arrive. An engine queue that re-sorted what reached it together
    /// made `--order lifo -j 1` run 26 27 28 29 25 23 24 22 ...
    @Test func lifoWithOneTransferRunsNewestFirstExactly() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(30)
        let manifest = f.writeManifest(urls)
        let r = try f.warm([manifest, "--order", "lifo", "-j", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.server.requestLog() == (0..<30).reversed().map { "/img/\($0).png" })
        // And with priorities: high lines first, each priority newest first.
        let g = try WarmFixture()
        let more = g.servePNGs(12)
        let lines = more.enumerated().map { i, url in i % 3 == 0 ? url + " priority=high" : url }
        let r2 = try g.warm([g.writeManifest(lines), "--order", "lifo", "-j", "1"])
        #expect(r2.status == 0, "\(r2.stderr)")
        let high = [9, 6, 3, 0], rest = [11, 10, 8, 7, 5, 4, 2, 1]
        #expect(g.server.requestLog() == (high + rest).map { "/img/\($0).png" })
    }

    /// --priority, --order and --progress take one of their values, checked
    /// by the argument parser (a usage error, exit 2, naming the option
    /// and the values); priority and order in any case.
    @Test func enumeratedOptionsRefuseOtherValues() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2))
        for (option, bad, values) in [("--priority", "urgent", "'high', 'normal' or 'low'"),
                                      ("--order", "random", "'fifo' and 'lifo'"),
                                      ("--progress", "Bar", "'auto', 'bar', 'lines' or 'none'")] {
            let r = try BinaryRunner.run(["warm", manifest, "--cache", f.cache, option, bad])
            #expect(r.status == 2, "\(r.stderr)")
            #expect(r.stderr.contains("'\(bad)' is invalid for '\(option) "), "\(r.stderr)")
            #expect(r.stderr.contains(values), "\(r.stderr)")
        }
        #expect(f.server.totalRequests == 0)
        let r = try f.warm([manifest, "--priority", "HIGH", "--order", "LIFO"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(f.cacheFiles().count == 2)
    }

    @Test func cacheFailedClearLetsTheNextRunFetchAgain() throws {
        let f = try WarmFixture()
        f.server.setFile("/bad.gif", bytes: Array("GIF89a-not-really".utf8), contentType: "image/gif")
        let manifest = f.writeManifest([f.server.url("/bad.gif")])
        #expect(try f.warm([manifest]).status == 1)
        #expect(try f.warm([manifest]).status == 1)  // blocked: still missing
        #expect(f.server.requestCount(path: "/bad.gif") == 1)
        let clear = try BinaryRunner.run(["cache", "failed", "--clear", "--cache", f.cache])
        #expect(clear.stdout == "removed 1 URL from the failed-URL list\n")
        #expect(try BinaryRunner.run(["cache", "failed", "--cache", f.cache]).stdout.isEmpty)
        #expect(try f.warm([manifest]).status == 1)  // fetched again, still broken
        #expect(f.server.requestCount(path: "/bad.gif") == 2)
    }
}
