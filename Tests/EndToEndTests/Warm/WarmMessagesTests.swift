import Foundation
import Testing
import TestSupport

/// The messages a new user meets first, from the real binary: each says
/// what is wrong and what to write instead, counts read as English, and
/// the summary points to where the details are.
@Suite struct WarmMessagesTests {
    @Test func aLineWithoutASchemeSaysSoWithAnExample() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(["cdn.example.com/img/a.png", "localhost:8080/b.png"])
        let r = try f.warm([manifest])
        #expect(r.stderr.contains("manifest.txt:1: no scheme (a manifest line starts with the whole URL, e.g. https://"), "\(r.stderr)")
        #expect(r.stderr.contains("manifest.txt:2: no scheme"), "\(r.stderr)")
        #expect(!r.stderr.contains("slashes"), "\(r.stderr)")
    }

    @Test(arguments: [
        "[\"https://a.example/1.png\", \"https://a.example/2.png\"]\n",
        "[\n  \"https://a.example/1.png\",\n  \"https://a.example/2.png\"\n]\n",
    ])
    func aJSONArrayFileIsNamedAsSuch(_ text: String) throws {
        let f = try WarmFixture()
        let manifest = f.dir + "/urls.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: manifest))
        let r = try f.warm([manifest])
        #expect(r.stderr.contains("urls.json:1: looks like a JSON array: a manifest holds one URL or one JSON object"), "\(r.stderr)")
        #expect(!r.stderr.contains("after the URL"), "\(r.stderr)")
    }

    /// A value the download engine refuses is a usage error like any
    /// other: status 2 and one `imgwarm:` line, never 1 (which says
    /// entries failed), and no request is made.
    @Test func aValueTheEngineRefusesIsAUsageError() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        let r = try f.warm([manifest, "--user-agent", "a\rb"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr == "imgwarm: user agent must be one line\n", "\(r.stderr)")
        #expect(f.server.totalRequests == 0)
    }

    /// `--cache=~/c`: no shell expands that `~`; the folder is not made.
    @Test(arguments: [["--cache=~/c"], ["--cache", "~/c"], ["--cache", "~"]])
    func aCacheStartingWithTildeIsRefused(_ cacheArgs: [String]) throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        for args in [["warm", manifest] + cacheArgs, ["cache", "stats"] + cacheArgs] {
            let r = try BinaryRunner.run(args, environment: ["HOME": f.dir])
            #expect(r.status == 2, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("the shell did not expand ~ here; write $HOME instead"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: f.dir + "/~"))
        #expect(!FileManager.default.fileExists(atPath: BinaryRunner.packageRoot + "/~"))
    }

    @Test func oneIsSingular() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        let warm = try f.warm([manifest])
        #expect(warm.status == 0, "\(warm.stderr)")
        #expect(warm.stdout.hasPrefix("1 entry: 1 downloaded"), "\(warm.stdout)")
        let clear = try BinaryRunner.run(["cache", "clear", "--cache", f.cache])
        #expect(clear.stdout.hasPrefix("removed 1 file, "), "\(clear.stdout)")
    }

    @Test func anEmptyFailedListSaysSo() throws {
        let f = try WarmFixture()
        // Before any warm (no state yet) and after one that failed nothing.
        let before = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(before.status == 0)
        #expect(before.stdout.isEmpty, "standard output stays one line per URL: \(before.stdout)")
        #expect(before.stderr.contains("the failed-URL list of \(f.cache) is empty"), "\(before.stderr)")
        _ = try f.warm([f.writeManifest(f.servePNGs(1))])
        let after = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(after.stderr.contains("is empty"), "\(after.stderr)")
        let json = try BinaryRunner.run(["cache", "failed", "--json", "--cache", f.cache])
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [Any] != nil, "--json stays JSON: \(json.stdout)")
        #expect(!json.stderr.contains("is empty"), "\(json.stderr)")
    }

    /// The summary's last line names the report and, when something
    /// failed, the command that lists the failed URLs for this cache.
    @Test func theSummaryPointsToTheReportAndCacheFailed() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2) + [f.server.url("/missing.png")])
        let report = f.dir + "/r.json"
        let r = try f.warm([manifest, "--report", report])
        #expect(r.status == 1)
        let last = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last == "report: \(report); failed URLs: imgwarm cache failed --cache \(f.cache)", "\(r.stdout)")
        // The command it names lists the URL.
        let failed = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(failed.stdout.contains("/missing.png"), "\(failed.stdout)")
        // Nothing failed, no report: no pointer.
        let ok = try f.warm([f.writeManifest(f.servePNGs(2), name: "ok.txt")])
        #expect(ok.status == 0)
        #expect(!ok.stdout.contains("report:") && !ok.stdout.contains("cache failed"), "\(ok.stdout)")
    }

    /// SIGTERM while most entries wait: the message counts those never
    /// started apart from the done ones.
    @Test func afterASignalTheEntriesNotStartedAreCounted() throws {
        let f = try WarmFixture()
        _ = f.servePNGs(30)
        let manifest = f.writeManifest((0..<30).map { f.server.url("/slow/400/img/\($0).png") })
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BinaryRunner.executable)
        p.arguments = ["warm", manifest, "--cache", f.cache, "--progress", "none", "-j", "1"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        usleep(1_500_000)
        kill(p.processIdentifier, SIGTERM)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 143, "\(stderr)")
        let line = try #require(stderr.split(separator: "\n").first { $0.hasPrefix("imgwarm: interrupted by SIGTERM; ") }, "\(stderr)")
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        // [done, total, not started]
        try #require(numbers.count == 3, "\(line)")
        #expect(numbers[1] == 30)
        #expect(numbers[0] >= 1 && numbers[0] < 30, "\(line)")
        #expect(numbers[0] + numbers[2] == 30, "\(line)")
        #expect(line.hasSuffix(" not started or cut short (skipped)"), "\(line)")
        #expect(stdout.contains("\(numbers[2]) skipped"), "the summary agrees: \(stdout)")
    }
}

/// `warm` under a low `ulimit -n`, run through the shell as a user would
/// set it: a limit that leaves room for nothing is one clear line and
/// status 4 (it was SIGILL: libdispatch traps when it cannot make its epoll
/// descriptor), a low one runs fewer transfers and says so, and a low soft
/// limit under a higher hard one is raised without a word.
@Suite struct WarmDescriptorLimitTests {
    static func warm(_ f: WarmFixture, limit: String, _ args: [String]) throws -> (status: Int32, output: String) {
        let sh = try neededTool("sh", for: "a lower descriptor limit")
        let command = "ulimit \(limit) && exec \"$0\" \"$@\""
        let r = try #require(runTool(sh, ["-c", command, BinaryRunner.executable, "warm"] + args
                                         + ["--cache", f.cache, "--progress", "none"]))
        return (r.status, r.output)
    }

    @Test func tooFewDescriptorsIsOneLineAndStatusFour() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(3))
        let r = try Self.warm(f, limit: "-n 16", [manifest])
        #expect(r.status == 4, "\(r.output)")
        #expect(r.output == "imgwarm: ulimit -n is 16: imgwarm needs at least 35 open files to run; raise it (ulimit -n 1024)\n",
                "\(r.output)")
        #expect(f.server.totalRequests == 0)
        #expect(!FileManager.default.fileExists(atPath: f.cache))
    }

    @Test func aLowLimitRunsFewerTransfersAndSaysSo() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(40)
        let r = try Self.warm(f, limit: "-n 44", [f.writeManifest(urls), "-j", "16", "--report", f.dir + "/r.json"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("imgwarm: warning: ulimit -n is 44: running 4 transfers at once, not 16"), "\(r.output)")
        #expect(f.cacheFiles().count == 40)
        #expect(f.server.maxConcurrentRequests <= 4)
    }

    @Test func aLowSoftLimitIsRaisedToTheHardOne() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(40)
        let r = try Self.warm(f, limit: "-S -n 20", [f.writeManifest(urls), "-j", "16"])
        #expect(r.status == 0, "\(r.output)")
        #expect(!r.output.contains("ulimit"), "\(r.output)")
        #expect(f.cacheFiles().count == 40)
    }
}
