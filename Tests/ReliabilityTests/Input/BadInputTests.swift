import Foundation
import Testing
import TestSupport

/// docs/cli-contract.md: a line that cannot be used is reported as
/// `FILE:LINE: reason` and counted as a failed entry while the other lines
/// run; exit 2 for no usable input; no stack trace, no crash on bad input;
/// URL userinfo and `--header` values are never printed or written.
@Suite(.serialized) struct BadInputTests {
    func writeBytes(_ f: WarmFixture, _ name: String, _ bytes: [UInt8]) -> String {
        let path = f.dir + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// Every stderr line about the manifest is `PATH:LINE: reason` with a
    /// plausible line number.
    func problemLines(_ stderr: String, manifest: String) -> [(line: Int, reason: String)] {
        stderr.split(separator: "\n").compactMap { raw -> (Int, String)? in
            var s = Substring(raw)
            if s.hasPrefix("imgwarm: ") { s = s.dropFirst("imgwarm: ".count) }
            guard s.hasPrefix(manifest + ":") else { return nil }
            let rest = s.dropFirst(manifest.count + 1)
            guard let colon = rest.firstIndex(of: ":"), let n = Int(rest[..<colon]) else { return (-1, String(rest)) }
            return (n, String(rest[rest.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
    }

    @Test func garbageManifestsFailCleanlyWithFileLineReasons() throws {
        let f = try WarmFixture()
        var rng = SeededRandom(seed: 0xBAD_F00D)
        let good = f.servePNGs(1)[0]
        let longLine = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        let cases: [(name: String, bytes: [UInt8], reason: String?)] = [
            ("binary", (0..<65536).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, nil),
            ("utf8", Array("http://127.0.0.1/caf".utf8) + [0xC3, 0x28, 0xFF] + Array(".png\n".utf8), "not valid UTF-8"),
            ("long", Array("http://127.0.0.1/".utf8) + longLine + [0x0A], "line longer than"),
            ("long-no-newline", longLine, "line longer than"),
            ("nul", Array("http://127.0.0.1/a".utf8) + [0] + Array(".png\n".utf8), "NUL byte"),
            ("schemes", Array("ftp://127.0.0.1/a.png\nfile:///etc/passwd\njavascript:alert(1)\ndata:image/png;base64,AAAA\ngopher://x/y\n".utf8), "unsupported scheme"),
            ("not-urls", Array("hello world\n127.0.0.1/a.png\nhttp://\nhttps:///path-only.png\n{\"url\": 5}\n{\"url\":\n".utf8), nil),
            // An ANSI escape (ESC [ 2 J: clear screen) inside a URL.
            ("escape", Array("http://127.0.0.1/\u{1B}[2J\u{1B}[31mred.png\n".utf8), "control character"),
        ]
        for c in cases {
            let manifest = writeBytes(f, c.name + ".txt", c.bytes)
            let report = f.dir + "/\(c.name).json"
            let r = try f.warm([manifest, "--report", report])
            #expect(!r.signalled, "\(c.name): crashed: \(r.stderr.suffix(500))")
            // Each bad line is a failed entry: exit 1.
            #expect(r.status == 1, "\(c.name): status \(r.status): \(r.stderr.suffix(500))")
            #expect(r.stderr.contains("no usable entries"), "\(c.name): \(r.stderr.suffix(300))")
            let problems = problemLines(r.stderr, manifest: manifest)
            #expect(!problems.isEmpty, "\(c.name): no FILE:LINE: lines in \(r.stderr.prefix(300))")
            #expect(problems.allSatisfy { $0.line >= 1 && !$0.reason.isEmpty }, "\(c.name): \(problems.prefix(3))")
            if let reason = c.reason {
                #expect(problems.allSatisfy { $0.reason.contains(reason) }, "\(c.name): \(problems.prefix(3))")
            }
            // A manifest can't write to the terminal through imgwarm.
            #expect(linesWithControlCharacters(r.stderr).isEmpty, "\(c.name): \(linesWithControlCharacters(r.stderr).prefix(2).map { $0.debugDescription })")
            #expect(r.stderr.utf8.count < 200_000, "\(c.name): \(r.stderr.utf8.count) bytes of errors")
            // Each bad line is a failed entry in the report, with its source.
            let (entries, totals) = try f.report(report)
            #expect(totals["failed"] as? Int == problems.count, "\(c.name)")
            #expect(entries.allSatisfy { ($0["source"] as? String ?? "").hasPrefix(manifest + ":") }, "\(c.name)")
        }
        #expect(f.cacheFiles().isEmpty)

        // Bad lines do not stop the good ones: exit 1, the image cached.
        let mixed = writeBytes(f, "mixed.txt", cases[4].bytes + Array("\(good)\n".utf8) + cases[2].bytes + cases[1].bytes)
        let r = try f.warm([mixed])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(f.cacheFiles().count == 1)
        #expect(problemLines(r.stderr, manifest: mixed).map(\.line) == [1, 3, 4])

        // Empty inputs (a generated manifest may be empty): 0 entries,
        // exit 0 with a warning.
        for (name, bytes) in [("empty", [UInt8]()), ("blank", Array("\n\n  \n# only a comment\r\n".utf8)), ("bom", [0xEF, 0xBB, 0xBF])] {
            let manifest = writeBytes(f, name + ".txt", bytes)
            let r = try f.warm([manifest])
            #expect(r.status == 0 && !r.signalled, "\(name): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("warning: no entries in the manifests (0 entries)"), "\(name): \(r.stderr)")
            #expect(r.stdout.contains("0 entries"), "\(name): \(r.stdout)")
        }
        // A byte-order mark inside the file is a malformed line: a failed entry.
        let midBOM = writeBytes(f, "mid-bom.txt", Array("# only a comment\n\u{FEFF}\n".utf8))
        let bomRun = try f.warm([midBOM])
        #expect(bomRun.status == 1 && bomRun.stderr.contains("mid-bom.txt:2: "), "\(bomRun.stderr)")
        // Unreadable manifests: exit 2, one line naming the path.
        for path in [f.dir + "/does-not-exist.txt", f.dir] {
            let r = try f.warm([path])
            #expect(r.status == 2, "\(path): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains(path))
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
    }

    @Test func secretsNeverReachOutputReportsOrTheFailedList() throws {
        let f = try WarmFixture()
        let port = f.server.port
        let image = TinyPNG.make(seed: 4242)
        f.server.setFile("/secret/ok.png", bytes: image, contentType: "image/png")
        let lines = [
            "http://alice:PASSWORD-ONE@127.0.0.1:\(port)/secret/ok.png",
            "http://bob:PASSWORD-TWO@127.0.0.1:\(port)/status/404",
            "http://carol:PASSWORD-THREE@127.0.0.1:\(port)/html priority=high",
            "http://dave:PASSWORD-FOUR@127.0.0.1:\(port)/secret/ok.png priority=urgent",
            "ftp://erin:PASSWORD-FIVE@127.0.0.1:\(port)/x.png",
            "{\"url\": \"http://frank:PASSWORD-SIX@127.0.0.1:\(port)/status/403\", \"key\": \"k6\"}",
            "http://grace:PASSWORD-SEVEN@127.0.0.1:\(port)/reset",
            "http://heidi:PASSWORD-EIGHT@127.0.0.1:\(port)/redirect/2/status/500",
            "http://ivan:PASS@WORD-NINE@127.0.0.1:\(port)/status/404?x",
            "http://judy:PASSWORD-TEN@127.0.0.1:\(port)/secret/ok.png key=http://judy:PASSWORD-TEN@cdn/ok.png",
            "http://kim:PASSWORD-ELEVEN@127.0.0.1:\(port)/\u{1}bad.png",
            // Combining marks after "@" or "://" merge into one Swift
            // Character with it: redaction must work on bytes.
            "http://leo:PASSWORD-TWELVE@\u{301}127.0.0.1:\(port)/x.png",
            "http://\u{593}mia:PASSWORD-THIRTEEN@127.0.0.1:\(port)/status/404",
        ]
        let secrets = ["PASSWORD-", "WORD-NINE", "BEARER-SECRET-VALUE", "COOKIE-SECRET-VALUE"]
        let manifest = f.writeManifest(lines)
        let report = f.dir + "/r.json", junit = f.dir + "/j.xml", metrics = f.dir + "/m.prom"
        var outputs: [(String, String)] = []
        for extra in [["-v"], ["--progress", "lines"], ["--dry-run", "-v"]] {
            let r = try BinaryRunner.run(["warm", manifest, "--cache", f.cache, "--retries", "0", "--report", report, "--junit", junit,
                                          "--metrics", metrics, "--header", "Authorization: Bearer BEARER-SECRET-VALUE",
                                          "--header", "Cookie: session=COOKIE-SECRET-VALUE"] + extra)
            #expect(!r.signalled)
            outputs.append(("stdout \(extra)", r.stdout))
            outputs.append(("stderr \(extra)", r.stderr))
            for file in [report, junit, metrics] {
                outputs.append((file, (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""))
            }
        }
        // The header really was sent (so "never printed" is not vacuous).
        #expect(f.server.lastRequestHeaders(path: "/secret/ok.png")?["authorization"] == "Bearer BEARER-SECRET-VALUE")
        // A usage error about a header must not echo it either.
        let bad = try BinaryRunner.run(["warm", manifest, "--cache", f.cache, "--header", "Bad Name: BEARER-SECRET-VALUE"])
        #expect(bad.status == 2, "\(bad.status) \(bad.stderr)")
        outputs.append(("bad header", bad.stdout + bad.stderr))
        for args in [["cache", "failed"], ["cache", "failed", "--json"], ["cache", "stats", "--json"], ["cache", "verify"]] {
            let r = try BinaryRunner.run(args + ["--cache", f.cache])
            outputs.append((args.joined(separator: " "), r.stdout + r.stderr))
        }
        #expect(try BinaryRunner.run(["cache", "failed", "--cache", f.cache]).stdout.contains("127.0.0.1:\(port)/status/404"))
        for (name, text) in outputs {
            for secret in secrets {
                #expect(!text.contains(secret), "\(name) contains \(secret): \(text.components(separatedBy: "\n").filter { $0.contains(secret) }.prefix(3))")
            }
        }
        // Stored state keeps digests of such URLs, not the URLs
        // (SecretsAndHeadersTests greps every file under the cache).
    }
}
