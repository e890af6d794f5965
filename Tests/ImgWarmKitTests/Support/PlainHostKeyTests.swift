import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport

/// `ParsedURL.plainHostKey` answers for libcurl on the URLs it takes: for
/// each, the result must equal libcurl's own parse (`parsedByCurl`:
/// `curl_url_set` with the flags a transfer uses, then the scheme, host
/// and port with `CURLU_DEFAULT_PORT`). libcurl's `ipv4_normalize`
/// (lib/urlapi.c) rewrites hosts made only of numbers (`127.1`, `0x7f.1`,
/// `2130706433`), and `hostname_check` refuses `!$&'()*+,;=%` in a host:
/// such hosts must go to libcurl.
@Suite struct PlainHostKeyTests {
    static func plainKey(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard let syntax = URISyntax.parse(bytes) else { return nil }
        return ParsedURL.plainHostKey(bytes, syntax)
    }

    static let table: [(String, String?)] = [
        ("http://example.com/a.png", "http://example.com:80"),
        ("HTTPS://CDN.Example.COM/a.png?x=1#f", "https://cdn.example.com:443"),
        ("https://cdn-1.img_host.example.co.uk:8443/", "https://cdn-1.img_host.example.co.uk:8443"),
        ("http://127.0.0.1:18471/t/0.png", "http://127.0.0.1:18471"),
        ("http://localhost/a", "http://localhost:80"),
        ("http://abc.123/", "http://abc.123:80"),
        ("http://de/", "http://de:80"),
        ("http://0X1F.Example/", "http://0x1f.example:80"), ("http://EXAMPLE.COM:8080", "http://example.com:8080"),
        ("http://0xab.0xCD/", nil),
        // Numbers only: libcurl's IPv4 rewriting decides.
        ("http://127.1/a", nil), ("http://0x7f.0.0.1/a", nil), ("http://0177.0.0.1/", nil),
        ("http://2130706433/", nil), ("http://1.2.3.04/", nil), ("http://256.1.1.1/", nil),
        ("http://1.2.3.4.5/", nil), ("http://0x/", nil),
        // Empty labels, characters libcurl refuses, userinfo, odd ports.
        ("http://a..b/", nil), ("http://.a/", nil), ("http://a./", nil), ("http://a~b/", nil), ("http://a!b/", nil),
        ("http://host%41/", nil), ("http://u:p@example.com/", nil), ("http://example.com:0/", nil),
        ("http://example.com:080/", nil), ("http://example.com:65536/", nil), ("http://example.com:/", nil),
        ("ftp://example.com/", nil),
    ]

    @Test func table() {
        for (text, key) in Self.table {
            #expect(Self.plainKey(text) == key, "\(text)")
        }
    }

    /// The key written in one pass is the general `hostKey(scheme:host:port:)`
    /// on every host the fast path takes (letters of either case, digits,
    /// `.`, `-`, `_`) and on ports across the range.
    @Test func keyTextIsTheGeneralKey() {
        var rng = SeededRandom(seed: 0x5EED_4E57)
        let alphabet = Array("aZzA09-_.Mx".utf8)
        var ports = [1, 9, 10, 80, 99, 100, 443, 999, 1000, 8080, 9999, 10000, 18491, 65535]
        for _ in 0..<500 { ports.append(Int.random(in: 1...65535, using: &rng)) }
        for (k, port) in ports.enumerated() {
            let n = Int.random(in: 1...253, using: &rng)
            let host = (0..<n).map { _ in alphabet.randomElement(using: &rng)! }
            let https = k % 2 == 0
            let fast = host.withUnsafeBufferPointer { ParsedURL.plainHostKeyText(https: https, host: $0, port: port) }
            let general = ParsedURL.hostKey(scheme: https ? "HTTPS" : "http", host: String(decoding: host, as: UTF8.self),
                                            port: String(port))
            #expect(fast == general)
            // The previous line's key is reused only when it is this key.
            for previous in [general, general + "0", String(general.dropLast()), general.uppercased(), "", fast] {
                let reused = host.withUnsafeBufferPointer {
                    ParsedURL.plainHostKeyText(https: https, host: $0, port: port, previous: previous)
                }
                #expect(reused == general)
            }
        }
    }

    /// Every URL taken, tricky and random, gets libcurl's answer exactly.
    @Test func agreesWithLibcurl() throws {
        var rng = SeededRandom(seed: 0x1A2B_3C4D)
        let alphabet = Array("abcxyz019-_.".utf8)
        var texts = Self.table.map { $0.0 }
        let hosts = ["example.com", "EXAMPLE.com", "127.0.0.1", "0.0.0.0", "255.255.255.255", "1.2.3", "xn--d1acufc.xn--p1ai",
                     "-lead.example", "trail-.example", "a_b", "0x1f.example", String(repeating: "a", count: 253),
                     String(repeating: "a", count: 254), String(repeating: "ab.", count: 80) + "com"]
        for host in hosts {
            for port in ["", ":1", ":80", ":443", ":65535", ":65536", ":007"] {
                for scheme in ["http", "HTTPS"] { texts.append("\(scheme)://\(host)\(port)/p/a.png?q=1") }
            }
        }
        for _ in 0..<20_000 {
            let n = Int.random(in: 1...14, using: &rng)
            let host = String(decoding: (0..<n).map { _ in alphabet.randomElement(using: &rng)! }, as: UTF8.self)
            let port = Bool.random(using: &rng) ? "" : ":\(Int.random(in: 0...70_000, using: &rng))"
            texts.append("http://\(host)\(port)/x")
        }
        var taken = 0
        for text in texts {
            guard let key = Self.plainKey(text) else { continue }
            taken += 1
            let byCurl = ParsedURL.parsedByCurl(text: text, absolute: text)
            #expect(byCurl == .success(ParsedURL(text: text, absolute: text, hostKey: key, hasCredentials: false)), "\(text)")
            #expect(ParsedURL.parse(text) == byCurl, "\(text)")
        }
        // The generator must reach both sides.
        #expect(taken > 5_000)
        #expect(taken < texts.count - 2_000)
    }
}
