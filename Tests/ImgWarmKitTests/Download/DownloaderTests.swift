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

/// What one request comes to against a real loopback server: outcome class,
/// attempts, requests the server saw, and nothing of a failed body leaking.
@Suite("Download outcomes", .serialized)
struct DownloaderTests {
    @Test func successCarriesBodyAndHeaders() throws {
        try withServer { server, downloader in
            let bytes = sampleBytes(5000)
            server.setFile("/img/a.png", bytes: bytes, contentType: "image/png", etag: "\"v1\"",
                           lastModified: "Sun, 01 Nov 2026 10:00:00 GMT")
            let result = try fetch(downloader, server.url("/img/a.png"))
            let response = try #require(result.response)
            #expect(response.status == 200)
            #expect(response.body == bytes)
            #expect(response.etag == "\"v1\"")
            #expect(response.lastModified == "Sun, 01 Nov 2026 10:00:00 GMT")
            #expect(response.contentType == "image/png")
            #expect(response.effectiveURL == server.url("/img/a.png"))
            #expect(response.attempts == 1)
            #expect(response.elapsed > 0 && response.elapsed < 5)
            #expect(server.requestCount(path: "/img/a.png") == 1)
        }
    }

    @Test func etagAndDateRevalidationAnswerNotModified() throws {
        try withServer { server, downloader in
            server.setFile("/img/b.jpg", bytes: sampleBytes(100), contentType: "image/jpeg", etag: "\"abc\"",
                           lastModified: "Sun, 01 Nov 2026 10:00:00 GMT")
            let byTag = try fetch(downloader, server.url("/img/b.jpg"), validators: HTTPValidators(etag: "\"abc\"", lastModified: nil))
            let r1 = try #require(byTag.notModifiedResponse)
            #expect(r1.status == 304 && r1.body.isEmpty && r1.attempts == 1)
            #expect(server.lastRequestHeaders(path: "/img/b.jpg")?["if-none-match"] == "\"abc\"")

            let byDate = try fetch(downloader, server.url("/img/b.jpg"),
                                   validators: HTTPValidators(etag: nil, lastModified: "Sun, 01 Nov 2026 10:00:00 GMT"))
            #expect(byDate.notModifiedResponse?.status == 304)

            // A changed file: the validators no longer match, a full 200.
            let stale = try fetch(downloader, server.url("/img/b.jpg"), validators: HTTPValidators(etag: "\"old\"", lastModified: nil))
            #expect(stale.response?.body == sampleBytes(100))
        }
    }

    @Test func notModifiedWithoutValidatorsIsAFailure() throws {
        try withServer { server, downloader in
            let failure = try #require(try fetch(downloader, server.url("/status/304")).failure)
            #expect(failure.errorClass == .httpStatus && failure.status == 304 && !failure.isTransient)
        }
    }

    @Test func clientErrorIsPermanentAndNotRetried() throws {
        try withServer { server, downloader in
            for code in [400, 403, 404, 410] {
                let failure = try #require(try fetch(downloader, server.url("/status/\(code)")).failure)
                #expect(failure.errorClass == .httpStatus)
                #expect(failure.status == code)
                #expect(!failure.isTransient)
                #expect(failure.attempts == 1)
                #expect(failure.message == "HTTP \(code)")
                #expect(server.requestCount(path: "/status/\(code)") == 1)
            }
        }
    }

    @Test func serverErrorsAreRetriedThenTransient() throws {
        try withServer(testConfiguration { $0.retries = 2 }) { server, downloader in
            for code in [500, 503, 408, 429] {
                let failure = try #require(try fetch(downloader, server.url("/status/\(code)")).failure)
                #expect(failure.errorClass == .httpStatus && failure.status == code)
                #expect(failure.isTransient)
                #expect(failure.attempts == 3)
                #expect(server.requestCount(path: "/status/\(code)") == 3)
                #expect(!failure.message.contains("FAILED-RESPONSE-BODY"))
            }
        }
    }

    @Test func flakyServerSucceedsAfterRetries() throws {
        try withServer(testConfiguration { $0.retries = 3 }) { server, downloader in
            server.setFile("/f.png", bytes: sampleBytes(300))
            let response = try #require(try fetch(downloader, server.url("/flaky/2/f.png")).response)
            #expect(response.attempts == 3)
            #expect(response.body == sampleBytes(300))
            #expect(server.requestCount(path: "/flaky/2/f.png") == 3)
        }
    }

    @Test func zeroRetriesMeansOneAttempt() throws {
        try withServer(testConfiguration { $0.retries = 0 }) { server, downloader in
            let failure = try #require(try fetch(downloader, server.url("/flaky/1/")).failure)
            #expect(failure.attempts == 1 && failure.isTransient && failure.status == 500)
        }
    }

    @Test func retryAfterSecondsIsHonoured() throws {
        try withServer(testConfiguration { $0.backoffBase = 0.001; $0.maxRetryDelay = 5 }) { server, downloader in
            let response = try #require(try fetch(downloader, server.url("/retry-after/1/1/")).response)
            #expect(response.attempts == 2)
            #expect(response.elapsed >= 0.95, "waited \(response.elapsed) s, Retry-After said 1 s")
            #expect(response.elapsed < 4)
        }
    }

    @Test func retryAfterDateIsHonoured() throws {
        try withServer(testConfiguration { $0.backoffBase = 0.001; $0.maxRetryDelay = 5 }) { server, downloader in
            // A date 2 s ahead, truncated to whole seconds: at least 1 s away.
            let response = try #require(try fetch(downloader, server.url("/retry-after-date/2/1/")).response)
            #expect(response.attempts == 2)
            #expect(response.elapsed >= 0.95, "waited \(response.elapsed) s")
        }
    }

    @Test func retryAfterIsCappedByMaxRetryDelay() throws {
        try withServer(testConfiguration { $0.maxRetryDelay = 0.2 }) { server, downloader in
            let response = try #require(try fetch(downloader, server.url("/retry-after/3600/2/")).response)
            #expect(response.attempts == 3)
            #expect(response.elapsed < 3)
        }
    }

    @Test func timeoutIsTransientAndRetried() throws {
        try withServer(testConfiguration { $0.timeout = 0.3; $0.retries = 1 }) { server, downloader in
            let failure = try #require(try fetch(downloader, server.url("/slow/3000/")).failure)
            #expect(failure.errorClass == .timeout)
            #expect(failure.isTransient)
            #expect(failure.attempts == 2)
            #expect(failure.elapsed < 2.5)
            #expect(server.requestCount(path: "/slow/3000/") == 2)
        }
    }

    @Test func connectionRefusedIsTransientNetwork() throws {
        let port = try TestHTTPServer.closedPort()
        let downloader = try Downloader(configuration: testConfiguration { $0.retries = 1 })
        defer { downloader.shutdown() }
        let failure = try #require(try fetch(downloader, "http://127.0.0.1:\(port)/x.png").failure)
        #expect(failure.errorClass == .network && failure.isTransient && failure.attempts == 2)
        #expect(failure.status == nil)
    }

    @Test func brokenResponsesAreTransientNetwork() throws {
        try withServer(testConfiguration { $0.retries = 1 }) { server, downloader in
            for path in ["/reset", "/truncate", "/empty-reply"] {
                let failure = try #require(try fetch(downloader, server.url(path)).failure, "\(path)")
                #expect(failure.errorClass == .network, "\(path): \(failure.message)")
                #expect(failure.isTransient, "\(path)")
                #expect(failure.attempts == 2, "\(path)")
                #expect(server.requestCount(path: path) == 2, "\(path)")
            }
        }
    }

    @Test func redirectsAreFollowedUpToTen() throws {
        try withServer { server, downloader in
            server.setFile("/r.png", bytes: sampleBytes(64))
            let three = try #require(try fetch(downloader, server.url("/redirect/3/r.png")).response)
            #expect(three.body == sampleBytes(64))
            #expect(three.effectiveURL == server.url("/redirect/0/r.png"))
            #expect(three.attempts == 1)
            #expect(try fetch(downloader, server.url("/redirect/10/r.png")).response != nil)

            let eleven = try #require(try fetch(downloader, server.url("/redirect/11/r.png")).failure)
            #expect(eleven.errorClass == .httpStatus && !eleven.isTransient && eleven.attempts == 1)
            #expect(eleven.message.hasPrefix("too many redirects"))

            let loop = try #require(try fetch(downloader, server.url("/loop")).failure)
            #expect(loop.errorClass == .httpStatus && !loop.isTransient && loop.attempts == 1)
            #expect(server.requestCount(path: "/loop") == 11)
        }
    }

    @Test func redirectWithoutLocationIsPermanent() throws {
        try withServer { server, downloader in
            let failure = try #require(try fetch(downloader, server.url("/redirect-nolocation")).failure)
            #expect(failure.errorClass == .httpStatus && failure.status == 302 && !failure.isTransient && failure.attempts == 1)
            #expect(!failure.message.contains("FAILED-RESPONSE-BODY"))
        }
    }

    @Test func redirectsToOtherProtocolsAreRefused() throws {
        try withServer { server, downloader in
            for target in ["file:///etc/passwd", "ftp://127.0.0.1/x.png", "gopher://127.0.0.1/"] {
                let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
                let failure = try #require(try fetch(downloader, server.url("/redirect-to?url=\(encoded)")).failure)
                #expect(failure.errorClass == .invalidURL, "\(target): \(failure.message)")
                #expect(!failure.isTransient && failure.attempts == 1)
            }
            #expect(server.requestCount(path: "/redirect-to") == 3)
        }
    }

    @Test func invalidURLsFailAtOnce() throws {
        let downloader = try Downloader(configuration: testConfiguration())
        defer { downloader.shutdown() }
        for url in ["ftp://127.0.0.1/a.png", "file:///etc/passwd", "http://[::1", "http://"] {
            let failure = try #require(try fetch(downloader, url).failure)
            #expect(failure.errorClass == .invalidURL, "\(url): \(failure.message)")
            #expect(!failure.isTransient && failure.attempts == 1)
        }
    }

    @Test func tlsFailureIsPermanent() throws {
        // A TLS handshake against a plain HTTP server fails in OpenSSL.
        try withServer { server, downloader in
            let failure = try #require(try fetch(downloader, "https://127.0.0.1:\(server.port)/x.png").failure)
            #expect(failure.errorClass == .tls, "\(failure.message)")
            #expect(!failure.isTransient && failure.attempts == 1)
        }
    }

    @Test func bodyLimitAbortsStreamedAndAnnouncedBodies() throws {
        try withServer(testConfiguration { $0.maxBodyBytes = 1000 }) { server, downloader in
            #expect(try fetch(downloader, server.url("/huge/1000")).response?.body.count == 1000)
            #expect(try fetch(downloader, server.url("/huge-length/1000")).response?.body.count == 1000)
            for path in ["/huge/1001", "/huge-length/1001", "/huge/50000000", "/huge-length/50000000"] {
                let failure = try #require(try fetch(downloader, server.url(path)).failure, "\(path)")
                #expect(failure.errorClass == .tooLarge, "\(path): \(failure.message)")
                #expect(!failure.isTransient && failure.attempts == 1, "\(path)")
                #expect(failure.status == 200)
            }
        }
    }

    @Test func oversizedErrorBodiesReportTheirStatus() throws {
        try withServer(testConfiguration { $0.maxBodyBytes = 1000; $0.retries = 1 }) { server, downloader in
            // Announced too large, but a 503: transient and retried.
            let announced = try #require(try fetch(downloader, server.url("/huge-length/5000?status=503")).failure)
            #expect(announced.errorClass == .httpStatus && announced.status == 503)
            #expect(announced.isTransient && announced.attempts == 2)
            // Streamed past our cut-off for error pages: still the 404.
            let streamed = try #require(try fetch(downloader, server.url("/huge/300000?status=404")).failure)
            #expect(streamed.errorClass == .httpStatus && streamed.status == 404)
            #expect(!streamed.isTransient && streamed.attempts == 1)
            #expect(streamed.message == "HTTP 404")
        }
    }

    @Test func gzipBodiesAreDecoded() throws {
        try withServer { server, downloader in
            let bytes = sampleBytes(100_000)
            server.setFile("/z.png", bytes: bytes, contentType: "image/png")
            let response = try #require(try fetch(downloader, server.url("/gzip/z.png")).response)
            #expect(response.body == bytes)
            let acceptEncoding = server.lastRequestHeaders(path: "/gzip/z.png")?["accept-encoding"] ?? ""
            #expect(acceptEncoding.contains("gzip"))
        }
    }

    @Test func htmlIsDeliveredWithItsContentType() throws {
        // Rejecting non-images is the validator's job; the engine reports it.
        try withServer { server, downloader in
            let response = try #require(try fetch(downloader, server.url("/html")).response)
            #expect(response.contentType?.hasPrefix("text/html") == true)
            #expect(String(decoding: response.body, as: UTF8.self).contains("<html>"))
        }
    }

    @Test func requestHeadersAreSent() throws {
        let config = testConfiguration { $0.headers = ["X-Api-Key: s3cret-header", "X-Other:  two"] }
        try withServer(config) { server, downloader in
            let validators = HTTPValidators(etag: "\"e1\"", lastModified: "Sun, 01 Nov 2026 10:00:00 GMT")
            _ = try fetch(downloader, server.url("/echo-headers"), validators: validators)
            let headers = try #require(server.lastRequestHeaders(path: "/echo-headers"))
            #expect(headers["accept"] == "image/*,*/*;q=0.8")
            #expect(headers["user-agent"] == "imgwarm-tests/1")
            #expect(headers["x-api-key"] == "s3cret-header")
            #expect(headers["x-other"] == "two")
            #expect(headers["if-none-match"] == "\"e1\"")
            #expect(headers["if-modified-since"] == "Sun, 01 Nov 2026 10:00:00 GMT")
        }
    }

    @Test func configuredAcceptReplacesTheDefault() throws {
        try withServer(testConfiguration { $0.headers = ["Accept: image/webp"] }) { server, downloader in
            _ = try fetch(downloader, server.url("/echo-headers"))
            #expect(server.lastRequestHeaders(path: "/echo-headers")?["accept"] == "image/webp")
        }
    }

    @Test func secretsNeverReachMessagesOrURLs() throws {
        try withServer(testConfiguration { $0.retries = 0; $0.headers = ["Authorization: Bearer hdr-secret"] }) { server, downloader in
            server.setFile("/ok.png", bytes: sampleBytes(10))
            let success = try #require(try fetch(downloader, "http://alice:pw-secret@127.0.0.1:\(server.port)/ok.png").response)
            // One redaction rule: the userinfo is masked, never shown.
            #expect(success.effectiveURL == "http://***@127.0.0.1:\(server.port)/ok.png")

            let closed = try TestHTTPServer.closedPort()
            var messages: [String] = []
            for url in ["http://alice:pw-secret@127.0.0.1:\(server.port)/status/404",
                        "http://alice:pw-secret@127.0.0.1:\(closed)/x",
                        "ftp://alice:pw-secret@127.0.0.1/x",
                        "http://alice:pw-secret@[::1"] {
                messages.append(try #require(try fetch(downloader, url).failure).message)
            }
            for message in messages {
                #expect(!message.contains("pw-secret"), "\(message)")
                #expect(!message.contains("hdr-secret"), "\(message)")
                #expect(!message.contains("\n"))
            }
        }
    }

    @Test func invalidConfigurationsAreRejected() throws {
        let bad: [(inout DownloaderConfiguration) -> Void] = [
            { $0.concurrency = 0 }, { $0.perHost = 0 }, { $0.timeout = 0 }, { $0.retries = -1 },
            { $0.maxBodyBytes = -1 }, { $0.headers = ["NoColon"] }, { $0.headers = ["X-A: b\r\nX-Injected: c"] },
        ]
        for modify in bad {
            let error = #expect(throws: ImgWarmError.self) { try Downloader(configuration: testConfiguration(modify)) }
            #expect(error?.exitStatus == ExitStatus.usage)
        }
        do {
            _ = try Downloader(configuration: testConfiguration { $0.headers = ["Bad Name: secret-value"] })
            Issue.record("accepted a header name with a space")
        } catch {
            #expect(!"\(error)".contains("secret-value"))
        }
    }
}
