import Foundation
import GRDB
import ImgWarmKit
import Testing
import TestSupport

/// Points 4 to 7, against the real binary and real loopback
/// servers: secrets in no output and no file, headers only where they
/// belong, server bytes escaped, https → http refused, --insecure recorded.
@Suite("Secrets, headers, escapes and downgrades (binary)", .serialized)
struct SecretsAndHeadersTests {
    /// Every text a run can leave: stdout and stderr of warm (-v, lines,
    /// dry run, a second run that finds them blocked, --retry-from), the
    /// report, JUnit, metrics, `cache failed` (text and JSON), and every
    /// file under the cache folder, the state database included.
    @Test func secretsAreInNoOutputAndNoFile() throws {
        let f = try WarmFixture()
        let port = f.server.port
        let base = "http://127.0.0.1:\(port)"
        for i in 0..<6 {
            f.server.setFile("/img/\(i).png", bytes: TinyPNG.make(seed: 700 + i), contentType: "image/png", etag: "\"e\(i)\"")
        }
        let headerFile = f.dir + "/headers.txt"
        try "X-Api-Key: HDR-SECRET-12\n".write(toFile: headerFile, atomically: true, encoding: .utf8)
        let lines = [
            "http://alice:PW-SECRET-1@127.0.0.1:\(port)/img/0.png",
            "\(base)/img/1.png?token=TOK-SECRET-2&w=200",
            "\(base)/status/404?X-Amz-Signature=SIG-SECRET-3&X-Amz-Credential=CRED-SECRET-4",
            "\(base)/img/2.png#FRAG-SECRET-5",
            "\(base)/status/403?sig=SIG-SECRET-6#FRAG-SECRET-7",
            "\(base)/redirect/1/status/404?access_token=TOK-SECRET-8",
            "\(base)/img/3.png?tenant=TEN-SECRET-9",
            "\(base)/img/4.png key=https://cdn.example/x.png?token=KEY-SECRET-10",
            "http://127.0.0.1:\(try TestHTTPServer.closedPort())/a.png?Signature=SIG-SECRET-11",
            "http://bob:PW-SECRET-13@127.0.0.1:\(port)/html?X-Goog-Signature=SIG-SECRET-14",
            // path parameters and the wider list of names
            "\(base)/img/5.png;token=PATH-SECRET-15",
            "\(base)/status/404;jsessionid=1;X-Api-Key=PATH-SECRET-16/x.png",
            "\(base)/redirect/1/img/9.png;sig=PATH-SECRET-17",
            "\(base)/status/404?access-token=WIDE-SECRET-18&jwt=WIDE-SECRET-19&token[]=WIDE-SECRET-20&x-api-key=WIDE-SECRET-21",
            // manifest words echoed in problem lines
            "\(base)/img/0.png priority=WORD-SECRET-22-eyJhbGciOi",
            "{\"url\": \"\(base)/img/0.png\", \"WORD-SECRET-23-abcdefgh\": 1}",
            "\(base)/img/0.png WORD-SECRET-24-stray",
        ]
        let secrets = ["PW-SECRET", "TOK-SECRET", "SIG-SECRET", "CRED-SECRET", "FRAG-SECRET", "TEN-SECRET", "KEY-SECRET", "HDR-SECRET",
                       "PATH-SECRET", "WIDE-SECRET", "WORD-SECRET"]
        let manifest = f.writeManifest(lines)
        let report = f.dir + "/r.json", junit = f.dir + "/j.xml", metrics = f.dir + "/m.prom"
        var outputs: [(String, String)] = []
        func collect(_ name: String, _ r: BinaryRunner.Result) {
            outputs.append(("stdout " + name, r.stdout))
            outputs.append(("stderr " + name, r.stderr))
            for file in [report, junit, metrics] {
                outputs.append((name + " " + file, (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""))
            }
        }
        let common = [manifest, "--cache", f.cache, "--retries", "0", "--report", report, "--junit", junit, "--metrics", metrics,
                      "--header", "@" + headerFile, "--redact-query", "Tenant"]
        let first = try BinaryRunner.run(["warm"] + common + ["-v", "--progress", "lines"])
        #expect(first.status == 1, "\(first.stderr)")
        collect("first", first)
        let firstReport = f.dir + "/first.json"
        try FileManager.default.copyItem(atPath: report, toPath: firstReport)
        // The run was real: images stored, the header sent, failures listed.
        #expect(f.server.lastRequestHeaders(path: "/img/0.png")?["x-api-key"] == "HDR-SECRET-12")
        #expect(f.server.lastRequestHeaders(path: "/img/0.png")?["authorization"] != nil)
        let rows = try f.report(report).entries
        #expect(rows.filter { $0["outcome"] as? String == "downloaded" }.count == 5, "\(rows)")
        #expect(rows[1]["url"] as? String == "\(base)/img/1.png?token=***&w=200")
        #expect(rows[7]["key"] as? String == "https://cdn.example/x.png?token=***")
        #expect(rows[3]["url"] as? String == "\(base)/img/2.png#***")
        #expect(rows.contains { $0["url"] as? String == "\(base)/img/5.png;token=***" }, "\(rows)")
        #expect(first.stderr.components(separatedBy: "not shown: it may be a secret").count - 1 == 3, "\(first.stderr)")

        // Blocked on the next run: the digest still matches the manifest URL.
        let second = try BinaryRunner.run(["warm"] + common + ["-v"])
        collect("second", second)
        let again = try f.report(report).entries
        #expect(again[2]["outcome"] as? String == "blocked" && again[4]["outcome"] as? String == "blocked", "\(again)")
        let retried = try BinaryRunner.run(["warm"] + common + ["--retry-failed", "-v", "--progress", "lines"])
        collect("retry-failed", retried)
        #expect(retried.stderr.contains("http-status") || retried.stdout.contains("failed"), "\(retried.stderr)")
        let dry = try BinaryRunner.run(["warm"] + common + ["--dry-run", "-v"])
        collect("dry", dry)
        // --retry-from a report: entries without their secrets are refused,
        // and the error says where to retry them from.
        let fromReport = try BinaryRunner.run(["warm", "--retry-from", firstReport, "--cache", f.cache, "--retries", "0", "-v"])
        outputs.append(("retry-from", fromReport.stdout + fromReport.stderr))
        #expect(fromReport.stderr.contains("warm its manifest line instead"), "\(fromReport.stderr)")
        for args in [["cache", "failed"], ["cache", "failed", "--json"], ["cache", "stats", "--json"]] {
            let r = try BinaryRunner.run(args + ["--cache", f.cache])
            outputs.append((args.joined(separator: " "), r.stdout + r.stderr))
        }
        let failedList = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(failedList.stdout.contains("\(base)/status/404?X-Amz-Signature=***&X-Amz-Credential=***"), "\(failedList.stdout)")
        #expect(failedList.stderr.contains("retries them from a manifest that still holds them"), "\(failedList.stderr)")

        for (name, text) in outputs {
            for secret in secrets {
                #expect(!text.contains(secret), "\(name) contains \(secret): \(text.components(separatedBy: "\n").filter { $0.contains(secret) }.prefix(3))")
            }
        }
        // Every file under the cache folder, the database and its WAL too.
        let files = FileManager.default.enumerator(atPath: f.cache)?.allObjects as? [String] ?? []
        #expect(files.contains(".imgwarm/state.sqlite"))
        for file in files {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: f.cache + "/" + file, isDirectory: &isDir), !isDir.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: f.cache + "/" + file))
            for secret in secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) contains \(secret)")
            }
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: f.cache + "/.imgwarm/state.sqlite" + suffix) {
            #expect(try mode(f.cache + "/.imgwarm/state.sqlite" + suffix) == 0o600, "state.sqlite\(suffix)")
        }
    }

    /// A database left 0644 by an older version, with whole URLs in it,
    /// becomes 0600 and loses its secrets on the next run's open.
    @Test func olderStateDatabaseIsMadePrivateAndCleaned() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(1)
        let secretURL = "http://127.0.0.1:\(f.server.port)/status/404?token=OLD-TOKEN-SECRET"
        let manifest = f.writeManifest([urls[0], secretURL])
        try FileManager.default.createDirectory(atPath: f.cache + "/.imgwarm", withIntermediateDirectories: true)
        let db = f.cache + "/.imgwarm/state.sqlite"
        do {
            let q = try DatabaseQueue(path: db)
            try q.write { d in
                try d.execute(sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE failed_url (url TEXT PRIMARY KEY, key TEXT NOT NULL, error_class TEXT NOT NULL, status INTEGER,
                                             reason TEXT NOT NULL, failed_at DOUBLE NOT NULL);
                    CREATE TABLE validator (key TEXT PRIMARY KEY, etag TEXT, last_modified TEXT);
                    """)
                try d.execute(sql: "INSERT INTO failed_url VALUES (?, ?, 'http-status', 404, 'HTTP 404', 1)", arguments: [secretURL, secretURL])
            }
        }
        chmod(db, 0o644)
        let r = try f.warm([manifest, "--report", f.dir + "/r.json", "-v"])
        #expect(r.status == 1, "\(r.stderr)")  // the blocked entry is missing
        // Still blocked: the v1 row became a digest of the same URL.
        #expect(try f.report(f.dir + "/r.json").entries[1]["outcome"] as? String == "blocked")
        #expect(try mode(db) == 0o600)
        for file in try FileManager.default.contentsOfDirectory(atPath: f.cache + "/.imgwarm") where file.hasPrefix("state") {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: f.cache + "/.imgwarm/" + file))
            #expect(bytes.range(of: Data("OLD-TOKEN-SECRET".utf8)) == nil, "\(file)")
        }
        #expect(!r.stderr.contains("OLD-TOKEN-SECRET") && !r.stdout.contains("OLD-TOKEN-SECRET"))
    }

    /// Two loopback servers, A and B (another port is another host): a
    /// redirect from A to B never carries A's headers; B's own scoped
    /// header reaches B; a same-origin redirect keeps them.
    @Test func headersStayWithTheirHost() throws {
        let f = try WarmFixture()
        let b = try TestHTTPServer.start()
        defer { b.shutdown() }
        let a = f.server
        a.setFile("/a.png", bytes: TinyPNG.make(seed: 1), contentType: "image/png")
        a.setFile("/same.png", bytes: TinyPNG.make(seed: 2), contentType: "image/png")
        b.setFile("/moved.png", bytes: TinyPNG.make(seed: 3), contentType: "image/png")
        b.setFile("/direct.png", bytes: TinyPNG.make(seed: 4), contentType: "image/png")
        let target = b.url("/moved.png").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let manifest = f.writeManifest([
            a.url("/redirect-to?url=\(target)"),
            a.url("/a.png"),
            a.url("/redirect/1/same.png"),
            b.url("/direct.png"),
        ])
        let scopedFile = f.dir + "/scoped.txt"
        try "X-Scoped-File: SCOPED-FILE-VALUE\r\n".write(toFile: scopedFile, atomically: true, encoding: .utf8)
        let r = try f.warm([manifest, "--report", f.dir + "/r.json",
                            "--header", "X-Everywhere: EVERY-VALUE",
                            "--header-for", "http://127.0.0.1:\(a.port)", "X-Scoped: SCOPED-VALUE",
                            "--header-for", "http://127.0.0.1:\(a.port)", "@" + scopedFile,
                            "--header-for", "http://127.0.0.1:\(b.port)", "X-For-B: B-VALUE"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try f.report(f.dir + "/r.json").entries.allSatisfy { $0["outcome"] as? String == "downloaded" })
        let moved = try #require(b.lastRequestHeaders(path: "/moved.png"))
        #expect(moved["x-everywhere"] == nil && moved["x-scoped"] == nil && moved["x-scoped-file"] == nil, "\(moved)")
        #expect(moved["x-for-b"] == "B-VALUE")
        let direct = try #require(b.lastRequestHeaders(path: "/direct.png"))
        #expect(direct["x-everywhere"] == "EVERY-VALUE" && direct["x-for-b"] == "B-VALUE" && direct["x-scoped"] == nil, "\(direct)")
        let atA = try #require(a.lastRequestHeaders(path: "/a.png"))
        #expect(atA["x-everywhere"] == "EVERY-VALUE" && atA["x-scoped"] == "SCOPED-VALUE" && atA["x-scoped-file"] == "SCOPED-FILE-VALUE")
        #expect(atA["x-for-b"] == nil)
        let redirectStart = try #require(a.lastRequestHeaders(path: "/redirect-to"))
        #expect(redirectStart["x-scoped"] == "SCOPED-VALUE")
        let sameOrigin = try #require(a.lastRequestHeaders(path: "/redirect/0/same.png"))
        #expect(sameOrigin["x-everywhere"] == "EVERY-VALUE" && sameOrigin["x-scoped"] == "SCOPED-VALUE")
    }

    /// `--header-for` binds scheme, host and port (as curl binds
    /// credentials): a bare HOST:PORT means https, so its header does not
    /// follow an https → http redirect to the same host and port (nginx
    /// answers cleartext requests on its TLS port through `error_page 497`),
    /// and imgwarm warns once; written out as http:// it goes there.
    @Test(.needs(TestTLSServer.isAvailable, "needs nginx (with HTTP/2) and openssl: the --header-for scheme test did not run"))
    func headerForDoesNotCrossToHTTPOnTheSamePort() throws {
        let f = try WarmFixture()
        let tls = try TestTLSServer.start(serverConfig: """
            error_page 497 = @plain;
            location @plain { try_files $uri =404; }
            location = /moved.png { return 302 http://127.0.0.1:$server_port/down.png$is_args$args; }
            """, loggedHeader: "x_secret")
        defer { tls.shutdown() }
        try tls.setFile("/down.png", bytes: TinyPNG.make(seed: 21))
        let manifest = f.writeManifest([tls.url("/moved.png?n=1"), tls.url("/moved.png?n=2")])
        let origin = "127.0.0.1:\(tls.port)"
        let bare = try f.warm([manifest, "--insecure", "--allow-http-redirect", "--report", f.dir + "/r.json",
                               "--header-for", origin, "X-Secret: BARE-SECRET"])
        #expect(bare.status == 0, "\(bare.stderr)")
        let log = tls.headerLog()
        #expect(log.contains("https /moved.png?n=1 [BARE-SECRET]") && log.contains("https /moved.png?n=2 [BARE-SECRET]"), "\(log)")
        let cleartext = log.filter { $0.hasPrefix("http ") }
        #expect(cleartext.count == 2 && cleartext.allSatisfy { $0.hasSuffix("[-]") }, "\(log)")
        #expect(bare.stderr.components(separatedBy: "--header-for \(origin) means https://").count - 1 == 1, "\(bare.stderr)")
        #expect(!(bare.stdout + bare.stderr).contains("BARE-SECRET"))

        // Written out, each scheme gets its own header; no warning.
        let cache = f.dir + "/cache2"
        let written = try BinaryRunner.run(["warm", manifest, "--cache", cache, "--progress", "none", "--insecure",
                                            "--allow-http-redirect",
                                            "--header-for", "https://" + origin, "X-Secret: TLS-ONLY",
                                            "--header-for", "HTTP://" + origin + "/", "X-Secret: CLEAR-OK"])
        #expect(written.status == 0, "\(written.stderr)")
        let after = Array(tls.headerLog().dropFirst(log.count))
        #expect(after.filter { $0.hasPrefix("https ") }.allSatisfy { $0.hasSuffix("[TLS-ONLY]") }, "\(after)")
        #expect(after.filter { $0.hasPrefix("http ") }.count == 2, "\(after)")
        #expect(after.filter { $0.hasPrefix("http ") }.allSatisfy { $0.hasSuffix("[CLEAR-OK]") }, "\(after)")
        #expect(!written.stderr.contains("means https://"), "\(written.stderr)")
    }

    /// `--header @FILE`: the value reaches the server, and the process
    /// list (what every local user reads) shows only the file's name.
    @Test func headerFileKeepsTheValueOutOfTheProcessList() throws {
        let f = try WarmFixture()
        f.server.setFile("/img/slow.png", bytes: TinyPNG.make(seed: 5), contentType: "image/png")
        let manifest = f.writeManifest([f.server.url("/slow/1500/img/slow.png")])
        let headerFile = f.dir + "/auth.txt"
        try "Authorization: Bearer ARGV-SECRET-VALUE\n".write(toFile: headerFile, atomically: true, encoding: .utf8)
        let running = try BinaryRunner.start(["warm", manifest, "--cache", f.cache, "--progress", "none", "--header", "@" + headerFile])
        #expect(f.server.waitFor { $0.requestCount(path: "/slow/1500/img/slow.png") == 1 })
        let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(running.process.processIdentifier)/cmdline"))) ?? Data()
        let result = running.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!cmdline.isEmpty)
        #expect(cmdline.range(of: Data("ARGV-SECRET-VALUE".utf8)) == nil)
        #expect(cmdline.range(of: Data(headerFile.utf8)) != nil)
        #expect(f.server.lastRequestHeaders(path: "/slow/1500/img/slow.png")?["authorization"] == "Bearer ARGV-SECRET-VALUE")
    }

    @Test func headerArgumentsAreCheckedWithoutQuotingThem() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(1))
        let badFile = f.dir + "/bad.txt"
        try "X-Good: 1\nBROKEN-LINE-VALUE\n".write(toFile: badFile, atomically: true, encoding: .utf8)
        for (args, expected) in [
            (["--header", "@" + f.dir + "/missing.txt"], "cannot read header file"),
            (["--header", "@" + badFile], "bad.txt:2:"),
            (["--header-for", "h:99999", "X: BROKEN-LINE-VALUE"], "--header-for"),
            (["--header-for", "127.0.0.1", "Bad Name: BROKEN-LINE-VALUE"], "a name without spaces"),
        ] {
            let r = try f.warm([manifest] + args)
            #expect(r.status == 2, "\(args) \(r.stderr)")
            #expect(r.stderr.contains(expected), "\(args) \(r.stderr)")
            #expect(!r.stderr.contains("BROKEN-LINE-VALUE"), "\(args) \(r.stderr)")
        }
        #expect(f.server.requestCount(path: "/img/0.png") == 0)
    }

    /// Control bytes a server sends (Content-Type, Location) reach the
    /// terminal escaped, under -v and in failure lines.
    @Test func serverBytesAreEscapedBeforeTheTerminal() throws {
        let f = try WarmFixture()
        f.server.setFile("/t.png", bytes: TinyPNG.make(seed: 9), contentType: "image/png\u{1B}]0;PWNED\u{07}\u{1B}[2J")
        let location = "http://127.0.0.1:\(f.server.port)/x\u{1B}[2J\u{1B}]0;OWNED\u{07}.png"
        let encoded = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let manifest = f.writeManifest([f.server.url("/t.png"), f.server.url("/redirect-to?url=\(encoded)")])
        let r = try f.warm([manifest, "-v", "--retries", "0", "--report", f.dir + "/r.json"])
        let output = r.stdout + r.stderr
        #expect(!output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" } && !output.contains("\u{7F}"), "\(output.debugDescription)")
        #expect(output.contains("image/png\\x1B]0;PWNED\\x07\\x1B[2J"), "\(output)")
        #expect(output.contains("\\x1B[2J\\x1B]0;OWNED\\x07.png"), "\(output)")
        let rows = try f.report(f.dir + "/r.json").entries
        #expect(rows[0]["outcome"] as? String == "downloaded")
        #expect(rows[1]["outcome"] as? String == "failed", "\(rows[1])")
    }

    /// https → http through a loopback TLS server: refused by default
    /// (insecure-redirect, with the redacted Location) before any
    /// cleartext request; followed with --allow-http-redirect. --insecure
    /// warns once and the report records it.
    @Test(.needs(TestTLSServer.isAvailable, "needs nginx (with HTTP/2) and openssl: the https → http redirect test did not run"))
    func httpsToHTTPRedirectFailsUnlessAllowed() throws {
        let f = try WarmFixture()
        let plain = f.server
        plain.setFile("/down.png", bytes: TinyPNG.make(seed: 11), contentType: "image/png")
        let tls = try TestTLSServer.start(serverConfig: """
            location = /moved.png { return 302 http://127.0.0.1:\(plain.port)/down.png?token=LOC-SECRET; }
            """)
        defer { tls.shutdown() }
        try tls.setFile("/ok.png", bytes: TinyPNG.make(seed: 12))
        let manifest = f.writeManifest([tls.url("/moved.png"), tls.url("/ok.png")])
        let report = f.dir + "/r.json"
        let refused = try f.warm([manifest, "--insecure", "--retries", "0", "--report", report, "-v"])
        #expect(refused.status == 1, "\(refused.stderr)")
        let rows = try f.report(report).entries
        #expect(rows[0]["outcome"] as? String == "failed" && rows[0]["error"] as? String == "insecure-redirect", "\(rows[0])")
        let reason = rows[0]["reason"] as? String ?? ""
        #expect(reason.contains("http://127.0.0.1:\(plain.port)/down.png?token=***"), "\(reason)")
        #expect(rows[1]["outcome"] as? String == "downloaded")
        #expect(plain.requestCount(path: "/down.png") == 0)
        #expect(!(refused.stdout + refused.stderr).contains("LOC-SECRET"))
        // --insecure: one warning, and the report's top level says so.
        #expect(refused.stderr.components(separatedBy: "--insecure").count - 1 == 1, "\(refused.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        #expect(json?["insecure"] as? Bool == true)

        let allowed = try f.warm([manifest, "--insecure", "--allow-http-redirect", "--retry-failed", "--report", report])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try f.report(report).entries[0]["outcome"] as? String == "downloaded")
        #expect(plain.requestCount(path: "/down.png") == 1)

        // Without --insecure the report says false, and no warning.
        let plainRun = try f.warm([f.writeManifest([plain.url("/down.png")], name: "p.txt"), "--report", report])
        #expect(!plainRun.stderr.contains("--insecure"))
        let json2 = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        #expect(json2?["insecure"] as? Bool == false)
    }

    /// A database of the v1 schema (full URLs, 0644) opens, becomes 0600,
    /// and its secrets are digested; the list still blocks those URLs.
    @Test func olderDatabaseIsMigratedAndCleaned() throws {
        let dir = makeTempDirectory("imgwarm-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.sqlite"
        let secretURL = "https://bob:PW-OLD@h/a.jpg?sig=SIG-OLD"
        do {
            let q = try DatabaseQueue(path: path)
            try q.write { db in
                try db.execute(sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE failed_url (url TEXT PRIMARY KEY, key TEXT NOT NULL, error_class TEXT NOT NULL, status INTEGER,
                                             reason TEXT NOT NULL, failed_at DOUBLE NOT NULL);
                    CREATE TABLE validator (key TEXT PRIMARY KEY, etag TEXT, last_modified TEXT);
                    """)
                try db.execute(sql: "INSERT INTO failed_url VALUES (?, ?, 'http-status', 404, ?, 1)",
                               arguments: [secretURL, secretURL, "curl error 7: \(secretURL)"])
                try db.execute(sql: "INSERT INTO failed_url VALUES ('https://h/plain.jpg', 'https://h/plain.jpg', 'bad-image', NULL, 'x', 2)")
                try db.execute(sql: "INSERT INTO validator VALUES ('https://h/v.jpg?token=TOKEN-OLD', '\"e\"', NULL)")
            }
        }
        chmod(path, 0o644)
        do {
            let store = try StateStore(path: path)
            #expect(try mode(path) == 0o600)
            #expect(try store.isFailed(url: secretURL))
            #expect(try store.isFailed(url: "https://h/plain.jpg"))
            #expect(try store.validators(forKey: "https://h/v.jpg?token=TOKEN-OLD")?.etag == "\"e\"")
            let rows = try store.failedURLs()
            #expect(rows.map(\.displayURL) == ["https://***@h/a.jpg?sig=***", "https://h/plain.jpg"])
            #expect(rows[0].reason == "curl error 7: https://***@h/a.jpg?sig=***")
        }
        for file in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + file))
            for secret in ["PW-OLD", "SIG-OLD", "TOKEN-OLD"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(file)")
            }
        }
    }

    func mode(_ path: String) throws -> mode_t {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return st.st_mode & 0o777
    }
}
