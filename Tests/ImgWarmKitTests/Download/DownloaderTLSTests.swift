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

/// HTTPS and HTTP/2 against nginx with a self-signed certificate: TLS
/// verification, --insecure, and multiplexing of many transfers over one
/// connection. Skipped where nginx is not installed, failed under CI
/// (TestSupport's missing-tool rule).
@Suite("Download over TLS and HTTP/2", .serialized,
       .needs(TestTLSServer.isAvailable, "needs nginx (with HTTP/2) and openssl: the TLS/HTTP2 download tests did not run"))
struct DownloaderTLSTests {
    private func withTLSServer(_ config: DownloaderConfiguration, http2: Bool = true, keepaliveRequests: Int? = nil,
                               _ body: (TestTLSServer, Downloader) throws -> Void) throws {
        let server = try TestTLSServer.start(http2: http2, keepaliveRequests: keepaliveRequests)
        defer { server.shutdown() }
        let downloader = try Downloader(configuration: config)
        defer { downloader.shutdown() }
        try body(server, downloader)
    }

    /// Waits (bounded) for nginx to log `count` requests.
    private func log(_ server: TestTLSServer, count: Int) -> [TestTLSServer.LogLine] {
        for _ in 0..<200 where server.log().count < count { usleep(10_000) }
        return server.log()
    }

    @Test func untrustedCertificateIsAPermanentTLSFailure() throws {
        try withTLSServer(testConfiguration()) { server, downloader in
            try server.setFile("/a.png", bytes: sampleBytes(100))
            let failure = try #require(try fetch(downloader, server.url("/a.png")).failure)
            #expect(failure.errorClass == .tls, "\(failure.message)")
            #expect(!failure.isTransient && failure.attempts == 1)
            #expect(server.log().isEmpty)
        }
    }

    @Test func insecureAcceptsItOverHTTP2() throws {
        try withTLSServer(testConfiguration { $0.insecure = true }) { server, downloader in
            try server.setFile("/a.png", bytes: sampleBytes(3000))
            let response = try #require(try fetch(downloader, server.url("/a.png")).response)
            #expect(response.body == sampleBytes(3000))
            #expect(log(server, count: 1).map(\.httpProtocol) == ["HTTP/2.0"])
        }
    }

    @Test func transfersAreMultiplexedOnOneConnection() throws {
        try withTLSServer(testConfiguration { $0.insecure = true; $0.concurrency = 8 }) { server, downloader in
            try server.setFile("/m.jpg", bytes: sampleBytes(50_000))
            let collector = ResultCollector()
            for i in 0..<60 { collector.enqueue(downloader, server.url("/m.jpg?i=\(i)")) }
            try collector.wait()
            #expect(collector.results.allSatisfy { $0.result.response?.body.count == 50_000 })
            let lines = log(server, count: 60)
            #expect(lines.count == 60)
            #expect(lines.allSatisfy { $0.httpProtocol == "HTTP/2.0" })
            // PIPEWAIT: the transfers waited for the first connection's ALPN
            // answer and then shared it instead of opening eight.
            #expect(Set(lines.map(\.connection)).count == 1, "connections: \(Set(lines.map(\.connection)))")
        }
    }

    @Test func bodyLimitHoldsOverHTTP2() throws {
        try withTLSServer(testConfiguration { $0.insecure = true; $0.maxBodyBytes = 10_000 }) { server, downloader in
            try server.setFile("/big.png", bytes: sampleBytes(2_000_000))
            try server.setFile("/small.png", bytes: sampleBytes(10_000))
            let failure = try #require(try fetch(downloader, server.url("/big.png")).failure)
            #expect(failure.errorClass == .tooLarge && !failure.isTransient && failure.attempts == 1)
            // The connection survives an aborted stream for the next transfer.
            #expect(try fetch(downloader, server.url("/small.png")).response?.body == sampleBytes(10_000))
        }
    }

    @Test func newConnectionsResumeTLSSessions() throws {
        // One request per connection: every request is a new handshake,
        // made by whichever easy handle is free. Over HTTP/1.1: libcurl 7.88
        // (its command-line tool too) resumes no TLS 1.3 session over h2.
        try withTLSServer(testConfiguration { $0.insecure = true; $0.concurrency = 3 }, http2: false, keepaliveRequests: 1) { server, downloader in
            try server.setFile("/s.png", bytes: sampleBytes(1000))
            for round in 0..<3 {
                let collector = ResultCollector()
                for i in 0..<3 { collector.enqueue(downloader, server.url("/s.png?r=\(round)&i=\(i)")) }
                try collector.wait()
                #expect(collector.results.allSatisfy { $0.result.response != nil })
            }
            let lines = log(server, count: 9)
            #expect(Set(lines.map(\.connection)).count == 9)
            // Later handshakes resume sessions kept across handle resets. Not
            // all of them: a TLS 1.3 ticket is single-use on the server, and
            // concurrent handshakes may offer the same one.
            let reused = lines.map { $0.sessionReused }
            #expect(!reused.prefix(1).contains(true))
            #expect(reused.dropFirst(3).contains(true), "session reused per request: \(reused)")
        }
    }
}
