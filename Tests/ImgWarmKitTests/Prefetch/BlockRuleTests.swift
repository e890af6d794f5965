import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Which failures enter the failed-URL list. SDWebImage's own rule, for
/// comparison (SDWebImage/SDWebImage, SDWebImage/Core/SDWebImageDownloader.m,
/// `shouldBlockFailedURLWithURL:error:options:context:`, which
/// SDWebImageManager.m's `shouldBlockFailedURLWithURL:error:options:context:`
/// asks): SDWebImageErrorDomain blocks only `SDWebImageErrorInvalidURL` and
/// `SDWebImageErrorBadImageData`; NSURLErrorDomain blocks every code but
/// not-connected, cancelled, timed-out, roaming-off, data-not-allowed,
/// cannot-find-host, cannot-connect and connection-lost. imgwarm also blocks
/// HTTP 4xx (a batch run would otherwise request every dead URL again on
/// every run) and never blocks TLS (the build machine's CA setup, fixed by
/// --cacert, not the URL).
@Suite struct BlockRuleTests {
    @Test(arguments: [
        // Same as SDWebImage: bad data and invalid URLs.
        ("bad-image", 200, true),
        ("invalid-url", nil, true),
        // SDWebImage does not block a status code; imgwarm blocks the 4xx
        // that the same request meets again.
        ("http-status", 404, true),
        ("http-status", 410, true),
        ("http-status", 403, true),
        ("http-status", 400, true),
        ("http-status", 408, false),
        ("http-status", 429, false),
        ("http-status", 500, false),
        ("http-status", 503, false),
        ("http-status", 301, false),  // too many redirects, no Location
        ("http-status", nil, false),
        // SDWebImage blocks NSURLErrorDomain's certificate errors; imgwarm
        // does not (curl 60: a missing local CA).
        ("tls", nil, false),
        // Like SDWebImage: DNS, connection, timeouts.
        ("network", nil, false),
        ("timeout", nil, false),
        // Local limits and local options.
        ("too-large", 200, false),
        ("too-complex", 200, false),
        ("no-decoder", 200, false),
        ("insecure-redirect", 302, false),
        ("disk", 200, false),
        ("cancelled", nil, false),
        ("budget", nil, false),
        ("", nil, false),
    ] as [(String, Int?, Bool)])
    func remembers(_ errorClass: String, _ status: Int?, _ expected: Bool) {
        #expect(BlockRule.remembers(errorClass: errorClass, status: status) == expected)
    }

    /// Every error class the engine has is in the table above.
    @Test func everyErrorClassIsDecided() {
        let named: Set<String> = ["bad-image", "invalid-url", "http-status", "tls", "network", "timeout", "too-large",
                                  "too-complex", "no-decoder", "insecure-redirect", "disk", "cancelled", "budget"]
        for e in EntryError.allCases {
            guard let name = e.name else { continue }
            #expect(named.contains(name), "\(name) has no row in BlockRuleTests")
        }
    }

    /// A row an earlier version stored for a failure BlockRule does not
    /// remember (TLS) no longer blocks, but is still known, so that a
    /// success removes it.
    @Test func rowsOfForgottenClassesDoNotBlock() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try StateStore(path: dir + "/state.sqlite")
        try store.apply([
            .failed(.init(url: "https://e/tls.png", key: "https://e/tls.png", errorClass: "tls", status: nil, reason: "curl error 60", failedAt: 1)),
            .failed(.init(url: "https://e/404.png", key: "https://e/404.png", errorClass: "http-status", status: 404, reason: "HTTP 404", failedAt: 1)),
        ])
        let set = try store.failedURLSet()
        #expect(set.contains("https://e/404.png") && set.isListed("https://e/404.png"))
        #expect(!set.contains("https://e/tls.png") && set.isListed("https://e/tls.png"))
        #expect(!set.isListed("https://e/other.png"))
    }
}
