import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
import TestSupport

/// Points 4 to 7, at the level of the pure rules: one redaction
/// rule, one terminal escape, one owner of header rules, one redirect rule,
/// and a state database that keeps no secret. The end-to-end proofs against
/// the binary are in ReliabilityTests/Security/SecretsAndHeadersTests.swift.
@Suite("Secrets, headers, terminal text, redirects")
struct RedactionTests {
    // MARK: redaction

    @Test(arguments: [
        // userinfo (the whole of it)
        ("https://alice:s3cret@host/a.jpg", "https://***@host/a.jpg"),
        ("http://TOKEN@host:8080/", "http://***@host:8080/"),
        // fragments
        ("https://h/a.jpg#frag", "https://h/a.jpg#***"),
        ("https://h/a.jpg#", "https://h/a.jpg#"),
        // token and signature values, any case, other parameters kept
        ("https://h/a.jpg?token=abc&w=200", "https://h/a.jpg?token=***&w=200"),
        ("https://b.s3.amazonaws.com/k.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1&X-Amz-Signature=f00d&X-Amz-Security-Token=IQo",
         "https://b.s3.amazonaws.com/k.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=***"),
        ("https://d.cloudfront.net/a.png?Expires=1&Signature=AbC~&Policy=eyJ&Key-Pair-Id=K2", "https://d.cloudfront.net/a.png?Expires=1&Signature=***&Policy=***&Key-Pair-Id=***"),
        ("https://h/a?SIG=1&sv=2020", "https://h/a?SIG=***&sv=2020"),
        ("https://h/a?x-goog-signature=1&X-Goog-Credential=2", "https://h/a?x-goog-signature=***&X-Goog-Credential=***"),
        ("https://h/a?access_token=1;auth=2", "https://h/a?access_token=***;auth=***"),
        // a percent-encoded name is still the name
        ("https://h/a?%74oken=abc", "https://h/a?%74oken=***"),
        // empty values and bare names have nothing to mask
        ("https://h/a?token=&key", "https://h/a?token=&key"),
        // query and fragment and userinfo together
        ("https://u:p@h/a?key=K#F", "https://***@h/a?key=***#***"),
        // no secret: unchanged
        ("https://h/a.jpg?w=200&h=100", "https://h/a.jpg?w=200&h=100"),
        ("https://e.com/a@b.jpg", "https://e.com/a@b.jpg"),
        ("http://h/x", "http://h/x"),
        // a cache key that is no URL: the query rule still applies
        ("avatar@2x?token=1", "avatar@2x?token=***"),
        // path parameters (RFC 3986 section 3.3), up to the next ; / ? #
        ("https://h/a;token=T1/b.png", "https://h/a;token=***/b.png"),
        ("https://h/a.png;jsessionid=J;Signature=S?w=1", "https://h/a.png;jsessionid=J;Signature=***?w=1"),
        ("https://h/a;w=2/b;x-api-key=K#f", "https://h/a;w=2/b;x-api-key=***#***"),
        // - and _ alike, any case, a [] suffix, the wider list
        ("https://h/a?access-token=1&ACCESS_TOKEN=2&Token[]=3&token%5B%5D=4", "https://h/a?access-token=***&ACCESS_TOKEN=***&Token[]=***&token%5B%5D=***"),
        ("https://h/a?jwt=1&X-Api-Key=2&x_amz_signature=3&id-token=4&session_token=5", "https://h/a?jwt=***&X-Api-Key=***&x_amz_signature=***&id-token=***&session_token=***"),
        // a ; with nothing listed: unchanged
        ("https://h/a;v=1/b.png", "https://h/a;v=1/b.png"),
    ])
    func redactionMasksUserinfoFragmentsAndTokenValues(url: String, expected: String) {
        #expect(Redaction.url(url) == expected)
        // Idempotent: redacting what was printed changes nothing more.
        #expect(Redaction.url(expected) == expected)
    }

    @Test func redactionNamesCanBeAdded() {
        // The list is process-wide; a name no other test uses.
        #expect(Redaction.url("https://h/a?X-Tenant-Secret=zz") == "https://h/a?X-Tenant-Secret=zz")
        Redaction.addQueryNames(["x-tenant-SECRET"])
        #expect(Redaction.url("https://h/a?X-Tenant-Secret=zz&w=1") == "https://h/a?X-Tenant-Secret=***&w=1")
    }

    @Test func secretsAreKnownEvenWhenAlreadyMasked() {
        #expect(Redaction.hasSecrets("https://h/a?token=abc"))
        #expect(Redaction.hasSecrets("https://h/a?token=***"))
        #expect(Redaction.hasSecrets("https://***@h/a"))
        #expect(Redaction.hasSecrets("https://h/a#***"))
        #expect(!Redaction.hasSecrets("https://h/a?w=1"))
        #expect(!Redaction.hasSecrets("https://h/a"))
    }

    @Test func curlErrorTextIsRedactedAndEscaped() {
        #expect(Redaction.inText("Failed http://a:b@h/x?token=T then\n\u{1B}[2J") == "Failed http://***@h/x?token=*** then \\x1B[2J")
    }

    // MARK: terminal text

    @Test(arguments: [
        ("plain ascii", "plain ascii"),
        ("image/png\u{1B}]0;owned\u{07}", "image/png\\x1B]0;owned\\x07"),
        ("a\u{1B}[2Jb", "a\\x1B[2Jb"),
        ("line\nbreak\rand\ttab", "line break and tab"),
        ("del\u{7F}", "del\\x7F"),
        ("c1\u{9B}31m", "c1\\x9B31m"),
        ("bidi\u{202E}txt.exe", "bidi\\u{202E}txt.exe"),
        ("café 東京", "café 東京"),
    ])
    func terminalTextEscapesControlBytes(text: String, expected: String) {
        #expect(TerminalText.escaped(text) == expected)
        #expect(!TerminalText.escaped(text).unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) })
    }

    // MARK: header rules

    @Test func headerRulesCheckEveryLineWithoutQuotingIt() throws {
        var rules = RequestHeaderRules()
        try rules.addHeader("X-Api-Key: v1")
        for bad in ["NoColonSECRETVAL", "Bad Name: SECRETVAL", "X-A: SECRETVAL\r\nX-Injected: c", ": SECRETVAL", "X-Nul: SECRETVAL\0"] {
            #expect(throws: ImgWarmError.self) { try rules.addHeader(bad) }
            do { try rules.addHeader(bad) } catch { #expect(!"\(error)".contains("SECRETVAL") && !"\(error)".contains("Injected")) }
        }
        #expect(rules.entryOriginLines == ["X-Api-Key: v1"])
    }

    @Test func headerFileReadsLinesTheCurlWay() throws {
        var rules = RequestHeaderRules()
        let files: [String: String] = ["h.txt": "X-One: 1\r\n\nAuthorization: Bearer T\n", "bad.txt": "X-One: 1\nbroken line\n", "empty.txt": "\n\n"]
        let reader: RequestHeaderRules.FileReader = { path in
            guard let text = files[path] else { throw ImgWarmError.usage("cannot read header file \(path)") }
            return Array(text.utf8)
        }
        try rules.addHeader("@h.txt", readFile: reader)
        #expect(rules.entryOriginLines == ["X-One: 1", "Authorization: Bearer T"])
        #expect(throws: ImgWarmError.usage("bad.txt:2: a header must be one 'Name: value' line (no colon)")) {
            try rules.addHeader("@bad.txt", readFile: reader)
        }
        #expect(throws: ImgWarmError.usage("empty.txt: no header lines")) { try rules.addHeader("@empty.txt", readFile: reader) }
        #expect(throws: ImgWarmError.self) { try rules.addHeader("@missing.txt", readFile: reader) }
        try rules.addHeader(forHost: "CDN.example.com", "@h.txt", readFile: reader)
        #expect(rules.scoped.map(\.host) == ["cdn.example.com", "cdn.example.com"])
    }

    /// Which request gets which header: `--header` only the entry URL's
    /// origin; `--header-for` its origin (scheme, host and port; a bare
    /// HOST means https; without a port the scheme's default port),
    /// wherever the request comes from.
    @Test(arguments: [
        ("http://127.0.0.1:8080", true, ["X-All: 1", "X-A: a"]),
        ("http://127.0.0.1:8080", false, ["X-A: a"]),
        ("https://127.0.0.1:8080", false, []),
        ("http://127.0.0.1:8081", true, ["X-All: 1"]),
        ("http://127.0.0.1:8081", false, []),
        ("https://cdn.example.com:443", false, ["X-Cdn: c"]),
        ("http://cdn.example.com:80", false, []),
        ("http://cdn.example.com:443", false, []),
        ("https://cdn.example.com:8443", false, []),
        ("https://evil.example.com:443", true, ["X-All: 1"]),
        ("https://[::1]:9000", false, ["X-Six: 6"]),
        ("http://[::1]:9000", false, []),
        ("https://tls.example.com:443", false, ["X-Tls: t"]),
        ("http://plain.example.com:80", false, ["X-Plain: p"]),
        ("https://plain.example.com:443", false, []),
    ])
    func headerRulesChooseLinesByOrigin(origin: String, isEntryOrigin: Bool, expected: [String]) throws {
        var rules = RequestHeaderRules()
        try rules.addHeader("X-All: 1")
        try rules.addHeader(forHost: "http://127.0.0.1:8080", "X-A: a")
        try rules.addHeader(forHost: "cdn.example.com", "X-Cdn: c")
        try rules.addHeader(forHost: "[::1]:9000", "X-Six: 6")
        try rules.addHeader(forHost: "HTTPS://TLS.example.com/", "X-Tls: t")
        try rules.addHeader(forHost: "http://plain.example.com", "X-Plain: p")
        #expect(rules.lines(origin: origin, isEntryOrigin: isEntryOrigin) == expected)
        #expect(rules.hasScopedLines(origin: origin) == expected.contains { $0 != "X-All: 1" })
    }

    /// A bare rule's host met over http: named once (its header is not
    /// sent there); a rule written with a scheme never warns.
    @Test(arguments: [
        ("http://cdn.example.com:80", ["cdn.example.com"]),
        ("http://cdn.example.com:8080", ["cdn.example.com"]),
        ("https://cdn.example.com:443", []),
        ("http://127.0.0.1:19004", ["127.0.0.1:19004"]),
        ("http://127.0.0.1:19005", []),
        ("http://plain.example.com:80", []),
        ("http://tls.example.com:80", []),
    ])
    func bareRulesMetOverHTTPAreNamed(origin: String, expected: [String]) throws {
        var rules = RequestHeaderRules()
        try rules.addHeader(forHost: "cdn.example.com", "X-Cdn: c")
        try rules.addHeader(forHost: "cdn.example.com", "X-Cdn2: c")
        try rules.addHeader(forHost: "127.0.0.1:19004", "Authorization: Bearer T")
        try rules.addHeader(forHost: "http://plain.example.com", "X-Plain: p")
        try rules.addHeader(forHost: "https://tls.example.com", "X-Tls: t")
        #expect(rules.schemeMismatches(origin: origin) == expected)
        for rule in expected {
            let warning = RequestHeaderRules.schemeMismatchWarning(rule: rule)
            #expect(warning.contains("https://\(rule)") && !warning.contains("Bearer"))
        }
    }

    /// Manifest words a message quotes: plain short words are shown,
    /// anything else (a token in the wrong place, a listed name) by its
    /// length only.
    @Test(arguments: [
        ("hihg", "'hihg'"),
        ("prio", "'prio'"),
        ("eyJhbGciOiJIUzI1NiJ9.e30.sig", "(28 bytes, not shown: it may be a secret)"),
        ("X-Amz-Signature", "(15 bytes, not shown: it may be a secret)"),
        ("a b", "(3 bytes, not shown: it may be a secret)"),
        ("", "(0 bytes, not shown: it may be a secret)"),
    ])
    func manifestWordsAreShownOnlyWhenPlain(word: String, expected: String) {
        #expect(Redaction.manifestWord(word) == expected)
    }

    @Test func headerForHostsMustBeHosts() {
        var rules = RequestHeaderRules()
        for bad in ["", "h:0", "h:99999", "ftp://h", "https://", "https://h/x", "http://u@h", "h:1:2", "[::1", "u@h"] {
            #expect(throws: ImgWarmError.self, "\(bad)") { try rules.addHeader(forHost: bad, "X: y") }
        }
    }

    @Test(arguments: [
        (["warm", "--header-for", "h", "X: y", "m.txt"], ["warm", "--header-for", "h\u{1F}X: y", "m.txt"]),
        (["warm", "--header-for=h:1", "@f", "m.txt"], ["warm", "--header-for", "h:1\u{1F}@f", "m.txt"]),
        (["warm", "m.txt", "--header-for", "h"], ["warm", "m.txt", "--header-for", "h"]),
        (["warm", "--", "--header-for", "h", "X: y"], ["warm", "--", "--header-for", "h", "X: y"]),
    ])
    func headerForPairsAreJoinedBeforeParsing(argv: [String], expected: [String]) {
        let joined = RequestHeaderRules.joiningHeaderForPairs(argv)
        #expect(joined == expected)
    }

    // MARK: redirects

    static func hop(_ status: Int, _ location: String?, resolved: String?, current: String = "https://a.example/x",
                    followed: Int = 0, allow: Bool = false) -> RedirectRule.Hop {
        RedirectRule.Hop(status: status, location: location, resolved: resolved, current: current, entry: current,
                         followed: followed, allowHTTPRedirect: allow)
    }

    @Test func redirectRuleFollowsRefusesAndNamesTheLocation() {
        #expect(RedirectRule.decide(Self.hop(200, nil, resolved: nil)) == nil)
        #expect(RedirectRule.decide(Self.hop(304, "/x", resolved: "https://a.example/x")) == nil)
        #expect(RedirectRule.decide(Self.hop(302, nil, resolved: nil)) == nil)
        #expect(RedirectRule.decide(Self.hop(302, "/y", resolved: "https://a.example/y")) == .follow(url: "https://a.example/y"))
        #expect(RedirectRule.decide(Self.hop(301, "https://b.example/y", resolved: "https://b.example/y")) == .follow(url: "https://b.example/y"))
        // https → http: refused, the Location redacted, unless allowed.
        guard case .refuse(.insecureRedirect, let message)? = RedirectRule.decide(
            Self.hop(302, "http://b.example/y?token=T", resolved: "http://b.example/y?token=T")) else {
            Issue.record("https → http was not refused")
            return
        }
        #expect(message.contains("http://b.example/y?token=***") && !message.contains("=T"))
        #expect(RedirectRule.decide(Self.hop(302, "http://b.example/y", resolved: "http://b.example/y", allow: true))
            == .follow(url: "http://b.example/y"))
        // http → http is no downgrade.
        #expect(RedirectRule.decide(Self.hop(307, "http://b/y", resolved: "http://b/y", current: "http://a/x")) == .follow(url: "http://b/y"))
        // Eleven hops, other schemes, a Location that is no URL.
        guard case .refuse(.httpStatus, let tooMany)? = RedirectRule.decide(Self.hop(302, "/z", resolved: "https://a.example/z", followed: 10)) else {
            Issue.record("the 11th redirect was followed")
            return
        }
        #expect(tooMany.hasPrefix("too many redirects"))
        if case .refuse(let c, _)? = RedirectRule.decide(Self.hop(302, "file:///etc/passwd", resolved: "file:///etc/passwd")) {
            #expect(c == .invalidURL)
        } else { Issue.record("file:// was followed") }
        guard case .refuse(.invalidURL, let bad)? = RedirectRule.decide(Self.hop(302, "\u{1B}[2J", resolved: nil)) else {
            Issue.record("a Location that is no URL was not refused")
            return
        }
        #expect(bad.contains("\\x1B[2J") && !bad.contains("\u{1B}"))
    }

    @Test func credentialsStayWithTheirOrigin() {
        let entry = "https://u:p@a.example/x"
        // Same origin: they come back; another origin: never.
        #expect(RedirectRule.decide(RedirectRule.Hop(status: 302, location: "https://a.example/y", resolved: "https://a.example/y",
                                                     current: entry, entry: entry, followed: 0, allowHTTPRedirect: false))
            == .follow(url: "https://u:p@a.example/y"))
        #expect(RedirectRule.decide(RedirectRule.Hop(status: 302, location: "https://v:q@b.example/y", resolved: "https://v:q@b.example/y",
                                                     current: entry, entry: entry, followed: 0, allowHTTPRedirect: false))
            == .follow(url: "https://b.example/y"))
        #expect(RedirectRule.decide(RedirectRule.Hop(status: 302, location: "https://a.example:8443/y", resolved: "https://a.example:8443/y",
                                                     current: entry, entry: entry, followed: 0, allowHTTPRedirect: false))
            == .follow(url: "https://a.example:8443/y"))
    }

    // MARK: state at rest

    @Test func storedFormDigestsWhatMayHoldASecret() throws {
        #expect(StateStore.storedForm("https://h/a.jpg") == "https://h/a.jpg")
        let d = StateStore.storedForm("https://h/a.jpg?token=T")
        #expect(d.hasPrefix("sha256:") && d.count == 7 + 64 && !d.contains("T"))
        // The SHA-256 of the text, as coreutils computes it.
        _ = try neededTool("sha256sum", for: "checking the stored digest against coreutils")
        let sum = try #require(coreutilsDigest("sha256sum", of: "https://h/a.jpg?token=T"))
        #expect(d == "sha256:" + sum)
        #expect(StateStore.storedForm("https://u:p@h/a") != StateStore.storedForm("https://u:q@h/a"))
    }

    /// A symlink planted at the database's name is not followed.
    @Test func stateDatabaseThroughASymlinkIsRefused() throws {
        let dir = makeTempDirectory("imgwarm-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "victim".write(toFile: dir + "/victim.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir + "/state.sqlite", withDestinationPath: dir + "/victim.txt")
        #expect(throws: ImgWarmError.self) { _ = try StateStore(path: dir + "/state.sqlite") }
        #expect(try String(contentsOfFile: dir + "/victim.txt", encoding: .utf8) == "victim")
    }

    @Test func stateDatabaseIsPrivateAndKeepsNoSecret() throws {
        let dir = makeTempDirectory("imgwarm-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.sqlite"
        let old = umask(0o022)
        defer { umask(old) }
        do {
            let store = try StateStore(path: path)
            try store.apply([
                .failed(.init(url: "https://alice:PW-ONE@h/a.jpg?X-Amz-Signature=SIG-TWO#FRAG-THREE", key: "https://alice:PW-ONE@h/a.jpg?X-Amz-Signature=SIG-TWO#FRAG-THREE",
                              errorClass: "http-status", status: 404, reason: "HTTP 404", failedAt: 1)),
                .succeeded(url: "https://h/b.jpg?token=TOKEN-FOUR", validators: .init(key: "https://h/b.jpg?token=TOKEN-FOUR", etag: "\"e\"", lastModified: nil)),
            ])
            for suffix in ["", "-wal", "-shm"] {
                #expect(try fileMode(path + suffix) == 0o600, "\(suffix)")
            }
            // Lookups with the real URL still work.
            #expect(try store.isFailed(url: "https://alice:PW-ONE@h/a.jpg?X-Amz-Signature=SIG-TWO#FRAG-THREE"))
            #expect(try store.failedURLSet().contains("https://alice:PW-ONE@h/a.jpg?X-Amz-Signature=SIG-TWO#FRAG-THREE"))
            #expect(try store.validators(forKey: "https://h/b.jpg?token=TOKEN-FOUR")?.etag == "\"e\"")
            let row = try #require(try store.failedURLs().first)
            #expect(row.isDigest && row.displayURL == "https://***@h/a.jpg?X-Amz-Signature=***#***")
            #expect(row.key == "https://***@h/a.jpg?X-Amz-Signature=***#***")
        }
        // Files left readable by others (an older version, another umask)
        // are made 0600 on the next open, the WAL and shm included.
        let walHolder = try StateStore(path: path)
        try walHolder.apply([.succeeded(url: "https://h/c.jpg", validators: .init(key: "https://h/c.jpg", etag: "\"c\"", lastModified: nil))])
        for suffix in ["", "-wal", "-shm"] { chmod(path + suffix, 0o644) }
        do {
            let reopened = try StateStore(path: path)
            for suffix in ["", "-wal", "-shm"] {
                #expect(try fileMode(path + suffix) == 0o600, "reopened \(suffix)")
            }
            #expect(try reopened.failedCount() == 1)
        }
        withExtendedLifetime(walHolder) {}
        for file in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + file))
            for secret in ["PW-ONE", "SIG-TWO", "FRAG-THREE", "TOKEN-FOUR"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(file)")
            }
        }
    }
}

func fileMode(_ path: String) throws -> mode_t {
    var st = stat()
    guard lstat(path, &st) == 0 else { throw CocoaError(.fileNoSuchFile) }
    return st.st_mode & 0o777
}
